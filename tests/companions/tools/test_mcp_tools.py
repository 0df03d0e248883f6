"""MCP servers' tools as companion tools: a real MCP server (tests/data/mcp/lantern_server.py, on the SDK) as a
subprocess over stdio and on a loopback port over streamable HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from companions.tools.functions import ToolRegistry, tool
from companions.tools.mcp import McpTools
from companions.tools.mcp_config import McpServer

SERVER = Path(__file__).resolve().parents[2] / "data" / "mcp" / "lantern_server.py"


def stdio_server(**options: object) -> McpServer:
    return McpServer.model_validate({"name": "lanterns", "command": sys.executable, "args": [str(SERVER), "stdio"],
                                     **options})


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen([sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield process, f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


@tool
async def speak(message: str) -> str:
    """Say something."""
    return message


async def test_stdio_server_tools_run_like_built_in_ones() -> None:
    problems: list[str] = []
    registry = ToolRegistry([speak])
    # Probed every 0.1 s while idle: a live server must never be taken for a dead one.
    mcp = McpTools([stdio_server(timeout_s=0.5)], "akari", problems.append, ping_interval_s=0.1)
    await mcp.start(registry)
    try:
        assert {"lantern_colour", "count_lanterns", "broken_lantern", "slow_lantern", "snuff_out"} <= set(
            registry.names)
        colour = registry.get("lantern_colour")
        assert colour is not None
        assert colour.origin == "mcp:lanterns"
        assert colour.spec.description.startswith("The colour of the lanterns at a place.")
        assert colour.spec.parameters["required"] == ["place"]

        ok = await registry.run("lantern_colour", '{"place": "Gion"}', "c1")
        assert (ok.call_id, ok.is_error) == ("c1", False)
        assert ok.content == "The lanterns at Gion glow indigo (lantern registry no. 7431)."
        assert (await registry.run("count_lanterns", {"street": "Pontocho", "nights": 2})).content == "32"

        # Validated against the server's schema before anything is sent, worded like a built-in tool's error.
        missing = await registry.run("lantern_colour", "{}")
        assert missing.is_error
        assert missing.content == ("Error in lantern_colour: invalid arguments: <arguments>: "
                                   "'place' is a required property")
        wrong = await registry.run("count_lanterns", {"street": "x", "nights": "two"})
        assert wrong.is_error
        assert "nights: 'two' is not of type 'integer'" in wrong.content
        bad_json = await registry.run("lantern_colour", "{place")
        assert bad_json.is_error
        assert "not valid JSON" in bad_json.content

        failed = await registry.run("broken_lantern", {})
        assert failed.is_error
        assert failed.content.startswith("Error in broken_lantern:")
        assert "the wick is wet" in failed.content

        slow = await registry.run("slow_lantern", {"seconds": 3})
        assert slow.is_error
        assert slow.content == "Error in slow_lantern: timed out after 0.5 s"
        assert problems == []
    finally:
        await mcp.aclose()
    assert "lantern_colour" not in registry
    assert registry.names == ["speak"]


async def test_a_server_that_dies_makes_its_tools_answer_unavailable_and_is_reported() -> None:
    problems: list[str] = []
    registry = ToolRegistry()
    mcp = McpTools([stdio_server()], "akari", problems.append)
    await mcp.start(registry)
    try:
        crash = await registry.run("snuff_out", {})
        assert crash.is_error
        assert "stopped working" in crash.content
        after = await registry.run("lantern_colour", {"place": "Gion"})
        assert after.is_error
        assert after.content.startswith("Error in lantern_colour: MCP server 'lanterns' (")
        assert "stopped working" in after.content
        assert len(problems) == 1
        assert problems[0].startswith("MCP server 'lanterns'")
    finally:
        await mcp.aclose()


async def test_a_server_that_dies_between_calls_is_noticed_and_reported_without_a_call() -> None:
    died = asyncio.Event()
    problems: list[str] = []

    def report(problem: str) -> None:
        problems.append(problem)
        died.set()

    registry = ToolRegistry()
    mcp = McpTools([stdio_server()], "akari", report, ping_interval_s=0.2)
    await mcp.start(registry)
    try:
        assert (await registry.run("snuff_out_soon", {})).content == "the flame flickers"
        await asyncio.wait_for(died.wait(), 10)
        assert len(problems) == 1
        assert problems[0].startswith("MCP server 'lanterns' (")
        assert "stopped working: it no longer answers" in problems[0]
        after = await registry.run("lantern_colour", {"place": "Gion"})
        assert after.is_error
        assert "stopped working" in after.content
    finally:
        await mcp.aclose()
    assert len(problems) == 1, "reported once"


async def test_a_server_that_cannot_start_is_reported_and_the_others_still_serve() -> None:
    problems: list[str] = []
    registry = ToolRegistry([speak])
    broken = McpServer(name="broken", command=sys.executable,
                       args=["-c", "import sys; sys.stderr.write('no lanterns on this street'); sys.exit(2)"])
    missing = McpServer(name="missing", command="/nonexistent/mcp-server")
    mcp = McpTools([broken, missing, stdio_server(tools=["lantern_colour"])], "akari", problems.append)
    await mcp.start(registry)
    try:
        assert registry.names == ["speak", "lantern_colour"]  # `tools` keeps only the named ones
        assert (await registry.run("lantern_colour", {"place": "Gion"})).content.startswith("The lanterns at Gion")
        assert len(problems) == 2
        assert problems[0].startswith("MCP server 'broken'")
        assert "could not start" in problems[0]
        assert "no lanterns on this street" in problems[0]  # the end of its stderr says why
        assert problems[1].startswith("MCP server 'missing' (/nonexistent/mcp-server) could not start")
    finally:
        await mcp.aclose()


async def test_streamable_http_server(http_server: tuple[subprocess.Popen[str], str]) -> None:
    process, url = http_server
    problems: list[str] = []
    registry = ToolRegistry([speak])
    mcp = McpTools([McpServer(name="web-lanterns", url=url)], "kai", problems.append)
    await mcp.start(registry)
    try:
        colour = registry.get("lantern_colour")
        assert colour is not None
        assert colour.origin == "mcp:web-lanterns"
        ok = await registry.run("lantern_colour", {"place": "Nara"})
        assert ok.content == "The lanterns at Nara glow indigo (lantern registry no. 7431)."
        process.kill()
        process.wait()
        gone = await registry.run("lantern_colour", {"place": "Nara"})
        assert gone.is_error
        assert "MCP server 'web-lanterns'" in gone.content
        assert len(problems) == 1
        assert "stopped working" in problems[0]
    finally:
        await mcp.aclose()


async def test_clashing_names_get_the_server_prefix() -> None:
    @tool
    async def lantern_colour(place: str) -> str:
        """A built-in tool of the same name."""
        return place

    registry = ToolRegistry([lantern_colour])
    mcp = McpTools([stdio_server(tools=["lantern_colour"])], "akari", lambda _p: None)
    await mcp.start(registry)
    try:
        assert registry.names == ["lantern_colour", "lanterns_lantern_colour"]
        prefixed = await registry.run("lanterns_lantern_colour", {"place": "Uji"})
        assert "indigo" in prefixed.content
    finally:
        await mcp.aclose()
