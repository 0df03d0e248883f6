"""Hybrid search: query classification, keyword / semantic / graph channels and their fusion (seed 002)."""
