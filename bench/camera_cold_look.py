"""What it costs that the camera is open only when needed: a look at a closed camera (open the device, wait for its
first frame, JPEG-encode it, close it after), against one while the device is already open (the preview on screen).

Baselines measured in the same run on the same 640x480 video file:
- ``bare open+read+encode``: ``cv2.VideoCapture(path)``, one ``read()``, ``cv2.imencode``, ``release()``; the floor
  for any look that opens the source itself;
- ``warm look``: ``OpenCVCamera.capture`` while a hold keeps the device open (how every look worked before).

A video file opens in a few ms; a real webcam adds its own opening time on top (published: several hundred ms for
the first grab on Linux/V4L2 with Logitech webcams, opencv/opencv#25688; ~3 s for some USB cameras, #20391; 4-20 s
on Windows' Media Foundation backend with hardware transforms on, #17687 and #26495). That cannot be measured here
(no webcam): the figure below is the adapter's own overhead around the device.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import _report  # noqa: F401 - puts the repo on sys.path
import cv2
from _report import report

from app.devices.camera import OpenCVCamera, encode_jpeg
from companions.common.loop_health import percentile
from companions.devices.ports import CameraInUse
from companions.wire.bus import InProcessBus
from tests.app.media import write_test_video

N = 60


def ms(values: list[float]) -> tuple[float, float]:
    return percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000


def bare_once(video: Path) -> float:
    start = time.perf_counter()
    capture = cv2.VideoCapture(str(video))
    ok, image = capture.read()
    assert ok
    encode_jpeg(image)
    capture.release()
    return time.perf_counter() - start


async def looks(video: Path) -> tuple[list[float], list[float], list[float], int]:
    """Cold looks interleaved with the bare baseline (the machine is shared: both see the same load), then warm
    looks."""
    bus = InProcessBus()
    closed = asyncio.Event()
    bus.subscribe("events", lambda e: closed.set() if isinstance(e, CameraInUse) and not e.in_use else None)
    camera = OpenCVCamera(str(video), bus, linger_s=0.0)  # closed right after each look
    await camera.start()
    floor: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    try:
        for _ in range(N):
            floor.append(bare_once(video))
            closed.clear()
            start = time.perf_counter()
            await camera.capture(looker="bench")
            cold.append(time.perf_counter() - start)
            await closed.wait()  # closed on its own thread: the next look opens it again
        opened = camera.stats.opened
        hold = camera.hold("preview")
        await camera.capture(looker="bench")
        for _ in range(N):
            await asyncio.sleep(camera.frame_period)  # a new frame: the JPEG cache never helps
            start = time.perf_counter()
            await camera.capture(looker="bench")
            warm.append(time.perf_counter() - start)
        hold.release()
    finally:
        await camera.stop()
        await bus.aclose()
    return floor, cold, warm, opened


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        video = write_test_video(Path(tmp) / "bench.avi", frames=60)
        floor, cold, warm, opened = asyncio.run(looks(video))
    assert opened == N, f"the device was opened {opened} times for {N} cold looks"
    f50, f95 = ms(floor)
    c50, c95 = ms(cold)
    w50, _ = ms(warm)
    report("cold look (closed camera) p50", c50, "ms", "bare open+read+encode p50", f50)
    report("cold look (closed camera) p95", c95, "ms", "bare open+read+encode p95", f95)
    report("cold look p50", c50, "ms", "warm look p50", w50)
    report("warm look (camera held open) p50", w50, "ms")
    print(f"cold look p95 {c95:.1f} ms over the bare floor's {f95:.1f} ms: {c95 - f95:+.1f} ms of adapter overhead; "
          f"a real webcam adds its opening time (see the module doc)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
