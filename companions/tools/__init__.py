"""Tools a companion may use: Python functions, built-in actions and knowledge, plugins, MCP servers."""
