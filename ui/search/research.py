"""The search panel's research box: the research agent's progress (planning, searching, reflecting, writing) and
its cited answer. :meth:`ResearchBox.run` is one research, run in a task the panel owns; its progress comes from
the bus (``ResearchProgress``, given to :meth:`ResearchBox.on_progress`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QDesktopServices, QPalette, QTextOption
from PySide6.QtWidgets import QGroupBox, QLabel, QProgressBar, QTextBrowser, QVBoxLayout, QWidget

from app.search.service import SearchService
from companions.llm.types import ChatModel
from companions.search.research import ResearchProgress, ResearchResult
from ui.search.index_row import set_result
from ui.search.names import SourceNames
from ui.search.texts import search_text
from ui.search.wording import error_text, research_html, research_progress_values, research_result_style
from ui.window.attached import Retranslating
from ui.window.i18n import window_language
from ui.window.naming import named

log = logging.getLogger(__name__)
FINAL = ("stage.done", "stage.failed", "stage.cancelled")


def browser() -> QTextBrowser:
    """A read-only HTML view whose file links open in the user's own application."""
    view = QTextBrowser()
    view.setOpenLinks(False)  # file links open in the user's own application, not in the browser
    view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # long paths wrap too
    view.anchorClicked.connect(lambda url: QDesktopServices.openUrl(url) if url.isLocalFile() else None)
    return view


class ResearchBox(Retranslating, QGroupBox):
    changed = Signal()  # a progress step, the answer, an error, cancelled

    def __init__(self, names: Callable[[], SourceNames], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "researchBox")
        self.status = named(QLabel(), "researchStatus")
        self.status.setWordWrap(True)
        self.busy = named(QProgressBar(), "researchBusy")
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(6)
        self.view = named(browser(), "researchAnswer")
        self.view.setMinimumHeight(24)  # a short window gives the rows to the results
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.busy)
        layout.addWidget(self.view, 1)
        self.result: ResearchResult | None = None
        self.names = names  # who is who in the citations, as the window names them now
        self._status: tuple[str, dict[str, object]] = ("research.idle", {})
        self._running: object | None = None  # the running research's observer key
        self._run_id: int | None = None  # its run id, learnt from its first progress event
        self.retranslate()

    @property
    def running(self) -> bool:
        return self._running is not None

    def retranslate(self) -> None:
        self.setTitle(search_text("research.title"))
        self.view.setAccessibleName(search_text("answer.name"))
        self.refresh()

    def starting(self) -> None:
        self.result = None
        self.set_status("research.starting")

    def cancelled(self) -> None:
        """The panel cancelled the research it was running (which may not have begun yet)."""
        self._running = None
        self.set_status("stage.cancelled")

    async def run(self, service: SearchService, model: ChatModel | None, question: str) -> None:
        token = object()
        self._running, self._run_id = token, None

        def observe(event: ResearchProgress) -> None:
            if self._running is token:
                self._run_id = event.run_id

        agent = service.research_agent(model, observer=observe)
        try:
            result = await agent.run(question)
        except Exception as exc:
            log.warning("research on %r failed", question, exc_info=True)
            if self._running is token:
                self._running = None
            self.set_status("stage.failed", error=error_text(exc))
            return
        finally:
            if self._running is token:
                self._running = None
        self.result = result
        self.set_status("stage.done", citations=len(result.citations), searches=len(result.queries))

    def on_progress(self, item: ResearchProgress) -> None:
        if self._running is not None and item.run_id == self._run_id and \
                item.stage in ("planning", "searching", "reflecting", "synthesizing"):
            self.set_status(f"stage.{item.stage}", **research_progress_values(item, window_language()))

    def set_status(self, key: str, **values: object) -> None:
        self._status = (key, values)
        self.refresh()
        self.changed.emit()

    def refresh(self) -> None:
        key, values = self._status
        if key == "stage.done":  # two counts, each in its plural form: "1 citation from 2 searches"
            values = {what: search_text(f"count.{what}", n=values[what])
                      for what in ("citations", "searches")}
        self.status.setText(search_text(key, **values))
        set_result(self.status, research_result_style(key))
        self.busy.setVisible(self._running is not None and key not in FINAL)
        if self.result is None:
            if key in ("research.starting", "research.idle"):
                self.view.clear()
            return
        dim = self.palette().color(QPalette.ColorRole.PlaceholderText).name()
        self.view.setHtml(research_html(self.result, window_language(), dim, self.names()))


def log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:  # the search itself will report it
        log.warning("search panel: loading the query model failed", exc_info=task.exception())
