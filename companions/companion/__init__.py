"""A companion: its card, model, prompt, worker turn loop and line checks; the cast and the guests."""
