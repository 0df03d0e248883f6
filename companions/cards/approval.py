"""Cards earn trust: a card the user added runs nothing, sends no key and uses no private tool until approved.

A companion card may ask for three things that reach beyond the conversation: to *run* programs (each ``mcp[]``
server with a ``command``: any program, ``sh -c ...`` included) or connect to MCP servers (``mcp[].url``), to
*send* the conversation and a key to a server of its choosing (``llm.base_url``, with the value of the
environment variable ``llm.api_key_env`` as its bearer token: ``api_key_env: HOME`` would send the user's home
path), and to *use* tools that reach the user's private things (``knowledge``/``actions``: ``vision`` looks through
the camera, ``search`` reads the user's files and past conversations, a plugin does what its author wrote): a card
names its own tools, so an imported card's lorebook could otherwise grant itself the camera and tell the companion
to look. :class:`CardPrivileges` is that request, exactly as it would be carried out.

The sample cards shipped with Madoi (resources/companions) are trusted. Any other card (the user's own folder,
an imported character card, one written by hand) is loaded and takes part in the conversation, but *held*
(:func:`held_card`): without its MCP servers and its privileged tools, with the app's default model, until the
user approves exactly what it asks (:class:`CardApproval`, kept in the settings' ``[[trust.cards]]`` beside the
other trust decisions).
An approval holds for the card's id and the digest of its privileges: a card whose commands, servers, endpoint,
key variable or privileged tools change asks again; editing its personality or story does not (nothing it could
run, send or use changed).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from companions.cards.card import CompanionCard
from companions.tools.mcp_config import McpServer

APPROVE_COMMAND: Final = "madoi companions approve"
# The tools a card may name without approval: they reach nothing of the user's (saying a line, a gesture, the list
# of companions present). Every other tool a card names is a privilege, new built-ins and plugins included.
HARMLESS_TOOLS: Final = frozenset({"speak", "gesture", "companions_network"})
TOOL_WORDS: Final = {
    "vision": "looks through your camera",
    "search": "searches your files and past conversations",
}


class CardApproval(BaseModel):
    """The user approved what card ``card`` asks, as it was when ``digest`` was taken (``[[trust.cards]]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    card: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    digest: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of what the card runs and sends")
    approved_at: str = Field(default="", max_length=64, description="ISO 8601, UTC")


def _server_line(server: McpServer) -> str:
    if server.url is not None:
        return f"connects to the MCP server {server.name!r} at {server.url}"
    line = f"runs the program: {shlex.join([server.command or '', *server.args])}"
    if server.env:
        line += " with " + " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(server.env.items()))
    if server.cwd:
        line += f" in {server.cwd}"
    return line + f" (MCP server {server.name!r})"


@dataclass(frozen=True)
class CardPrivileges:
    """What one card would run or send, exactly: its MCP servers and its own model endpoint and key variable."""

    card_id: str
    servers: tuple[McpServer, ...] = ()
    endpoint: str | None = None  # llm.base_url: the conversation goes there
    key_env: str | None = None  # llm.api_key_env: this variable's value goes there as the bearer token
    tools: tuple[str, ...] = ()  # its privileged tools (knowledge and actions beyond HARMLESS_TOOLS), sorted

    @property
    def empty(self) -> bool:
        return not self.servers and self.endpoint is None and self.key_env is None and not self.tools

    @property
    def reach(self) -> tuple[tuple[McpServer, ...], str | None, str | None]:
        """What it would run and send, without its tools."""
        return self.servers, self.endpoint, self.key_env

    @property
    def digest(self) -> str:
        """sha256 over exactly what the user is shown (a changed command, URL, variable or tool changes it)."""
        shown: dict[str, object] = {"id": self.card_id, "mcp": [s.model_dump(mode="json") for s in self.servers],
                                    "base_url": self.endpoint, "api_key_env": self.key_env}
        if self.tools:  # only when there are any: the approvals of cards that name no such tool stay valid
            shown["tools"] = list(self.tools)
        return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def lines(self) -> list[str]:
        """Each thing the card would do, as one sentence with the exact command line, URL, variable and tool."""
        lines = [_server_line(s) for s in self.servers]
        lines += [f"uses the tool {tool!r}: {TOOL_WORDS.get(tool, 'a plugin of that name')}" for tool in self.tools]
        if self.endpoint is not None:
            line = f"sends the conversation to {self.endpoint}"
            if self.key_env is not None:
                line += f" with the value of the environment variable ${self.key_env} as its key"
            lines.append(line)
        elif self.key_env is not None:
            lines.append(f"sends the value of the environment variable ${self.key_env} as a key to the default "
                         "model server")
        return lines


def privileged_tools(card: CompanionCard) -> tuple[str, ...]:
    """The tools ``card`` grants itself that reach beyond the conversation (sorted: the digest ignores order)."""
    return tuple(sorted({*card.actions, *card.knowledge} - HARMLESS_TOOLS))


def privileges_of(card: CompanionCard) -> CardPrivileges:
    return CardPrivileges(card.id, tuple(card.mcp), card.llm.base_url, card.llm.api_key_env, privileged_tools(card))


def held_card(card: CompanionCard) -> CompanionCard:
    """``card`` without what it would run or send: no MCP servers, no endpoint or key variable of its own (its
    model name too when that named a model on its own server), no privileged tools: it talks through the app's
    default model, and its model is never offered the camera, the search or a plugin."""
    llm = card.llm.model_copy(update={"base_url": None, "api_key_env": None,
                                      "model": None if card.llm.base_url is not None else card.llm.model})
    return card.model_copy(update={"mcp": [], "llm": llm,
                                   "actions": [a for a in card.actions if a in HARMLESS_TOOLS],
                                   "knowledge": [k for k in card.knowledge if k in HARMLESS_TOOLS]})


@dataclass(frozen=True)
class HeldCard:
    """A card held until the user approves it: the card as written, its file and what it asks.

    ``changed``: an approval exists for this card, but for other privileges (the card changed since)."""

    card: CompanionCard
    file: Path
    privileges: CardPrivileges
    changed: bool = False

    @property
    def id(self) -> str:
        return self.card.id

    def describe(self) -> str:
        """One log line: which card, what it asks, how to approve it."""
        why = "changed since you approved it" if self.changed else "not approved yet"
        return (f"companion card {self.id!r} ({self.file}) is {why}: held until you approve what it would do: "
                + "; ".join(self.privileges.lines())
                + f". Approve it in the window (Settings > Companions) or with: {APPROVE_COMMAND} {self.id}")


Origin = Literal["sample", "user"]


@dataclass
class CardTrust:
    """Which cards may do what they ask: the samples, and the cards whose privileges the user approved."""

    trusted_folders: Sequence[Path]
    approvals: list[CardApproval] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.trusted_folders = [f.resolve() for f in self.trusted_folders]

    @classmethod
    def of(cls, trusted_folders: Iterable[Path], approvals: Iterable[CardApproval] = ()) -> CardTrust:
        return cls(list(trusted_folders), list(approvals))

    def origin(self, file: Path) -> Origin:
        return "sample" if file.resolve().parent in self.trusted_folders else "user"

    def trusted(self, card: CompanionCard, file: Path) -> bool:
        """Whether ``card`` (read from ``file``) may run and send what it asks."""
        privileges = privileges_of(card)
        return (privileges.empty or self.origin(file) == "sample"
                or any(a.card == card.id and a.digest == privileges.digest for a in self.approvals))

    def admit(self, card: CompanionCard, file: Path) -> tuple[CompanionCard, HeldCard | None]:
        """The card as it may run: itself when trusted, else held (and what was held, for the user to approve)."""
        if self.trusted(card, file):
            return card, None
        changed = any(a.card == card.id for a in self.approvals)
        return held_card(card), HeldCard(card, file, privileges_of(card), changed=changed)

    def approve(self, card: CompanionCard) -> CardApproval:
        """Approves what ``card`` asks now (an earlier approval of the same card is replaced)."""
        approval = CardApproval(card=card.id, digest=privileges_of(card).digest,
                                approved_at=datetime.now(UTC).isoformat(timespec="seconds"))
        self.approvals = [a for a in self.approvals if a.card != card.id] + [approval]
        return approval

    def revoke(self, card_id: str) -> None:
        self.approvals = [a for a in self.approvals if a.card != card_id]
