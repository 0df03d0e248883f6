"""Composition root and runtime: settings, assembly, devices, bridge, storage and entry points."""
