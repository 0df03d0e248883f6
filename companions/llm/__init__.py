"""LLM access: the ChatModel port (OpenAI-shaped), its backends and structured output that survives weak models."""
