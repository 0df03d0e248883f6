"""The model runner with the real model (the 0.5B test model of scripts/real_model.py) on llama-cpp-python in the
app's own virtualenv: a chat completion through the real ``openai`` client, a kill in the middle of a reply, a
fault at start answered by the safer configuration. One model process at a time; each test stops its own."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionChunk

from app.llm.runner import Endpoint, ModelRunner, RunnerOptions, RunnerState, RunnerStatus
from app.llm.runner.options import CONFIG_ENV
from tests.app.llm.processes import alive, holders_of
from tests.realmodel.conftest import _in_ci, real_model
from tests.waiting import wait_until

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, pytest.mark.timeout(600)]

# Kills itself with SIGSEGV while its configuration keeps llama.cpp's extra buffer types (as a CPU that advertises
# AMX inside a VM does), else becomes the real child: the runner's seam for the command, not a mock of subprocess.
SEGV_UNTIL_SAFER = (
    "import json, os, signal, sys\n"
    f"config = json.loads(os.environ[{CONFIG_ENV!r}])\n"
    "if config['extra_buffers']:\n"
    "    os.kill(os.getpid(), signal.SIGSEGV)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'app.llm.runner.child'])\n"
)


@pytest.fixture
def model_file() -> Path:
    missing = []
    if importlib.util.find_spec("llama_cpp") is None:
        missing.append("llama-cpp-python in the app's virtualenv")
    if not real_model.paths().model_ready():
        missing.append(f"the model file ({real_model.paths().model}; python3 scripts/real_model.py --model-only)")
    if missing:
        reason = f"not prepared: {' and '.join(missing)}"
        if _in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return Path(real_model.paths().model)


def report(text: str) -> None:
    print(f"\nmodel runner: {text}", file=sys.__stderr__, flush=True)


async def ask(endpoint: Endpoint, question: str, max_tokens: int = 24) -> str:
    async with openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0) as client:
        reply = await client.chat.completions.create(
            model=endpoint.model, messages=[{"role": "user", "content": question}], max_tokens=max_tokens,
            temperature=0)
    return reply.choices[0].message.content or ""


def runner_for(runners: list[ModelRunner], model_file: Path, tmp_path: Path,
               command: Sequence[str] | None = None) -> tuple[ModelRunner, list[RunnerStatus]]:
    kwargs = {"command": lambda: list(command)} if command is not None else {}
    runner = ModelRunner(RunnerOptions(model_file), log_dir=tmp_path / "logs", **kwargs)  # type: ignore[arg-type]
    seen: list[RunnerStatus] = []
    runner.subscribe(seen.append)
    runners.append(runner)
    return runner, seen


async def kill_at_the_first_words(stream: openai.AsyncStream[ChatCompletionChunk], pid: int) -> None:
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            os.kill(pid, signal.SIGKILL)


def log_of(runner: ModelRunner) -> str:
    return runner.log_path.read_text(errors="replace")


async def test_start_a_completion_and_stop_leaving_no_process_on_the_file(
        runners: list[ModelRunner], model_file: Path, tmp_path: Path) -> None:
    runner, seen = runner_for(runners, model_file, tmp_path)
    began = time.monotonic()
    endpoint = await runner.start()
    loaded = time.monotonic() - began
    assert endpoint.model == model_file.stem
    began = time.monotonic()
    answer = await ask(endpoint, "What is the capital of France? Answer in one word.")
    first = time.monotonic() - began
    assert "paris" in answer.lower()
    pid = runner.pid
    assert pid is not None
    assert holders_of(model_file, descendants_of=os.getpid()) == [pid]
    await runner.stop()
    assert not alive(pid)
    assert holders_of(model_file, descendants_of=os.getpid()) == []
    assert [s.state for s in seen] == [RunnerState.STARTING, RunnerState.READY, RunnerState.STOPPED]
    log = log_of(runner)
    assert f"{runner.options.threads} threads" in log
    if "REPACK = 1" in log:  # a CPU whose instructions llama.cpp repacks weights for (AVX2 and up, x86-64)
        assert "CPU_REPACK model buffer" in log  # what the first safer step switches off
    report(f"loaded in {loaded:.1f} s, first completion in {first:.1f} s ({answer.strip()!r})")


PERSONAS = {
    "Akari": "You are Akari, a second-year high-school student in the astronomy club. You are cheerful, endlessly "
             "curious, and a little scatterbrained. You cannot stop once the talk turns to the night sky, and you "
             "want to become an astronaut. You react with honest surprise and ask questions back. " * 2,
    "Souta": "You are Souta, the librarian of an old public library. You are calm, with a dry sense of humour, and "
             "you use few words, each one to the point. You know books and old maps, never pretend to know, and "
             "secretly love being asked to look something up. " * 2,
}


def prompt_tokens_evaluated(log: str) -> int:
    """The prompt tokens llama.cpp evaluated for the latest completion in the runner's log (not taken from a cache)."""
    counts = re.findall(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", log)
    return int(counts[-1])


async def test_a_companions_prompt_is_kept_while_another_companion_speaks(
        runners: list[ModelRunner], model_file: Path, tmp_path: Path) -> None:
    """Companions share the one model, whose context holds one prompt: after Souta's turn, Akari's next turn
    evaluates only what her prompt adds, not her whole persona again (measured before: every turn after another
    companion's evaluated its whole prompt, ~20 s for 1,000 tokens on the 0.5B model here)."""
    runner, _ = runner_for(runners, model_file, tmp_path)
    endpoint = await runner.start()

    async def turn(name: str, said: str) -> int:
        async with openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0) as client:
            reply = await client.chat.completions.create(
                model=endpoint.model, max_tokens=4, temperature=0,
                messages=[{"role": "system", "content": PERSONAS[name]}, {"role": "user", "content": said}])
        assert reply.usage is not None
        return reply.usage.prompt_tokens

    whole = await turn("Akari", "Hello!")
    await turn("Souta", "Hello!")
    again = await turn("Akari", "Hello! What did you see last night?")
    evaluated = prompt_tokens_evaluated(log_of(runner))
    assert again > whole > 100
    assert evaluated <= again - whole + 20, (evaluated, again)  # her persona came from what the runner kept
    report(f"Akari's prompt after Souta's: {evaluated} of {again} tokens evaluated")


