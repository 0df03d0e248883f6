"""The search panel: ask the index, see how the question was understood, each channel's hits, the fused ranking,
and the research agent's cited answer; the background indexing shows as a progress bar.

Nothing here searches or ranks: the panel calls ``runtime.search`` (the engine and the research agent) in tasks it
owns and shows what they return; indexing progress and research progress come from the bus (``events`` topic).
Every long call is a task in the panel's kept set: a new query cancels the running ones, Cancel cancels them, and
:meth:`SearchPanel.detach` cancels whatever is left.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Coroutine, Sequence
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
from companions.search.classifier import QueryClassification, SearchWeights, get_search_weights
from companions.search.engine import CHANNEL_DEPTH, CHANNELS, SearchHit, SearchResponse
from companions.search.research import ResearchProgress, ResearchResult
from ui.bus_bridge import BusSignals
from ui.naming import named
from ui.search_texts import search_text

log = logging.getLogger(__name__)

FUSED_SHOWN: Final = 10  # fused hits listed
CHANNEL_SHOWN: Final = 20  # hits listed per channel
SEARCH_LIMIT: Final = len(CHANNELS) * CHANNEL_DEPTH  # every chunk any channel ranked, so each has its source
UNAVAILABLE_PREFIX: Final = "search not available: "  # how app.assembly records why search could not start
FIELDS: Final = ("type", "confidence", "entities", "keywords", "weights", "intent")


def display_source(source: str) -> tuple[str, str]:
    """A source as (short name, full form): a file's name and its path (``~`` for the home folder), or a
    conversation's ``conversation:<id>`` both times."""
    if source.startswith("conversation:"):
        return source, source
    path = Path(source)
    home = str(Path.home())
    full = "~" + source[len(home):] if home not in ("", "/") and source.startswith(home + "/") else source
    return path.name or source, full


