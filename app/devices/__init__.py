"""Device adapters: the OpenCV camera and the pyttsx3 speaker (the only modules that import cv2 / pyttsx3)."""
