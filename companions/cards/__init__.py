"""Companion cards: the card model, character cards (PNG/JSON), lorebooks, card events and approval."""
