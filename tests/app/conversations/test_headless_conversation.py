"""``madoi --headless`` with the three sample companions, thinking through the real ``openai`` client over real HTTP
against a scripted OpenAI-compatible endpoint, holds a conversation that closes by itself; it is stored in SQLite."""

from __future__ import annotations

import asyncio
import itertools
import signal
import sqlite3
from pathlib import Path

from websockets.asyncio.client import connect

from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import GOODBYE, DemoDirector
from companions.wire.protocol import Message, frame_of
from tests.app.headless import line_containing
from tests.conftest import PYTHON, REPO, free_port, subprocess_env


async def test_a_headless_conversation_with_the_sample_companions_closes_by_itself(tmp_path: Path) -> None:
    director = DemoDirector()
    home = tmp_path / "home"
    bridge_port = free_port()
    async with OpenAITestServer(models=["demo-model"], fallback=director) as server:
        env = subprocess_env(home, PYTHONPATH=str(REPO), MADOI_LLM_BASE_URL=server.base_url,
                             MADOI_BRIDGE_PORT=str(bridge_port))
        proc = await asyncio.create_subprocess_exec(PYTHON, "-m", "app.main", "--headless", cwd=REPO, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            ready = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            assert ready.startswith("madoi: ready"), ready
            async with connect(f"ws://127.0.0.1:{bridge_port}", proxy=None) as client:
                opening = Message.create(from_="user", message="みんな、こんばんは！", to=[])
                await client.send(frame_of(opening))  # an external client speaking as the user
                ended = await line_containing(proc.stderr, "conversation ended:", timeout=120)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode(errors="replace")
    assert "closed" in ended, ended  # the chosen speaker said goodbye: not the cap, not "nobody wants to speak"

    with sqlite3.connect(home / "madoi.sqlite3") as db:
        said = db.execute("SELECT sender, text FROM messages ORDER BY seq").fetchall()
        closings = [row[0] for row in db.execute("SELECT closing FROM states ORDER BY seq")]
    assert said[0] == ("user", "みんな、こんばんは！")
    companions = said[1:]
    assert companions == director.said  # every line the model gave was spoken, stored, in order
    assert companions[-1][1] == GOODBYE["ja"]
    assert {who for who, _ in companions} == {"akari", "hina", "souta"}  # the floor went round
    assert all(a != b for (a, _), (b, _) in itertools.pairwise(companions))  # never twice in a row
    assert closings[0] == "none"
    assert closings[-1] == "terminal"
    assert {"pre-closing", "closing"} <= set(closings)
    # A local server runs one request at a time: the user's message is answered at once by the likely speaker;
    # then the two others vote on every line, while it is spoken, in one joint request.
    assert director.requests["joint_vote"] >= len(companions) - 1
    assert "vote" not in director.requests
