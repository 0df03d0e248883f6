"""The README's no-model demo, run literally: ``python -m companions.testing.openai_server --demo --port N`` answers
the real ``openai`` client as a companion would, and ``madoi --headless`` pointed at it gets companion lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import openai
from websockets.asyncio.client import ClientConnection, connect

from companions.protocol import Message, frame_of
from companions.testing.openai_server.demo_director import GOODBYE, LINES, DemoDirector
from tests.conftest import PYTHON, REPO, free_port, subprocess_env

MADOI = str(Path(PYTHON).parent / "madoi")  # the console script, as the README runs it


@contextlib.asynccontextmanager
async def demo_server(*args: str) -> AsyncIterator[str]:
    """The README's demo command as a child process; yields its base URL once it printed its ready line."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "companions.testing.openai_server", "--demo", "--port", str(port), *args,
        cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        ready = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert f"http://127.0.0.1:{port}/v1" in ready, ready + (await proc.stderr.read()).decode()  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.returncode is None:
            proc.terminate()
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        assert b"Traceback" not in err, err.decode(errors="replace")


@dataclass
class HeadlessMadoi:
    """``madoi --headless`` as a child process, watched through its bridge as an external client would."""

    proc: asyncio.subprocess.Process
    client: ClientConnection
    lines: list[tuple[float, Message]] = field(default_factory=list)  # (loop time, companion message)
    stderr: list[str] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def say(self, text: str, to: list[str] | None = None) -> float:
        """Sends ``text`` as the user; returns the loop time it was sent."""
        await self.client.send(frame_of(Message.create(from_="user", message=text, to=to or [])))
        return asyncio.get_running_loop().time()

    async def wait_for(self, found: Callable[[list[Message]], bool], timeout: float) -> list[Message]:
        """Waits until ``found`` holds for the companion lines so far; returns them."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while not found([m for _, m in self.lines]):
                    self._arrived.clear()
                    await self._arrived.wait()
        return [m for _, m in self.lines]

    async def _read(self) -> None:
        async for raw in self.client:
            data = json.loads(raw)
            body = data.get("body", data) if isinstance(data, dict) else data
            if isinstance(body, dict) and body.get("method") == "message.send":
                message = Message.model_validate(body)
                if message.params.from_ != "user":
                    self.lines.append((asyncio.get_running_loop().time(), message))
                    self._arrived.set()

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.stderr.append(line.decode(errors="replace"))


@contextlib.asynccontextmanager
async def headless_madoi(base_url: str, home: Path, **env: str) -> AsyncIterator[HeadlessMadoi]:
    """``MADOI_HOME=<home> MADOI_LLM_BASE_URL=<base_url> madoi --headless`` with the bridge on a free port."""
    bridge_port = free_port()
    environment = subprocess_env(home, MADOI_LLM_BASE_URL=base_url, MADOI_BRIDGE_PORT=str(bridge_port), **env)
    proc = await asyncio.create_subprocess_exec(MADOI, "--headless", cwd=REPO, env=environment,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        ready = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        if not ready.startswith("madoi: ready"):
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
            raise AssertionError(f"madoi did not start: {ready!r}\n{err.decode(errors='replace')[-3000:]}")
        async with connect(f"ws://127.0.0.1:{bridge_port}", proxy=None) as client, asyncio.TaskGroup() as tasks:
            madoi = HeadlessMadoi(proc, client)
            reader = tasks.create_task(madoi._read())
            drain = tasks.create_task(madoi._drain_stderr())
            try:
                yield madoi
            finally:
                reader.cancel()
                drain.cancel()
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 30)


async def test_the_readme_demo_answers_the_openai_client_as_a_companion() -> None:
    async with demo_server() as base_url:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        speak = {"type": "function", "function": {"name": "speak", "parameters": {"type": "object"}}}
        streamed = await client.chat.completions.create(
            model="echo", stream=True, tools=[speak],  # type: ignore[list-item]
            messages=[{"role": "system", "content": 'You are "Akari" (id: akari).'},
                      {"role": "user", "content": "You (id: user): Good evening, everyone!"}])
        arguments = ""
        async for chunk in streamed:
            for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                arguments += call.function.arguments or "" if call.function else ""
        plain = await client.chat.completions.create(
            model="echo", messages=[{"role": "system", "content": 'You are "Hina" (id: hina).'},
                                    {"role": "user", "content": "You (id: user): こんばんは！"}])
        await client.close()
    assert json.loads(arguments)["message"] == LINES["en"][0]  # the speak call, streamed (this crashed before)
    assert plain.choices[0].message.content == LINES["ja"][0]  # no tools: the line as plain text (a new user line)


async def test_madoi_headless_pointed_at_the_readme_demo_gets_companion_lines(tmp_path: Path) -> None:
    async with demo_server() as base_url, headless_madoi(base_url, tmp_path / "home") as madoi:
        await madoi.say("みんな、こんばんは！")
        lines = await madoi.wait_for(lambda got: len(got) >= 2, timeout=60)
    assert len(lines) >= 2, "".join(madoi.stderr[-30:])
    assert {m.params.message for m in lines} <= set(LINES["ja"]) | {GOODBYE["ja"]}
    assert lines[0].params.from_ != lines[1].params.from_  # the floor goes round


def _ask(director: DemoDirector, companion: str, heard: list[str], *, vote: bool = False) -> str:
    """One request as Madoi sends it: the persona, what the companion heard, and a vote schema or the speak tool."""
    messages = [{"role": "system", "content": f'You are "{companion}" (id: {companion}).'}]
    messages += [{"role": "user", "content": line} for line in heard]
    if vote:
        schema = {"type": "object", "properties": {"state": {"enum": ["speak", "listen"]}}}
        body = {"messages": messages, "response_format": {"type": "json_schema",
                                                          "json_schema": {"name": "vote", "schema": schema}}}
        reply = director(body)
        assert hasattr(reply, "text")
        return str(json.loads(reply.text)["closing"])
    speak = {"type": "function", "function": {"name": "speak", "parameters": {"type": "object"}}}
    reply = director({"messages": messages, "tools": [speak]})
    assert hasattr(reply, "calls")
    return str(json.loads(reply.calls[0].arguments)["message"])


def test_a_new_user_message_starts_a_new_conversation_after_a_goodbye() -> None:
    director = DemoDirector()
    heard = ["You (id: user): Hello everyone!"]
    said = [_ask(director, who, heard) for who in ("akari", "hina", "souta", "akari", "hina")]
    assert said[-1] == GOODBYE["en"]
    assert _ask(director, "souta", heard, vote=True) == "terminal"
    heard += [f"Hina (id: hina): {said[-1]}", "You (id: user): Wait, one more thing: any plans for tomorrow?"]
    assert _ask(director, "souta", heard, vote=True) == "none"  # a fresh little conversation, not a goodbye
    assert _ask(director, "souta", heard) == LINES["en"][0]
    heard.append("You (id: user): Hello everyone!")  # the same words again are a new message too
    assert _ask(director, "akari", heard, vote=True) == "none"
