"""Noticing through the camera: event latency, false events in an empty room, and the CPU it costs while watching.

- **Latency**: the real camera adapter plays a generated room video (640 x 480, 30 fps, a webcam's noise) in real
  time and the watcher reads it at 2 frames a second with the default waits (but ``return_after_s`` 20 s, so the
  story stays short): from the moment a scene starts in the video to the event on the bus. ``left`` includes the
  10 s without a face it waits by design.
- **False events**: 10 minutes of an empty room at 2 frames a second (noise, a lamp dimmed to half and up again, a
  sudden 30 % change of light, the sun slowly going, a noisier dark corner), read with OpenCV and given to the
  detector at their times: every event is a false one (goal 0).
- **CPU**: the process's CPU time (all threads: the camera's grabber, the executor, the loop) over 60 s while
  watching a 30 fps video of an empty room, then of a person moving, as a share of one core; the baseline is the
  same process over 20 s with the camera closed. A webcam's frames are taken off it (not decoded) between the two a
  second that are kept; a file instead jumps to where its timeline is.

    nice -n 10 python bench/presence.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import _report  # noqa: F401 - puts the repo on sys.path
import cv2
import numpy as np
from _report import report

from app.devices.camera import OpenCVCamera
from app.devices.presence import NoticeTimes, PresenceDetector, PresenceWatcher
from companions.devices.presence import PresenceNoticed
from companions.wire.bus import InProcessBus
from tests.app.devices.room_videos import LEFT, RIGHT, Scene, scene_starts, write_room_video

STORY = [
    (Scene(10), None),
    (Scene(12, faces=(RIGHT,)), "arrived"),
    (Scene(10, faces=(RIGHT, LEFT)), "second_person"),
    (Scene(14, faces=(RIGHT,)), None),
    (Scene(8, faces=(RIGHT,), held_up=True), "held_up"),
    (Scene(8, faces=(RIGHT,)), None),
    (Scene(8, faces=(RIGHT,), light=0.1), "dark"),
    (Scene(6, faces=(RIGHT,)), None),
    (Scene(25), "left"),
    (Scene(10, faces=(RIGHT,)), "returned"),
]
EMPTY_ROOM = [Scene(60), Scene(20, light_to=0.5), Scene(60, light=0.5), Scene(20, light=0.5, light_to=1.0),
              Scene(60), Scene(60, light=0.7), Scene(60), Scene(120, light_to=0.6), Scene(60, light=0.6, noise=2.5),
              Scene(60, light=0.6, light_to=1.0), Scene(20)]  # 600 s


async def latency(video: Path, scenes: list[tuple[Scene, str | None]]) -> None:
    bus = InProcessBus()
    got: list[tuple[float, PresenceNoticed]] = []
    bus.subscribe("events", lambda e: got.append((time.time(), e)) if isinstance(e, PresenceNoticed) else None,
                  name="bench")
    camera = OpenCVCamera(str(video), bus)
    watcher = PresenceWatcher(camera, bus, on=True, times=NoticeTimes(return_after_s=20.0))
    await camera.start()
    await watcher.start()
    first = None
    while first is None:  # the video's first frame: its start in wall-clock time
        grab = camera.latest()
        if grab is not None:
            first = grab.timestamp if grab.seq == 1 else None
            if first is None:
                raise SystemExit("the first frame was missed")
        await asyncio.sleep(0.005)
    length = sum(scene.seconds for scene, _ in scenes)
    await asyncio.sleep(length - (time.time() - first) - 0.5)  # before the file loops
    await watcher.stop()
    await camera.stop()
    await bus.drain()
    await bus.aclose()
    starts = scene_starts([scene for scene, _ in scenes])
    kinds = [event.kind for _, event in got]
    expected = [kind for _, kind in scenes if kind]
    print(f"events: {kinds} (expected {expected})", flush=True)
    for (_, kind), start in zip(scenes, starts, strict=True):
        if kind is None:
            continue
        seen = [(at, event) for at, event in got if event.kind == kind and event.at >= first + start - 0.1]
        if not seen:
            report(f"presence {kind} latency", float("nan"), "s (missed)")
            continue
        at, event = seen[0]
        extra = f" (away {event.away_s:.1f} s)" if kind == "returned" else ""
        report(f"presence {kind} latency{extra}", at - (first + start), "s")


def false_events(video: Path, fps: float) -> None:
    detector = PresenceDetector()
    capture = cv2.VideoCapture(str(video))
    events: list[PresenceNoticed] = []
    frames = 0
    began = time.process_time()
    while True:
        ok, image = capture.read()
        if not ok:
            break
        events += detector.see(np.asarray(image, dtype=np.uint8), frames / fps)
        frames += 1
    spent = time.process_time() - began
    capture.release()
    minutes = frames / fps / 60
    print(f"false events: {[e.kind for e in events]}", flush=True)
    report("presence false events per 10 min (empty room, noise, light changes)", len(events) * 10 / minutes,
           f"events ({frames} frames, {minutes:.1f} min)")
    report("presence faces searched", detector.counted / frames * 100, "% of frames")
    report("presence detector CPU per frame (decode included)", spent / frames * 1000, "ms")


def moving_person_video(path: Path, seconds: float, fps: float = 30.0) -> Path:
    """A person moving in front of the camera all the time (every frame differs: faces are searched every time)."""
    from tests.app.devices.room_videos import NOISE_FIELDS, noise_fields, room, scene_frame

    base = room()
    fields = noise_fields(np.random.default_rng(3), base.shape, 6.0)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (640, 480))
    for index in range(round(seconds * fps)):
        x = 380 + round(80 * np.sin(index / fps))
        writer.write(scene_frame(base, Scene(1, faces=((x, 250),)), 0.0, fields[index % NOISE_FIELDS]))
    writer.release()
    return path


def thread_cpu(native_id: int | None) -> float:
    """A thread's CPU time so far (Linux), 0 when unknown."""
    try:
        fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def cpu_share(video: Path | None, seconds: float) -> tuple[float, int, float]:
    """The process's CPU share of one core while watching, the frames read a second, and the share of it the
    camera's grabber thread took (reading the file)."""
    bus = InProcessBus()
    camera = OpenCVCamera(str(video) if video else "none", bus)
    watcher = PresenceWatcher(camera, bus, on=video is not None)
    await camera.start()
    await watcher.start()
    await asyncio.sleep(2.0)  # opened, the cascade loaded
    grabber = camera._thread.native_id if camera._thread is not None else None  # (the grabber thread, measured alone)
    wall, cpu, read, grabbing = time.monotonic(), time.process_time(), watcher.frames_read, thread_cpu(grabber)
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - wall
    share = (time.process_time() - cpu) / elapsed
    grabbing = (thread_cpu(grabber) - grabbing) / elapsed
    read = watcher.frames_read - read
    await watcher.stop()
    await camera.stop()
    await bus.aclose()
    return share, read, grabbing


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a minute of empty room and 15 s of CPU")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="madoi-presence-") as tmp:
        folder = Path(tmp)
        empty = EMPTY_ROOM[:3] if args.quick else EMPTY_ROOM
        false_events(write_room_video(folder / "empty.avi", empty, fps=2.0, seed=11), 2.0)
        seconds = 15.0 if args.quick else 60.0
        idle, _, _ = await cpu_share(None, seconds / 3)
        report("process CPU, camera closed (baseline)", idle * 100, "% of one core")
        still = write_room_video(folder / "still.avi", [Scene(10)], fps=30.0, seed=5)
        moving = moving_person_video(folder / "moving.avi", 10.0)
        for what, video in (("an empty room", still), ("a person moving", moving)):
            share, read, grabbing = await cpu_share(video, seconds)
            report(f"presence CPU watching {what} ({read / seconds:.2f} frames/s read)", share * 100,
                   "% of one core", "camera closed", idle * 100)
            report(f"  of which the camera reading the 30 fps file ({what})", grabbing * 100, "% of one core")
        story = write_room_video(folder / "story.avi", [scene for scene, _ in STORY], fps=30.0, seed=9)
        await latency(story, STORY)
    print(f"load average: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
