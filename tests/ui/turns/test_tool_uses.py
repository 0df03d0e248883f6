"""A companion uses an MCP server's tool in a conversation and the Turns panel shows the call: a real started
runtime (scripted models), the settings' MCP servers for every companion, a real SDK server on a loopback port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeControl, RuntimePeople
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import call, last_message_mentions
from companions.tools.tool_use import ToolUsed
from tests.ui.conftest import switch_language
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.turns.panel import TurnsPanel

SERVER = Path(__file__).resolve().parents[2] / "data" / "mcp" / "lantern_server.py"
ANSWER = "The lanterns at Gion glow indigo (lantern registry no. 7431)."


@pytest.fixture
def lantern_url() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/mcp"
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def mcp_settings(madoi_home: Path, lantern_url: str) -> None:
    """Every companion gets the lantern server (one of its tools) and a server that cannot start."""
    madoi_home.mkdir(parents=True, exist_ok=True)
    (madoi_home / "settings.toml").write_text(
        f'[[mcp.servers]]\nname = "lanterns"\nurl = "{lantern_url}"\ntools = ["lantern_colour"]\n\n'
        '[[mcp.servers]]\nname = "gone"\ncommand = "/nonexistent/lantern-server"\n', encoding="utf-8")


async def test_an_mcp_tool_call_in_a_conversation_shows_in_the_turns_panel(qtbot: QtBot, mcp_settings: None) -> None:
    cast = scripted_cast()
    lines(cast["akari"],
          call("vision", {}),  # no camera here (MADOI_CAMERA=none): a failed look
          call("lantern_colour", {"place": "Gion"}),
          call("speak", {"message": "Indigo, all of them!"}, expect=last_message_mentions(ANSWER)))
    votes(cast["hina"], ("listen", 1))
    votes(cast["souta"], ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        assert runtime.parts.cast is not None
        assert all("lantern_colour" in c.tools for c in runtime.parts.cast), "the settings' server serves everyone"
        gone = [p for p in runtime.loaded.problems if "MCP server 'gone'" in p]
        assert len(gone) == 3, "each companion's failed server is a start-up problem the window lists"
        assert gone[0].startswith("companion akari: MCP server 'gone' (/nonexistent/lantern-server) could not start")
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        panel = TurnsPanel(runtime.bus, RuntimeControl(runtime), RuntimePeople(runtime))
        qtbot.addWidget(panel)
        panel.resize(640, 720)
        panel.show()
        panel.attach()
        assert panel.tools_used.lines() == []

        runtime.parts.conversations.send("Akari, what colour are the lanterns in Gion?", to=["akari"])
        await until(panel.tools_used.changed, lambda: len(panel.tools_used.lines()) >= 2, timeout=20)
        await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        # What a person cares about: the camera (in words) and the tool from outside; not the built-in speak call,
        # whose result is a note to the model ("Noted: you will say this...") and whose line is in the chat.
        [look, lantern] = panel.tools_used.lines()
        assert look == ("Akari · the camera (built-in) → You could not see anything: no camera: turned off in the "
                        "settings")
        assert lantern == f"Akari · lantern_colour (MCP server lanterns) → {ANSWER}"
        switch_language("ja")
        assert panel.tools_used.title.text() == "使ったツール"
        runtime.bus.publish(ToolUsed.of("akari", "t2", "vision", origin="built-in", arguments="{}", result="x",
                                        is_error=False))
        await until(panel.tools_used.changed, lambda: len(panel.tools_used.lines()) == 3)
        assert panel.tools_used.lines()[-1].startswith("あかり · カメラ")
        cast.assert_used_up()
        panel.detach()
        talk.close()
