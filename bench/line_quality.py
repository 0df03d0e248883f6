"""Lines worth hearing from a small model: over N companion lines on a real server, how many a user should never see.

Madoi runs with default settings (the runtime the window uses, voice off) in front of a real llama-cpp-python
server with the test model (scripts/real_model.py prepares both), or any server given with ``--base-url``. User
messages in Japanese and English, to everyone and naming one companion, open conversations that run until they end;
every companion line is checked the way tests/realmodel checks a line: JSON or tool syntax, a speaker's name as a
prefix, the wrong language (that of the user's message that opened the conversation), and an exact repeat of the
line before it (tests/realmodel's checks). There is no baseline to divide by (the model's raw lines are not kept),
so the figure is absolute: ``bad_lines: K of N lines`` (0 is the goal); the lines are saved as JSON.

Run: ``python bench/line_quality.py [--lines 50] [--base-url URL --model ID]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from _report import REPO, report

from companions.protocol import Message

PROMPTS: tuple[tuple[str, list[str] | None, str], ...] = (
    ("みなさん、こんにちは！", None, "ja"),
    ("Hello everyone, how are you today?", None, "en"),
    ("あかり、好きな星座は何？", ["akari"], "ja"),
    ("Souta, what do you like about old maps?", ["souta"], "en"),
    ("週末は何をして過ごすのが好き？", None, "ja"),
    ("Hina, can you recommend a tea for a cold evening?", ["hina"], "en"),
)


async def run(options: argparse.Namespace) -> None:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("real_model_script", REPO / "scripts" / "real_model.py")
    assert spec is not None
    assert spec.loader is not None
    real_model = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = real_model
    spec.loader.exec_module(real_model)
    from tests.realmodel.test_real_conversation import Line, problems_with

    server = None
    base_url, model = options.base_url, options.model
    if base_url is None:
        server = real_model.start_server(Path(tempfile.mkdtemp(prefix="madoi-line-quality-")))
        base_url, model = server.base_url, server.model
    os.environ.update({"MADOI_HOME": tempfile.mkdtemp(prefix="madoi-line-quality-"), "MADOI_LLM_BASE_URL": base_url,
                       "MADOI_LLM_MODEL": model, "MADOI_VOICE_ENABLED": "false", "MADOI_BRIDGE_PORT": "0",
                       "MADOI_CAMERA": "none", "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    from app.runtime import Runtime
    from app.settings import load_settings
    from companions.conversation.readmodel import ConversationChanged

    runtime = Runtime(load_settings())
    await runtime.start()
    lines: list[tuple[str, str, str, str]] = []  # (speaker, text, language expected, the message before it)
    before = [""]
    ended = asyncio.Event()
    language = ["ja"]
    companions = set(runtime.parts.cast.companions) if runtime.parts.cast else set()

    def on_item(item: object) -> None:
        if isinstance(item, Message) and item.params.from_ in companions:
            lines.append((item.params.from_, item.params.message, language[0], before[0]))
        if isinstance(item, Message):
            before[0] = item.params.message
        if isinstance(item, ConversationChanged) and item.change == "ended":
            ended.set()

    runtime.bus.subscribe(["messages", "events"], on_item, name="line-quality", direct=True)
    started = time.perf_counter()
    try:
        index = 0
        while len(lines) < options.lines:
            text, to, language[0] = PROMPTS[index % len(PROMPTS)]
            index += 1
            ended.clear()
            runtime.parts.conversations.send(text, to=to)
            try:
                async with asyncio.timeout(options.per_conversation):
                    await ended.wait()
            except TimeoutError:
                if runtime.parts.conversation is not None:
                    await runtime.parts.conversation.stop_conversation()
    finally:
        await runtime.stop()
        if server is not None:
            server.stop()
    saved = Path(tempfile.mkdtemp(prefix="madoi-line-quality-")) / "lines.json"
    saved.write_text(json.dumps(lines, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"  (the lines: {saved})")
    bad = 0
    for speaker, text, expected, previous in lines[: options.lines]:
        problems = problems_with(Line(speaker, text, 0.0), expected, previous)
        if problems:
            bad += 1
            print(f"  BAD {speaker}: {text!r}: {', '.join(problems)}")
        elif options.verbose:
            print(f"  ok  {speaker}: {text!r}")
    n = min(len(lines), options.lines)
    report("bad_lines", bad, f"of {n} lines")
    print(f"  ({time.perf_counter() - started:.0f} s for {n} lines)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="test-model")
    parser.add_argument("--per-conversation", type=float, default=180.0, help="seconds before a talk is stopped")
    parser.add_argument("--verbose", action="store_true", help="print the good lines too")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
