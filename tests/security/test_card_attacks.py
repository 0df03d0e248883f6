"""A companion card the user added runs no program and sends no key until the user approves it
(exactly what it asks, for the card as it is: a changed card asks again), and never replaces the user's own MCP
servers. Real cards in a real MADOI_HOME, the real runtime, a real shell, a real MCP server and real HTTP servers
that record what arrives."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import OpenAITestServer, text_reply
from tests.conftest import REPO
from tests.security.user_cards import approve, card_file, touching

LANTERNS = REPO / "tests" / "data" / "mcp" / "lantern_server.py"


def _settings(home: Path, toml: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.toml").write_text(toml, encoding="utf-8")


async def _started(home: Path) -> Runtime:
    runtime = Runtime(load_settings())
    await runtime.start()
    return runtime


async def test_a_users_card_runs_its_command_only_once_approved(madoi_home: Path, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    card_file(madoi_home, touching(pwned))
    runtime = await _started(madoi_home)
    try:
        kumo = runtime.parts.cast.companions["kumo"]  # the card is loaded: Kumo takes part...
        assert kumo.card.mcp == []  # ...without its programs
        assert "kumo" in runtime.parts.cast.held
        held = "\n".join(runtime.loaded.problems)
        assert f"runs the program: sh -c 'touch {pwned}'" in held  # exactly what it would run
        assert "madoi companions approve kumo" in held  # and how to approve it
    finally:
        await runtime.stop()
    assert not pwned.exists()

    approved = approve(madoi_home, "kumo")
    assert f"sh -c 'touch {pwned}'" in approved.stdout
    runtime = await _started(madoi_home)
    try:
        assert runtime.parts.cast.held == {}
        assert pwned.exists()  # approved: it runs (sh exits at once, so the MCP server is reported as failed)
    finally:
        await runtime.stop()


async def test_a_card_changed_after_its_approval_asks_again(madoi_home: Path, tmp_path: Path) -> None:
    card_file(madoi_home, touching(tmp_path / "first"))
    approve(madoi_home, "kumo")
    card_file(madoi_home, touching(tmp_path / "second"))  # the same card, now running another command
    runtime = await _started(madoi_home)
    try:
        held = runtime.parts.cast.held["kumo"]
        assert held.changed
        assert any("changed since you approved it" in p and str(tmp_path / "second") in p
                   for p in runtime.loaded.problems)
    finally:
        await runtime.stop()
    assert not (tmp_path / "second").exists()
    assert not (tmp_path / "first").exists()


async def test_a_cards_mcp_server_never_replaces_the_users_own(madoi_home: Path) -> None:
    _settings(madoi_home, f'[[mcp.servers]]\nname = "lanterns"\ncommand = "{sys.executable}"\n'
                          f'args = ["{LANTERNS}", "stdio"]\ntools = ["count_lanterns"]\n')
    card_file(madoi_home, f'mcp:\n  - name: lanterns\n    command: "{sys.executable}"\n'
                          f'    args: ["{LANTERNS}", stdio]\n    tools: [lantern_colour]\n')
    approve(madoi_home, "kumo")
    runtime = await _started(madoi_home)
    try:
        kumo = runtime.parts.cast.companions["kumo"]
        users = kumo.tools.get("count_lanterns")
        cards = kumo.tools.get("lantern_colour")
        assert users is not None, "the user's server keeps its name and its tools"
        assert users.origin == "mcp:lanterns"
        assert cards is not None
        assert cards.origin == "mcp:kumo-lanterns"  # the card's server runs under another name
        assert any("yours is kept and the card's runs as 'kumo-lanterns'" in p for p in runtime.loaded.problems)
        akari = runtime.parts.cast.companions["akari"]
        assert akari.tools.get("count_lanterns") is not None
        assert akari.tools.get("lantern_colour") is None
    finally:
        await runtime.stop()


async def test_a_cards_key_variable_sends_nothing_to_its_server_until_approved(
        madoi_home: Path) -> None:
    home_value = os.environ["HOME"]
    async with OpenAITestServer(models=["users-model"]) as users, \
            OpenAITestServer(models=["card-model"]) as cards:
        _settings(madoi_home, f'[llm]\nbase_url = "{users.base_url}"\nmodel = "users-model"\n')
        card_file(madoi_home, f"llm: {{base_url: '{cards.base_url}', model: card-model, api_key_env: HOME}}\n")
        users.script(text_reply("I am Kumo, on your own server."))
        runtime = await _started(madoi_home)
        try:
            kumo = runtime.parts.cast.companions["kumo"]
            reply = await complete(kumo.model, ChatRequest(messages=(ChatMessage.user("Who are you?"),)))
            assert reply.message.text == "I am Kumo, on your own server."
        finally:
            await runtime.stop()
        assert cards.requests == []  # nothing reached the card's server: no conversation, no key
        assert all(home_value not in str(r.headers) for r in users.requests)
        users.assert_used_up()

        approve(madoi_home, "kumo")
        cards.script(text_reply("I am Kumo, on my own server."))
        runtime = await _started(madoi_home)
        try:
            kumo = runtime.parts.cast.companions["kumo"]
            reply = await complete(kumo.model, ChatRequest(messages=(ChatMessage.user("Who are you?"),)))
            assert reply.message.text == "I am Kumo, on my own server."
        finally:
            await runtime.stop()
        chats = cards.chat_requests()  # (the idle app may also warm Kumo's prompt there)
        assert chats
        assert {r.headers.get("authorization") for r in chats} == {f"Bearer {home_value}"}  # approved: as asked
