"""``madoi companions``: the companion cards from the command line.

    madoi companions list [--json]        every companion: id, name, card file, avatar, trusted or held (and what
                                          a held card would run or send)
    madoi companions approve ID           approve what a user's card runs, sends and uses (its MCP commands, its
                                          model endpoint and key variable, its tools: vision, search, plugins), as
                                          the card is now; a changed card asks again
    madoi companions revoke ID            forget that approval: the card is held again from the next start
    madoi companions import FILE [--id ID]  import a character card (SillyTavern V2/V3, PNG or JSON) as a companion;
                                          a folder: each card in it, one at a time (a bad one is said and skipped)
    madoi companions export ID FILE       write a companion as a V3 character card (FILE.png, or FILE.json)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from app.cards.library import CardLibrary
from app.settings.model import load_settings
from companions.cards.character_cards import CardImportError, ImportResult


def add_companions_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Adds ``companions`` (with ``list``, ``approve``, ``revoke``) to an ``add_subparsers()`` object."""
    companions = subparsers.add_parser("companions", help="list, approve, import and export companion cards")
    commands = companions.add_subparsers(dest="companions_command", required=True)
    listing = commands.add_parser("list", help="list the companions and their cards")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    approve = commands.add_parser("approve", help="approve what a card runs, sends and uses (as it is now)")
    approve.add_argument("id", help="the companion's id")
    revoke = commands.add_parser("revoke", help="forget the approval of a card")
    revoke.add_argument("id", help="the companion's id")
    importing = commands.add_parser("import", help="import a character card (SillyTavern V2/V3: PNG or JSON)")
    importing.add_argument("file", type=Path, help="the card: a .png picture carrying it, or its .json (or a folder "
                                                   "of them)")
    importing.add_argument("--id", dest="card_id", help="the new companion's id (derived from its name otherwise)")
    exporting = commands.add_parser("export", help="write a companion as a V3 character card")
    exporting.add_argument("id", help="the companion's id")
    exporting.add_argument("file", type=Path, help="where: a .png (the card in its picture) or a .json")
    return companions


def _list(library: CardLibrary, as_json: bool, out: TextIO, err: TextIO) -> int:
    entries, problems = library.entries()
    language = library.loaded.settings.general.language
    if as_json:
        print(json.dumps([e.as_json(language) for e in entries], ensure_ascii=False, indent=1), file=out)
    else:
        for entry in entries:
            state = "trusted" if entry.trusted else "held until approved"
            print(f"{entry.id}\t{entry.card.name(language)}\t{entry.origin}\t{state}\t{entry.file}", file=out)
            if not entry.trusted:
                for line in entry.privileges.lines():
                    print(f"\t{line}", file=out)
    for problem in problems:
        print(f"madoi companions: card not loaded: {problem}", file=err)
    return 0


def _approve(library: CardLibrary, card_id: str, out: TextIO, err: TextIO) -> int:
    entry = library.entry(card_id)
    if entry is None:
        print(f"madoi companions approve: no companion card has the id {card_id!r}", file=err)
        return 1
    lines = entry.privileges.lines()
    if entry.origin == "sample" or not lines:
        print(f"{card_id}: nothing to approve (the card runs no program, sends no key of its own and uses no "
              "tool beyond speaking)", file=out)
        return 0
    library.approve(card_id)
    print(f"{card_id} ({entry.file}) approved; from its next start it may:", file=out)
    for line in lines:
        print(f"  {line}", file=out)
    print("A running Madoi takes it at once when approved in its window (Settings > Companions); a change to "
          "the card asks again.", file=out)
    return 0


def _imported(result: ImportResult, language: str, out: TextIO) -> None:
    print(f"{result.card.id}: {result.card.name(language)} imported from a {result.format} card into {result.file}",
          file=out)
    if result.avatar is not None:
        print(f"  picture: {result.avatar}", file=out)
    if result.card.lore:
        print(f"  lorebook: {len(result.card.lore)} entries", file=out)
    if result.unused:
        print(f"  kept but not used by Madoi: {', '.join(result.unused)}", file=out)


def _import(library: CardLibrary, file: Path, card_id: str | None, out: TextIO, err: TextIO) -> int:
    if file.is_dir():
        return _import_folder(library, file, card_id, out, err)
    language = library.loaded.settings.general.language
    try:
        result = library.import_file(file, card_id)
    except CardImportError as problem:
        print(f"madoi companions import: {file.name} not imported: {problem}", file=err)
        return 1
    _imported(result, language, out)
    return 0


def _import_folder(library: CardLibrary, folder: Path, card_id: str | None, out: TextIO, err: TextIO) -> int:
    if card_id is not None:
        print("madoi companions import: --id names one card: give a file, not a folder", file=err)
        return 2
    language = library.loaded.settings.general.language
    imported = failed = 0
    for source, outcome in library.import_folder(folder):  # one card at a time: none is kept
        if isinstance(outcome, CardImportError):
            failed += 1
            print(f"madoi companions import: {source.name} not imported: {outcome}", file=err)
        else:
            imported += 1
            _imported(outcome, language, out)
    print(f"imported {imported} of {imported + failed} character cards from {folder}", file=out)
    return 1 if failed else 0


def _export(library: CardLibrary, card_id: str, file: Path, out: TextIO, err: TextIO) -> int:
    try:
        library.export_file(card_id, file)
    except KeyError:
        unloaded = [p for p in library.entries()[1] if p.file.stem == card_id]  # a card of that name that did not load
        why = f" ({unloaded[0]})" if unloaded else ""
        print(f"madoi companions export: no companion card has the id {card_id!r}{why}", file=err)
        return 1
    except OSError as problem:
        print(f"madoi companions export: {file} cannot be written ({problem.strerror or problem})", file=err)
        return 1
    print(f"{card_id}: written to {file} (a V3 character card)", file=out)
    return 0


def run_companions_command(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs a parsed ``madoi companions ...`` command; returns the exit code (0 ok, 1 failed)."""
    loaded = load_settings()
    loaded.paths.ensure()  # the folders private, and files an older Madoi left readable by others tightened
    library = CardLibrary(loaded)
    match args.companions_command:
        case "list":
            return _list(library, args.json, out, err)
        case "approve":
            return _approve(library, args.id, out, err)
        case "import":
            return _import(library, args.file, args.card_id, out, err)
        case "export":
            return _export(library, args.id, args.file, out, err)
        case "revoke":
            if library.revoke(args.id):
                print(f"{args.id}: approval forgotten; the card is held again from its next start", file=out)
            else:
                print(f"{args.id}: was not approved", file=out)
            return 0
    print(f"madoi companions: unknown command {args.companions_command!r}", file=err)
    return 2
