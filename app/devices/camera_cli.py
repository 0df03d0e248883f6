"""``madoi camera``: what the camera's pictures tell a companion, from the command line.

    madoi camera describe IMAGE... [--json] [--language ja|en]

Each picture is described as a look of the camera would be (app/devices/vision_description.py: the text read by
OCR, the people, the things and where they are, what changed since the previous picture), and the words are
printed exactly as a companion is told them. ``--json`` prints one JSON object a picture (``text``: the strings
read, ``people``: an int, ``summary``: the words, and the details). The language is the app's own (settings) unless
given. OpenCV loads when a command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

LANGUAGES = ("ja", "en")


def add_camera_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Adds ``camera`` (with ``describe``) to an ``add_subparsers()`` object."""
    camera = subparsers.add_parser("camera", help="what the camera's pictures tell the companions")
    commands = camera.add_subparsers(dest="camera_command", required=True)
    describe = commands.add_parser(
        "describe", help="print what a companion is told of a picture (several: each says what changed)")
    describe.add_argument("images", nargs="+", type=Path, metavar="IMAGE", help="a picture file (PNG, JPEG ...)")
    describe.add_argument("--json", action="store_true", help="print one JSON object a picture")
    describe.add_argument("--language", choices=LANGUAGES,
                          help="the conversation's language (default: the app's language in the settings)")
    return camera


def _app_language() -> str:
    try:
        from app.settings.model import load_settings

        language = load_settings().settings.general.language
    except Exception:  # unreadable settings must not keep a picture from being described
        return "en"
    return language if language in LANGUAGES else "en"


def description_json(image: Path, description: Any, language: str) -> dict[str, Any]:
    """What ``madoi camera describe --json`` prints for one picture (``description``: a VisionDescription)."""
    from app.devices.vision_description import in_words

    return {
        "image": str(image),
        "language": language,
        "summary": in_words(description, language),
        "text": list(description.text),
        "text_on_paper": description.text_on_paper,
        "text_problem": description.text_problem,
        "people": description.faces if description.faces is not None else 0,
        "people_counted": description.faces is not None,
        "things": [thing.model_dump(mode="json") for thing in description.things],
        "since_last": description.since_last.model_dump(mode="json") if description.since_last else None,
    }


def describe_images(images: list[Path], language: str, as_json: bool, out: TextIO, err: TextIO) -> int:
    """Describes ``images`` in order, each as the look after the one before; 0, or 1 when one could not be read."""
    import cv2
    import numpy as np

    from app.devices.vision_description import describe_frame, in_words

    failed = 0
    previous = None
    for image in images:
        frame = cv2.imread(str(image), cv2.IMREAD_COLOR) if image.is_file() else None
        if frame is None:
            why = "no such file" if not image.exists() else "not a picture OpenCV can read"
            print(f"madoi camera describe: {image}: {why}", file=err)
            failed = 1
            continue
        description, previous = describe_frame(np.asarray(frame, dtype=np.uint8), previous)
        if as_json:
            out.write(json.dumps(description_json(image, description, language), ensure_ascii=False) + "\n")
        else:
            print(in_words(description, language), file=out)
        out.flush()
    return failed


def run_camera_command(args: argparse.Namespace) -> int:
    """Runs a parsed ``madoi camera ...`` command. Returns the exit code (0 ok, 1 a picture could not be read)."""
    language = args.language or _app_language()
    return describe_images(list(args.images), language, args.json, sys.stdout, sys.stderr)
