"""Settings: the validated model, its sections, merged writes of settings.toml, and the secrets."""
