"""A companion's tools beyond the built-in ones, in a conversation turn: a plugin package's action and knowledge
(entry points of tests/data/plugins, put on sys.path) and a real MCP server's tools (tests/data/mcp)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from companions.cards.approval import CardTrust
from companions.cards.card import CompanionCard, load_cards
from companions.companion.cast import build_cast
from companions.companion.companion import Companion
from companions.llm.scripted import ScriptedModel, call, last_message_mentions, offers_tools
from companions.tools.mcp_config import McpServer
from companions.tools.tool_use import ToolProblem, ToolUsed
from companions.wire.bus import BusItem, InProcessBus
from companions.wire.protocol import Message
from companions.wire.query_broker import QueryBroker

DATA = Path(__file__).resolve().parents[2] / "data"
MCP_SERVER = DATA / "mcp" / "lantern_server.py"
QUESTION = Message.create(from_="user", message="What colour are the lanterns in Gion?", to=["tomo"])


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "plugins"))


@pytest.fixture
async def env() -> AsyncIterator[tuple[InProcessBus, QueryBroker, list[BusItem]]]:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    events: list[BusItem] = []
    bus.subscribe("events", events.append, name="test-events")
    yield bus, broker, events
    await broker.aclose()
    await bus.aclose()


def card(folder: Path, extra: str) -> CompanionCard:
    folder.mkdir(exist_ok=True)
    (folder / "tomo.yaml").write_text(f"metadata: {{id: tomo, name: Tomo}}\nrole: Knows lanterns.\n{extra}",
                                      encoding="utf-8")
    loaded = load_cards([folder])
    assert loaded.problems == []
    return loaded.cards[0]


async def test_a_plugin_package_adds_an_action_and_knowledge_and_a_broken_one_is_named(
    plugins: None, env: tuple[InProcessBus, QueryBroker, list[BusItem]], tmp_path: Path,
) -> None:
    bus, broker, events = env
    tomo = card(tmp_path / "cards",
                "actions: [speak, light_lantern, wet_wick, not_tools]\nknowledge: [lantern_lore]\n")
    model = ScriptedModel("tomo")
    model.add(
        call("light_lantern", {"colour": "red"}, expect=offers_tools("speak", "light_lantern", "lantern_lore")),
        call("speak", {"message": "I lit a red one for you."},
             expect=last_message_mentions("A red lantern now glows by the door (lit by the lantern plugin).")),
    )
    reported: list[str] = []
    companion = Companion(tomo, model, bus=bus, queries=broker, language="en", report=reported.append)
    assert companion.tools.names == ["speak", "light_lantern", "lantern_lore"]
    assert len(reported) == 2
    assert "actions plugin 'wet_wick' (madoi_broken_plugin:tools) failed to load" in reported[0]
    assert "the plugin's wick is wet" in reported[0]
    assert "actions plugin 'not_tools' (madoi_lantern_plugin:NOT_TOOLS) gave no tools" in reported[1]
    lore = await companion.tools.run("lantern_lore", {"topic": "stone"})
    assert lore.content == "tomo recalls: the first stone lantern was lit in 1183."  # made for this companion

    planned = await companion.compose(QUESTION)
    await bus.drain()
    assert planned is not None
    assert planned.text == "I lit a red one for you."
    used = [e for e in events if isinstance(e, ToolUsed)]
    assert [(u.tool, u.origin, u.turn_id, u.is_error) for u in used] == [
        ("light_lantern", "plugin:light_lantern", QUESTION.params.id, False),
        ("speak", "built-in", QUESTION.params.id, False),
    ]
    assert [p.text for p in events if isinstance(p, ToolProblem)] == reported
    model.assert_used_up()


def test_a_card_naming_a_plugin_that_is_not_installed_is_a_card_problem(plugins: None, tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("metadata: {id: x, name: X}\nrole: r\nknowledge: [lantern_lore, star_lore]\n",
                                     encoding="utf-8")
    loaded = load_cards([tmp_path])
    assert loaded.cards == []
    assert [(p.field, p.reason) for p in loaded.problems] == [
        ("knowledge.1", "no built-in knowledge or installed plugin (madoi.knowledge) named 'star_lore'; "
                        "built in: companions_network, vision, search")]


async def test_a_companion_uses_an_mcp_servers_tool_in_its_turn(
    env: tuple[InProcessBus, QueryBroker, list[BusItem]], tmp_path: Path,
) -> None:
    bus, broker, events = env
    card(tmp_path / "cards", f"mcp:\n  - name: lanterns\n    command: {sys.executable}\n"
                             f"    args: ['{MCP_SERVER}', stdio]\n"
                             f"  - name: gone\n    command: /nonexistent/lantern-server\n")
    model = ScriptedModel("tomo")
    model.add(
        call("lantern_colour", {"place": "Gion"}, expect=offers_tools("speak", "lantern_colour")),
        call("speak", {"message": "They glow indigo."},
             expect=last_message_mentions("The lanterns at Gion glow indigo (lantern registry no. 7431).")),
    )
    reported: list[str] = []
    cast = build_cast([tmp_path / "cards"], lambda _card: model, bus=bus, queries=broker, language="en",
                      report=reported.append, trust=CardTrust.of([tmp_path / "cards"]),  # trusted like the samples
                      mcp_servers=[McpServer(name="every", command=sys.executable, args=[str(MCP_SERVER), "stdio"],
                                             tools=["count_lanterns"])])
    tomo = cast.companions["tomo"]
    assert "lantern_colour" not in tomo.tools, "MCP servers start with the companion"
    await cast.start()
    try:
        assert {"speak", "lantern_colour", "count_lanterns"} <= set(tomo.tools.names)
        assert len(reported) == 1
        assert reported[0].startswith("companion tomo: MCP server 'gone' (/nonexistent/lantern-server) could not")
        planned = await tomo.compose(QUESTION)
        await bus.drain()
        assert planned is not None
        assert planned.text == "They glow indigo."
        used = next(e for e in events if isinstance(e, ToolUsed))
        assert (used.tool, used.origin, used.companion_id, used.turn_id) == (
            "lantern_colour", "mcp:lanterns", "tomo", QUESTION.params.id)
        assert used.result == "The lanterns at Gion glow indigo (lantern registry no. 7431)."
        model.assert_used_up()
    finally:
        await cast.stop()
    assert "lantern_colour" not in tomo.tools, "stopping the companion closes its servers"
