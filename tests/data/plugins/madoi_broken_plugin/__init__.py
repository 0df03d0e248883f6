"""A plugin package that fails on import (for Madoi's tests)."""

raise RuntimeError("the plugin's wick is wet")
