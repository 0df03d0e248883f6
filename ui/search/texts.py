"""The words of the search panel, in English and Japanese (the language setting picks)."""

from __future__ import annotations

from typing import Final

from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts

TEXTS: Final = Texts("search", {
    "title": QT_TRANSLATE_NOOP("search", "Search"),
    "placeholder": QT_TRANSLATE_NOOP("search", "Search your documents and past conversations… (Enter searches)"),
    "query.name": QT_TRANSLATE_NOOP("search", "Search query"),
    "search": QT_TRANSLATE_NOOP("search", "Search"),
    "search.tooltip": QT_TRANSLATE_NOOP("search", "Search the index (Enter in the box does the same)"),
    "research": QT_TRANSLATE_NOOP("search", "Research"),
    "research.tooltip": QT_TRANSLATE_NOOP(
        "search", "Let the research agent plan several searches and write an answer with citations"),
    "cancel": QT_TRANSLATE_NOOP("search", "Cancel"),
    "cancel.tooltip": QT_TRANSLATE_NOOP("search", "Stop the search or research in progress"),
    "reindex": QT_TRANSLATE_NOOP("search", "Update index"),
    "reindex.tooltip": QT_TRANSLATE_NOOP("search", "Index new and changed files of the knowledge folders now"),
    # states
    "unavailable": QT_TRANSLATE_NOOP("search", "Search is not available."),
    "unavailable.reason": QT_TRANSLATE_NOOP("search", "Search is not available: {reason}"),
    "blank": QT_TRANSLATE_NOOP("search", "Type a question first."),
    "searching": QT_TRANSLATE_NOOP("search", "Searching “{query}”…"),
    "found": Numerus.translate("search", "%n hits for “{query}” in {ms} ms", None, 0),
    "no_hits": QT_TRANSLATE_NOOP("search", "No hits for “{query}”."),
    "index_empty": QT_TRANSLATE_NOOP(
        "search", "The index is empty: nothing to search yet. Add knowledge folders in the settings."),
    "partial": QT_TRANSLATE_NOOP("search", " (indexing is still running: more may be found soon)"),
    "search_failed": QT_TRANSLATE_NOOP("search", "Search failed: {error}"),
    "cancelled": QT_TRANSLATE_NOOP("search", "Cancelled."),
    "stopped": QT_TRANSLATE_NOOP("search", "Search has stopped."),
    # index
    "indexing": QT_TRANSLATE_NOOP("search", "Indexing %v / %m"),
    "indexing.start": QT_TRANSLATE_NOOP("search", "Indexing…"),
    "indexing.file": QT_TRANSLATE_NOOP("search", "Indexing {file}"),
    "indexed": Numerus.translate("search", "%n documents indexed", None, 0),
    "indexed.changed": Numerus.translate("search", "%n documents indexed ({changed} new or changed)", None, 0),
    "indexed.empty": QT_TRANSLATE_NOOP("search", "The index is empty."),
    "index.problems": QT_TRANSLATE_NOOP("search", "Indexing problems: {problems}"),
    "index.failed": QT_TRANSLATE_NOOP("search", "Could not update the index: {error}"),
    # classification
    "classification": QT_TRANSLATE_NOOP("search", "Query"),
    "classification.none": QT_TRANSLATE_NOOP("search", "Search to see how the question is understood."),
    "field.type": QT_TRANSLATE_NOOP("search", "Type"),
    "field.confidence": QT_TRANSLATE_NOOP("search", "Confidence"),
    "field.entities": QT_TRANSLATE_NOOP("search", "Entities"),
    "field.keywords": QT_TRANSLATE_NOOP("search", "Keywords"),
    "field.weights": QT_TRANSLATE_NOOP("search", "Weights"),
    "field.intent": QT_TRANSLATE_NOOP("search", "Intent"),
    "type.local": QT_TRANSLATE_NOOP("search", "local — a specific fact"),
    "type.global": QT_TRANSLATE_NOOP("search", "global — the overall picture"),
    "type.relationship": QT_TRANSLATE_NOOP("search", "relationship — how things relate"),
    "type.hybrid": QT_TRANSLATE_NOOP("search", "hybrid — overall and related"),
    "classified_by.rules": QT_TRANSLATE_NOOP("search", "classified by rules"),
    "classified_by.llm": QT_TRANSLATE_NOOP("search", "classified by the language model"),
    "classified_by.fallback": QT_TRANSLATE_NOOP("search", "classified by rules (the language model failed: {reason})"),
    "intent": QT_TRANSLATE_NOOP("search", "{intent} ({by})"),
    # what the rules read a question as (companions/search/classify/query_classifier.py), in the window's language
    # whatever the question's
    "intent.local": QT_TRANSLATE_NOOP("search", "A question about a specific piece of information"),
    "intent.global": QT_TRANSLATE_NOOP("search", "A question about the overall picture or trends"),
    "intent.relationship": QT_TRANSLATE_NOOP("search", "A question about how entities relate or compare"),
    "intent.hybrid": QT_TRANSLATE_NOOP(
        "search", "A composite question about overall trends and the relations behind them"),
    "none": QT_TRANSLATE_NOOP("search", "—"),
    "list_sep": QT_TRANSLATE_NOOP("search", ", "),
    "quoted": QT_TRANSLATE_NOOP("search", "“{text}”"),
    # results
    "channel.fused": QT_TRANSLATE_NOOP("search", "Fused"),
    "channel.keyword": QT_TRANSLATE_NOOP("search", "Keyword"),
    "channel.semantic": QT_TRANSLATE_NOOP("search", "Semantic"),
    "channel.graph": QT_TRANSLATE_NOOP("search", "Graph"),
    "tab": QT_TRANSLATE_NOOP("search", "{name} ({n})"),
    "results.name": QT_TRANSLATE_NOOP("search", "Search results"),
    "hit": QT_TRANSLATE_NOOP("search", "{rank}. {source} · {score}"),
    "score": QT_TRANSLATE_NOOP("search", "score {score}"),
    "channel_score": QT_TRANSLATE_NOOP("search", "{score}"),
    "hit.channels": QT_TRANSLATE_NOOP("search", "keyword {keyword} · semantic {semantic} · graph {graph}"),
    "channel.empty": QT_TRANSLATE_NOOP("search", "This channel found nothing."),
    "channel.off": QT_TRANSLATE_NOOP("search", "This channel is off: the embedding model is not installed."),
    "weights": QT_TRANSLATE_NOOP("search", "keyword {keyword} · semantic {semantic} · graph {graph}"),
    # research
    "research.title": ("search.title", QT_TRANSLATE_NOOP("search.title", "Research")),
    "research.idle": QT_TRANSLATE_NOOP("search", "Research answers a question from several searches, with citations."),
    "research.starting": QT_TRANSLATE_NOOP("search", "Starting the research…"),
    "stage.planning": QT_TRANSLATE_NOOP("search", "Planning the searches…"),
    "stage.searching": QT_TRANSLATE_NOOP("search", "Searching (round {round}): {queries}"),
    "stage.reflecting": QT_TRANSLATE_NOOP("search", "Checking what is still missing (round {round})…"),
    "stage.synthesizing": QT_TRANSLATE_NOOP("search", "Writing the answer from {detail}…"),
    "stage.done": QT_TRANSLATE_NOOP("search", "Done: {citations} from {searches}."),
    "count.citations": Numerus.translate("search", "%n citations", None, 0),
    "count.searches": Numerus.translate("search", "%n searches", None, 0),
    "stage.cancelled": QT_TRANSLATE_NOOP("search", "Research cancelled."),
    "stage.failed": QT_TRANSLATE_NOOP("search", "Research failed: {error}"),
    "sources": Numerus.translate("search", "%n sources", None, 0),
    "answer.name": QT_TRANSLATE_NOOP("search", "Research answer"),
    "answer.extractive": QT_TRANSLATE_NOOP(
        "search", "Extractive answer: no language model is configured, so these are the best sentences of the "
                  "sources."),
    "answer.model_failed": QT_TRANSLATE_NOOP(
        "search", "Extractive answer: the language model did not write one ({reason}), so these are the best "
                  "sentences of the sources."),
    "answer.model": QT_TRANSLATE_NOOP("search", "Answer written by the language model from the sources."),
    "citations": QT_TRANSLATE_NOOP("search", "Citations"),
    "citation": QT_TRANSLATE_NOOP("search", "[{n}] {source}"),
    "conversation": QT_TRANSLATE_NOOP("search", "conversation {id}"),
})


def search_text(key: str, language: str | None = None, /, **values: object) -> str:
    """The text for ``key`` in ``language`` ("ja" or "en"), with ``values`` filled in."""
    return TEXTS.text(key, language, **values)