def _error_text(exc: BaseException) -> str:
    """What went wrong, in one line: the first cause inside an exception group (concurrent searches fail so)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


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
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
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
        self._signals: BusSignals | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._search_task: asyncio.Task[None] | None = None
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
        if self._signals is None:
            self._signals = BusSignals(self.runtime.bus, ("events",), self)
            self._signals.item.connect(self._on_item)

    def detach(self) -> None:
        """Stops following the bus and cancels the running search and research (call before the runtime stops)."""
        if self._signals is not None:
            self._signals.close()
            self._signals = None
        self._cancel_running()
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
        query = self._take_query(text)
        service = self._service()
        if service is None or query is None:
            return
        self._cancel_running()
        self._set_status("searching", result="busy", query=query)
        self._search_task = self._spawn(self._run_search(service, query))

    def research(self, text: str | None = None) -> None:
        """Searches ``text`` and has the research agent answer it with citations."""
        query = self._take_query(text)
        service = self._service()
        if service is None or query is None:
            return
        self._cancel_running()
        self._set_status("searching", result="busy", query=query)
        self._search_task = self._spawn(self._run_search(service, query))
        self.research_result = None
        self._research_task = self._spawn(self._run_research(service, query))
        self._set_research_status("research.starting")

    def _search_box(self) -> None:
        self.search()

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
            self._index = _error_text(exc)
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
            self._set_status("search_failed", result="error", error=_error_text(exc))
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
            self._set_research_status("stage.failed", error=_error_text(exc))
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
                lang = self.language
                queries = search_text("list_sep", lang).join(search_text("quoted", lang, text=q) for q in item.queries)
                count = re.match(r"\d+", item.detail)  # the core says "<n> sources"
                detail = search_text("sources", lang, n=count.group()) if count else item.detail
                self._set_research_status(f"stage.{item.stage}", round=item.round, queries=queries, detail=detail)

    # -- rendering -------------------------------------------------------------------------------------------
    def _render_all(self) -> None:
        service = self.runtime.search
        if service is None:
            reason = next((p[len(UNAVAILABLE_PREFIX):] for p in self.runtime.loaded.problems
                           if p.startswith(UNAVAILABLE_PREFIX)), "")
            self._status = ("unavailable.reason", {"reason": reason}, "error") if reason else (
                "unavailable", {}, "error")
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
        values = dict(values)
        partial = values.pop("partial", False)
        text = search_text(key, self.language, **values) if key else ""
        self.status.setText(text + search_text("partial", self.language) if partial else text)
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
        none, sep = search_text("none", lang), search_text("list_sep", lang)
        weights = self.response.weights if self.response is not None else get_search_weights(cls.type)
        if cls.fallback_reason is not None and cls.fallback_reason != "llm_disabled":
            by = search_text("classified_by.fallback", lang, reason=cls.fallback_reason)
        else:
            by = search_text(f"classified_by.{cls.source}", lang)
        texts = {"type": search_text(f"type.{cls.type}", lang), "confidence": f"{cls.confidence:.0%}",
                 "entities": sep.join(cls.extracted_entities) or none, "keywords": sep.join(cls.keywords) or none,
                 "weights": _weights(weights, lang),
                 "intent": search_text("intent", lang, intent=cls.intent, by=by) if cls.intent else by}
        for f, text in texts.items():
            self.fields[f].setText(text)

    def _render_hits(self) -> None:
        response, lang = self.response, self.language
        by_id = {h.chunk_id: h for h in response.hits} if response is not None else {}
        for index, channel in enumerate(("fused", *CHANNELS)):
            name = search_text(f"channel.{channel}", lang)
            if response is None:
                self.views[channel].clear()
                self.results.setTabText(index, name)
                continue
            if channel == "fused":
                blocks = [self._hit_html(rank, hit, hit.score, fused=True)
                          for rank, hit in enumerate(response.hits[:FUSED_SHOWN], start=1)]
                count = len(response.hits)
            else:
                ranking = response.channels.get(channel, [])
                blocks = [self._hit_html(rank, by_id[chunk], score, fused=False)
                          for rank, (chunk, score) in enumerate(ranking[:CHANNEL_SHOWN], start=1) if chunk in by_id]
                count = len(ranking)
            empty = f"<p>{html.escape(search_text('channel.empty', lang))}</p>"
            self.views[channel].setHtml("".join(blocks) or empty)
            self.results.setTabText(index, search_text("tab", lang, name=name, n=count))

    def _hit_html(self, rank: int, hit: SearchHit, score: float, *, fused: bool) -> str:
        lang, dim = self.language, self._dim_color()
        name, full = display_source(hit.source)
        heading = search_text("hit", lang, rank=rank, source=name,
                              score=search_text("score" if fused else "channel_score", lang, score=f"{score:.3f}"))
        link = QUrl.fromLocalFile(hit.source).toString() if not hit.source.startswith("conversation:") else ""
        source = (f'<a style="color:{dim}" href="{html.escape(link)}">{html.escape(full)}</a>' if link
                  else html.escape(full))
        lines = [f"<b>{html.escape(heading)}</b>", f'<span style="color:{dim}">{source}</span>',
                 html.escape(hit.snippet)]
        if fused:
            scores = {c: f"{hit.channel_scores[c]:.3f}" if c in hit.channel_scores else search_text("none", lang)
                      for c in CHANNELS}
            lines.append(f'<span style="color:{dim}">{html.escape(search_text("hit.channels", lang, **scores))}'
                         "</span>")
        return f'<p style="margin-bottom:8px">{"<br>".join(lines)}</p>'

    def _set_research_status(self, key: str, **values: object) -> None:
        self._research_status = (key, values)
        self._render_research()
        self.research_changed.emit()

    def _render_research(self) -> None:
        key, values = self._research_status
        lang = self.language
        self.research_status.setText(search_text(key, lang, **values))
        failed = key == "stage.failed"
        _set_result(self.research_status, "error" if failed else "ok" if key == "stage.done" else "")
        self.research_busy.setVisible(self._research_task is not None and not self._research_task.done()
                                      and key not in ("stage.done", "stage.failed", "stage.cancelled"))
        result = self.research_result
        if result is None:
            if key in ("research.starting", "research.idle"):
                self.research_view.clear()
            return
        dim = self._dim_color()
        note = search_text("answer.model" if result.used_model else "answer.extractive", lang)
        parts = [f"<p>{html.escape(result.answer)}</p>", f'<p style="color:{dim}"><i>{html.escape(note)}</i></p>']
        if result.citations:
            parts.append(f"<p><b>{html.escape(search_text('citations', lang))}</b></p>")
        for c in result.citations:
            name, full = display_source(c.source)
            heading = html.escape(search_text("citation", lang, n=c.number, source=name))
            parts.append(f'<p style="margin-bottom:6px"><b>{heading}</b><br><span style="color:{dim}">'
                         f"{html.escape(full)}</span><br>{html.escape(c.snippet)}</p>")
        self.research_view.setHtml("".join(parts))

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
        problems: Sequence[str] = ()
        if isinstance(state, SearchIndexUpdated):
            if state.documents == 0:
                text = search_text("indexed.empty", lang)
            elif state.changed:
                text = search_text("indexed.changed", lang, n=state.documents, changed=state.changed)
            else:
                text = search_text("indexed", lang, n=state.documents)
            problems = state.problems
            _set_result(self.index_label, "error" if state.documents == 0 else "")
        elif isinstance(state, str):
            text = search_text("index.failed", lang, error=state)
            _set_result(self.index_label, "error")
        else:
            text = ""
        self.index_label.setText(text)
        self.index_label.setVisible(available and bool(text))
        self.index_problems.setText(search_text("index.problems", lang, problems="; ".join(problems)))
        self.index_problems.setVisible(available and bool(problems))
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


def _weights(weights: SearchWeights, language: str) -> str:
    return search_text("weights", language, keyword=f"{weights.keyword:.2f}", semantic=f"{weights.semantic:.2f}",
                       graph=f"{weights.graph:.2f}")


def _set_result(label: QLabel, result: str) -> None:
    """Sets the ``result`` style property (ok / error / busy, see the style sheets) and re-applies the style."""
    if label.property("result") != result:
        label.setProperty("result", result)
        label.style().unpolish(label)
        label.style().polish(label)


def _open_link(url: QUrl) -> None:
    if url.isLocalFile():
        QDesktopServices.openUrl(url)
