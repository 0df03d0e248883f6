"""The runtime: assembly of the parts for the settings, start and orderly shutdown, logs and errors."""
