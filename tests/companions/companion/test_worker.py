"""The worker turn loop: streaming, parallel tools, every hook's power, cancellation, max steps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from companions.companion.hooks import (
    CONTINUE,
    FINISH,
    Abort,
    ContinueWithMessages,
    ControlFlow,
    PendingToolCall,
    Skip,
    ToolCallResult,
    TurnEndDecision,
    WorkerHook,
)
from companions.companion.worker import INTERRUPTED, RunContext, TextStreamed, TurnEnded, Worker
from companions.llm.scripted import ScriptedModel, call, calls, fail, offers_tools, say, stall
from companions.llm.types import ChatMessage
from companions.tools.functions import ToolRegistry, tool
from companions.wire.bus import InProcessBus

CONTEXT = [ChatMessage.system("You are a test."), ChatMessage.user("hello")]


def consistent(messages: Sequence[ChatMessage]) -> bool:
    """Every assistant tool call has exactly one tool result."""
    asked = [c.id for m in messages for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if m.role == "tool"]
    return sorted(asked) == sorted(a for a in answered if a is not None)


def registry_with_sleepers(started: asyncio.Event | None = None) -> tuple[ToolRegistry, list[str]]:
    ran: list[str] = []

    @tool
    async def slow(label: str) -> str:
        """Sleeps 0.2 s."""
        if started is not None:
            started.set()
        await asyncio.sleep(0.2)
        ran.append(label)
        return f"done {label}"

    @tool
    def echo(text: str) -> str:
        """Echoes."""
        ran.append(f"echo {text}")
        return text.upper()

    return ToolRegistry([slow, echo]), ran


async def test_text_is_streamed_on_the_bus_and_the_turn_finishes() -> None:
    bus = InProcessBus()
    seen: list[object] = []
    bus.subscribe("events", seen.append)
    model = ScriptedModel("m", say("Hello there", chunks=["Hel", "lo ", "there"]))
    result = await Worker(model, ToolRegistry(), bus=bus, owner="akari").run(CONTEXT, ctx=RunContext(turn_id="t1"))
    await bus.drain()
    assert result.status == "finished"
    assert result.text == "Hello there"
    assert result.steps == 1
    texts = [e.text for e in seen if isinstance(e, TextStreamed) and not e.done]
    assert texts == ["Hel", "lo ", "there"]
    assert any(isinstance(e, TextStreamed) and e.done for e in seen)
    assert [e.status for e in seen if isinstance(e, TurnEnded)] == ["finished"]
    model.assert_used_up()
    await bus.aclose()


async def test_two_slow_tools_run_concurrently() -> None:
    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", calls(("slow", {"label": "a"}), ("slow", {"label": "b"})), say("ok"))
    start = time.perf_counter()
    result = await Worker(model, tools).run(CONTEXT)
    elapsed = time.perf_counter() - start
    assert sorted(ran) == ["a", "b"]
    assert elapsed < 0.35, f"two 0.2 s tools took {elapsed:.3f} s: they did not run in parallel"
    assert [r.content for r in result.tool_results] == ["done a", "done b"]
    assert consistent(result.messages)
    model.assert_used_up()


async def test_tool_errors_become_results_and_the_model_sees_them() -> None:
    tools, _ = registry_with_sleepers()
    model = ScriptedModel(
        "m",
        calls(("echo", '{"text": 3}'), ("nope", {}), ("echo", "{broken")),
        say("sorry", expect=offers_tools("echo")),
    )
    result = await Worker(model, tools).run(CONTEXT)
    assert result.status == "finished"
    assert all(r.is_error for r in result.tool_results)
    last_request = model.requests[-1].messages
    tool_texts = [m.text for m in last_request if m.role == "tool"]
    assert "invalid arguments" in tool_texts[0]
    assert "no tool named 'nope'" in tool_texts[1]
    assert "not valid JSON" in tool_texts[2]
    model.assert_used_up()


class SkipEcho(WorkerHook):
    async def before_tool_call(self, call: PendingToolCall) -> ControlFlow:
        return Skip("echo is not allowed here") if call.name == "echo" else CONTINUE


class RewriteArguments(WorkerHook):
    async def before_tool_call(self, call: PendingToolCall) -> ControlFlow:
        call.arguments = '{"text": "rewritten"}'
        return CONTINUE


class AbortOnSlow(WorkerHook):
    async def before_tool_call(self, call: PendingToolCall) -> ControlFlow:
        return Abort("slow tools are forbidden") if call.name == "slow" else CONTINUE


class HideAndRewrite(WorkerHook):
    async def after_tool_call(self, result: ToolCallResult) -> ControlFlow:
        if result.content == "SECRET":
            return Skip("contains a secret")
        result.content = f"[checked] {result.content}"
        return CONTINUE


async def test_before_tool_call_skip_does_not_run_the_tool() -> None:
    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", call("echo", {"text": "x"}), say("ok"))
    result = await Worker(model, tools, hooks=[SkipEcho()]).run(CONTEXT)
    assert ran == []
    assert result.status == "finished"
    assert "Skipped: echo is not allowed here" in result.tool_results[0].content
    model.assert_used_up()


async def test_before_tool_call_rewrites_arguments() -> None:
    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", call("echo", {"text": "original"}), say("ok"))
    result = await Worker(model, tools, hooks=[RewriteArguments()]).run(CONTEXT)
    assert ran == ["echo rewritten"]
    assert result.tool_results[0].content == "REWRITTEN"
    model.assert_used_up()


async def test_before_tool_call_abort_ends_the_turn_and_no_tool_runs() -> None:
    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", calls(("echo", {"text": "x"}), ("slow", {"label": "a"})))
    result = await Worker(model, tools, hooks=[AbortOnSlow()]).run(CONTEXT)
    assert result.status == "aborted"
    assert result.reason == "slow tools are forbidden"
    assert ran == []
    assert result.steps == 1
    assert consistent(result.messages)
    model.assert_used_up()  # no second request after the abort


async def test_after_tool_call_rewrites_and_hides_results() -> None:
    tools, _ = registry_with_sleepers()
    model = ScriptedModel("m", calls(("echo", {"text": "secret"}), ("echo", {"text": "fine"})), say("ok"))
    await Worker(model, tools, hooks=[HideAndRewrite()]).run(CONTEXT)
    seen = [m.text for m in model.requests[-1].messages if m.role == "tool"]
    assert "SECRET" not in " ".join(seen)
    assert "hidden" in seen[0]
    assert seen[1] == "[checked] FINE"
    model.assert_used_up()


class Lint(WorkerHook):
    """Self-correction: insists that the final answer ends with a full stop."""

    def __init__(self) -> None:
        self.checked = 0

    async def on_turn_end(self, messages: Sequence[ChatMessage]) -> TurnEndDecision:
        self.checked += 1
        if not messages[-1].text.endswith("."):
            return ContinueWithMessages((ChatMessage.user("End your answer with a full stop."),))
        return FINISH


async def test_on_turn_end_self_correction_loop() -> None:
    lint = Lint()
    model = ScriptedModel("m", say("no stop"), say("still none"), say("Now fixed."))
    result = await Worker(model, ToolRegistry(), hooks=[lint]).run(CONTEXT)
    assert result.status == "finished"
    assert result.text == "Now fixed."
    assert lint.checked == 3
    assert sum(1 for m in result.messages if m.text == "End your answer with a full stop.") == 2
    model.assert_used_up()


async def test_max_steps_bounds_a_self_correction_that_never_converges() -> None:
    model = ScriptedModel("m", say("a"), say("b"), say("c"))
    result = await Worker(model, ToolRegistry(), hooks=[Lint()], max_steps=3).run(CONTEXT)
    assert result.status == "max_steps"
    assert result.steps == 3
    model.assert_used_up()


async def test_max_steps_bounds_a_tool_loop() -> None:
    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", *(call("echo", {"text": str(i)}, id=f"c{i}") for i in range(2)))
    result = await Worker(model, tools, max_steps=2).run(CONTEXT)
    assert result.status == "max_steps"
    assert len(ran) == 2
    assert consistent(result.messages)
    model.assert_used_up()


class CancelBeforeSend(WorkerHook):
    async def on_message_send(self, context: list[ChatMessage]) -> ControlFlow:
        if "forbidden" in context[-1].text:
            return Abort("the user message is forbidden")
        context.append(ChatMessage.system("Injected guidance."))
        return CONTINUE


async def test_on_message_send_injects_and_aborts() -> None:
    model = ScriptedModel("m", say("ok"))
    hook = CancelBeforeSend()
    result = await Worker(model, ToolRegistry(), hooks=[hook]).run(CONTEXT)
    assert result.status == "finished"
    assert model.requests[0].messages[-1].text == "Injected guidance."
    aborted = await Worker(model, ToolRegistry(), hooks=[hook]).run([ChatMessage.user("forbidden words")])
    assert aborted.status == "aborted"
    assert aborted.steps == 0
    model.assert_used_up()


async def test_model_error_is_a_result_not_an_exception() -> None:
    model = ScriptedModel("m", fail("server exploded", status=500))
    result = await Worker(model, ToolRegistry()).run(CONTEXT)
    assert result.status == "model_error"
    assert "server exploded" in result.reason
    model.assert_used_up()


async def test_cancel_mid_stream_leaves_no_partial_message() -> None:
    bus = InProcessBus()
    got_text = asyncio.Event()
    bus.subscribe("events", lambda e: got_text.set() if isinstance(e, TextStreamed) else None)
    model = ScriptedModel("m", stall(text_first="I was say"))
    record: list[ChatMessage] = []
    task = asyncio.create_task(Worker(model, ToolRegistry(), bus=bus).run(CONTEXT, record=record))
    await asyncio.wait_for(got_text.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert record == []
    model.assert_used_up()
    await bus.aclose()


async def test_cancel_mid_tool_records_interrupted_results() -> None:
    started = asyncio.Event()
    tools, ran = registry_with_sleepers(started)
    model = ScriptedModel("m", calls(("slow", {"label": "a"}), ("echo", {"text": "x"})))
    record: list[ChatMessage] = []
    task = asyncio.create_task(Worker(model, tools).run(CONTEXT, record=record))
    await asyncio.wait_for(started.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "a" not in ran
    assert consistent(record)
    assert record[0].role == "assistant"
    assert [m.text for m in record if m.role == "tool"] == [INTERRUPTED, INTERRUPTED]
    model.assert_used_up()


async def test_a_failing_hook_aborts_the_turn_instead_of_crashing() -> None:
    class Broken(WorkerHook):
        async def before_tool_call(self, call: PendingToolCall) -> ControlFlow:
            raise RuntimeError("hook bug")

    tools, ran = registry_with_sleepers()
    model = ScriptedModel("m", call("echo", {"text": "x"}))
    result = await Worker(model, tools, hooks=[Broken()]).run(CONTEXT)
    assert result.status == "aborted"
    assert "hook bug" in result.reason
    assert ran == []
    assert consistent(result.messages)
    model.assert_used_up()
