"""A Companion: a card, its model, tools, memory and worker, behind the API the conversation control uses.

Typical use (the conversation engine owns the turn order)::

    cast = build_cast([sample_cards_dir(), user_cards], make_model, bus=bus, queries=broker, store=memory)
    await cast.start()                          # loads memories, every companion hears the "messages" topic
    akari = cast.companions["akari"]
    vote = await akari.vote(msg)                # conversation/ballot.py's Vote, as the model said it
    planned = await akari.compose(msg, "none")  # PlannedSpeech: `speak` planned, nothing voiced or published
    await akari.say(published_message)          # the speak query; returns when the speech has finished
    result = await akari.take_turn(msg)         # or all at once: decide, speak (voice, then publish)
    await cast.stop()

:class:`~companions.companion.participant.CompanionParticipant` adapts a Companion to conversation control.

A companion hears a message only while ``present`` and only when it is addressed to it, broadcast (empty ``to``)
or its own; what it heard is all its context ever contains, and its memory holds one of the user's conversations
at a time, the one on the screen (:meth:`~companions.memory.context.CompanionMemory.follow`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, Field, create_model

from companions.cards.card import CompanionCard, localized
from companions.cards.card_events import Guidance, decide, evaluate_conditions, params_model
from companions.cards.lore import lore_block
from companions.common.tasks import TaskSet
from companions.companion.composing import (
    PARROT_MIN_CHARS,
    EndAfterSpeech,
    LineCheck,
    clean_piece,
    compose_line,
    identity_note,
    instructions_for,
    line_of,
    reply_language,
    sample_lines,
    turn_notes,
)
from companions.companion.hooks import WorkerHook
from companions.companion.lines import LineRules, clean_line, detect_language, misidentified, without_cut_off_end
from companions.companion.prompts import closing_prompt, guidance_prompt, prompt_texts, system_prompt, vote_prompt
from companions.companion.speech_stream import CheckedSentences
from companions.companion.worker import RunContext, TurnResult, Worker
from companions.conversation.ballot import Vote
from companions.devices.query_bodies import SpeakResult
from companions.llm import priorities
from companions.llm.capabilities import capabilities_of, estimate_tokens
from companions.llm.priorities import AtPriority
from companions.llm.structured import StructuredStats, generate_structured
from companions.llm.text_tools import parse_text_tool_calls
from companions.llm.types import ChatMessage, ChatModel, LLMError
from companions.memory.context import CompanionMemory, MemoryStore
from companions.memory.recall import CompanionRecall
from companions.tools.builtins import BuiltinTools, PlannedSpeech, SearchEngine
from companions.tools.functions import ToolRegistry
from companions.tools.mcp_config import McpServer
from companions.tools.sources import ToolSources
from companions.trust.policy import DOCUMENTS, IMPORTED, NOTICED, Capability, Relation, Source, TrustPolicy
from companions.wire.bus import Bus, Subscription
from companions.wire.protocol import Closing, CompanionMetadata, Message
from companions.wire.query_ports import QuerySender

log = logging.getLogger(__name__)
USER_NAMES = ("User", "user", "ユーザー", "あなた")


# The first line of a turn may cost about two completions beyond the floor: the first attempt and a retry together
# within three estimated completions of the line (~40 tokens after the context and instructions). Two left no room
# for a first attempt that waited for the one-request server (measured over 30 real-model lines: 6 stock fillers
# "for time", after 8-16 s of composing), and a filler is the last resort.
TIME_BUDGET_COMPLETIONS: Final = 3.0
LINE_TOKENS: Final = 40
LINE_INSTRUCTION_TOKENS: Final = 100
VOTE_MAX_TOKENS: Final = 120  # the vote's JSON with a short reason (and the card's event parameters)
TURN_MAX_TOKENS: Final = 256  # a line of at most ~160 Japanese characters (or 320 English) with its tool call
TOOL_CALL_TOKENS: Final = 40  # the speak call's JSON around the line


def line_tokens(max_chars: int, language: str, *, tools: bool) -> int:
    """The token limit of a request for a line of ``max_chars`` characters: a small model that rambles is cut where
    the line would be cut anyway (measured on the 0.5B model: 256 tokens of rambling, ~6 s at 42 tokens/s, then
    cleaned to nothing). About one token per Japanese character, one per three characters otherwise, a margin."""
    text = max_chars if language == "ja" else max_chars // 3
    return min(TURN_MAX_TOKENS, int(text * 1.25) + 16 + (TOOL_CALL_TOKENS if tools else 0))
OWN_LINES_KEPT: Final = 40  # own lines heard lately, which a card's sample line must not repeat
OTHERS_LINES_KEPT: Final = 30  # the remembered messages whose others' lines a new line must not say back
BRIEF_MESSAGES: Final = 6  # the messages remembered that a line asked for again with a shorter prompt is given
HEARD_KEPT: Final = 512  # message ids remembered as heard (a turn's history is at most a few dozen)


NO_USABLE_VOTE: Final = Vote(state="listen", importance=0, reason="no usable vote from the model")


def vote_schema(card: CompanionCard) -> type[Vote]:
    """What the companion's model fills to vote: the :class:`~companions.conversation.ballot.Vote` (its fields
    only: the model reads no docstring prose), with the card's event parameters folded in when the card has events,
    so the chosen speaker needs no separate request to fill them (measured: that request was 18% of a turn)."""
    if not card.events.conditions:
        return create_model("VoteChoice", __base__=Vote)
    shape = params_model(card.events.params)
    # Optional: a vote without them still counts, and the speaker then fills them in a request of their own.
    params: Any = (shape | None, Field(default=None, exclude=True,
                                       description=card.events.params.get("description", "")))
    return create_model("VoteWithParams", __base__=Vote, params=params)


@dataclass(frozen=True)
class TurnPrompt:
    """What one turn is given, made for it alone: the messages, its id, who it answers in the end (``origin``),
    and where what its prompt holds came from: the instructions (``notes``) and the system text (``system``) a small
    model may copy out or recite, cleaned from its line; the sources the user has not trusted whose words it holds
    (``held``: the turn's tools ask for them too, companions/companion/worker.py); what it holds of the user's
    private things (``private``: recalled lines of earlier conversations, passages of documents, what was noticed
    through the camera; where its line may go: companions/trust/outbound.py)."""

    context: list[ChatMessage]
    turn_id: str
    origin: Source | None
    notes: list[str]
    system: str
    held: tuple[Source, ...] = ()
    private: frozenset[Capability] = frozenset()


class Companion:
    """One companion. ``roster`` returns the metadata of everyone present (companions), for prompts and tools."""

    def __init__(
        self,
        card: CompanionCard,
        model: ChatModel,
        *,
        bus: Bus,
        queries: QuerySender,
        language: str = "ja",
        store: MemoryStore | None = None,
        memory_budget_tokens: int = 2000,
        roster: Callable[[], Sequence[CompanionMetadata]] = tuple,
        names: Callable[[str], str | None] = lambda _id: None,
        search_engine: SearchEngine | None = None,
        hooks: Sequence[WorkerHook] = (),
        max_steps: int = 6,
        user_id: str = "user",
        mcp_servers: Sequence[McpServer] = (),
        report: Callable[[str], None] | None = None,
        trust: TrustPolicy | None = None,
        recall: CompanionRecall | None = None,
    ) -> None:
        self.card = card
        self.model = model
        self.bus = bus
        self.language = language
        self.roster = roster
        self._names = names
        self.present = True
        self.memory = CompanionMemory(card.id, budget_tokens=memory_budget_tokens, store=store)
        self._heard: collections.OrderedDict[str, None] = collections.OrderedDict()  # ids of messages heard lately
        # this companion's own lines heard lately, whatever the memory's budget kept (a card's sample line is said
        # again only after these: measured on the 0.5B model, Hina's sample twice in 30 lines, the first one gone
        # from the memory's 2,000 tokens)
        self._said_lately: collections.deque[str] = collections.deque(maxlen=OWN_LINES_KEPT)
        self.tools = ToolRegistry()
        self.builtins = BuiltinTools(
            card.id,
            bus=bus,
            queries=queries,
            model=model,
            roster=self.roster,
            default_audience=self._audience,
            voice=self._voice_for,
            sanitize=self.sanitize,
            search_engine=search_engine,
            language=language,
            user_id=user_id,
        )
        self.builtins.register(self.tools, [*card.actions, *card.knowledge])
        # Plugin actions and knowledge now; MCP servers' tools from start() on (they start and stop with it).
        self.tool_sources = ToolSources(card, self.tools, bus=bus, language=language, mcp_servers=mcp_servers,
                                        report=report)
        self.worker = Worker(model, self.tools, hooks=hooks, bus=bus, owner=card.id,
                             max_steps=max_steps, temperature=card.llm.temperature, max_tokens=TURN_MAX_TOKENS,
                             priority=priorities.TURN, tools_offered=self._tools_offered,
                             trust=trust or TrustPolicy(bus=bus, sources=self._alone))
        self.structured_stats = StructuredStats()
        self.line_rules = LineRules.from_samples({lang: localized(card.metadata.sample, lang) for lang in ("ja", "en")})
        self._vote_schema = vote_schema(card)
        self._vote_params: dict[str, dict[str, Any]] = {}  # message id -> event parameters filled with the vote
        # Event parameters filled after this companion's last line, for its next one (events_after_line), and the
        # task filling them (owned: cancelled when the companion closes or a newer line replaces it).
        self._params_for_next: dict[str, Any] | None = None
        self._voted: collections.OrderedDict[str, None] = collections.OrderedDict()  # ids of messages voted on
        self._later = TaskSet(f"companion-events:{card.id}")
        self._events_later: asyncio.Task[None] | None = None
        self._subscription: Subscription | None = None
        self.recall = recall  # long-term memory (companions/memory/recall.py), given by the app

    def _alone(self, sender: str) -> Source:
        """Who ``sender`` is to a companion built without the app's trust policy: the user, itself, or outside."""
        relation = (Relation.USER if sender == self.builtins.user_id else Relation.OWN if sender == self.id
                    else Relation.OTHER)
        return Source(sender, relation)

    def _tools_offered(self) -> bool:
        """Tools are offered unless this companion's endpoint is known to answer them as text."""
        capabilities = capabilities_of(self.model)
        return capabilities is None or not capabilities.tools_as_text

    def use_model(self, model: ChatModel) -> None:
        """Thinks with ``model`` from the next request on (the user connected a language model while running)."""
        self.model = model
        self.builtins.model = model
        self.worker.model = model

    @property
    def id(self) -> str:
        return self.card.id

    @property
    def name(self) -> str:
        return self.card.name(self.language)

    @property
    def metadata(self) -> CompanionMetadata:
        return self.card.wire_metadata(self.language)

    async def start(self) -> None:
        """Restores memory and starts hearing messages on the bus."""
        await self.memory.load()
        await self.tool_sources.start()
        if self._subscription is None:
            self._subscription = self.bus.subscribe("messages", self._on_bus_message, name=f"companion:{self.id}",
                                                    overflow="drop_newest")

    async def aclose(self) -> None:
        await self._later.aclose()
        if self.recall is not None:
            await self.recall.aclose()
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        await self.tool_sources.aclose()

    async def _on_bus_message(self, item: object) -> None:
        if isinstance(item, Message):
            await self.hear(item)

    def addressed(self, message: Message) -> bool:
        p = message.params
        return not p.to or self.id in p.to or p.from_ == self.id

    async def hear(self, message: Message) -> bool:
        """Remembers ``message`` if this companion is present, it is meant for it and not heard already (a turn
        may catch up on its history before the bus delivers it: see companion_participant.py); returns whether it
        did."""
        if not self.present or not self.addressed(message) or message.params.id in self._heard:
            return False
        self._heard[message.params.id] = None
        if len(self._heard) > HEARD_KEPT:
            self._heard.popitem(last=False)
        sender = message.params.from_
        if sender == self.id:
            self._said_lately.append(message.params.message)
        if sender != self.id and not any(m.id == sender for m in self.roster()):
            self._stop_events_later()  # the user spoke: the server is needed for the answer, not for those
        await self.memory.remember(message, self.name if sender == self.id else self._name_of(sender))
        if self.recall is not None and sender != self.id and not self.recall.closed:
            # recalled meanwhile: the vote and the reply wait for it (a line heard while the app stops is not)
            entries = self.memory.entries
            self.recall.prepare_soon(message, earlier=[e.text for e in entries[-3:-1]],
                                     in_context={e.message_id for e in entries})
        return True

    def _name_of(self, speaker_id: str) -> str:
        known = self._names(speaker_id)
        if known:
            return known
        for m in self.roster():
            if m.id == speaker_id:
                return m.name
        return speaker_id

    def _audience(self) -> list[str]:
        """Everyone who spoke in what this companion remembers, most recent conversation first."""
        seen: dict[str, None] = {}
        for entry in reversed(self.memory.entries[-20:]):
            if entry.speaker_id != self.id:
                seen[entry.speaker_id] = None
        return list(seen)

    def _voice_for(self, text: str) -> str | None:
        """The card's voice for the language ``text`` is written in (the companion's own when it cannot be told):
        a Japanese line goes to the Japanese voice whatever the interface's language."""
        return self.card.voice.for_language(detect_language(text) or self.language)

    def sanitize(self, text: str) -> str:
        """Removes lines written for others and this companion's own name prefix."""
        own = {localized(self.card.metadata.name, lang) for lang in ("ja", "en")} | {self.id}
        others = {m.name for m in self.roster() if m.id != self.id} | {m.id for m in self.roster() if m.id != self.id}
        others |= {e.speaker_name for e in self.memory.entries if e.speaker_id != self.id}
        return clean_line(text, own_names=own, other_names=(*others, *USER_NAMES))

    def context(self, language: str | None = None, message: Message | None = None, *,
                brief: bool = False) -> list[ChatMessage]:
        """The system prompt (in ``language``; the companion's own by default), what this companion remembers of
        this conversation, and what it recalled from earlier ones for ``message`` (after that stable prefix).
        ``brief``: only the last few messages remembered, nothing recalled, no lore (a line asked for again)."""
        others = [m for m in self.roster() if m.id != self.id]
        language = language or self.language
        prompt = system_prompt(self.card, language, others, self.line_rules.limit(language))
        remembered = self.memory.as_messages()
        if brief:
            return [ChatMessage.system(prompt), *remembered[-BRIEF_MESSAGES:]]
        context = [ChatMessage.system(prompt), *remembered]
        recalled = self.recall.block_for(message, language or self.language) if self.recall is not None else ""
        if recalled:
            context.append(ChatMessage.system(recalled))
        said = [e.text for e in self.memory.entries[-2:]] + ([message.params.message] if message is not None else [])
        lore = lore_block(self.card.lore, said, language or self.language)  # its lorebook, by keyword
        if lore:
            context.append(ChatMessage.system(lore))
        return context

    def _may_recall(self, source: Source | None) -> bool:
        """Whether a prompt answering ``source`` may carry what was recalled from the user's past conversations
        (nobody is asked: it would be a question at every message)."""
        return source is None or all(self.worker.trust.known(source, c) for c in (Capability.MEMORY,
                                                                                 Capability.FILES))

    async def recalled_context(self, language: str, message: Message | None) -> list[ChatMessage]:
        """:meth:`context` once what this companion recalls for ``message`` is there (companions/memory/recall.py)."""
        if self.recall is not None and message is not None:
            await self.recall.ready(message)
        return self.context(language, message)

    async def take_turn(
        self,
        message: Message | None = None,
        *,
        closing: Closing = "none",
        record: list[ChatMessage] | None = None,
        extra_notes: Sequence[str] = (),
        origin: str | None = None,
    ) -> TurnResult:
        """Takes the floor: the card's events choose guidance, then the worker runs (speaking via ``speak``).

        ``message`` is the message being answered (already heard through the bus or :meth:`hear`); ``closing`` the
        stage to speak at. The event parameters filled with this companion's vote on ``message`` are used when
        there are some; otherwise the model fills them first. The instructions come last, after the persona and
        the memory, so that a server's prompt cache reuses the same prefix for the vote, the events and the reply.
        Cancelling the task cancels the turn cleanly. The whole prompt is in the language of ``message`` (a small
        model answers in the language of its persona text, whatever the instructions say). ``origin`` is who the
        turn answers in the end (TurnContext.origin; ``message``'s ``from`` when not given): from outside the
        window, its tools reach the user's camera, files, conversations and tools from elsewhere only as the trust
        policy allows (the worker's gate), and what was recalled from the user's past conversations and documents is
        left out of its prompt unless the user allowed that source both always (nobody is asked: a question at
        every message from elsewhere would be noise).
        """
        prompt = await self._prompt(message, closing, extra_notes, origin)
        return await self.worker.run(prompt.context, record=record,
                                     ctx=RunContext(turn_id=prompt.turn_id, origin=prompt.origin, held=prompt.held,
                                                    held_by=self.name, private=prompt.private))

    async def _prompt(self, message: Message | None, closing: Closing, extra_notes: Sequence[str],
                      origin: str | None, *, brief: bool = False) -> TurnPrompt:
        """What a turn answering ``message`` is given (:meth:`take_turn` says how it is made); ``brief``: a shorter
        prompt (:meth:`context`)."""
        language = reply_language(message, self.language)
        asker = origin if origin is not None else message.params.from_ if message is not None else None
        source = self.worker.trust.source(asker) if asker is not None else None
        context = (self.context(language, brief=True) if brief
                   else await self.recalled_context(language, message if self._may_recall(source) else None))
        said_elsewhere = self.memory.holds_imported or (
            not brief and self.recall is not None and self.recall.holds_imported(message))
        if said_elsewhere and (source is None or source.trusted):
            source = IMPORTED  # its prompt holds a line of an imported conversation: the turn answers to it too
        voted = self._vote_params.get(message.params.id) if message is not None else None
        if voted is None and self._params_for_next is not None:
            voted, self._params_for_next = self._params_for_next, None  # filled after this companion's last line
        if voted is not None:
            instructions, problems = evaluate_conditions(self.card.events.conditions, voted, language)
            guidance = Guidance(voted, instructions, problems)
        elif self.events_after_line(message):
            guidance = Guidance(params={})  # filled after the line (compose), for the next one
        else:
            guidance = await decide(self.model, context, self.card.events, language,
                                    prompt_texts(language).events, counter=self.structured_stats)
        # The language and length of a line are in the system prompt; only what this turn adds comes after the
        # message (nothing at all, most turns: a small model copies instructions written there into its line).
        notes = [*guidance.texts, *extra_notes]
        if closing_prompt(language, closing):
            notes.append(closing_prompt(language, closing))
        if notes:
            context.append(ChatMessage.system(guidance_prompt(notes, language)))
        # what the model reads besides the conversation: its system prompt and what it recalled (a 0.5B model read
        # out the recall block: "2026年11月26日、userが「みなさん、こんにちは！」と言いました。")
        return TurnPrompt(context, message.params.id if message is not None else uuid.uuid4().hex, source,
                          [*notes, *turn_notes(language, self.line_rules.limit(language))],
                          "\n".join(m.text for m in context if m.role == "system"), self._held_words(message, brief),
                          self._private_words(message, brief, source))

    def _private_words(self, message: Message | None, brief: bool, source: Source | None) -> frozenset[Capability]:
        """What a prompt for ``message`` holds of the user's private things: passages of documents (files) and lines
        of earlier conversations (memory: not those of this one it remembers) recalled for it, and what this app
        noticed (the camera) when it answers that."""
        kinds: set[Capability] = {Capability.CAMERA} if source == NOTICED else set()
        here = {e.message_id for e in self.memory.entries}  # a line of this conversation it remembers is no news
        for item in () if brief or self.recall is None else self.recall.shown(message):
            if item.kind == "knowledge":
                kinds.add(Capability.FILES)
            elif item.message_id not in here:
                kinds.add(Capability.MEMORY)
        return frozenset(kinds)

    def _held_words(self, message: Message | None, brief: bool) -> tuple[Source, ...]:
        """The sources the user has not trusted whose words a prompt for ``message`` holds: what this companion
        remembers of the conversation (a peer's line, a bridge client's, an imported one) and what was recalled for
        ``message`` (a line with its speaker, a passage of a document). Its card's texts are not among them: what
        a card may use waits for the user's approval (companions/cards/approval.py)."""
        found: dict[str, Source] = {}
        entries = self.memory.entries[-BRIEF_MESSAGES:] if brief else self.memory.entries
        sources = [IMPORTED if e.imported else self.worker.trust.source(e.speaker_id) for e in entries]
        for item in () if brief or self.recall is None else self.recall.shown(message):
            if item.imported:
                sources.append(IMPORTED)
            elif item.kind == "knowledge":
                sources.append(DOCUMENTS)
            elif item.speaker_id:
                sources.append(self.worker.trust.source(item.speaker_id))
        for source in sources:
            if not source.trusted:
                found.setdefault(source.key, source)
        return tuple(found.values())

    def events_after_line(self, message: Message | None) -> bool:
        """Whether the card's events for answering ``message`` are filled after the line instead of before it: the
        user's message to everyone (not to this companion alone) that this companion did not vote on. Such a line
        is the first answer to the user's greeting on a one-request-at-a-time server (conversation/direct.py), and
        the events request ahead of it cost a grammar-constrained completion (~5 s of a 27 s first line).
        (A companion's line is always voted on, and the vote fills the parameters.)"""
        if not self.card.events.conditions or message is None or message.params.id in self._voted:
            return False
        sender = message.params.from_
        if sender == self.id or any(m.id == sender for m in self.roster()):
            return False
        return message.params.to != [self.id]

    def _stop_events_later(self) -> None:
        """Cancels filling the event parameters after the last line (its request is closed: a server that cannot
        preempt would otherwise make the user's next message wait for it; measured on the real 0.5B model: a
        grammar-constrained events request ahead of a named question's line)."""
        if self._events_later is not None and not self._events_later.done():
            self._events_later.cancel()
        self._events_later = None

    def _fill_events_later(self, message: Message, language: str) -> None:
        """Fills the card's event parameters after a line that was composed without them, at a priority below
        every vote and turn; the next line of this companion follows their instructions, unless the user speaks
        first (then they are not filled: :meth:`_stop_events_later`)."""
        self._stop_events_later()
        context = self.context(language)
        model = AtPriority(self.model, priorities.EVENTS_AFTER_LINE)

        async def fill() -> None:
            # One request, no repair: a repair asked later ran after the idle server's warm-up of the likely next
            # speaker and evicted it from the prompt cache (bench/first_word.py, warm greeting after a stop: 2.2x
            # its floor with the repair, the line's whole prompt evaluated again). Invalid: the card's defaults.
            guidance = await decide(model, context, self.card.events, language, prompt_texts(language).events,
                                    counter=self.structured_stats, repair=False)
            self._params_for_next = guidance.params if not guidance.params_fell_back else None

        self._events_later = self._later.spawn(fill(), name=f"events-after-line:{self.id}:{message.params.id}")

    async def vote(self, message: Message, *, closing_hint: Closing = "none") -> Vote:
        """Whether this companion wants the next turn, as its model says (structured output read once into a
        :class:`~companions.conversation.ballot.Vote`; what a weak model gives that cannot be read is ``listen``).
        ``closing_hint`` is the stage the framework pushes toward, said in the prompt; how the vote is counted (named
        means selected, never less closed than the hint) is conversation control's (selection.counted).

        A card with events gets its event parameters filled in the same request (kept for :meth:`take_turn`)."""
        language = reply_language(message, self.language)  # as the reply's: one prompt prefix for the server's cache
        source = self.worker.trust.source(message.params.from_)  # its reason is shown to everyone: same rule
        messages = [*await self.recalled_context(language, message if self._may_recall(source) else None),
                    ChatMessage.system(vote_prompt(language, closing_hint))]
        choice = await generate_structured(self.model, messages, self._vote_schema, default=NO_USABLE_VOTE,
                                           counter=self.structured_stats, name="vote", max_tokens=VOTE_MAX_TOKENS)
        self._voted[message.params.id] = None
        while len(self._voted) > 8:
            self._voted.popitem(last=False)
        params = getattr(choice, "params", None)
        if isinstance(params, BaseModel):
            self._vote_params[message.params.id] = params.model_dump()
            while len(self._vote_params) > 8:
                self._vote_params.pop(next(iter(self._vote_params)))
        # The vote itself, without the event parameters (excluded from its fields): valid already, read once.
        return Vote.model_construct(**choice.model_dump())

    async def compose(self, message: Message | None, closing: Closing = "none", *,
                      origin: str | None = None) -> PlannedSpeech | None:
        """Thinks of what to say without saying it: ``speak`` is planned, not voiced, and nothing is published.

        For conversation control, which publishes the message and then calls :meth:`say`. A model that answers in
        plain text, or writes its ``speak`` call as text, still gets its (cleaned) line said; a line that repeats a
        recent one is asked for once more, then replaced by a short fallback (composing.py).
        """
        language = reply_language(message, self.language)
        recent = self._recent_lines()
        others = [n for m in self.roster() if m.id != self.id for n in (m.name, m.id)]
        answered = message.params.message if message is not None else ""
        instructions = instructions_for(self.card)
        own = (localized(self.card.metadata.name, "ja"), localized(self.card.metadata.name, "en"))
        check = LineCheck(language, recent, answered,
                          lambda text: misidentified(text, other_names=others, own_names=own),
                          instructions, own_before=self._own_lines(), others_before=self._others_lines())
        limit = self.line_rules.limit(language)
        # What streams is shown and voiced early only sentence by sentence, as each passes the checks (one filter
        # per kind of text, per attempt): what the line finally says begins with what was released.
        released: CheckedSentences | None = None
        private: set[Capability] = set()  # what any attempt held of the user's private things (outbound.py)

        async def once(notes: list[str], brief: bool) -> tuple[PlannedSpeech | None, bool]:
            """One turn; also whether the model wrote tool syntax as text while tools were offered."""
            nonlocal released
            offered = self._tools_offered()
            prompt = await self._prompt(message, closing, notes, origin, brief=brief)
            gates = {kind: CheckedSentences(
                clean=lambda text: clean_piece(text, self.sanitize, prompt.notes, prompt.system, instructions),
                flaw=check.flaw, echo=check.echoes, max_chars=limit) for kind in ("text", "speech")}
            plan: list[PlannedSpeech] = []  # what this turn's own `speak` plans
            ctx = RunContext(turn_id=prompt.turn_id, origin=prompt.origin, held=prompt.held, held_by=self.name,
                             private=prompt.private,
                             stream_filter=gates.__getitem__,
                             max_tokens=line_tokens(limit, language, tools=offered),
                             tools=ToolRegistry(self.builtins.planning(plan) if t.name == "speak" else t
                                                for t in self.tools),
                             hooks=[EndAfterSpeech(plan)])
            result = await self.worker.run(prompt.context, ctx=ctx)
            private.update(result.private)
            released = gates["speech" if plan else "text"]
            if result.status == "model_error" and not plan and not released.released.strip():
                # No model answered: nothing to stand in for (a sample line with no model would pretend it talks).
                raise LLMError(result.reason)
            parsed = parse_text_tool_calls(result.text, self.tools.specs())
            tool_text = offered and not plan and (bool(parsed.calls) or parsed.discarded)
            text = without_cut_off_end(result.text) if result.cut else result.text
            line = line_of(plan[0] if plan else None, text, self.tools.specs(), self.sanitize, prompt.notes,
                           prompt=prompt.system, instructions=instructions)
            if line is None:
                answer = plan[0].text if plan else result.text
                log.info("%s: nothing of the answer was a line: %r", self.id, answer[:120])
            return line, tool_text

        async def attempt(notes: list[str], brief: bool = False) -> PlannedSpeech | None:
            line, tool_text = await once(notes, brief)
            capabilities = capabilities_of(self.model)
            if tool_text and capabilities is not None:
                # From now on this endpoint is asked for plain lines; a turn that gave only tool syntax is asked
                # again that way at once (chatml-function-calling answers "auto" tools with "functions.speak:").
                log.info("%s: tool calls came back as text; asking for plain lines", capabilities.base_url)
                capabilities.tools_as_text = True
                if line is None:
                    line, _ = await once(notes, brief)
            return line

        async def shorter(notes: list[str]) -> PlannedSpeech | None:
            return await attempt(notes, brief=True)

        def retry_fits(elapsed_s: float) -> bool:
            """Another attempt fits the first line's time budget: about one completion beyond the floor (one
            completion of this line, estimated from the endpoint's measured speed; unmeasured: it fits)."""
            capabilities = capabilities_of(self.model)
            if capabilities is None:
                return True
            prompt = sum(estimate_tokens(m.text) for m in self.context(language)) + LINE_INSTRUCTION_TOKENS
            one = capabilities.estimate_s(prompt, LINE_TOKENS)
            return one is None or elapsed_s + one <= TIME_BUDGET_COMPLETIONS * one

        after = self.events_after_line(message)
        # One check for the streamed sentences and the whole line: another's line said back is caught in both
        # (measured over 30 lines on the 0.5B model: Hina said Souta's line of the conversation before, whole).
        line = await compose_line(attempt, check=check, max_chars=limit,
                                  identity_note=identity_note(language, localized(self.card.metadata.name, language)),
                                  released=lambda: released.released if released is not None else "",
                                  retry_fits=retry_fits, retry=shorter,
                                  spare_lines=sample_lines(localized(self.card.metadata.sample, language)),
                                  answers_user=message is not None and message.params.from_ == self.builtins.user_id)
        if after and message is not None:
            self._fill_events_later(message, language)
        return dataclasses.replace(line, private=frozenset(private)) if line is not None and private else line

    def _own_lines(self) -> list[str]:
        """This companion's own lines heard lately (a sample line of its card is said again only after these)."""
        return list(self._said_lately)

    def _others_lines(self) -> list[str]:
        """What the others said that this companion remembers lately, the user's messages too: a line of theirs
        said back is no line of its own (measured over 30 lines on the 0.5B model: Souta saying Hina's line; Hina
        saying the user's question of the talk before, "Hina, can you recommend a tea for a cold evening?")."""
        return [e.text for e in self.memory.entries[-OTHERS_LINES_KEPT:] if e.speaker_id != self.id]

    def _recent_lines(self) -> list[str]:
        """The lines a new line must not repeat: the companions' lines since the user last spoke. Companions' lines
        only: answering a user's greeting with a greeting is no repetition, and neither is greeting again when the
        user comes back after a restart, its own greeting included (measured on the 0.5B model: a second start's
        "こんにちは。" counted as a repeat of the greeting said before the restart; a filler stood in). Once a
        companion answered, the user's message is one of them too, unless short. Its own lines of this run are checked
        on their own (LineCheck.own_before)."""
        speakers = {m.id for m in self.roster()} | {self.id}
        since_user: list[str] = []
        asked: list[str] = []
        for entry in reversed(self.memory.entries[-8:]):
            if entry.speaker_id not in speakers:
                # Later in the conversation the user's question is no line either (measured on the 0.5B model: a
                # question of the user's said back a turn after it was answered); a short one ("こんにちは！") may be.
                if since_user and len(entry.text) >= PARROT_MIN_CHARS:
                    asked.append(entry.text)
                break
            since_user.append(entry.text)
        return list(dict.fromkeys([*asked, *reversed(since_user[:4])]))

    async def say(self, message: Message) -> SpeakResult:
        """Voices one of this companion's messages; returns how it ended once the speech finished or failed."""
        emotion = message.params.metadata.emotion if message.params.metadata is not None else None
        return await self.builtins.say(message.params.message, emotion or "neutral")
