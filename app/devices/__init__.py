"""Device adapters: the OpenCV camera and the pyttsx3 speaker (the only modules that import cv2 / pyttsx3)."""

import os
import sys

if sys.platform == "win32":
    # OpenCV's Media Foundation backend negotiates hardware transforms when a camera opens: 4-20 s on some webcams
    # (opencv/opencv#17687, #26495). The camera is opened for each look now (app/devices/camera.py), so turn that
    # off as OpenCV's maintainers advise; read when cv2 first opens a device, so it must be set before.
    os.environ.setdefault("OPENCV_VIDEOIO_MSMF_ENABLE_HW_TRANSFORMS", "0")
