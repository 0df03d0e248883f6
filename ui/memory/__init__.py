"""Memory in the window: what each companion remembers, and what it recalled for each turn."""
