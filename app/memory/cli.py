"""``madoi memory`` and ``madoi conversations``: long-term memory and conversation files from the command line.

    madoi memory recall --companion ID --jsonl [--limit N]   ask a companion's memory, as a turn would
    madoi conversations export FILE                          every stored conversation as JSON Lines
    madoi conversations import FILE [--companion ID]         JSON Lines (app/conversations/transfer.py), or a
                                                             SillyTavern chat .jsonl into ID's memory

``memory recall`` reads ``{"id": str, "text": str, "time"?: ISO-8601}`` lines from stdin and writes
``{"id": str, "recalled": [{"message_id": str, "text": str, "time": str, "score": float}], "elapsed_ms": float}``
per line, best first: what the turn would put in the prompt (up to ``--limit``; by default what fits the prompt's
recall budget). With ``time``, only what was said before it is recalled. ``elapsed_ms`` is the recall's own time;
a note about the user (``message_id`` ``note:<id>``) also lists the ``sources`` it cites.
They work on the app's data (``MADOI_HOME``) while the app is closed or running (SQLite in WAL mode).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.conversations.transfer import (
    ConversationImporter,
    ImportReport,
    bounded_lines,
    export_lines,
    read_jsonl,
    read_sillytavern,
)
from app.memory.recall import MemoryRecall, build_memory_recall
from app.memory.store import SqliteMemoryStore
from app.search.cli import make_search_engine
from app.settings.model import SettingsStore, load_settings
from app.storage.database import ConversationStore
from companions.cards.card import CompanionCard, load_cards, localized, sample_cards_dir
from companions.common.atomic_write import write_atomically
from companions.common.untrusted_data import parse_json
from companions.search.engine import SearchEngine


def add_memory_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds ``memory`` (``recall``) and ``conversations`` (``export``, ``import``) to an ``add_subparsers()``."""
    memory = subparsers.add_parser("memory", help="ask what a companion remembers")
    memory_commands = memory.add_subparsers(dest="memory_command", required=True)
    recall = memory_commands.add_parser("recall", help="recall for each query line, as a turn would")
    recall.add_argument("--companion", required=True, metavar="ID", help="whose memory")
    recall.add_argument("--jsonl", action="store_true", required=True,
                        help='read {"id": ..., "text": ..., "time"?: ...} lines from stdin, write one line each')
    recall.add_argument("--limit", type=int, default=None, metavar="N",
                        help="items per query (default: what fits the prompt's recall budget)")
    conversations = subparsers.add_parser("conversations", help="export and import conversations")
    commands = conversations.add_subparsers(dest="conversations_command", required=True)
    export = commands.add_parser("export", help="write every stored conversation as JSON Lines")
    export.add_argument("file", type=Path, help="the file to write ('-': stdout)")
    imported = commands.add_parser("import", help="store, index and remember conversations from a file")
    imported.add_argument("file", type=Path, help="Madoi JSON Lines, or a SillyTavern chat .jsonl with --companion")
    imported.add_argument("--companion", metavar="ID", help="import a SillyTavern chat into this companion's memory")


@dataclass
class MemoryParts:
    """The app's stores, opened for a command: conversations, memory, the search index, the companions' cards."""

    loaded: SettingsStore
    store: ConversationStore
    memory: SqliteMemoryStore
    engine: SearchEngine
    cards: dict[str, CompanionCard]

    def names(self) -> dict[str, str]:
        language = self.loaded.settings.general.language
        return {card.id: localized(card.metadata.name, language) for card in self.cards.values()}

    def recall(self) -> MemoryRecall:
        return build_memory_recall(self.engine, self.memory, lambda: self.loaded.settings, lambda: self.cards)


@asynccontextmanager
async def memory_parts() -> AsyncIterator[MemoryParts]:
    loaded = load_settings()
    paths = loaded.paths.ensure()
    store = ConversationStore(paths.database)
    await store.open()  # first: it creates and migrates the database the memory table lives in
    memory = SqliteMemoryStore(paths.database)
    engine = make_search_engine(paths)
    cards = {card.id: card for card in load_cards([sample_cards_dir(), paths.cards_dir]).cards}
    try:
        yield MemoryParts(loaded, store, memory, engine, cards)
    finally:
        await engine.aclose()
        memory.close()
        await store.close()


