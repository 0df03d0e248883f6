"""The search panel: questions, how they were understood, the hits, research and indexing progress."""
