"""The search panel: ask the index, see how the question was understood, each channel's hits, the fused ranking,
and the research agent's cited answer; the background indexing shows as a progress bar.

Nothing here searches or ranks: the panel calls ``runtime.search`` (the engine and the research agent) in tasks it
owns and shows what they return; indexing progress and research progress come from the bus (``events`` topic).
Every long call is a task in the panel's kept set: a new query cancels the running ones, Cancel cancels them, and
:meth:`SearchPanel.detach` cancels whatever is left.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final

import shiboken6
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QPalette, QTextOption
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.runtime import Runtime
from app.search_service import SearchIndexProgress, SearchIndexUpdated, SearchService
from companions.bus import BusItem
from companions.search.classifier import QueryClassification
from companions.search.engine import CHANNEL_DEPTH, CHANNELS, SearchResponse
from companions.search.research import ResearchProgress, ResearchResult
from ui.bus_bridge import BusFollower
from ui.naming import named
from ui.search_format import (
    FIELDS,
    classification_texts,
    error_text,
    hits_page,
    index_summary,
    research_html,
    research_progress_values,
    research_result_style,
    status_text,
    unavailable_status,
)
from ui.search_names import source_names
from ui.search_texts import search_text

log = logging.getLogger(__name__)

SEARCH_LIMIT: Final = len(CHANNELS) * CHANNEL_DEPTH  # every chunk any channel ranked, so each has its source


class SearchPanel(QWidget):
    """The search panel of one runtime. Call :meth:`attach` once the runtime started, :meth:`detach` before it
    stops. ``runtime.search`` may be None (search could not start): the panel then says so."""

    searched = Signal()  # a search's outcome is shown (hits, no hits, empty index, an error, cancelled)
    research_changed = Signal()  # the research box changed (a progress step, the answer, an error, cancelled)
    index_changed = Signal()  # the indexing row changed (progress, the document count, problems)

    def __init__(self, runtime: Runtime, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runtime = runtime
        self.language = language
        self.query = named(QLineEdit(), "searchQuery")
        self.query.setClearButtonEnabled(True)
        self.query.returnPressed.connect(self._search_box)
        self.query.textEdited.connect(self._prepare_engine)
        self.search_button = named(QPushButton(), "searchButton")
        self.search_button.clicked.connect(self._search_box)
        self.research_button = named(QPushButton(), "researchButton")
        self.research_button.clicked.connect(self._research_box)
        self.cancel_button = named(QPushButton(), "searchCancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.status = named(QLabel(), "searchStatus")
        self.status.setWordWrap(True)
        self.index_bar = named(QProgressBar(), "searchIndexBar")
        self.index_label = named(QLabel(), "searchIndexLabel")
        self.index_label.setWordWrap(True)
        self.index_problems = named(QLabel(), "searchIndexProblems")
        self.index_problems.setWordWrap(True)
        self.index_problems.setProperty("result", "error")
        self.reindex_button = named(QPushButton(), "searchReindex")
        self.reindex_button.clicked.connect(self.reindex)

        self.classification_box = named(QGroupBox(), "searchClassification")
        self.classification_hint = named(QLabel(), "searchClassificationHint")
        self.classification_hint.setWordWrap(True)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.field_labels = {f: QLabel() for f in FIELDS}
        self.fields = {f: named(QLabel(), f"searchField-{f}") for f in FIELDS}
        for f in FIELDS:
            self.fields[f].setWordWrap(True)
            self.field_labels[f].setBuddy(self.fields[f])
            form.addRow(self.field_labels[f], self.fields[f])
        box_layout = QVBoxLayout(self.classification_box)
        box_layout.addWidget(self.classification_hint)
        box_layout.addLayout(form)

        self.results = named(QTabWidget(), "searchResults")
        self.views = {c: named(self._browser(), f"searchHits-{c}") for c in ("fused", *CHANNELS)}
        for channel, view in self.views.items():
            self.results.addTab(view, channel)

        self.research_box = named(QGroupBox(), "researchBox")
        self.research_status = named(QLabel(), "researchStatus")
        self.research_status.setWordWrap(True)
        self.research_busy = named(QProgressBar(), "researchBusy")
        self.research_busy.setRange(0, 0)
        self.research_busy.setTextVisible(False)
        self.research_busy.setMaximumHeight(6)
        self.research_view = named(self._browser(), "researchAnswer")
        self.research_view.setMinimumHeight(24)  # a short window gives the rows to the results
        research_layout = QVBoxLayout(self.research_box)
        research_layout.addWidget(self.research_status)
        research_layout.addWidget(self.research_busy)
        research_layout.addWidget(self.research_view, 1)

        buttons = QHBoxLayout()
        buttons.addWidget(self.search_button)
        buttons.addWidget(self.research_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        index_row = QHBoxLayout()
        index_row.addWidget(self.index_bar, 1)
        index_row.addWidget(self.index_label, 1)
        index_row.addWidget(self.reindex_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.classification_box)
        top_layout.addWidget(self.results, 1)
        self.splitter = named(QSplitter(Qt.Orientation.Vertical), "searchSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.research_box)
        self.splitter.setStretchFactor(0, 3)  # the results first: the research answer has room once there is one
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([600, 140])
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addLayout(index_row)
        layout.addWidget(self.index_problems)
        layout.addWidget(self.splitter, 1)

        self.response: SearchResponse | None = None  # the last search shown
        self.classification: QueryClassification | None = None
        self.research_result: ResearchResult | None = None
        self._status: tuple[str, dict[str, object], str] = ("", {}, "")  # text key, values, result property
        self._research_status: tuple[str, dict[str, object]] = ("research.idle", {})
        self._index: SearchIndexProgress | SearchIndexUpdated | str | None = None  # str: a failed re-index
        self._bus_link = BusFollower(runtime.bus, ("events",))
        self._tasks: set[asyncio.Task[None]] = set()
        self._search_task: asyncio.Task[None] | None = None
        self._preparing: asyncio.Task[None] | None = None
        self._research_task: asyncio.Task[None] | None = None
        self._research_token: object | None = None  # the running research's observer key
        self._research_run: int | None = None  # its run id, learnt from its first progress event
        self._retranslate()
        self._render_all()

    @staticmethod
    def _browser() -> QTextBrowser:
        view = QTextBrowser()
        view.setOpenLinks(False)  # file links open in the user's own application, not in the browser
        view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # long paths wrap too
        view.anchorClicked.connect(_open_link)
        return view

    # -- lifecycle -------------------------------------------------------------------------------------------
    def attach(self) -> None:
        """Shows the index state and follows the bus (call after ``runtime.start()``)."""
        service = self.runtime.search
        if service is not None:
            self._index = service.progress or service.indexed
        self._render_all()
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        """Stops following the bus and cancels the running search and research (call before the runtime stops)."""
        self._bus_link.stop()
        self._cancel_running()
        if self._preparing is not None:
            self._preparing.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._update_buttons()

    async def wait_idle(self) -> None:
        """Waits until the panel's search and research tasks have finished (after :meth:`detach`, for instance)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def set_language(self, language: str) -> None:
        self.language = language
        self._retranslate()
        self._render_all()

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    # -- commands --------------------------------------------------------------------------------------------
    def search(self, text: str | None = None) -> None:
        """Searches ``text`` (the query box when None; the box shows the text either way)."""
        self._start(text, research=False)

    def research(self, text: str | None = None) -> None:
        """Searches ``text`` and has the research agent answer it with citations (which get room to show)."""
        if self.research_view.height() < 120:
            self.splitter.setSizes([sum(self.splitter.sizes()) * n // 5 for n in (3, 2)])
        self._start(text, research=True)

    def _start(self, text: str | None, *, research: bool) -> None:
        query = self._take_query(text)
        service = self._service()
        if service is None or query is None:
            return
        self._cancel_running()
        self._set_status("searching", result="busy", query=query)
        self._search_task = self._spawn(self._run_search(service, query))
        if not research:
            return
        self.research_result = None
        self._research_task = self._spawn(self._run_research(service, query))
        self._set_research_status("research.starting")

    def _search_box(self) -> None:
        self.search()

    def _prepare_engine(self) -> None:
        """The first key typed in the query box has the engine load its query model (about a second) while the
        query is being written: not at Enter, nor at start, where its loading (tens of milliseconds at a time
        with the interpreter held) would stall the window while nobody searches."""
        service = self.runtime.search
        if service is None or self._preparing is not None:
            return
        self._preparing = asyncio.get_running_loop().create_task(service.engine.prepare())
        self._preparing.add_done_callback(_log_prepare_failure)

    def _research_box(self) -> None:
        self.research()

    def cancel(self) -> None:
        """Cancels the running search and research; what they showed so far stays."""
        self._cancel_running()
        self._update_buttons()

    def reindex(self) -> None:
        """Indexes the new and changed files of the knowledge folders now (progress shows in the bar)."""
        service = self._service()
        if service is None:
            return
        try:
            service.reindex()
        except RuntimeError as exc:  # the service has stopped
            self._index = error_text(exc)
        else:
            self._index = service.progress
        self._render_index()

    def _take_query(self, text: str | None) -> str | None:
        if text is not None:
            self.query.setText(text)
        query = self.query.text().strip()
        if not query:
            self._set_status("blank", result="error")
            return None
        return query

    def _service(self) -> SearchService | None:
        if self.runtime.search is None:
            self._render_all()
        return self.runtime.search

    def _cancel_running(self) -> None:
        if self._search_task is not None and not self._search_task.done():
            self._search_task.cancel()
            self._set_status("cancelled")
            self.searched.emit()
        if self._research_task is not None and not self._research_task.done():
            self._research_task.cancel()
            self._research_token = None
            self._set_research_status("stage.cancelled")
        self._search_task = self._research_task = None

    # -- tasks -----------------------------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        self._update_buttons()
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("search panel: %s failed", task.get_coro(), exc_info=task.exception())
        if shiboken6.isValid(self):  # the panel may be gone by the time a cancelled task ends
            self._update_buttons()

    async def _run_search(self, service: SearchService, query: str) -> None:
        try:
            classification = await service.engine.classify(query)
            self._show_classification(classification, None)
            response = await service.engine.search(query, limit=SEARCH_LIMIT, classification=classification)
            empty_index = not response.hits and (await service.engine.stats())["documents"] == 0
        except Exception as exc:  # an engine failure is shown, never raised into Qt
            log.warning("search for %r failed", query, exc_info=True)
            self._set_status("search_failed", result="error", error=error_text(exc))
            self.searched.emit()
            return
        self._show_classification(classification, response)
        self._render_hits()
        if empty_index:
            self._set_status("index_empty", result="error")
        elif not response.hits:
            self._set_status("no_hits", query=query)
        else:
            self._set_status("found", result="ok", n=len(response.hits), query=query, ms=round(response.elapsed_ms))
        if isinstance(self._index, SearchIndexProgress):  # the pass is still adding documents
            self._set_status(self._status[0], result=self._status[2], partial=True, **self._status[1])
        self.searched.emit()

    async def _run_research(self, service: SearchService, question: str) -> None:
        token = object()
        self._research_token, self._research_run = token, None

        def observe(event: ResearchProgress) -> None:
            if self._research_token is token:
                self._research_run = event.run_id

        resolution = self.runtime.model_resolution
        agent = service.research_agent(resolution.model if resolution is not None else None, observer=observe)
        try:
            result = await agent.run(question)
        except Exception as exc:
            log.warning("research on %r failed", question, exc_info=True)
            self._set_research_status("stage.failed", error=error_text(exc))
            return
        finally:
            if self._research_token is token:
                self._research_token = None
        self.research_result = result
        self._set_research_status("stage.done", n=len(result.citations), queries=len(result.queries))

    # -- the bus ---------------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, SearchIndexProgress | SearchIndexUpdated):
            self._index = item
            self._render_index()
        elif isinstance(item, ResearchProgress):
            running = self._research_token is not None and item.run_id == self._research_run
            if running and item.stage in ("planning", "searching", "reflecting", "synthesizing"):
                self._set_research_status(f"stage.{item.stage}", **research_progress_values(item, self.language))

    # -- rendering -------------------------------------------------------------------------------------------
    def _render_all(self) -> None:
        service = self.runtime.search
        if service is None:
            self._status = unavailable_status(self.runtime.loaded.problems)
        elif self._status[0].startswith("unavailable"):  # said before the runtime had started search
            self._status = ("", {}, "")
        self._render_status()
        self._render_classification()
        self._render_hits()
        self._render_research()
        self._render_index()
        self._update_buttons()

    def _set_status(self, key: str, *, result: str = "", **values: object) -> None:
        self._status = (key, values, result)
        self._render_status()

    def _render_status(self) -> None:
        key, values, result = self._status
        self.status.setText(status_text(key, values, self.language))
        self.status.setVisible(bool(key))
        _set_result(self.status, result)

    def _show_classification(self, classification: QueryClassification, response: SearchResponse | None) -> None:
        self.classification = classification
        self.response = response
        self._render_classification()

    def _render_classification(self) -> None:
        cls, lang = self.classification, self.language
        self.classification_hint.setVisible(cls is None)
        for f in FIELDS:
            self.fields[f].setVisible(cls is not None)
            self.field_labels[f].setVisible(cls is not None)
        if cls is None:
            return
        for f, text in classification_texts(cls, self.response, lang).items():
            self.fields[f].setText(text)

    def _render_hits(self) -> None:
        response, lang = self.response, self.language
        dim = self._dim_color() if response is not None else ""
        for index, channel in enumerate(("fused", *CHANNELS)):
            if response is None:
                self.views[channel].clear()
                self.results.setTabText(index, search_text(f"channel.{channel}", lang))
            else:
                page, title = hits_page(response, channel, lang, dim, source_names(self.runtime, self.language))
                self.views[channel].setHtml(page)
                self.results.setTabText(index, title)

    def _set_research_status(self, key: str, **values: object) -> None:
        self._research_status = (key, values)
        self._render_research()
        self.research_changed.emit()

    def _render_research(self) -> None:
        key, values = self._research_status
        lang = self.language
        self.research_status.setText(search_text(key, lang, **values))
        _set_result(self.research_status, research_result_style(key))
        self.research_busy.setVisible(self._research_task is not None and not self._research_task.done()
                                      and key not in ("stage.done", "stage.failed", "stage.cancelled"))
        result = self.research_result
        if result is None:
            if key in ("research.starting", "research.idle"):
                self.research_view.clear()
            return
        names = source_names(self.runtime, lang)
        self.research_view.setHtml(research_html(result, lang, self._dim_color(), names))

    def _render_index(self) -> None:
        lang, state = self.language, self._index
        available = self.runtime.search is not None
        self.reindex_button.setVisible(available)
        progress = state if isinstance(state, SearchIndexProgress) else None
        self.index_bar.setVisible(available and (progress is not None or state is None))
        if progress is not None and progress.total > 0:
            self.index_bar.setRange(0, progress.total)
            self.index_bar.setValue(progress.done)
            self.index_bar.setFormat(search_text("indexing", lang))
            current = Path(progress.current).name if progress.current else ""
            self.index_bar.setToolTip(search_text("indexing.file", lang, file=current) if current else "")
        else:  # the pass started and has not counted its files yet
            self.index_bar.setRange(0, 0)
            self.index_bar.setFormat(search_text("indexing.start", lang))
        summary = index_summary(state, lang)
        if summary.result is not None:
            _set_result(self.index_label, summary.result)
        self.index_label.setText(summary.text)
        self.index_label.setVisible(available and bool(summary.text))
        self.index_problems.setText(search_text("index.problems", lang, problems="; ".join(summary.problems)))
        self.index_problems.setVisible(available and bool(summary.problems))
        self.reindex_button.setEnabled(progress is None and state is not None)
        self.index_changed.emit()

    def _retranslate(self) -> None:
        lang = self.language
        self.query.setPlaceholderText(search_text("placeholder", lang))
        self.query.setAccessibleName(search_text("query.name", lang))
        for button, key in ((self.search_button, "search"), (self.research_button, "research"),
                            (self.cancel_button, "cancel"), (self.reindex_button, "reindex")):
            button.setText(search_text(key, lang))
            button.setToolTip(search_text(f"{key}.tooltip", lang))
        self.classification_box.setTitle(search_text("classification", lang))
        self.classification_hint.setText(search_text("classification.none", lang))
        for f in FIELDS:
            self.field_labels[f].setText(search_text(f"field.{f}", lang))
        self.results.setAccessibleName(search_text("results.name", lang))
        self.research_box.setTitle(search_text("research.title", lang))
        self.research_view.setAccessibleName(search_text("answer.name", lang))

    def _update_buttons(self) -> None:
        available = self.runtime.search is not None
        for widget in (self.search_button, self.research_button):
            widget.setEnabled(available)
        self.cancel_button.setEnabled(bool(self._tasks))

    def _dim_color(self) -> str:
        return self.palette().color(QPalette.ColorRole.PlaceholderText).name()


def _log_prepare_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:  # the search itself will report it
        log.warning("search panel: loading the query model failed", exc_info=task.exception())


def _set_result(label: QLabel, result: str) -> None:
    """Sets the ``result`` style property (ok / error / busy, see the style sheets) and re-applies the style."""
    if label.property("result") != result:
        label.setProperty("result", result)
        label.style().unpolish(label)
        label.style().polish(label)


def _open_link(url: QUrl) -> None:
    if url.isLocalFile():
        QDesktopServices.openUrl(url)
