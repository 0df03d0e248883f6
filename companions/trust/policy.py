"""Trust: who is asking, what for, and what the user decided.

Everything that does not come from the user's own window is hostile until the user says otherwise. This module
names the parts of that sentence and answers one question, :meth:`TrustPolicy.permit`: *may this source use this
capability now?*

Who is asking (:class:`Relation`, decided from ids that the bridge and the network make trustworthy):

* ``USER``: this app's user, typing in the window (the settings' ``general.user_name``);
* ``OWN``: this app's own companions (its cast);
* ``GUEST``: a companion elsewhere that takes part in the conversation: on the peer-to-peer network (a
  ``RemoteParticipant``) or through the bridge (a client announced it); :attr:`Source.place` says where;
* ``OTHER``: anyone else: a bridge client speaking as ``user_<name>``, a user on another machine, an id nobody
  announced.

What they ask for (:class:`Capability`): the camera, the voice (the speakers), the user's files (knowledge search),
past conversations (memory search) and tools from elsewhere (MCP servers and plugins).

The rules (:meth:`TrustPolicy.permit`): the user and the app's own companions may use everything. A guest or
another source may use a capability only once the user allowed it: a remembered decision (*Always* / *Never*,
kept in the settings' ``[trust]`` section and revocable there) answers at once; otherwise the user is asked in the
window through the :class:`ConsentAsker` port (*Allow once* / *Always* / *Never*). With nobody to ask (headless) or
no answer in time, the request is refused. Every refusal is a :class:`Permission` whose ``reason`` a companion can
read, a log line, and a :class:`ConsentRefused` event on the bus (the window shows it).

The devices' rule is stricter than this policy, and lives in the query broker (companions/wire/query_broker.py): a query
published on the bus by someone else (a bridge client) reaches the camera or the voice only when it is a guest
companion's and the user allowed it; the user's id, a ``user_<name>`` id or a companion id of this app published
there is never obeyed (the app's own companions ask through the broker directly).
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from companions.common.tasks import TaskSet
from companions.wire.bus import Bus, LocalEvent

log = logging.getLogger(__name__)

DEFAULT_ASK_TIMEOUT_S: Final = 20.0  # shorter than a query's default timeout (30 s): the asker hears the refusal
NOBODY: Final = "nobody is at the window to ask"
MAX_DECISIONS: Final = 1000  # remembered decisions kept (the oldest go first): a settings file stays readable


class Capability(enum.StrEnum):
    """What a source may ask for."""

    CAMERA = "camera"  # look through the camera (the ``vision`` query and tool)
    VOICE = "voice"  # say something through the speakers (the ``speak`` query)
    FILES = "files"  # search the user's documents (knowledge search)
    MEMORY = "memory"  # search the user's past conversations
    TOOLS = "tools"  # call a tool of an MCP server or a plugin
    # What leaves the machine (companions/trust/outbound.py): a line that holds what the camera saw, the user's
    # files or past conversations may go to this destination (a peer, a bridge client not the user's own).
    SHARE_CAMERA = "share_camera"
    SHARE_FILES = "share_files"
    SHARE_MEMORY = "share_memory"


class Relation(enum.StrEnum):
    """Who a source is to this app."""

    USER = "user"  # the user in the window
    OWN = "own"  # one of this app's own companions
    GUEST = "guest"  # a companion elsewhere, on the network or through the bridge
    OTHER = "other"  # anyone else: a bridge client's user_<name>, a user on another machine, an unknown id


class Answer(enum.StrEnum):
    """The user's answer to a consent prompt."""

    ONCE = "once"  # allow this one request
    ALWAYS = "always"  # allow it from now on (remembered)
    NEVER = "never"  # refuse it from now on (remembered)


@dataclass(frozen=True)
class Source:
    """Someone asking: its id (the ``from`` it speaks as), what it is to this app, its name as the window shows it
    and where it is (``place``: ``"bridge"``, ``"network:<peer>"``; empty for this app and the unknown)."""

    id: str
    relation: Relation
    name: str = ""
    place: str = ""

    @property
    def key(self) -> str:
        """What a remembered decision is kept under: the id and where it is (the same id elsewhere is asked
        again)."""
        return f"{self.id}@{self.place}" if self.place else self.id

    @property
    def trusted(self) -> bool:
        """The user and the app's own companions: nothing to ask."""
        return self.relation in (Relation.USER, Relation.OWN)

    @property
    def shown_name(self) -> str:
        return self.name or self.id


