"""Trust: who is asking, what for, and what the user decided."""
