"""The search panel: ask the index, see how the question was understood, each channel's hits, the fused ranking,
and the research agent's cited answer; the background indexing shows as a progress bar.

Nothing here searches or ranks: the panel calls ``search.service()`` (the engine and the research agent) in tasks it
owns and shows what they return; indexing progress and research progress come from the bus (``events`` topic).
Every long call is a task in the panel's kept set: a new query cancels the running ones, Cancel cancels them, and
:meth:`SearchPanel.detach` cancels whatever is left.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Coroutine
from typing import Any, Final

import shiboken6
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.search.service import SearchIndexProgress, SearchIndexUpdated, SearchService
from companions.common.tasks import TaskSet
from companions.search.classify.query_classifier import QueryClassification
from companions.search.engine import CHANNEL_DEPTH, CHANNELS, SearchResponse
from companions.search.research import ResearchProgress, ResearchResult
from companions.wire.bus import Bus, BusItem
from ui.roster.display_names import DisplayNames
from ui.search.index_row import IndexRow, set_result
from ui.search.names import source_names
from ui.search.research import ResearchBox, browser, log_failure
from ui.search.texts import search_text
from ui.search.wording import (
    FIELDS,
    classification_texts,
    error_text,
    hits_page,
    status_text,
    unavailable_status,
)
from ui.window.attached import AttachedWidget
from ui.window.i18n import window_language
from ui.window.naming import named
from ui.window.panel_ports import People, SearchAccess

log = logging.getLogger(__name__)

SEARCH_LIMIT: Final = len(CHANNELS) * CHANNEL_DEPTH  # every chunk any channel ranked, so each has its source
RESULTS_MIN_HEIGHT: Final = 170  # pixels: a hit or two of the ranking in sight
RESEARCH_MIN_HEIGHT: Final = 150  # pixels: the research box's status and a few lines of its answer


class _WrappedGroup(QGroupBox):
    """A group box whose minimum height is that of its wrapped rows at its width: a layout's minimum height ignores
    wrapping, so in a short panel the classification's weights and intent were squeezed over each other."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        if self.width() > 0 and self.hasHeightForWidth():
            hint.setHeight(max(hint.height(), self.heightForWidth(self.width())))
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # another width, another wrapped height