IMPORTED_PLACE: Final = "import"
# Text said elsewhere that a turn's prompt holds: a recalled line of an imported conversation, whichever speaker the
# file names (the user, a companion of this app). The turn answers to it as to anyone from outside the window.
IMPORTED: Final = Source("imported", Relation.OTHER, "An imported conversation", IMPORTED_PLACE)
# Words from the user's files in a turn's prompt (a knowledge passage recalled, a file search's results): a file in a
# knowledge folder may come from anywhere, so a turn holding one asks before it reaches the user's things.
DOCUMENTS: Final = Source("documents", Relation.OTHER, "Your documents", "files")
TOOL_PLACE: Final = "tool"


def words_from_tool(origin: str, capabilities: frozenset[Capability]) -> Source | None:
    """Whose words a tool's result brings into the rest of a turn: a search's, the user's documents
    (:data:`DOCUMENTS`); a tool of an MCP server or plugin's, that tool's origin (``mcp:<server>``); ``None`` for
    what the app itself made (a look's description, a line said)."""
    if Capability.TOOLS in capabilities:
        return Source(origin, Relation.OTHER, origin, TOOL_PLACE)
    if Capability.FILES in capabilities:
        return DOCUMENTS
    return None


# A client's own camera: the bridge client that registered as a companion's ``vision`` answerer
# answers its looks with its own camera, not this computer's. What a look through it needs is asked of nobody who
# speaks through that client (TrustPolicy.client_camera); the worker's gate sets this for such a call, and its look
# then reaches that client's camera only, never this computer's (companions/tools/builtins.py).
NOT_THIS_COMPUTERS: Final[contextvars.ContextVar[frozenset[Capability]]] = contextvars.ContextVar(
    "not_this_computers", default=frozenset())


NOTICING_PLACE: Final = "noticing"
# What this app noticed (through the camera, or the user's silence) when its companions may speak first
# (companions/conversation/speaking_first.py): the ``from`` of the cue that opens that turn. Not the user, who said
# nothing: a tool that reaches the user's things in that turn is asked for first. The id is reserved: no peer and no
# bridge client may speak as it (companions/network/peers.py, app/runtime/assembly.py).
NOTICED: Final = Source("noticed", Relation.OTHER, "Speaking first (what Madoi noticed)", NOTICING_PLACE)


