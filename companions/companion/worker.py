"""The worker: one companion's LLM turn loop (seed 001).

A turn: ``on_message_send`` -> streamed request (text published for the UI as it streams) -> collect every tool call ->
``before_tool_call`` per call -> run the allowed calls concurrently -> ``after_tool_call`` per result -> request
again while tools ran -> ``on_turn_end``, which may add messages and continue (self-correction) -> finish.
``max_steps`` bounds the number of model requests in one turn.

What one turn runs with is a :class:`RunContext` given to :meth:`Worker.run` for that turn alone (its id, origin,
token bound, stream filter, and the tools and hooks only it has), never an attribute set on the worker for a while:
two turns of one companion at once never see each other's settings.

The gate: a turn has an *origin*, the source of the latest message of its chain that did not come from
this app's own companions (the conversation manager knows it; ``RunContext.origin``). When it is not the user in the
window, every tool call that reaches something of the user's (the tool's ``capabilities``: the camera, the user's
files, past conversations, tools of MCP servers and plugins) is put to the trust policy first, once per call and
before the hooks; a call the source was not allowed is not run: the model reads the refusal as its result, and
the ``ToolUsed`` says ``refused`` (the Turns panel shows it).

History stays consistent whatever happens: the messages of a turn are appended to ``record`` only when they are
complete, and when the turn is cancelled while tools run, every open tool call gets an "interrupted" result, so no
assistant tool call is ever left without its answer. Text streamed by a request that was cancelled is dropped (it
was never spoken: companions speak through the ``speak`` tool).

What streams (:class:`TextStreamed`, ``kind``): ``"speech"`` is the decoded ``message`` argument of a ``speak``
call while its JSON arguments stream (the line the companion is writing); ``"text"`` is plain reply text, shown
only while it reads like a line: from the first sign of tool syntax or JSON (``{``, ``<tool_call>``,
``functions.``, a code fence ...) the rest of the request's plain text is held back (speech_stream.py).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, assert_never

from companions.companion.hooks import (
    Abort,
    Continue,
    ContinueWithMessages,
    ControlFlow,
    Finish,
    PendingToolCall,
    Skip,
    ToolCallResult,
    TurnEndDecision,
    WorkerHook,
)
from companions.companion.speech_stream import MessageFieldExtractor, TextFilter, ToolTextGuard
from companions.llm.types import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    Completion,
    LLMError,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from companions.tools.functions import ToolRegistry, ToolResult
from companions.tools.tool_use import ToolUsed
from companions.trust.outbound import PrivateTurn, private_kinds
from companions.trust.policy import IMPORTED, NOT_THIS_COMPUTERS, Capability, Source, TrustPolicy, words_from_tool
from companions.wire.bus import Bus, LocalEvent

log = logging.getLogger(__name__)

TurnStatus: TypeAlias = Literal["finished", "skipped", "aborted", "max_steps", "model_error"]
StreamKind: TypeAlias = Literal["text", "speech"]
StreamFilter: TypeAlias = Callable[[StreamKind], TextFilter]
_Add: TypeAlias = Callable[[ChatMessage], None]
_Ask: TypeAlias = Callable[[WorkerHook], Awaitable[ControlFlow]]
INTERRUPTED = "Interrupted: the turn was cancelled before this tool finished."


@dataclass(frozen=True)
class TextStreamed(LocalEvent):
    """A piece of text the model is streaming (for the UI); ``done`` marks the end of one request's text.

    ``kind`` is ``"speech"`` for the text of a ``speak`` call (what the companion is about to say) and ``"text"``
    for plain reply text; a request may stream both (plain text first), and ``done`` ends them together (its
    ``kind`` is the last one streamed).
    """

    companion_id: str
    turn_id: str
    text: str
    done: bool = False
    kind: StreamKind = "text"


@dataclass(frozen=True)
class RunContext:
    """What one turn runs with, given to :meth:`Worker.run` for that turn alone (pydantic-ai's ``RunContext``).

    ``origin`` is who the turn answers in the end (the module's docstring; ``None``: the app itself); ``held`` the
    sources whose words its prompt holds that the user has not trusted (a peer's line remembered, a recalled one, a
    passage of a document: companions/trust), asked for as ``origin`` is, on behalf of ``held_by`` (the companion);
    ``max_tokens`` bounds each of its requests (``None``: the worker's bound); what streams passes through
    ``stream_filter`` of its kind first, when set (a line being composed shows only text that passed its checks:
    speech_stream.CheckedSentences); ``tools`` are the turn's own (``None``: the worker's), e.g. a ``speak`` that
    writes the line into the turn's plan instead of saying it; ``hooks`` run after the worker's, for this turn only.
    ``private``: what its prompt holds of the camera's, the user's files or past conversations (recalled for it:
    companions/trust/outbound.py); the turn is private from its start, and from the first such tool that ran.
    """

    turn_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    origin: Source | None = None
    held: tuple[Source, ...] = ()
    held_by: str = ""
    private: frozenset[Capability] = frozenset()
    max_tokens: int | None = None
    stream_filter: StreamFilter | None = None
    tools: ToolRegistry | None = None
    hooks: Sequence[WorkerHook] = ()


async def _run_tool(tools: ToolRegistry, call: PendingToolCall, elsewhere: frozenset[Capability]) -> ToolResult:
    """Runs ``call`` in its own task; ``elsewhere``: what it may reach only off this computer (set for this task)."""
    if elsewhere:
        NOT_THIS_COMPUTERS.set(elsewhere)
    return await tools.run(call.name, call.arguments, call.id)


@dataclass(frozen=True)
class TurnEnded(LocalEvent):
    companion_id: str
    turn_id: str
    status: str
    reason: str = ""


@dataclass
class TurnResult:
    """How a turn ended and the messages it added."""

    turn_id: str
    status: TurnStatus
    messages: list[ChatMessage]
    steps: int
    reason: str = ""
    tool_results: list[ToolCallResult] = field(default_factory=list)
    private: frozenset[Capability] = frozenset()  # what it holds of the user's private things (its ctx's, its tools')
    cut: bool = False  # its last request ended at the token limit (finish_reason "length"): its text ends unfinished

    @property
    def text(self) -> str:
        """The text of the last assistant message (what the model said last, outside tools)."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.text
        return ""


class Worker:
    """Runs turns of one model with one tool registry and a list of hooks."""

    def __init__(
        self,
        model: ChatModel,
        tools: ToolRegistry,
        *,
        hooks: Sequence[WorkerHook] = (),
        bus: Bus | None = None,
        owner: str = "",
        max_steps: int = 8,
        temperature: float | None = None,
        max_tokens: int | None = None,
        priority: int = 0,
        speech_tool: str = "speak",
        tools_offered: Callable[[], bool] = lambda: True,
        speech_field: str = "message",
        trust: TrustPolicy | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.model = model
        self.tools = tools
        self.hooks = list(hooks)
        self.bus = bus
        self.owner = owner
        self.max_steps = max_steps
        self.temperature = temperature
        self.max_tokens = max_tokens  # a bound per request: a small model that loops cannot hold the floor long
        self.priority = priority  # on an endpoint with few slots, a turn's request goes before waiting votes
        self.speech_tool = speech_tool
        self.tools_offered = tools_offered  # False: the model answers in plain text (its tools come back as text)
        self.speech_field = speech_field
        # Without a policy nobody can be asked: a turn from outside the window gets none of the user's things.
        self.trust = trust or TrustPolicy(bus=bus)

    async def run(
        self,
        context: Sequence[ChatMessage],
        *,
        record: list[ChatMessage] | None = None,
        ctx: RunContext | None = None,
    ) -> TurnResult:
        """Runs one turn on ``context`` (not modified) with what ``ctx`` gives it (a new turn id and nothing else
        by default). New messages go to ``record`` as they complete.

        Raises:
            asyncio.CancelledError: the turn was cancelled; ``record`` is left consistent.
        """
        ctx = ctx or RunContext()
        turn_id = ctx.turn_id
        added: list[ChatMessage] = [] if record is None else record
        start = len(added)
        working = list(context)
        result = TurnResult(turn_id, "finished", [], 0)

        def add(message: ChatMessage) -> None:
            added.append(message)
            working.append(message)

        try:
            await self._run(working, add, result, ctx)
        except asyncio.CancelledError:
            self._close_open_calls(added, start)
            result.messages = added[start:]
            self._publish(TurnEnded(self.owner, turn_id, "cancelled"))
            raise
        result.messages = added[start:]
        self._publish(TurnEnded(self.owner, turn_id, result.status, result.reason))
        return result

    async def _run(self, working: list[ChatMessage], add: _Add, result: TurnResult, ctx: RunContext) -> None:
        flow = await self._ask_all(ctx, lambda h: h.on_message_send(working))
        match flow:
            case Continue():
                pass
            case Skip(reason):
                result.status, result.reason = "skipped", reason
                return
            case Abort(reason):
                result.status, result.reason = "aborted", reason
                return
            case _:
                assert_never(flow)
        first = len(working)
        held = list(ctx.held)  # and, as tools return words from elsewhere, theirs
        self._private(result, ctx.private)
        while True:
            if result.steps >= self.max_steps:
                result.status, result.reason = "max_steps", f"stopped after {self.max_steps} model requests"
                return
            result.steps += 1
            try:
                completion = await self._request(working, ctx)
            except LLMError as err:
                result.status, result.reason = "model_error", str(err)
                return
            message = completion.message
            result.cut = completion.finish_reason == "length"
            add(ChatMessage(role="assistant", content=message.content or None, tool_calls=message.tool_calls))
            if message.tool_calls:
                aborted = await self._run_tools(message.tool_calls, add, result, ctx, held)
                if aborted is not None:
                    result.status, result.reason = "aborted", aborted
                    return
                continue
            decision = await self._turn_end(ctx, working[first:])
            match decision:
                case Finish():
                    return
                case ContinueWithMessages(messages):
                    for extra in messages:
                        add(extra)
                case _:
                    assert_never(decision)

    def _tools(self, ctx: RunContext) -> ToolRegistry:
        return ctx.tools if ctx.tools is not None else self.tools

    async def _request(self, working: list[ChatMessage], ctx: RunContext) -> Completion:
        tools = self._tools(ctx).specs() if self.tools_offered() else ()
        max_tokens = ctx.max_tokens if ctx.max_tokens is not None else self.max_tokens
        request = ChatRequest(messages=tuple(working), tools=tools, temperature=self.temperature,
                              max_tokens=max_tokens, priority=self.priority)
        completion: Completion | None = None
        streamed: StreamKind | None = None  # the last kind streamed
        guard = ToolTextGuard()
        speech = _SpeechFollower(self.speech_tool, self.speech_field)
        checked, turn_id = ctx.stream_filter, ctx.turn_id

        def publish(text: str, kind: StreamKind, *, flushed: bool = False) -> None:
            nonlocal streamed
            if checked is not None and not flushed:
                text = checked(kind).feed(text)
            if text:
                streamed = kind
                self._publish(TextStreamed(self.owner, turn_id, text, kind=kind))

        async for event in self.model.stream(request):
            if isinstance(event, TextDelta):
                publish(guard.feed(event.text), "text")
            elif isinstance(event, ToolCallDelta):
                publish(speech.feed(event), "speech")
            else:
                completion = event
        publish(guard.flush(), "text")
        if checked is not None and (completion is None or completion.finish_reason != "length"):
            # (a sentence the token limit cut off stays unsaid: only finished sentences were released)
            publish(checked("text").flush(), "text", flushed=True)
            publish(checked("speech").flush(), "speech", flushed=True)
        if streamed is not None:
            self._publish(TextStreamed(self.owner, turn_id, "", done=True, kind=streamed))
        if completion is None:
            raise LLMError(f"{self.model.name}: the stream ended without a completion")
        return completion

    async def _run_tools(self, calls: tuple[ToolCall, ...], add: _Add, result: TurnResult,
                         ctx: RunContext, held: list[Source]) -> str | None:
        """Runs one batch of tool calls; returns the abort reason if a hook aborted the turn. ``held``: the untrusted
        sources whose words the turn holds, grown by what these tools return."""
        tools = self._tools(ctx)
        pending = [PendingToolCall(c.id, c.name, c.arguments) for c in calls]
        outcomes: dict[str, ToolCallResult] = {}
        said_by: dict[str, tuple[str, ...]] = {}  # call id -> whose words its result holds (a memory tool's)
        allowed: list[PendingToolCall] = []
        refused: set[str] = set()
        elsewhere: dict[str, frozenset[Capability]] = {}  # call id -> what it may reach only off this computer
        abort: str | None = None
        for call in pending:
            if abort is not None:
                outcomes[call.id] = ToolCallResult(call.id, call.name, f"Not run: the turn was aborted ({abort}).",
                                                   True, call.arguments)
                continue
            refusal = await self._refusal(call, tools, ctx.origin, held, ctx.held_by, elsewhere=elsewhere)
            if refusal is not None:
                outcomes[call.id] = ToolCallResult(call.id, call.name, refusal, True, call.arguments)
                refused.add(call.id)
                continue
            flow = await self._ask_all(ctx, lambda h, c=call: h.before_tool_call(c))  # type: ignore[misc]
            match flow:
                case Continue():
                    allowed.append(call)
                case Skip(reason):
                    outcomes[call.id] = ToolCallResult(call.id, call.name, f"Skipped: {reason}", True, call.arguments)
                case Abort(reason):
                    abort = reason
                    outcomes[call.id] = ToolCallResult(call.id, call.name, f"Not run: {reason}", True, call.arguments)
                case _:
                    assert_never(flow)
        if abort is not None:
            for call in allowed:
                outcomes[call.id] = ToolCallResult(call.id, call.name, f"Not run: the turn was aborted ({abort}).",
                                                   True, call.arguments)
            allowed = []
        if allowed:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(_run_tool(tools, c, elsewhere.get(c.id, frozenset()))) for c in allowed]
            for call, task in zip(allowed, tasks, strict=True):
                ran: ToolResult = task.result()
                said_by[call.id] = ran.said_by
                outcome = ToolCallResult(call.id, call.name, ran.content, ran.is_error, call.arguments)
                outcomes[call.id] = outcome
                if abort is not None:
                    continue
                flow = await self._ask_all(ctx, lambda h, o=outcome: h.after_tool_call(o))  # type: ignore[misc]
                match flow:
                    case Continue():
                        pass
                    case Skip(reason):
                        outcome.content = f"(the result of {call.name} is hidden: {reason})"
                    case Abort(reason):
                        abort = reason
                    case _:
                        assert_never(flow)
        for call in pending:
            outcome = outcomes[call.id]
            result.tool_results.append(outcome)
            add(ChatMessage.tool(call.id, call.name, outcome.content))
            known = tools.get(call.name)
            words = words_from_tool(known.origin, known.capabilities) if known is not None else None
            speakers = [IMPORTED if s == IMPORTED.id else self.trust.source(s) for s in said_by.get(call.id, ())]
            for source in [*([words] if words is not None else []), *speakers]:
                if call.id not in refused and not source.trusted and all(h.key != source.key for h in held):
                    held.append(source)  # what it returned is in the turn from now on
            if known is not None and call.id not in refused:  # before the model reads it (a client's own camera
                # is not this computer's: what it saw is the client's)
                self._private(result, private_kinds(known.capabilities - elsewhere.get(call.id, frozenset())))
            self._publish(ToolUsed.of(self.owner, result.turn_id, call.name, arguments=call.arguments,
                                      origin=known.origin if known else "unknown", result=outcome.content,
                                      is_error=outcome.is_error, refused=call.id in refused))
        return abort

    async def _refusal(self, call: PendingToolCall, tools: ToolRegistry, origin: Source | None,
                       held: Sequence[Source] = (), held_by: str = "", *,
                       elsewhere: dict[str, frozenset[Capability]] | None = None) -> str | None:
        """Why ``call`` may not run in a turn from ``origin`` whose prompt holds the words of ``held`` (the policy's
        words), or ``None``: it may. Each untrusted source must be allowed the call's capabilities, but for a look
        through the camera of the client it speaks through (the one client that answers this companion's looks:
        ``TrustPolicy.client_camera``), which is that client's user's; the call is then put in ``elsewhere``: its
        look reaches that client's camera only (``NOT_THIS_COMPUTERS``)."""
        known = tools.get(call.name)
        if known is None or not known.capabilities:
            return None
        askers = [(origin, "")] if origin is not None and not origin.trusted else []
        askers += [(source, held_by) for source in held if not source.trusted
                   and (origin is None or source.key != origin.key)]
        cameras = self.trust.client_camera(self.owner) if askers and Capability.CAMERA in known.capabilities \
            else frozenset()
        for capability in sorted(known.capabilities):
            for source, on_behalf in askers:
                if capability is Capability.CAMERA and source.id in cameras:
                    if elsewhere is not None:
                        elsewhere[call.id] = frozenset({Capability.CAMERA})
                    continue
                permission = await self.trust.permit(source, capability, call.name, held_by=on_behalf)
                if not permission.allowed:
                    return permission.reason
        return None

    def _private(self, result: TurnResult, kinds: frozenset[Capability]) -> None:
        """The turn holds ``kinds`` from now on: said at once, before anything more of it streams."""
        if kinds - result.private:
            result.private |= kinds
            self._publish(PrivateTurn(self.owner, result.turn_id, result.private))

    async def _turn_end(self, ctx: RunContext, turn_messages: list[ChatMessage]) -> TurnEndDecision:
        for hook in (*self.hooks, *ctx.hooks):
            try:
                decision = await hook.on_turn_end(turn_messages)
            except Exception:  # a broken hook ends the turn, it does not crash the companion
                log.exception("%s: on_turn_end hook %r failed; finishing the turn", self.owner, hook)
                return Finish()
            if not isinstance(decision, Finish):
                return decision
        return Finish()

    async def _ask_all(self, ctx: RunContext, ask: _Ask) -> ControlFlow:
        for hook in (*self.hooks, *ctx.hooks):
            try:
                flow = await ask(hook)
            except Exception as err:  # reported as an abort, never a crash
                log.exception("%s: hook %r failed", self.owner, hook)
                return Abort(f"hook {type(hook).__name__} failed: {err}")
            if not isinstance(flow, Continue):
                return flow
        return Continue()

    @staticmethod
    def _close_open_calls(added: list[ChatMessage], start: int) -> None:
        answered = {m.tool_call_id for m in added[start:] if m.role == "tool"}
        for message in list(added[start:]):
            for call in message.tool_calls:
                if call.id not in answered:
                    added.append(ChatMessage.tool(call.id, call.name, INTERRUPTED))
                    answered.add(call.id)

    def _publish(self, event: LocalEvent) -> None:
        if self.bus is not None:
            self.bus.publish(event)




class _SpeechFollower:
    """Follows the first ``tool`` call of one streamed request and yields its ``field`` text as it streams."""

    def __init__(self, tool: str, field: str) -> None:
        self._tool = tool
        self._field = field
        self._names: dict[int, str] = {}
        self._index: int | None = None  # the call being followed
        self._extractor: MessageFieldExtractor | None = None

    def feed(self, delta: ToolCallDelta) -> str:
        if delta.name:
            self._names[delta.index] = self._names.get(delta.index, "") + delta.name
        if not delta.arguments:
            return ""
        if self._index is None and self._names.get(delta.index, "").strip() == self._tool:
            # The name streams before the arguments (OpenAI's order): with the first argument it is whole.
            self._index = delta.index
            self._extractor = MessageFieldExtractor(self._field)
        if delta.index != self._index or self._extractor is None:
            return ""
        return self._extractor.feed(delta.arguments)
