"""Devices as the core sees them: camera and speaker ports, their query bodies and responders."""
