"""How the search panel puts what search returns into words: status lines, the classification's fields, each
channel's hits as HTML, the research agent's progress and cited answer, the index row's text, source names.

Plain functions of their arguments (the language, the dim colour for secondary text): nothing here reads or changes
a widget, so the panel decides what to show and these decide how it reads.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from PySide6.QtCore import QUrl

from app.search.service import SearchIndexProgress, SearchIndexUpdated
from companions.search.classify.query_classifier import QueryClassification, SearchWeights, get_search_weights
from companions.search.engine import CHANNELS, SearchHit, SearchResponse
from companions.search.research import ResearchProgress, ResearchResult
from ui.search.names import SourceNames
from ui.search.texts import search_text

FUSED_SHOWN: Final = 10  # fused hits listed
CHANNEL_SHOWN: Final = 20  # hits listed per channel
UNAVAILABLE_PREFIX: Final = "search not available: "  # how app.runtime.assembly records why search could not start
FIELDS: Final = ("type", "confidence", "entities", "keywords", "weights", "intent")

Status = tuple[str, dict[str, object], str]  # text key, values, result property


def display_source(source: str, names: SourceNames | None = None) -> tuple[str, str]:
    """A source as (short name, full form): a file's name and its path (``~`` for the home folder), a web page's
    site and its URL (the research agent on the web), or a conversation's name both times."""
    if source.startswith("conversation:"):
        shown = names.source(source) if names is not None else None
        return shown or source, shown or source
    if source.startswith(("http://", "https://")):
        return urlsplit(source).netloc or source, source
    path = Path(source)
    home = str(Path.home())
    full = "~" + source[len(home):] if home not in ("", "/") and source.startswith(home + "/") else source
    return path.name or source, full


def error_text(exc: BaseException) -> str:
    """What went wrong, in one line: the first cause inside an exception group (concurrent searches fail so)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


# -- the status line ---------------------------------------------------------------------------------------------
def unavailable_status(problems: Sequence[str]) -> Status:
    """The status when search could not start, with the reason ``app.runtime.assembly`` recorded among the problems."""
    reason = next((p[len(UNAVAILABLE_PREFIX):] for p in problems if p.startswith(UNAVAILABLE_PREFIX)), "")
    return ("unavailable.reason", {"reason": reason}, "error") if reason else ("unavailable", {}, "error")


def status_text(key: str, values: dict[str, object], language: str) -> str:
    """The status line of ``key`` (empty when none); a ``partial`` value adds that indexing is still running."""
    values = dict(values)
    partial = values.pop("partial", False)
    text = search_text(key, language, **values) if key else ""
    return text + search_text("partial", language) if partial else text


# -- the classification ------------------------------------------------------------------------------------------
def classification_texts(cls: QueryClassification, response: SearchResponse | None, language: str) -> dict[str, str]:
    """The text of each of :data:`FIELDS` for a classification (the weights the search used, once it ran)."""
    none, sep = search_text("none", language), search_text("list_sep", language)
    weights = response.weights if response is not None else get_search_weights(cls.type)
    if cls.fallback_reason is not None and cls.fallback_reason != "llm_disabled":
        by = search_text("classified_by.fallback", language, reason=cls.fallback_reason)
    else:
        by = search_text(f"classified_by.{cls.source}", language)
    # The rules' intent is one stock sentence per type, in the question's language: the window says it in its own.
    # A model's intent is its own words.
    intent = search_text(f"intent.{cls.type}", language) if cls.source == "rules" else cls.intent
    return {"type": search_text(f"type.{cls.type}", language), "confidence": f"{cls.confidence:.0%}",
            "entities": sep.join(cls.extracted_entities) or none, "keywords": sep.join(cls.keywords) or none,
            "weights": weights_text(weights, language),
            "intent": search_text("intent", language, intent=intent, by=by) if intent else by}


def weights_text(weights: SearchWeights, language: str) -> str:
    return search_text("weights", language, keyword=f"{weights.keyword:.2f}", semantic=f"{weights.semantic:.2f}",
                       graph=f"{weights.graph:.2f}")


# -- hits --------------------------------------------------------------------------------------------------------
def hits_page(response: SearchResponse, channel: str, language: str, dim: str,
              names: SourceNames | None = None) -> tuple[str, str]:
    """A results tab as (HTML, tab title): the fused ranking for ``"fused"``, else that channel's ranking."""
    if channel == "fused":
        blocks = [hit_html(rank, hit, hit.score, fused=True, language=language, dim=dim, names=names)
                  for rank, hit in enumerate(response.hits[:FUSED_SHOWN], start=1)]
        count = len(response.hits)
    else:
        by_id = {h.chunk_id: h for h in response.hits}
        ranking = response.channels.get(channel, [])
        blocks = [hit_html(rank, by_id[chunk], score, fused=False, language=language, dim=dim, names=names)
                  for rank, (chunk, score) in enumerate(ranking[:CHANNEL_SHOWN], start=1) if chunk in by_id]
        count = len(ranking)
    empty = f"<p>{html.escape(search_text('channel.empty', language))}</p>"
    name = search_text(f"channel.{channel}", language)
    return "".join(blocks) or empty, search_text("tab", language, name=name, n=count)


