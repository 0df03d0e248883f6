"""The chat: the transcript, the message box, looks through the camera, the conversation list."""
