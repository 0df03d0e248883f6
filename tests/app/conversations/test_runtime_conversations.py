"""The runtime's active conversation: new, switch and delete announce it, and leaving one stops its talk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.conversations.active import ActiveConversationChanged
from app.runtime.panels import RuntimeHistory
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.conversation import ComposedLine, Participant, TurnContext, Vote
from companions.conversation.readmodel import ConversationReadModel
from companions.wire.protocol import Closing, Message


class Pondering(Participant):
    """A participant that always wants the floor and then thinks forever (until it is cancelled)."""

    id = "ponder"

    async def vote(self, turn: TurnContext) -> Vote:
        return Vote(state="speak", importance=9)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        await asyncio.Event().wait()
        return None


async def test_leaving_a_conversation_stops_its_talk_and_announces_the_next(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert runtime.parts.conversation_manager is not None
        announced: list[ActiveConversationChanged] = []
        runtime.bus.subscribe("events", lambda e: announced.append(e)
                              if isinstance(e, ActiveConversationChanged) else None, name="test")
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        runtime.parts.conversation_manager.add_participant(Pondering())
        first = runtime.parts.conversations.active_id
        assert first is not None
        runtime.parts.conversations.send("考えてみて", to=["ponder"])
        await talk.wait_for(lambda v: v.turn is not None and v.turn.phase == "composing")

        second = await runtime.parts.conversations.new()
        assert not runtime.parts.conversation_manager.running  # its reply would otherwise land in the new conversation
        assert talk.view.ended_reason == "stopped"
        await runtime.bus.drain()
        assert [(e.conversation_id, e.previous) for e in announced] == [(second, first)]

        await runtime.parts.conversations.switch(first)
        await runtime.parts.conversations.switch(first)  # already there: nothing happens
        await runtime.bus.drain()
        assert [(e.conversation_id, e.previous) for e in announced][1:] == [(first, second)]

        # Deleting another conversation keeps the active one; deleting the active one moves to the newest left.
        assert await runtime.parts.conversations.delete(second) == first
        assert [c.id for c in await runtime.store.list_conversations()] == [first]
        third = await runtime.parts.conversations.new()
        await runtime.store.add_message(third, Message.create(from_="user", message="三つ目"))
        await runtime.parts.conversations.switch(first)
        assert await runtime.parts.conversations.delete(first) == third
        assert runtime.parts.conversations.active_id == third
        await runtime.bus.drain()
        assert (announced[-1].conversation_id, announced[-1].previous) == (third, first)
        assert [c.id for c in await runtime.store.list_conversations()] == [third]
        talk.close()
    finally:
        await runtime.stop()


async def test_switching_to_a_conversation_that_is_not_there_is_refused(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        conversations = runtime.parts.conversations
        gone = await conversations.new()
        kept = await conversations.new()
        await conversations.delete(gone)
        with pytest.raises(LookupError, match=f"no conversation {gone}"):
            await conversations.switch(gone)  # e.g. a list not yet refreshed after a deletion
        assert conversations.active_id == kept
        said = conversations.send("まだここにいるよ")
        await runtime.bus.drain()
        assert [s.message for s in await runtime.store.messages(kept)] == [said]
    finally:
        await runtime.stop()


async def test_a_conversation_a_companion_opened_is_titled_by_the_users_first_words(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        manager = runtime.parts.conversation_manager
        conversation = runtime.parts.conversations.active_id
        assert manager is not None
        assert conversation is not None
        # measured: every new conversation was titled "こんにちは！…", the first greeting a companion opened it with
        greeting = await manager.greet("akari", "こんにちは！今日はどんな一日だった？")
        assert greeting is not None
        await runtime.bus.drain()
        titles = {c.id: c.title for c in await runtime.store.list_conversations()}
        assert titles[conversation] == ""  # shown as untitled until the user speaks
        await manager.stop_conversation()
        runtime.parts.conversations.send("明日は高尾山に登るよ", to=["nobody"])
        await runtime.bus.drain()
        titles = {c.id: c.title for c in await runtime.store.list_conversations()}
        assert titles[conversation] == "明日は高尾山に登るよ"
    finally:
        await runtime.stop()


async def test_the_stored_conversation_read_back_holds_every_message_already_sent(madoi_home: Path) -> None:
    """A window showing the conversation again (another language, another conversation and back) reads it from
    the database: a message just sent and shown is among it, though the storing subscriber writes after the bus
    delivered it to the chat."""
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        conversations = runtime.parts.conversations
        assert conversations.active_id is not None
        sent = [conversations.send(f"message {n}", to=["nobody"]).params.id for n in range(200)]
        stored = await RuntimeHistory(runtime).messages(conversations.active_id)
        assert [entry.message.params.id for entry in stored][-200:] == sent
    finally:
        await runtime.stop()
