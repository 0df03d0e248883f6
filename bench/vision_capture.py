"""Vision latency: capture -> JPEG -> base64 of a 640x480 frame (p50/p95), and the `vision` query via the responder.

Baselines measured in the same run: a bare ``cv2.imencode`` + base64 of an in-memory frame (the floor for any
JPEG answer) and a raw ``VideoCapture.read`` of the same file (what grabbing a frame costs the worker thread).
Every measured call gets a frame not encoded before (it waits for the next one): the JPEG cache never helps.
Target: camera p95 <= 33 ms (one frame at 30 fps).
"""

from __future__ import annotations

import asyncio
import base64
import sys
import tempfile
import time
from pathlib import Path

import _report  # noqa: F401 - puts the repo on sys.path
import cv2
import numpy as np
from _report import report

from app.devices.camera import OpenCVCamera, encode_jpeg
from companions.common.loop_health import percentile
from companions.devices.responders import VisionResponder
from companions.wire.protocol import Query

N = 150


def write_video(path: Path) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (640, 480))
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 60, (480, 640, 3), dtype=np.uint8)  # some texture so JPEG has real work to do
    for index in range(60):
        image = np.full((480, 640, 3), (40, 90, 160), dtype=np.uint8) + noise
        x = (index * 9) % 520
        cv2.rectangle(image, (x, 180), (x + 120, 300), (255, 255, 255), thickness=-1)
        writer.write(image)
    writer.release()
    return path


def ms(values: list[float]) -> tuple[float, float]:
    return percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000


def bare_encode(frame: np.ndarray) -> list[float]:
    out = []
    for _ in range(N):
        start = time.perf_counter()
        base64.b64encode(encode_jpeg(frame))
        out.append(time.perf_counter() - start)
    return out


def raw_read(video: Path) -> list[float]:
    capture = cv2.VideoCapture(str(video))
    out = []
    for _ in range(N):
        start = time.perf_counter()
        ok, _ = capture.read()
        if not ok:
            capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, _ = capture.read()
        out.append(time.perf_counter() - start)
    capture.release()
    return out


async def next_frame(camera: OpenCVCamera, seen: list[int]) -> None:
    """Waits until the grabber has a frame this benchmark has not encoded yet (so no cache hit is measured)."""
    while True:
        latest = camera._latest
        if latest is not None and latest.seq not in seen:
            seen.append(latest.seq)
            return
        await asyncio.sleep(camera.frame_period / 4)


async def through_camera(video: Path) -> tuple[list[float], list[float], list[float]]:
    camera = OpenCVCamera(str(video))
    await camera.start()
    responder = VisionResponder(camera)
    capture: list[float] = []
    query_plain: list[float] = []
    query_described: list[float] = []
    seen: list[int] = []
    try:
        await camera.capture()
        for _ in range(N):
            await next_frame(camera, seen)
            start = time.perf_counter()
            frame = await camera.capture()
            base64.b64encode(frame.jpeg)
            capture.append(time.perf_counter() - start)
        for bucket, body in ((query_plain, {"describe": False}), (query_described, {"describe": True})):
            for _ in range(N // 3):
                await next_frame(camera, seen)
                start = time.perf_counter()
                result = await responder.respond(Query.create(from_="bench", type="vision", body=body))
                bucket.append(time.perf_counter() - start)
                assert result.succeeded, result.error
    finally:
        await camera.stop()
    return capture, query_plain, query_described


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        video = write_video(Path(tmp) / "bench.avi")
        capture = cv2.VideoCapture(str(video))
        ok, frame = capture.read()
        capture.release()
        assert ok
        bare = bare_encode(frame)
        raw = raw_read(video)
        camera, plain, described = asyncio.run(through_camera(video))
    bare50, bare95 = ms(bare)
    raw50, raw95 = ms(raw)
    cam50, cam95 = ms(camera)
    q50, q95 = ms(plain)
    d50, d95 = ms(described)
    report("raw VideoCapture.read 640x480 p50", raw50, "ms")
    report("vision capture->jpeg->base64 640x480 p50", cam50, "ms", "bare imencode+base64 p50", bare50)
    report("vision capture->jpeg->base64 640x480 p95", cam95, "ms", "bare imencode+base64 p95", bare95)
    report("vision query via responder p50", q50, "ms", "bare imencode+base64 p50", bare50)
    report("vision query via responder p95", q95, "ms", "bare imencode+base64 p95", bare95)
    report("vision query with on-device description p95", d95, "ms", "bare imencode+base64 p95", bare95)
    print(f"target: capture p95 <= 33 ms: {'met' if cam95 <= 33 else 'MISSED'} ({cam95:.1f} ms);"
          f" raw read p95 {raw95:.1f} ms, description query p50 {d50:.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