def hit_html(rank: int, hit: SearchHit, score: float, *, fused: bool, language: str, dim: str,
             names: SourceNames | None = None) -> str:
    """One hit: its rank, source and score, the source's path (a link for a file), the snippet and, in the fused
    ranking, each channel's score."""
    name, full = display_source(hit.source, names)
    snippet = names.text(hit.snippet) if names is not None else hit.snippet
    heading = search_text("hit", language, rank=rank, source=name,
                          score=search_text("score" if fused else "channel_score", language, score=f"{score:.3f}"))
    link = QUrl.fromLocalFile(hit.source).toString() if not hit.source.startswith("conversation:") else ""
    source = (f'<a style="color:{dim}" href="{html.escape(link)}">{html.escape(full)}</a>' if link
              else html.escape(full))
    lines = [f"<b>{html.escape(heading)}</b>", f'<span style="color:{dim}">{source}</span>',
             html.escape(snippet)]
    if fused:
        scores = {c: f"{hit.channel_scores[c]:.3f}" if c in hit.channel_scores else search_text("none", language)
                  for c in CHANNELS}
        lines.append(f'<span style="color:{dim}">{html.escape(search_text("hit.channels", language, **scores))}'
                     "</span>")
    return f'<p style="margin-bottom:8px">{"<br>".join(lines)}</p>'


# -- research ----------------------------------------------------------------------------------------------------
def research_progress_values(item: ResearchProgress, language: str) -> dict[str, object]:
    """The values of a research step's status text: its round, its queries quoted, and its detail."""
    queries = search_text("list_sep", language).join(search_text("quoted", language, text=q) for q in item.queries)
    count = re.match(r"\d+", item.detail)  # the core says "<n> sources"
    detail = search_text("sources", language, n=int(count.group())) if count else item.detail
    return {"round": item.round, "queries": queries, "detail": detail}


def research_result_style(key: str) -> str:
    """The ``result`` style property of the research status ``key``."""
    return "error" if key == "stage.failed" else "ok" if key == "stage.done" else ""


def research_html(result: ResearchResult, language: str, dim: str, names: SourceNames | None = None) -> str:
    """The research agent's answer, how it was written (by the model, extracted without one, or extracted because
    the model failed), and its numbered citations."""
    if result.used_model:
        note = search_text("answer.model", language)
    elif result.notes:  # a model was asked and failed: not "no model is configured"
        note = search_text("answer.model_failed", language, reason=result.notes[-1])
    elif not result.citations:  # nothing found: nothing was extracted either
        note = ""
    else:
        note = search_text("answer.extractive", language)
    answer = names.text(result.answer) if names is not None else result.answer
    parts = [f"<p>{html.escape(answer)}</p>"]
    if note:
        parts.append(f'<p style="color:{dim}"><i>{html.escape(note)}</i></p>')
    if result.citations:
        parts.append(f"<p><b>{html.escape(search_text('citations', language))}</b></p>")
    for c in result.citations:
        name, full = display_source(c.source, names)
        heading = html.escape(search_text("citation", language, n=c.number, source=name))
        parts.append(f'<p style="margin-bottom:6px"><b>{heading}</b><br><span style="color:{dim}">'
                     f"{html.escape(full)}</span><br>"
                     f"{html.escape(names.text(c.snippet) if names is not None else c.snippet)}</p>")
    return "".join(parts)


# -- the index row -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexSummary:
    """What the index row's label says about the index state."""

    text: str  # empty while indexing (the bar shows it) or before any state
    result: str | None  # the label's ``result`` style property; None: leave it as it is
    problems: Sequence[str] = ()  # files the last pass could not index


def index_summary(state: SearchIndexProgress | SearchIndexUpdated | str | None, language: str) -> IndexSummary:
    """The summary of an index state (a str: a re-index that failed with that error)."""
    if isinstance(state, SearchIndexUpdated):
        if state.documents == 0:
            text = search_text("indexed.empty", language)
        elif state.changed:
            text = search_text("indexed.changed", language, n=state.documents, changed=state.changed)
        else:
            text = search_text("indexed", language, n=state.documents)
        return IndexSummary(text, "error" if state.documents == 0 else "", state.problems)
    if isinstance(state, str):
        return IndexSummary(search_text("index.failed", language, error=state), "error")
    return IndexSummary("", None)