class SearchPanel(AttachedWidget, QWidget):
    """The search panel over ``search``. Call :meth:`attach` once the runtime started, :meth:`detach` before it
    stops. ``search.service()`` may be None (search could not start): the panel then says so."""

    searched = Signal()  # a search's outcome is shown (hits, no hits, empty index, an error, cancelled)
    research_changed = Signal()  # the research box changed (a progress step, the answer, an error, cancelled)
    index_changed = Signal()  # the indexing row changed (progress, the document count, problems)

    def __init__(self, bus: Bus, search: SearchAccess, people: People, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search_access = search
        self.people = people
        self.names = DisplayNames(people)
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
        self.index_row = IndexRow()
        self.index_bar, self.index_label = self.index_row.bar, self.index_row.label
        self.index_problems, self.reindex_button = self.index_row.problems, self.index_row.reindex_button
        self.reindex_button.clicked.connect(self.reindex)

        self.classification_box = named(_WrappedGroup(), "searchClassification")
        self.classification_hint = named(QLabel(), "searchClassificationHint")
        self.classification_hint.setWordWrap(True)
        # A grid, not a QFormLayout: the form's height for a width did not match the widths it then gave its
        # fields, so a wrapped value (the weights, the intent in Japanese) got one line's height.
        form = QGridLayout()
        form.setColumnStretch(1, 1)
        self.field_labels = {f: QLabel() for f in FIELDS}
        self.fields = {f: named(QLabel(), f"searchField-{f}") for f in FIELDS}
        for row, f in enumerate(FIELDS):
            self.fields[f].setWordWrap(True)
            self.field_labels[f].setBuddy(self.fields[f])
            form.addWidget(self.field_labels[f], row, 0, Qt.AlignmentFlag.AlignTop)
            form.addWidget(self.fields[f], row, 1)
        box_layout = QVBoxLayout(self.classification_box)
        box_layout.addWidget(self.classification_hint)
        box_layout.addLayout(form)

        self.results = named(QTabWidget(), "searchResults")
        self.views = {c: named(browser(), f"searchHits-{c}") for c in ("fused", *CHANNELS)}
        for channel, view in self.views.items():
            self.results.addTab(view, channel)

        self.research_box = ResearchBox(functools.partial(source_names, self.names))
        self.research_box.changed.connect(self.research_changed)
        self.research_status, self.research_busy = self.research_box.status, self.research_box.busy
        self.research_view = self.research_box.view

        buttons = QHBoxLayout()
        buttons.addWidget(self.search_button)
        buttons.addWidget(self.research_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
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
        # A short window scrolls the panel instead of squeezing it: at 1024x700 the classification's weights and
        # intent rows were cut, and the research box was a line high.
        self.results.setMinimumHeight(RESULTS_MIN_HEIGHT)
        self.research_box.setMinimumHeight(RESEARCH_MIN_HEIGHT)
        self.scroll_area = named(QScrollArea(), "searchScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self.splitter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.index_row)
        layout.addWidget(self.scroll_area, 1)

        self.response: SearchResponse | None = None  # the last search shown
        self.classification: QueryClassification | None = None
        self._status: tuple[str, dict[str, object], str] = ("", {}, "")  # text key, values, result property
        self._index: SearchIndexProgress | SearchIndexUpdated | str | None = None  # str: a failed re-index
        self.follow_bus(bus, ("events",))
        self._tasks = TaskSet("search-panel")
        self._search_task: asyncio.Task[None] | None = None
        self._preparing: asyncio.Task[None] | None = None
        self._research_task: asyncio.Task[None] | None = None
        self.retranslate()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def on_attach(self) -> None:
        """Shows the index state (the bus says what changes from now on)."""
        service = self.search_access.service()
        if service is not None:
            self._index = service.progress or service.indexed
        self._render_all()

    def on_detach(self) -> None:
        """Cancels the running search and research."""
        self._cancel_running()
        if self._preparing is not None:
            self._preparing.cancel()
        self._tasks.cancel()
        self._update_buttons()

    async def wait_idle(self) -> None:
        """Waits until the panel's search and research tasks have finished (after :meth:`detach`, for instance)."""
        await self._tasks.wait()

    def retranslate(self) -> None:
        self._name_controls()
        self._render_all()

    @property
    def research_result(self) -> ResearchResult | None:
        """The research agent's last answer, with its citations (None before one, or while a new one runs)."""
        return self.research_box.result

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
        self.research_box.starting()
        self._research_task = self._spawn(self.research_box.run(service, self.search_access.model(), query))

    def _search_box(self) -> None:
        self.search()

    def _prepare_engine(self) -> None:
        """The first key typed in the query box has the engine load its query model (about a second) while the
        query is being written: not at Enter, nor at start, where its loading (tens of milliseconds at a time
        with the interpreter held) would stall the window while nobody searches."""
        service = self.search_access.service()
        if service is None or self._preparing is not None:
            return
        self._preparing = asyncio.get_running_loop().create_task(service.engine.prepare())
        self._preparing.add_done_callback(log_failure)

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
        if self.search_access.service() is None:
            self._render_all()
        return self.search_access.service()

    def _cancel_running(self) -> None:
        if self._search_task is not None and not self._search_task.done():
            self._search_task.cancel()
            self._set_status("cancelled")
            self.searched.emit()
        if self._research_task is not None and not self._research_task.done():
            self._research_task.cancel()
            self.research_box.cancelled()
        self._search_task = self._research_task = None

    # -- tasks -----------------------------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = self._tasks.spawn(coro)  # a failure is logged by the task set
        task.add_done_callback(self._task_done)
        self._update_buttons()
        return task

    def _task_done(self, _task: asyncio.Task[None]) -> None:
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

    # -- the bus ---------------------------------------------------------------------------------------------
    def on_item(self, item: BusItem) -> None:
        if isinstance(item, SearchIndexProgress | SearchIndexUpdated):
            self._index = item
            self._render_index()
        elif isinstance(item, ResearchProgress):
            self.research_box.on_progress(item)

    # -- rendering -------------------------------------------------------------------------------------------
    def _render_all(self) -> None:
        service = self.search_access.service()
        if service is None:
            self._status = unavailable_status(self.search_access.problems())
        elif self._status[0].startswith("unavailable"):  # said before the runtime had started search
            self._status = ("", {}, "")
        self._render_status()
        self._render_classification()
        self._render_hits()
        self.research_box.refresh()
        self._render_index()
        self._update_buttons()

    def _set_status(self, key: str, *, result: str = "", **values: object) -> None:
        self._status = (key, values, result)
        self._render_status()

    def _render_status(self) -> None:
        key, values, result = self._status
        self.status.setText(status_text(key, values, window_language()))
        self.status.setVisible(bool(key))
        set_result(self.status, result)

    def _show_classification(self, classification: QueryClassification, response: SearchResponse | None) -> None:
        self.classification = classification
        self.response = response
        self._render_classification()

    def _render_classification(self) -> None:
        cls, lang = self.classification, window_language()
        self.classification_hint.setVisible(cls is None)
        for f in FIELDS:
            self.fields[f].setVisible(cls is not None)
            self.field_labels[f].setVisible(cls is not None)
        if cls is None:
            return
        for f, text in classification_texts(cls, self.response, lang).items():
            self.fields[f].setText(text)

    def _render_hits(self) -> None:
        response, lang = self.response, window_language()
        dim = self._dim_color() if response is not None else ""
        for index, channel in enumerate(("fused", *CHANNELS)):
            if response is None:
                self.views[channel].clear()
                self.results.setTabText(index, search_text(f"channel.{channel}", lang))
            else:
                page, title = hits_page(response, channel, lang, dim, source_names(self.names))
                self.views[channel].setHtml(page)
                self.results.setTabText(index, title)

    def _render_index(self) -> None:
        self.index_row.show_state(self._index, available=self.search_access.service() is not None,
                                  language=window_language())
        self.index_changed.emit()

    def _name_controls(self) -> None:
        lang = window_language()
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

    def _update_buttons(self) -> None:
        available = self.search_access.service() is not None
        for widget in (self.search_button, self.research_button):
            widget.setEnabled(available)
        self.cancel_button.setEnabled(bool(self._tasks))

    def _dim_color(self) -> str:
        return self.palette().color(QPalette.ColorRole.PlaceholderText).name()
