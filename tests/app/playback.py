"""Speaking aloud in tests with no sound card: a stand-in player process found on PATH as ``pw-play`` (it plays a
WAV file for its duration, holding a socket to the test open meanwhile, so the test sees the moment it is gone),
and the demo model with lines long enough to take seconds to say."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from companions.testing.openai_server.demo_director import DemoDirector
from companions.testing.openai_server.replies import Reply, tool_call_reply

LONG_LINE = ("Let me tell you everything I know about the stars tonight, from the first one that appears after "
             "sunset to the last one that fades at dawn, slowly and with all the details.")
PLAYER = """#!{python} -S
import socket, sys, time, wave
with wave.open(sys.argv[-1], "rb") as w:
    seconds = w.getnframes() / w.getframerate()
link = socket.create_connection(("127.0.0.1", {port}))  # open while this process plays
time.sleep(seconds)
link.close()
"""


class LongLines(DemoDirector):
    """The demo's model, except that every line is long (it takes seconds to say)."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        if any(t.get("function", {}).get("name") == "speak" for t in body.get("tools") or []) \
                and not any(m.get("role") == "tool" for m in body.get("messages") or [] if isinstance(m, dict)) \
                and body.get("response_format") is None and body.get("tool_choice") in (None, "auto"):
            return tool_call_reply(("speak", {"message": LONG_LINE, "emotion": "neutral"}))
        return reply


class Players:
    """Counts the stand-in player processes that are playing; an event per start and per end."""

    def __init__(self) -> None:
        self.playing = 0
        self.started = 0
        self.ended_at: list[float] = []
        self._changed = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def _on_player(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.playing += 1
        self.started += 1
        self._changed.set()
        await reader.read()  # EOF: the process ended (played to the end, or terminated)
        self.ended_at.append(time.perf_counter())
        self.playing -= 1
        self._changed.set()
        writer.close()

    async def wait_for(self, predicate: Any, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()