async def test_a_child_killed_mid_reply_is_restarted_and_answers_again(
        runners: list[ModelRunner], model_file: Path, tmp_path: Path) -> None:
    runner, seen = runner_for(runners, model_file, tmp_path)
    endpoint = await runner.start()
    pid = runner.pid
    assert pid is not None
    async with openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0) as client:
        stream = await client.chat.completions.create(
            model=endpoint.model, messages=[{"role": "user", "content": "Count from 1 to 100."}], max_tokens=300,
            stream=True)
        with pytest.raises((openai.APIError, httpx.HTTPError)):  # the reply ends in the middle of a sentence
            await kill_at_the_first_words(stream, pid)
    killed = time.monotonic()
    await wait_until(lambda: runner.status.state is RunnerState.READY and runner.status.restarts == 1, timeout=120)
    restarted = time.monotonic() - killed
    status = runner.status
    assert [s.state for s in seen][-3:] == [RunnerState.CRASHED, RunnerState.RESTARTING, RunnerState.READY]
    assert "SIGKILL" in status.reason
    assert status.reason.startswith("restarted after")
    assert not alive(pid)
    assert status.endpoint is not None
    assert "paris" in (await ask(status.endpoint, "What is the capital of France? One word.")).lower()
    report(f"restarted {restarted:.1f} s after the kill ({status.reason})")


async def test_a_crash_at_start_is_answered_by_the_safer_configuration(
        runners: list[ModelRunner], model_file: Path, tmp_path: Path) -> None:
    runner, seen = runner_for(runners, model_file, tmp_path, [sys.executable, "-c", SEGV_UNTIL_SAFER])
    began = time.monotonic()
    endpoint = await runner.start()
    took = time.monotonic() - began
    assert runner.options.extra_buffers is False
    assert runner.options.mmap is True
    (restarting,) = [s for s in seen if s.state is RunnerState.RESTARTING]
    assert "SIGSEGV" in restarting.reason
    assert "no longer repacked" in restarting.reason
    log = log_of(runner)
    assert "extra buffers False" in log
    assert "CPU_REPACK" not in log  # llama.cpp kept the plain layouts
    assert await ask(endpoint, "Say hello.")
    report(f"crash at start, then ready on the safer configuration in {took:.1f} s: {restarting.reason}")
