"""Trust in the window: consent prompts, refused web pages and the privacy settings."""
