"""The companion roster: who is present and what each is doing, with faces, colours and names."""
