"""Small shared parts of the core: atomic and private file writes, bounded reading of outside data (JSON, YAML),
owned tasks, the loop-lag probe, languages."""
