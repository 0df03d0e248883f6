"""Stored data: the conversation database and the user's private files."""
