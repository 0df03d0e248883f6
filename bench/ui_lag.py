"""Event-loop lag of the window during a three-companion conversation, with the camera preview on a video file.

The real main window on a real runtime (bus, storage, conversation control, speech rendered to WAV files by
espeak-ng, OpenCV reading a generated 640x480 30 fps video); the companions think with scripted models that stream
their lines in small chunks. The runtime's lag probe (a callback every 5 ms) measures how late the loop runs.

Figures: lag p50/p99/max while the conversation runs with the camera tab shown (the preview polls at 10 fps) and
with the turn-taking tab shown, each against the same window idle (camera tab shown, no conversation) measured in
the same run. Target: p99 <= 16 ms, one frame at 60 Hz.

Run: ``xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python bench/ui_lag.py`` (offscreen without $DISPLAY).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import _report  # noqa: F401  (puts the repository on sys.path)
import qasync
from _report import report
from PySide6.QtWidgets import QApplication

from app.runtime.runtime import Runtime
from companions.common.loop_health import LagStats
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import ScriptedCast, reply_json, say
from tests.app.media import write_test_video
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime
from ui.window.main_thread_gc import MainThreadGC
from ui.window.main_window import MainWindow

FRAME_BUDGET_MS = 16.0
TURNS = 36  # per conversation: each companion says its lines three times over (about a thousand lag samples)
LINES = {
    "akari": ["昨日の夜空、ほんとうにきれいだったね！流れ星をいくつも見たよ。",
              "わたしは三つ数えたよ。願いごとを言う前に消えちゃったけど。",
              "今度はみんなで屋上に集まって見ようよ、温かい飲みものを持って。",
              "じゃあ次の新月の夜に決まりだね。楽しみ！"],
    "hina": ["いいなあ、わたしは雲で見えなかったの。どの方角に見えた？",
             "東の空かあ。明日も見えるかな、晴れるといいな。",
             "屋上いいね！お菓子も持っていくね、ブランケットもあると安心。",
             "うん、カレンダーに書いておくね。"],
    "souta": ["しし座流星群は明け方の東の空がいちばん見やすいんだ。",
              "流れ星の正体はちりの粒で、秒速七十キロくらいで大気に飛び込むんだよ。",
              "新月の夜なら月明かりがないから、暗い流れ星も見えるはず。",
              "望遠鏡より肉眼のほうが広く見渡せるから、寝転がって見るのがおすすめ。"],
}


def chunked(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _environment(home: Path) -> None:
    for name in [n for n in os.environ if n.startswith("MADOI_")]:
        del os.environ[name]
    os.environ.update({
        "MADOI_HOME": str(home), "MADOI_BRIDGE_PORT": "0", "MADOI_LLM_AUTODETECT_LOCAL": "false",
        "MADOI_VOICE_OUTPUT_DIR": str(home / "speech"), "MADOI_LANGUAGE": "ja",
        "MADOI_CONVERSATION_TURN_CAP": str(TURNS),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "MADOI_CAMERA": str(write_test_video(home / "camera.avi", frames=120, fps=30.0)),
    })


async def _conversation(window: MainWindow, runtime: Runtime, tab: int) -> tuple[LagStats, int]:
    """One scripted conversation with side tab ``tab`` shown: the loop's lag meanwhile, and the turns taken."""
    talk = ConversationReadModel()
    talk.attach(runtime.bus)
    window.side.setCurrentIndex(tab)
    runtime.lag_probe.reset()
    runtime.parts.conversations.send("こんばんは！昨日の流れ星、見た？")
    await talk.wait_for(lambda v: v.status == "ended", timeout=300)
    stats = runtime.lag_probe.stats()
    return stats, sum(1 for t in talk.turns() if t.speaker is not None)


def _script(cast: ScriptedCast, delay_s: float, conversations: int) -> None:
    for name, texts in LINES.items():
        model = cast[name]
        rounds = conversations * -(-TURNS // len(texts))  # enough for any share of the floor
        for round_ in range(rounds):
            said = [f"{t}（{round_ + 1}）" for t in texts]  # not word for word again: no repetition to detect
            lines(model, *(say(t, chunks=chunked(t), delay_s=delay_s) for t in said))
        # Everyone always wants the floor as much as the others: the tie rule spreads it, the turn cap ends the talk.
        model.lane("vote").always(reply_json({"state": "speak", "importance": 5, "reason": ""}))


async def run(idle_s: float, delay_s: float) -> None:
    cast = scripted_cast()
    _script(cast, delay_s, conversations=2)
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        window.resize(1360, 820)
        window.show()
        await window.attach()
        window.side.setCurrentIndex(2)  # the camera tab: the preview polls
        await asyncio.sleep(1.0)  # the camera opens, the window settles
        runtime.lag_probe.reset()
        await asyncio.sleep(idle_s)
        idle = runtime.lag_probe.stats()
        report("ui_lag_idle_camera_p99", idle.p99_ms, "ms")
        for tab, label in ((0, "turns"), (2, "camera")):
            began = time.perf_counter()
            stats, said = await _conversation(window, runtime, tab)
            took = time.perf_counter() - began
            print(f"# conversation with the {label} tab: {said} turns in {took:.1f} s, {stats.samples} samples",
                  flush=True)
            report(f"ui_lag_conversation_{label}_p50", stats.p50_ms, "ms", "idle_window_p50", idle.p50_ms)
            report(f"ui_lag_conversation_{label}_p99", stats.p99_ms, "ms", "idle_window_p99", idle.p99_ms)
            report(f"ui_lag_conversation_{label}_p99_vs_frame", stats.p99_ms, "ms", "frame_budget_60hz",
                   FRAME_BUDGET_MS)
            report(f"ui_lag_conversation_{label}_max", stats.max_ms, "ms", "idle_window_max", idle.max_ms)
            await runtime.parts.conversations.new()
        preview = window.camera_panel.stats
        print(f"# camera preview: {preview.frames} frames shown, {preview.requests} requests", flush=True)
        window.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle baseline")
    parser.add_argument("--think", type=float, default=0.2, help="each scripted model's delay before it streams")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = Path(tempfile.mkdtemp(prefix="madoi-bench-lag-"))
    _environment(home)
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    MainThreadGC(app)  # as the app does (ui/window/launch.py): cycles are collected on the GUI thread only
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(run(args.idle, args.think))
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
