"""The chat view's cost with a long conversation: opening the history, one streamed delta, one highlight.

Opening a history lays it out in chunks of ``HISTORY_CHUNK`` messages, one per event-loop turn, as the chat panel
does; the longest chunk is how long the loop (and the companions on it) waits at most. Each figure is measured on
the real transcript widget (``ui.chat.transcript.ChatTranscript``, offscreen, shown at 700x600, every change
followed by the layout and paint it causes) and compared, in the same run, with the naive way a chat view is
often written: rebuild the whole transcript as HTML (``setHtml``) on every change.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/chat_view.py [messages ...]`` (default 500 2000).
"""

from __future__ import annotations

import html
import os
import sys
import time

from _report import report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QTextBrowser

from companions.common.loop_health import percentile
from ui.chat.bubble import Header
from ui.chat.panel import HISTORY_CHUNK
from ui.chat.transcript import ChatTranscript
from ui.roster.colors import companion_color

SPEAKERS = ("akari", "hina", "souta")
DELTAS = 200
DELTA = "星の話を"


def _text(i: int) -> str:
    return f"メッセージ {i}: 昨日の夜、屋上で流れ星を三つも見たんだ。Did you see them too? " * 2


def _settle(app: QApplication) -> None:
    app.processEvents()


def _header(i: int) -> Header:
    speaker = SPEAKERS[i % len(SPEAKERS)]
    return Header(name=speaker, color=companion_color(speaker), emotion="😊 happy", time="12:00")


def _naive_html(count: int, streamed: str) -> str:
    parts = [f"<p><b style='color:{companion_color(SPEAKERS[i % 3]).name()}'>{SPEAKERS[i % 3]}</b> 😊 happy 12:00"
             f"<br>{html.escape(_text(i))}</p>" for i in range(count)]
    parts.append(f"<p><i>akari composing…<br>{html.escape(streamed)}</i></p>")
    return "".join(parts)


def bench(app: QApplication, count: int) -> None:
    view = ChatTranscript()
    view.resize(700, 600)
    view.show()
    began = time.perf_counter()
    batch = view.batch()
    chunks = []
    for start in range(0, count, HISTORY_CHUNK):  # as the chat panel opens a history: a chunk per loop turn
        chunk_began = time.perf_counter()
        batch.beginEditBlock()
        for i in range(start, min(count, start + HISTORY_CHUNK)):
            view.add_bubble(f"m{i}", _header(i), _text(i), user=i % 5 == 0)
        batch.endEditBlock()
        view.scroll_to_newest()
        _settle(app)
        chunks.append(time.perf_counter() - chunk_began)
    load = time.perf_counter() - began

    naive = QTextBrowser()
    naive.resize(700, 600)
    naive.show()
    began = time.perf_counter()
    naive.setHtml(_naive_html(count, ""))
    naive.verticalScrollBar().setValue(naive.verticalScrollBar().maximum())
    _settle(app)
    naive_load = time.perf_counter() - began
    report(f"open {count} messages, in all", load * 1e3, "ms", "one setHtml of the history", naive_load * 1e3)
    report(f"open {count} messages, median chunk", percentile(chunks, 0.5) * 1e3, "ms", "one setHtml of the history",
           naive_load * 1e3)
    report(f"open {count} messages, longest loop stall", max(chunks) * 1e3, "ms", "one setHtml of the history",
           naive_load * 1e3)

    view.add_provisional("~akari:t", Header(name="akari", color=companion_color("akari"), status="composing…"))
    _settle(app)
    deltas = []
    for _ in range(DELTAS):
        began = time.perf_counter()
        view.append_text("~akari:t", DELTA)
        _settle(app)
        deltas.append(time.perf_counter() - began)
    naive_deltas = []
    streamed = ""
    for _ in range(DELTAS // 10):  # it is slow: fewer samples
        streamed += DELTA
        began = time.perf_counter()
        naive.setHtml(_naive_html(count, streamed))
        naive.verticalScrollBar().setValue(naive.verticalScrollBar().maximum())
        _settle(app)
        naive_deltas.append(time.perf_counter() - began)
    for q in (0.5, 0.99):
        report(f"one streamed delta with {count} messages, p{round(q * 100)}", percentile(deltas, q) * 1e3, "ms",
               "re-rendering the history per delta", percentile(naive_deltas, q) * 1e3)

    for label, index in (("the newest", count - 1), ("the oldest", 0)):
        highlights = []
        for _ in range(20):
            for on in (True, False):
                began = time.perf_counter()
                view.set_highlighted(f"m{index}", on, "♪ speaking")
                _settle(app)
                highlights.append(time.perf_counter() - began)
        report(f"highlight of {label} of {count} messages, p50", percentile(highlights, 0.5) * 1e3, "ms",
               "re-rendering the history once", percentile(naive_deltas, 0.5) * 1e3)
    view.close()
    naive.close()


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    for count in [int(a) for a in sys.argv[1:]] or [500, 2000]:
        bench(app, count)


if __name__ == "__main__":
    main()
