"""Memory: a companion's context window, long-term recall, and notes about the user."""
