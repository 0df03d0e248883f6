"""A character card imported with ``madoi companions import`` talks at once: ``madoi --headless`` against the scripted
demo endpoint (real HTTP through the real ``openai`` client), a message to the imported companion through the
bridge, and its line stored in the conversation."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import sqlite3
import subprocess
from pathlib import Path

from PySide6.QtGui import QColor, QImage
from websockets.asyncio.client import connect

from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from companions.wire.protocol import Message, frame_of
from tests.app.headless import line_containing
from tests.conftest import PYTHON, REPO, free_port, subprocess_env

CARD = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
    "name": "Seraphina", "description": "{{char}} guards the glade.", "personality": "Gentle, wise.",
    "first_mes": "Welcome to the glade, {{user}}.", "mes_example": "<START>\n{{char}}: Rest now."}}


def _card_png(path: Path) -> Path:
    image = QImage(64, 64, QImage.Format.Format_RGB32)
    image.fill(QColor("#88aa44"))
    image.setText("ccv3", base64.b64encode(json.dumps(CARD).encode()).decode())
    assert image.save(str(path), "PNG")
    return path


def _import(env: dict[str, str], card: Path) -> str:
    """``madoi companions import CARD``; what it printed."""
    done = subprocess.run([PYTHON, "-m", "app.main", "companions", "import", str(card)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_an_imported_character_talks_on_the_demo_endpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = subprocess_env(home, PYTHONPATH=str(REPO))
    printed = await asyncio.to_thread(_import, env, _card_png(tmp_path / "s.png"))
    assert printed.startswith("seraphina: Seraphina imported from a V3 PNG card")
    port = free_port()
    director = DemoDirector()
    async with OpenAITestServer(models=["demo-model"], fallback=director) as server:
        proc = await asyncio.create_subprocess_exec(
            PYTHON, "-m", "app.main", "--headless", cwd=REPO,
            env=env | {"MADOI_LLM_BASE_URL": server.base_url, "MADOI_BRIDGE_PORT": str(port)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            ready = (await asyncio.wait_for(proc.stdout.readline(), 90)).decode()
            assert ready.startswith("madoi: ready"), ready
            async with connect(f"ws://127.0.0.1:{port}", proxy=None) as client:
                hello = Message.create(from_="user", message="Seraphina, good evening!", to=["seraphina"])
                await client.send(frame_of(hello))
                await line_containing(proc.stderr, "conversation ended:", timeout=120)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode(errors="replace")
    with sqlite3.connect(home / "madoi.sqlite3") as db:
        said = db.execute("SELECT sender, text FROM messages ORDER BY seq").fetchall()
    assert said[0] == ("user", "Seraphina, good evening!")
    assert said[1][0] == "seraphina"  # named, so she answers first...
    who, line = director.said[0]
    assert who == "seraphina"
    assert said[1][1]
    assert said[1][1] in line  # ...with the line the model gave her (as the line checks keep it)
    prompts = [json.dumps(r.body, ensure_ascii=False) for r in server.chat_requests()]
    assert any("Seraphina guards the glade." in p for p in prompts)  # her card reached the model
