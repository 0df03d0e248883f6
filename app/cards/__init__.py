"""Companion cards on disk: the library, approval, the user's choices, the editor's port, the CLI."""