class TrustDecision(BaseModel):
    """One remembered decision, as the settings' ``[[trust.decisions]]`` keep it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1, max_length=512, description="the source's key: its id@place")
    name: str = Field(default="", max_length=256, description="its name when it was decided (for the settings)")
    capability: Capability
    decision: Literal["always", "never"]
    decided_at: str = Field(default="", max_length=64, description="ISO 8601, UTC")

    @property
    def allowed(self) -> bool:
        return self.decision == "always"


@dataclass(frozen=True)
class ConsentRequest:
    """What the user is asked: ``source`` wants ``capability`` (``detail``: e.g. the tool's name). ``held_by``: the
    companion (its name) that would use it in a turn whose prompt holds ``source``'s words (empty: ``source`` asks)."""

    source: Source
    capability: Capability
    detail: str = ""
    held_by: str = ""


class ConsentAsker(Protocol):
    """The port through which the core asks the user (the window implements it: ui/trust/consent_prompt.py).

    ``ask`` returns the user's answer, or ``None`` when the user dismissed the prompt. It may take as long as the
    user does; the policy bounds the wait and cancels ``ask`` when the time is up (the prompt then goes away). It
    raises :class:`NobodyToAsk` when nobody can be asked now (the request is refused)."""

    async def ask(self, request: ConsentRequest) -> Answer | None: ...


class NobodyToAsk(Exception):
    """Raised by :meth:`ConsentAsker.ask` when nobody can be asked now (no window yet, or none any more)."""


class ConsentRelay:
    """The :class:`ConsentAsker` a policy is built with when the one who answers comes and goes: it passes each
    question to the asker connected now (the window's prompt, once it is up) and raises :class:`NobodyToAsk` while
    none is (the policy then refuses)."""

    def __init__(self) -> None:
        self._asker: ConsentAsker | None = None

    def connect(self, asker: ConsentAsker | None) -> None:
        """Questions go to ``asker`` from now on (``None``: to nobody; the prompts already open stay)."""
        self._asker = asker

    async def ask(self, request: ConsentRequest) -> Answer | None:
        if self._asker is None:
            raise NobodyToAsk
        return await self._asker.ask(request)


@dataclass(frozen=True)
class Permission:
    """The policy's answer: ``allowed``, and why (a sentence a companion's model can read when refused)."""

    allowed: bool
    reason: str
    source: Source
    capability: Capability

    def __bool__(self) -> bool:
        return self.allowed


@dataclass(frozen=True)
class ConsentRefused(LocalEvent):
    """A source was refused a capability (the window shows a note: who, what, why)."""

    source: Source
    capability: Capability
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class TrustDecisionsChanged(LocalEvent):
    """The remembered decisions changed (the user answered *Always* / *Never*, or forgot one)."""

    decisions: tuple[TrustDecision, ...]


CAPABILITY_WORDS: Final[dict[Capability, str]] = {
    Capability.CAMERA: "look through your camera",
    Capability.VOICE: "speak through your speakers",
    Capability.FILES: "search your files",
    Capability.MEMORY: "search your past conversations",
    Capability.TOOLS: "use the tools of MCP servers and plugins",
    Capability.SHARE_CAMERA: "get a line that holds what your camera saw",
    Capability.SHARE_FILES: "get a line that holds words of your files",
    Capability.SHARE_MEMORY: "get a line that holds your past conversations",
}


def refusal(source: Source, capability: Capability, why: str) -> str:
    """A refusal worded for a companion's model (and the log)."""
    return f"Not allowed: {source.shown_name} may not {CAPABILITY_WORDS[capability]} ({why})."


class TrustPolicy:
    """Answers "may this source use this capability now?" with the user's remembered decisions and, for the
    rest, by asking the user through ``asker``, given when the policy is built (``None``: headless, nobody to ask:
    refused; a :class:`ConsentRelay` when the one who answers comes later, as the window's prompt does).

    ``on_change`` is called with every decision list the user's answers make (the app saves it in ``[trust]``).
    Concurrent requests for the same source and capability share one prompt.
    """

    def __init__(self, *, asker: ConsentAsker | None = None, decisions: Iterable[TrustDecision] = (),
                 bus: Bus | None = None, ask_timeout_s: float = DEFAULT_ASK_TIMEOUT_S,
                 on_change: Callable[[tuple[TrustDecision, ...]], object] | None = None,
                 sources: Callable[[str], Source] | None = None) -> None:
        if ask_timeout_s <= 0:
            raise ValueError("ask_timeout_s must be positive")
        self._asker = asker
        self.sources = sources or (lambda sender: Source(sender, Relation.OTHER))  # who an id is (trust_sources.py)
        # The ids (``from``) of the one client whose own camera answers a companion's looks (empty: this computer's
        # camera would): the bridge says so while it runs (app/bridge/server.py).
        self.client_camera: Callable[[str], frozenset[str]] = lambda _companion: frozenset()
        self.bus = bus
        self.ask_timeout_s = ask_timeout_s
        self.on_change = on_change
        self._decisions: dict[tuple[str, Capability], TrustDecision] = {}
        self._asking: dict[tuple[str, Capability], asyncio.Task[_Asked]] = {}
        self._prompts = TaskSet("consent-prompts")  # one task per prompt on screen, shared by its requests
        self.use_decisions(decisions)

    async def aclose(self) -> None:
        """Takes every prompt away (their requests are refused)."""
        await self._prompts.aclose()

    # -- the user's decisions ----------------------------------------------------------------------------------

    @property
    def decisions(self) -> tuple[TrustDecision, ...]:
        return tuple(self._decisions.values())

    def use_decisions(self, decisions: Iterable[TrustDecision]) -> None:
        """Replaces the remembered decisions (the settings were saved): nothing is announced."""
        self._decisions = {(d.source, d.capability): d for d in decisions}

    def decision_for(self, source: Source, capability: Capability) -> TrustDecision | None:
        return self._decisions.get((source.key, capability))

    def remember(self, source: Source, capability: Capability, answer: Literal["always", "never"]) -> None:
        decision = TrustDecision(source=source.key, name=source.shown_name, capability=capability, decision=answer,
                                 decided_at=datetime.now(UTC).isoformat(timespec="seconds"))
        self._decisions.pop((source.key, capability), None)
        self._decisions[(source.key, capability)] = decision
        while len(self._decisions) > MAX_DECISIONS:
            del self._decisions[next(iter(self._decisions))]
        self._changed()

    def forget(self, source_key: str, capability: Capability) -> bool:
        """Forgets a remembered decision (the source is asked again next time); whether there was one."""
        if self._decisions.pop((source_key, capability), None) is None:
            return False
        self._changed()
        return True

    def _changed(self) -> None:
        decisions = self.decisions
        if self.on_change is not None:
            try:
                self.on_change(decisions)
            except Exception:  # saving failed: the decision still holds for this session
                log.exception("trust: the decisions could not be saved")
        if self.bus is not None:
            self.bus.publish(TrustDecisionsChanged(decisions))

    # -- the question ------------------------------------------------------------------------------------------

    def known(self, source: Source, capability: Capability) -> Permission | None:
        """The answer without asking anyone: trusted, or a remembered decision; ``None`` when the user would be
        asked."""
        if source.trusted:
            return Permission(True, "", source, capability)
        remembered = self.decision_for(source, capability)
        if remembered is None:
            return None
        if remembered.allowed:
            return Permission(True, "you allowed it", source, capability)
        return Permission(False, refusal(source, capability, "the user said never"), source, capability)

    def source(self, sender: str) -> Source:
        """Who ``sender`` (a ``from``) is now."""
        return self.sources(sender)

    async def permit(self, source: Source, capability: Capability, detail: str = "", *,
                     held_by: str = "") -> Permission:
        """May ``source`` use ``capability`` now? Asks the user when nothing is remembered; never raises (but for
        cancellation). A refusal is logged and published as :class:`ConsentRefused`. ``held_by``: the companion whose
        turn's prompt holds ``source``'s words (:class:`ConsentRequest`)."""
        permission = self.known(source, capability)
        if permission is None:
            permission = await self._ask(ConsentRequest(source, capability, detail, held_by))
        if not permission.allowed:
            log.warning("trust: %s (%s, %s) refused %s%s: %s", source.id, source.relation, source.place or "-",
                        capability, f" ({detail})" if detail else "", permission.reason)
            if self.bus is not None:
                self.bus.publish(ConsentRefused(source, capability, permission.reason, detail))
        return permission

    async def _ask(self, request: ConsentRequest) -> Permission:
        source, capability = request.source, request.capability
        if self._asker is None:
            return Permission(False, refusal(source, capability, NOBODY), source, capability)
        key = (source.key, capability)
        shared = self._asking.get(key)
        if shared is None:
            try:
                shared = self._prompts.spawn(self._prompt(self._asker, request), name=f"consent:{source.key}")
            except RuntimeError:  # shutting down
                return Permission(False, refusal(source, capability, "the app is closing"), source, capability)
            self._asking[key] = shared
            shared.add_done_callback(lambda _t: self._asking.pop(key, None))
        try:
            asked = await asyncio.shield(shared)
        except asyncio.CancelledError:
            if not shared.cancelled():
                raise  # this request was cancelled; the prompt stays for the others that wait on it
            asked = _Asked(None, "the prompt was closed")
        # "Once" holds for every request that waited on this one prompt.
        if asked.answer in (Answer.ONCE, Answer.ALWAYS):
            return Permission(True, "the user allowed it", source, capability)
        why = "the user said no" if asked.answer is Answer.NEVER else asked.why
        return Permission(False, refusal(source, capability, why), source, capability)

    async def _prompt(self, asker: ConsentAsker, request: ConsentRequest) -> _Asked:
        try:
            async with asyncio.timeout(self.ask_timeout_s):
                answer = await asker.ask(request)
        except TimeoutError:
            return _Asked(None, f"no answer within {self.ask_timeout_s:g} s")
        except NobodyToAsk:
            return _Asked(None, NOBODY)
        except Exception as err:  # a broken prompt refuses; it never takes the caller down
            log.exception("trust: asking the user failed")
            return _Asked(None, f"asking the user failed: {err}")
        if answer is Answer.ALWAYS:
            self.remember(request.source, request.capability, "always")
        elif answer is Answer.NEVER:
            self.remember(request.source, request.capability, "never")
        return _Asked(answer, "" if answer is not None else "the user dismissed the question")


@dataclass(frozen=True)
class _Asked:
    answer: Answer | None
    why: str
