"""The search component of the runtime: opens the index, keeps the knowledge folders indexed in the background.

On start it opens ``<data dir>/search.sqlite3`` and spawns one owned task that indexes the bundled samples and the
folders of ``settings.search.folders`` (incrementally: unchanged files cost one hash each), publishing
:class:`SearchIndexProgress` before each new or changed file and :class:`SearchIndexUpdated` at the end on the
bus; :meth:`SearchService.reindex` runs the pass again. Conversations are added by the conversation indexer
(app/conversations/indexing.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.search.cli import SAMPLES, index_path
from app.search.embedding import make_embedder
from app.settings.model import Paths, Settings
from companions.common import morphology
from companions.common.tasks import TaskSet
from companions.llm.types import ChatModel
from companions.search.classify.query_classifier import make_query_classifier
from companions.search.engine import SearchEngine
from companions.search.research import ResearchAgent, ResearchProgress
from companions.search.semantic import Embedder
from companions.search.web import WebAugmentedSearch, WebSearch
from companions.wire.bus import Bus, LocalEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchIndexUpdated(LocalEvent):
    """The background indexing pass finished (``changed`` documents added, updated or removed)."""

    changed: int
    documents: int
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchIndexProgress(LocalEvent):
    """The background indexing pass is at file ``done + 1`` of ``total`` new or changed ones (``current``);
    ``done == total`` (and no ``current``) when the last one is written. :class:`SearchIndexUpdated` follows."""

    done: int
    total: int
    current: str = ""


class SearchService:
    name = "search"

    def __init__(self, engine: SearchEngine, folders: list[Path], bus: Bus | None = None, *,
                 web: WebSearch | None = None, web_limit: int = 5) -> None:
        self.engine = engine
        self.web = web  # the research agent searches the web too when set (off by default)
        self.web_limit = web_limit
        self.folders = folders
        self.bus = bus
        self.tasks = TaskSet("search")
        self.indexed: SearchIndexUpdated | None = None  # the last finished pass
        self.progress: SearchIndexProgress | None = None  # the running pass, None when none runs
        self._pass: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.engine.open()
        # Open JTalk's dictionary loaded off the event loop: the first Japanese query classified there would
        # otherwise import it (0.1-0.8 s measured) when nothing else did yet (the voice off, no file to index).
        self.tasks.spawn(asyncio.to_thread(morphology.tagger), name="search-japanese-words")
        self.reindex()

    def reindex(self) -> asyncio.Task[None]:
        """Starts an indexing pass over the folders (the running one when a pass is under way)."""
        if self._pass is None or self._pass.done():
            self.progress = SearchIndexProgress(0, 0)
            self._pass = self.tasks.spawn(self._index_folders(), name="search-index-folders")
        return self._pass

    def use_folders(self, folders: list[Path]) -> asyncio.Task[None]:
        """Indexes ``folders`` (beside the sample documents) from now on and forgets the documents of those left
        out; returns the pass that takes them in (after the pass under way, if one is)."""
        removed = [f for f in self.folders if f not in (SAMPLES, *folders)]
        self.folders = [SAMPLES, *folders]  # as build_search_service gives them
        running = self._pass if self._pass is not None and not self._pass.done() else None
        if running is None and not removed:
            return self.reindex()
        return self.tasks.spawn(self._reindex_after(running, removed), name="search-index-new-folders")

    async def _reindex_after(self, running: asyncio.Task[None] | None, removed: list[Path]) -> None:
        """The pass under way ends, the folders no longer wanted leave the index, and a pass takes the new ones in."""
        if running is not None:
            await asyncio.wait([running])
        for folder in removed:
            await self.engine.forget_folder(folder)
        await self.reindex()

    def _publish_progress(self, done: int, total: int, current: str) -> None:
        self.progress = SearchIndexProgress(done, total, current)
        if self.bus is not None:
            self.bus.publish(self.progress)

    async def _index_folders(self) -> None:
        problems = [f"search folder not found: {f}" for f in self.folders if not f.exists()]
        try:
            changes = await self.engine.index_paths([f for f in self.folders if f.exists()],
                                                    progress=self._publish_progress)
            stats = await self.engine.stats()
        except Exception as exc:  # a broken file system must not take the app down; say it and carry on
            log.exception("indexing the knowledge folders failed")
            problems.append(f"indexing failed: {exc}")
            changes, stats = {}, {"documents": 0}
        event = SearchIndexUpdated(sum(1 for c in changes.values() if c != "unchanged"), stats["documents"],
                                   tuple(problems))
        self.indexed = event
        self.progress = None
        if self.bus is not None:
            self.bus.publish(event)

    async def stop(self) -> None:
        await self.tasks.aclose()
        await self.engine.aclose()

    def research_agent(self, model: ChatModel | None, *,
                       observer: Callable[[ResearchProgress], object] | None = None) -> ResearchAgent:
        """A research agent on this index whose progress goes to the bus; ``observer`` also sees each event first
        (synchronously, so a caller learns its run's id before the bus delivers anything)."""
        bus = self.bus

        def progress(event: ResearchProgress) -> None:
            if observer is not None:
                observer(event)
            if bus is not None:
                bus.publish(event)

        search = self.engine if self.web is None else WebAugmentedSearch(self.engine, self.web,
                                                                         web_limit=self.web_limit)
        return ResearchAgent(search, model, progress=progress)


def build_search_service(settings: Settings, paths: Paths, bus: Bus | None = None,
                         model: ChatModel | None = None, *, extract_with_model: bool = False,
                         embedder: Embedder | None = None) -> SearchService:
    """The runtime's search component. ``model`` (when configured) classifies queries; with
    ``extract_with_model`` it also extracts entities and relations (one call per chunk: slow on local models).
    ``embedder`` defaults to the offline e5 model."""
    engine = SearchEngine(index_path(paths), embedder=embedder or make_embedder(),
                          classifier=make_query_classifier(model), chat_model=model if extract_with_model else None)
    research = settings.research
    web = None
    if research.web_search_url is not None:
        from app.search.web import SearxngSearch

        web = SearxngSearch(research.web_search_url, timeout_s=research.web_timeout_s,
                            language=settings.general.language)
    return SearchService(engine, [SAMPLES, *settings.search.folders], bus, web=web, web_limit=research.web_results)
