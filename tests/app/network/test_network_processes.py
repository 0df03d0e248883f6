"""Companions on more than one machine, on loopback: two ``madoi --headless`` processes on the reference's network
(one with akari and hina and the bridge, one window-less with only souta) and a node of the reference's own libp2p
stack (aya, played by the test) hold one conversation. Every node takes the same turns: each line is said once, by
its own companion's process, and both Madoi processes store the same lines with the same ids, in the same order.
The models are the scripted DemoDirector behind the real OpenAI-compatible test server (real HTTP), shared by both
processes."""

from __future__ import annotations

import asyncio
import itertools
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from companions.wire.protocol import Message, State, frame_of, to_wire
from tests.app.network_nodes import ReferenceNode
from tests.conftest import PYTHON, REPO, free_port, subprocess_env
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
AYA = {"id": "companion_aya", "name": "aya", "personality": "curious", "story": "a reference node", "sample": "Hi"}
AYA_LINE = "Hello from the reference network!"


class Madoi:
    """One ``madoi --headless`` process; its stderr is kept (the conversation's log lines)."""

    def __init__(self, proc: asyncio.subprocess.Process, home: Path) -> None:
        self.proc, self.home = proc, home
        self.err: list[str] = []
        self.address = ""

    @classmethod
    async def start(cls, home: Path, *args: str, **env: str) -> Madoi:
        proc = await asyncio.create_subprocess_exec(
            PYTHON, "-m", "app.main", "--headless", *args, cwd=REPO,
            env=subprocess_env(home, PYTHONPATH=str(REPO), MADOI_NETWORK_ENABLED="true",
                               MADOI_NETWORK_LISTEN="/ip4/127.0.0.1/tcp/0", MADOI_NETWORK_MDNS="false", **env),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        self = cls(proc, home)
        assert proc.stdout is not None
        assert proc.stderr is not None
        asyncio.get_running_loop().create_task(self._read_err())
        async with asyncio.timeout(90):
            ready = (await proc.stdout.readline()).decode()
            assert ready.startswith("madoi: ready"), ready
            network = (await proc.stdout.readline()).decode()
        assert network.startswith("madoi: network on /ip4/127.0.0.1/tcp/"), network
        self.address = network.split("on ", 1)[1].split(",")[0].strip()
        return self

    async def _read_err(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.err.append(line.decode(errors="replace"))

    async def logged(self, text: str, timeout: float) -> str:
        """The last line of the process's log holding ``text``, once there is one."""

        def found() -> list[str]:
            lines = [line for line in self.err if text in line]
            if not lines and self.proc.returncode is not None:
                raise AssertionError(f"the process ended; its log: {''.join(self.err)[-3000:]}")
            return lines

        try:
            await wait_until(lambda: bool(found()), timeout=timeout, every=0.05)
        except TimeoutError:
            raise AssertionError(f"{self.home.name} did not log {text!r}: {''.join(self.err)[-4000:]}") from None
        return found()[-1]

    async def stop(self) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.proc.wait(), 30)

    def said(self) -> list[tuple[str, str, str]]:
        with sqlite3.connect(self.home / "madoi.sqlite3") as db:
            return [tuple(r) for r in db.execute("SELECT id, sender, text FROM messages ORDER BY seq")]


async def _play_aya(node: ReferenceNode, user_line: str) -> None:
    """aya, a reference companion: votes on every message naming her (a state array, as the reference does) and
    wants the floor for the user's message; once every node voted on it, she says her line."""
    handled = 0
    while True:
        await node.wait_for(lambda e: e["event"] == "message", timeout=300, since=handled)
        events, handled = node.events[handled:], len(node.events)
        for event in events:
            data = event.get("data")
            if event["event"] != "message" or event["topic"] != "messages" or not isinstance(data, dict):
                continue
            params = data["params"]
            if "companion_aya" not in params["to"] or params["from"] == "companion_aya":
                continue
            wants = params["message"] == user_line
            vote = State.create(from_="companion_aya", message_id=params["id"], state="speak" if wants else "listen",
                                importance=10 if wants else 0)
            await node.send(cmd="publish", topic="states", data=[to_wire(vote)])
            if wants:
                await node.wait_for(lambda e, mid=params["id"]: e["event"] == "message" and e["topic"] == "states"
                                    and len({s["params"]["from"] for x in node.events
                                             if x["event"] == "message" and x["topic"] == "states"
                                             for s in x["data"] if s["params"]["messageId"] == mid}) >= 4)
                line = Message.create(from_="companion_aya", message=AYA_LINE,
                                      to=["akari", "hina", "souta", params["from"]])
                await node.send(cmd="publish", topic="messages", data=to_wire(line))


async def test_two_madoi_processes_and_a_reference_node_hold_one_conversation(tmp_path: Path) -> None:
    director = DemoDirector()
    bridge_port = free_port()
    user_line = "みんな、こんばんは！"
    processes: list[Madoi] = []
    node: ReferenceNode | None = None
    aya: asyncio.Task[Any] | None = None
    async with OpenAITestServer(models=["demo-model"], fallback=director) as server:
        try:
            first = await Madoi.start(tmp_path / "first", "--companions", "akari,hina",
                                      MADOI_LLM_BASE_URL=server.base_url, MADOI_BRIDGE_PORT=str(bridge_port))
            processes.append(first)
            second = await Madoi.start(tmp_path / "second", "--companions", "souta", "--no-bridge",
                                       MADOI_LLM_BASE_URL=server.base_url, MADOI_NETWORK_PEERS=first.address)
            processes.append(second)
            node = await ReferenceNode.start(AYA)
            await node.send(cmd="dial", addr=first.address)
            await node.send(cmd="dial", addr=second.address)
            for madoi in processes:  # everyone knows everyone: both Madoi processes list all four companions
                for who in ("akari", "hina", "souta", "companion_aya"):
                    if madoi.home.name == "first" and who in ("akari", "hina"):
                        continue
                    if madoi.home.name == "second" and who == "souta":
                        continue
                    await madoi.logged(f"network: {who} (", timeout=30)
            await node.subscribed(_peer_of(second.address))
            await node.subscribed(_peer_of(first.address))
            aya = asyncio.get_running_loop().create_task(_play_aya(node, user_line))
            async with connect(f"ws://127.0.0.1:{bridge_port}/?dialect=madoi", proxy=None) as client:
                await client.send(frame_of(Message.create(from_="user", message=user_line, to=[])))
                ended = [await madoi.logged("conversation ended:", timeout=180) for madoi in processes]
        finally:
            if aya is not None:
                if aya.done() and not aya.cancelled():
                    aya.result()  # the test's reference companion must not have failed
                aya.cancel()
            if node is not None:
                await node.stop()
            codes = [await madoi.stop() for madoi in processes]
    for madoi in processes:  # shown when the test fails
        print(f"==== {madoi.home.name}\n" + "".join(line for line in madoi.err if "HTTP Request" not in line))
    assert codes == [0, 0]
    assert all("closed" in line for line in ended), ended
    first_said, second_said = processes[0].said(), processes[1].said()
    # one conversation: the same lines, ids and order on both machines; the user at the first machine is, on the
    # second, a person elsewhere (the second machine's user is someone else)
    assert [(i, text) for i, _, text in first_said] == [(i, text) for i, _, text in second_said]
    assert second_said[0][1] == f"user@{_peer_of(processes[0].address)}"
    assert [who for _, who, _ in first_said[1:]] == [who for _, who, _ in second_said[1:]]
    speakers = [who for _, who, _ in first_said]
    assert speakers[:2] == ["user", "companion_aya"]
    assert first_said[1][2] == AYA_LINE
    assert {"akari", "hina", "souta"} <= set(speakers[2:])
    assert all(a != b for a, b in itertools.pairwise(speakers))
    # each line was composed once, by its own process (the director saw one request per line)
    assert [(who, text) for _, who, text in first_said[2:]] == director.said


def _peer_of(address: str) -> str:
    return address.rsplit("/p2p/", 1)[1]
