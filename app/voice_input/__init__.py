"""Voice input's adapters: the microphone, the voice-activity detector, the recognizers and their models."""