async def _recall(parts: MemoryParts, companion: str, limit: int | None, stdin: TextIO, out: TextIO) -> int:
    recall = parts.recall()
    failed = 0
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        ident: object = None
        try:
            query = parse_json(line)
            if not isinstance(query, dict) or not isinstance(query.get("text"), str):
                raise ValueError('expected {"id": ..., "text": "...", "time"?: "..."}')
            ident = query.get("id")
            before = None
            if query.get("time") is not None:
                when = dt.datetime.fromisoformat(str(query["time"]).replace("Z", "+00:00"))
                before = (when if when.tzinfo is not None else when.astimezone()).timestamp()
            items = await recall.recall(companion, query["text"], before=before, limit=limit)
        except ValueError as exc:  # json.JSONDecodeError and bad times included
            failed += 1
            out.write(json.dumps({"id": ident, "error": f"line {number}: {exc}"}, ensure_ascii=False) + "\n")
            continue
        recalled = [{"message_id": i.message_id, "text": i.text, "time": i.time_iso, "score": round(i.score, 6),
                     **({"sources": list(i.sources)} if i.kind == "note" else {})} for i in items]
        out.write(json.dumps({"id": ident, "recalled": recalled, "elapsed_ms": round(recall.last_ms, 3)},
                             ensure_ascii=False) + "\n")
        out.flush()
    return 1 if failed else 0


async def _import(parts: MemoryParts, file: Path, companion: str | None, out: TextIO, err: TextIO) -> int:
    report = ImportReport()
    importer = ConversationImporter(parts.store, parts.memory, parts.engine,
                                    user_id=parts.loaded.settings.general.user_name, names=parts.names())
    with file.open(encoding="utf-8", errors="replace") as opened:
        lines = bounded_lines(opened)
        if companion is not None:
            found = read_sillytavern(lines, companion, report, title=f"SillyTavern: {file.stem}")
            if found is not None:
                await importer.add(found, report)
        else:
            for conversation in read_jsonl(lines, report):  # one at a time: a big file is never held whole
                await importer.add(conversation, report)
    for problem in report.problems:
        print(f"madoi conversations import: {file}: {problem}", file=err)
    print(f"imported {len(report.imported)} conversations ({report.lines} messages); {report.skipped} imported "
          f"before; {len(report.problems)} problems", file=out)
    return 1 if report.problems else 0


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "conversations" and args.conversations_command == "import" and not args.file.is_file():
        print(f"madoi conversations import: no such file: {args.file}", file=err)
        return 2
    async with memory_parts() as parts:
        if args.command == "memory":
            return await _recall(parts, args.companion, args.limit, sys.stdin, out)
        if args.conversations_command == "import":
            return await _import(parts, args.file, args.companion, out, err)
        lines = await export_lines(parts.store, parts.loaded.settings.general.user_name)
        text = "".join(line + "\n" for line in lines)
        if str(args.file) == "-":
            out.write(text)
        else:
            write_atomically(args.file, text)  # 0600: the user's conversations, wherever they are written
            print(f"exported {len(lines)} conversations to {args.file}", file=out)
        return 0


def run_memory_command(args: argparse.Namespace) -> int:
    """Runs a parsed ``madoi memory ...`` or ``madoi conversations ...``; the exit code (0 ok, 1 some inputs
    failed, 2 usage)."""
    try:
        return asyncio.run(_run(args, sys.stdout, sys.stderr))
    except OSError as exc:
        print(f"madoi {args.command}: {exc}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m app.memory.cli memory ...`` (the same commands as ``madoi memory ...``)."""
    parser = argparse.ArgumentParser(prog="madoi")
    add_memory_parsers(parser.add_subparsers(dest="command", required=True))
    return run_memory_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
