"""Long-term memory in the app: recall on the search index, notes, the Memory view's port, the CLI."""
