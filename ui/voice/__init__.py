"""Voice in the window: the microphone switch, push-to-talk, spoken words and the speech notice."""
