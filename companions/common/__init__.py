"""Small shared parts of the core: atomic file writes, owned tasks, the loop-lag probe, languages."""
