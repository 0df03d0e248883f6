"""Companion cards in the window: the editor, the companions desk and what a card would run."""
