"""Testing helpers that are real parts, not mocks: a local OpenAI-compatible HTTP server for tests and demos.

The scripted ChatModel lives in :mod:`companions.llm.scripted` (it is a backend of the port, usable in demos too).
"""
