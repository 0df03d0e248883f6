"""Fakes of the panels' read models and commands (ui/window/panel_ports.py): a panel is built from these in
milliseconds, without storage, devices or a runtime. Each records the commands it was given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.storage.database import ConversationInfo, StoredMessage
from companions.conversation.readmodel import ConversationView
from companions.llm.types import ChatModel


@dataclass
class FakePeople:
    names: dict[str, str] = field(default_factory=lambda: {"akari": "あかり", "hina": "ひな"})
    user: str = "user"

    def user_id(self) -> str:
        return self.user

    def companion_ids(self) -> Sequence[str]:
        return list(self.names)

    def name(self, who: str, language: str) -> str | None:
        return self.names.get(who)

    def away(self, who: str) -> bool:
        return False

    def present(self) -> Sequence[tuple[str, str]]:
        return list(self.names.items())


@dataclass
class FakeControl:
    shown: ConversationView = field(default_factory=ConversationView)
    commands: list[tuple[str, ...]] = field(default_factory=list)

    def view(self) -> ConversationView:
        return self.shown

    def mute(self, companion_id: str, muted: bool) -> None:
        self.commands.append(("mute", companion_id, str(muted)))

    def force(self, companion_id: str) -> None:
        self.commands.append(("force", companion_id))

    def interrupt(self) -> None:
        self.commands.append(("interrupt",))

    def stop(self) -> None:
        self.commands.append(("stop",))

    def set_present(self, companion_id: str, present: bool) -> None:
        self.commands.append(("present", companion_id, str(present)))


@dataclass
class FakeHistory:
    conversations: list[ConversationInfo] = field(default_factory=list)
    active: int | None = None
    commands: list[tuple[str, ...]] = field(default_factory=list)

    def active_id(self) -> int | None:
        return self.active

    async def stored(self) -> list[ConversationInfo]:
        return list(self.conversations)

    async def messages(self, conversation_id: int, limit: int | None = None) -> list[StoredMessage]:
        return []

    async def new(self) -> int:
        fresh = max((c.id for c in self.conversations), default=0) + 1
        self.conversations.insert(0, ConversationInfo(fresh, "", 0.0, 0.0, 0))
        self.active = fresh
        self.commands.append(("new", str(fresh)))
        return fresh

    async def switch(self, conversation_id: int) -> None:
        self.active = conversation_id
        self.commands.append(("switch", str(conversation_id)))

    async def delete(self, conversation_id: int) -> int:
        self.conversations = [c for c in self.conversations if c.id != conversation_id]
        self.commands.append(("delete", str(conversation_id)))
        return self.active or 0

    async def revise(self, message_id: str, text: str | None) -> None:
        self.commands.append(("revise", message_id, text or ""))

    def send(self, text: str, to: list[str] | None = None) -> None:
        self.commands.append(("send", text, ",".join(to or [])))


@dataclass
class NoSearch:
    """Search that could not start, with the reason the runtime noted."""

    reasons: tuple[str, ...] = ("search not available: the index file is broken",)

    def service(self) -> None:
        return None

    def model(self) -> ChatModel | None:
        return None

    def problems(self) -> Sequence[str]:
        return self.reasons
