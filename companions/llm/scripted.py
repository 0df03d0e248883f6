"""A scripted ChatModel for tests and demos: queued responses, every request recorded, loud on surprises.

One model per companion, a queue of steps per *lane*. A request goes to the lane named after its purpose -
``request.response_format.name`` for structured output (e.g. ``"vote"``), ``"chat"`` otherwise - when that lane
was scripted, else to the main lane. So a plain script is just "answers in call order", and a conversation test can
keep votes and turns apart however the engine interleaves them::

    alice = ScriptedModel("alice")
    alice.lane("vote").always(reply_json({"state": "listen", "importance": 0}))   # every vote, any number
    alice.add(
        call("speak", {"text": "Hi!"}, expect=offers_tools("speak")),            # turn 1: a tool call
        say("Done."),                                                            # turn 1, after the tool ran
    )
    ...
    alice.assert_used_up()          # or: await alice.aclose(); unused steps or surprises raise ScriptError

For several companions, :class:`ScriptedCast` holds one model per name and checks them all at once.

An unexpected call (script exhausted) or a failed expectation raises :class:`ScriptError` (an AssertionError, so
no ``except LLMError`` in production code can swallow it) and is also remembered, so ``assert_used_up`` reports it
even if the caller caught it.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from companions.llm.types import (
    ChatMessage,
    ChatRequest,
    Completion,
    LLMError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)

MAIN_LANE = ""
CHAT_PURPOSE = "chat"


class ScriptError(AssertionError):
    """The script and the calls disagree: a call nobody expected, a failed expectation, or unused steps."""


@dataclass(frozen=True)
class Matcher:
    """A described predicate on a request (the description shows up in the ScriptError)."""

    description: str
    test: Callable[[ChatRequest], bool]

    def __call__(self, request: ChatRequest) -> bool:
        return self.test(request)


def offers_tools(*names: str) -> Matcher:
    """The request offers at least these tools (by name)."""
    return Matcher(f"offers tools {list(names)}", lambda r: set(names) <= {t.name for t in r.tools})


def asks_json(name: str | None = None) -> Matcher:
    """The request asks for structured output (named ``name`` if given)."""
    return Matcher(
        f"asks for JSON {name or ''}".strip(),
        lambda r: r.response_format is not None and (name is None or r.response_format.name == name),
    )


def mentions(text: str) -> Matcher:
    """Some message of the request contains ``text``."""
    return Matcher(f"mentions {text!r}", lambda r: any(text in m.text for m in r.messages))


def last_message_mentions(text: str) -> Matcher:
    return Matcher(f"last message mentions {text!r}", lambda r: bool(r.messages) and text in r.messages[-1].text)


@dataclass(frozen=True)
class Step:
    """One scripted answer. Build with :func:`say`, :func:`call`, :func:`calls`, :func:`reply_json`, :func:`fail`,
    :func:`stall`."""

    text: str = ""
    chunks: tuple[str, ...] | None = None  # how the text streams; default one delta with all of it
    tool_calls: tuple[ToolCall, ...] = ()
    error: LLMError | None = None
    stall: bool = False  # hang until cancelled
    delay_s: float = 0.0  # simulated latency before the first event
    expect: Callable[[ChatRequest], bool] | None = None
    finish_reason: str | None = None

    def events(self) -> list[StreamEvent]:
        pieces = self.chunks if self.chunks is not None else ((self.text,) if self.text else ())
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        message = ChatMessage.assistant(self.text or None, self.tool_calls)
        calls: list[StreamEvent] = []
        for index, c in enumerate(self.tool_calls):  # name first, then the arguments in small fragments
            calls.append(ToolCallDelta(index=index, name=c.name))
            args = c.arguments
            calls += [ToolCallDelta(index=index, arguments=args[i : i + 8]) for i in range(0, len(args), 8)]
        return [*(TextDelta(text=p) for p in pieces if p), *calls, Completion(message=message, finish_reason=finish)]


Expect = Callable[[ChatRequest], bool] | None


def say(text: str, *, chunks: Iterable[str] | None = None, expect: Expect = None, delay_s: float = 0.0) -> Step:
    """Answer with text, streamed as ``chunks`` if given (they must add up to ``text``)."""
    parts = tuple(chunks) if chunks is not None else None
    if parts is not None and "".join(parts) != text:
        raise ValueError("the chunks must add up to the text")
    return Step(text=text, chunks=parts, expect=expect, delay_s=delay_s)


def _arguments(args: dict[str, Any] | BaseModel | str | None) -> str:
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args  # verbatim, so a test can script invalid JSON
    if isinstance(args, BaseModel):
        return args.model_dump_json()
    return json.dumps(args, ensure_ascii=False)


def call(
    name: str,
    args: dict[str, Any] | BaseModel | str | None = None,
    *,
    id: str | None = None,
    text: str = "",
    expect: Expect = None,
    delay_s: float = 0.0,
) -> Step:
    """Answer with one tool call (``args`` as a dict/model, or a raw string sent verbatim)."""
    return Step(
        text=text, tool_calls=(ToolCall(id=id or f"call_{name}", name=name, arguments=_arguments(args)),),
        expect=expect, delay_s=delay_s,
    )  # fmt: skip


def calls(*items: tuple[str, dict[str, Any] | BaseModel | str | None], text: str = "", expect: Expect = None) -> Step:
    """Answer with several tool calls at once (they run concurrently in the worker)."""
    tool_calls = tuple(ToolCall(id=f"call_{i}_{n}", name=n, arguments=_arguments(a)) for i, (n, a) in enumerate(items))
    return Step(text=text, tool_calls=tool_calls, expect=expect)


def reply_json(value: BaseModel | dict[str, Any] | list[Any] | str, *, expect: Expect = None) -> Step:
    """Answer with JSON text (a str is sent verbatim, e.g. malformed JSON or JSON wrapped in prose)."""
    if isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
    return Step(text=text, expect=expect)


def fail(
    error: LLMError | str = "scripted failure",
    *,
    retryable: bool = False,
    status: int | None = None,
    expect: Expect = None,
) -> Step:
    """Raise an LLMError when called (as a network or server failure would)."""
    exc = error if isinstance(error, LLMError) else LLMError(error, retryable=retryable, status=status)
    return Step(error=exc, expect=expect)


def stall(*, text_first: str = "", expect: Expect = None) -> Step:
    """Stream ``text_first`` (if any), then hang until the consumer cancels."""
    return Step(text=text_first, stall=True, expect=expect)


@dataclass
class Lane:
    """The queued steps of one purpose; ``always`` answers once the queue is empty."""

    name: str
    steps: deque[Step] = field(default_factory=deque)
    fallback: Step | None = None

    def add(self, *steps: Step) -> Lane:
        self.steps.extend(steps)
        return self

    def always(self, step: Step) -> Lane:
        self.fallback = step
        return self


class ScriptedModel:
    """The scripted :class:`~companions.llm.types.ChatModel`. See the module docstring."""

    def __init__(self, name: str = "scripted", *steps: Step, supports_images: bool = True) -> None:
        self._name = name
        self._supports_images = supports_images
        self._lanes: dict[str, Lane] = {MAIN_LANE: Lane(MAIN_LANE)}
        self._lanes[MAIN_LANE].add(*steps)
        self.requests: list[ChatRequest] = []
        self.lane_of_request: list[str] = []
        self.errors: list[str] = []
        self._called = asyncio.Event()  # set on every call; waiters clear it and re-check

    @property
    def name(self) -> str:
        return self._name

    @property
    def supports_images(self) -> bool:
        return self._supports_images

    def __repr__(self) -> str:
        return f"ScriptedModel({self._name!r}, pending={self.pending})"

    def add(self, *steps: Step) -> ScriptedModel:
        """Queues steps on the main lane."""
        self._lanes[MAIN_LANE].add(*steps)
        return self

    def lane(self, purpose: str) -> Lane:
        """The lane for requests of this purpose (response_format name, or ``"chat"``), created on first use."""
        return self._lanes.setdefault(purpose, Lane(purpose))

    @property
    def pending(self) -> int:
        return sum(len(lane.steps) for lane in self._lanes.values())

    def requests_in(self, purpose: str) -> list[ChatRequest]:
        return [r for r, lane in zip(self.requests, self.lane_of_request, strict=True) if lane == purpose]

    async def wait_for_calls(self, count: int, timeout: float = 5.0) -> None:
        """Waits until ``count`` requests were made."""
        async with asyncio.timeout(timeout):
            while len(self.requests) < count:
                self._called.clear()
                await self._called.wait()

    def assert_used_up(self) -> None:
        """Raises ScriptError if a step was left unused or a call went wrong."""
        problems = list(self.errors)
        for lane in self._lanes.values():
            if lane.steps:
                label = f"lane {lane.name!r}" if lane.name else "the main lane"
                problems.append(f"{len(lane.steps)} unused step(s) in {label}: {list(lane.steps)[:3]}")
        if problems:
            raise ScriptError(f"{self._name}: " + "; ".join(problems))

    async def aclose(self) -> None:
        self.assert_used_up()

    def _purpose(self, request: ChatRequest) -> str:
        return request.response_format.name if request.response_format is not None else CHAT_PURPOSE

    def _next_step(self, request: ChatRequest) -> Step:
        purpose = self._purpose(request)
        lane = self._lanes[purpose] if purpose in self._lanes else self._lanes[MAIN_LANE]
        self.requests.append(request)
        self.lane_of_request.append(lane.name)
        self._called.set()
        if lane.steps:
            step = lane.steps.popleft()
        elif lane.fallback is not None:
            step = lane.fallback
        else:
            last = request.messages[-1].text[:80] if request.messages else ""
            return self._error(f"unexpected call #{len(self.requests)} ({purpose}; last message {last!r})")
        if step.expect is not None and not step.expect(request):
            return self._error(f"call #{len(self.requests)} did not match: expected {step.expect!r}")
        return step

    def _error(self, problem: str) -> Step:
        self.errors.append(problem)
        raise ScriptError(f"{self._name}: {problem}")

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        step = self._next_step(request)
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        if step.error is not None:
            raise step.error
        if step.stall:
            if step.text:
                yield TextDelta(text=step.text)
            await asyncio.Event().wait()  # until the consumer cancels
        for event in step.events():
            yield event


class ScriptedCast(dict[str, ScriptedModel]):
    """One ScriptedModel per companion name: ``cast = ScriptedCast("alice", "bob")``; ``cast["alice"].add(...)``."""

    def __init__(self, *names: str) -> None:
        super().__init__({n: ScriptedModel(n) for n in names})

    def assert_used_up(self) -> None:
        problems: list[str] = []
        for model in self.values():
            try:
                model.assert_used_up()
            except ScriptError as exc:
                problems.append(str(exc))
        if problems:
            raise ScriptError("\n".join(problems))
