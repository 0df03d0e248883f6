"""pyttsx3 engine handling that the speaker thread needs: text chunking and the espeak driver's quirks.

Everything here runs on the speaker thread (the one thread that owns the engine).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from typing import Any, Final

log = logging.getLogger(__name__)

MAX_CHUNK_CHARS: Final = 200
_SENTENCE_END = re.compile(r"(?<=[。！？!?.…\n])\s*")


def split_for_speech(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[str]:
    """Sentences packed into chunks of at most ``max_chars`` (a longer sentence is cut at a comma or space)."""
    pieces: list[str] = []
    for raw in _SENTENCE_END.split(text):
        sentence = raw.strip()
        while len(sentence) > max_chars:
            cut = max(sentence.rfind(sep, 0, max_chars) for sep in ("、", ",", " ", "，"))
            cut = cut + 1 if cut > 0 else max_chars
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            pieces.append(sentence)
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 1 + len(piece) <= max_chars:
            chunks[-1] = f"{chunks[-1]} {piece}"
        else:
            chunks.append(piece)
    return chunks


def _driver_print(*args: object, **_: object) -> None:
    log.debug("pyttsx3: %s", " ".join(str(a) for a in args))


def quiet_driver_prints(driver: object) -> None:
    """pyttsx3's espeak driver prints "Audio saved to ..." to stdout for every file it writes (from espeak's
    thread); stdout may carry ``madoi --headless`` output, so its module-level ``print`` goes to the log instead."""
    module = sys.modules.get(type(driver).__module__)
    if module is not None:
        module.print = _driver_print  # type: ignore[attr-defined]


def wait_idle(engine: Any, timeout: float = 1.0) -> None:
    """Waits (bounded) until the engine and espeak's own synthesis thread are idle.

    espeak queues property changes in its command FIFO, and pyttsx3's runAndWait() cancels that FIFO when espeak
    still looks busy: starting an utterance before espeak is idle loses its rate/voice (it is spoken with the last
    utterance's settings).
    """
    deadline = time.monotonic() + timeout
    while _engine_busy(engine) and time.monotonic() < deadline:
        time.sleep(0.001)


def _engine_busy(engine: Any) -> bool:
    if engine.isBusy():
        return True
    if type(engine.proxy._driver).__name__ == "EspeakDriver":
        from pyttsx3.drivers import _espeak  # the only way to ask espeak itself

        return bool(_espeak.IsPlaying())
    return False
