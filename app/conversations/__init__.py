"""The user's conversations: the active one, what is stored, imports and exports, indexing, greetings."""
