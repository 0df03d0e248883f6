"""``madoi companions``: the companion cards from the command line.

    madoi companions list [--json]        every companion: id, name, card file, avatar, trusted or held (and what
                                          a held card would run or send)
    madoi companions approve ID           approve what a user's card runs and sends (its MCP commands, its model
                                          endpoint and key variable), as the card is now; a changed card asks again
    madoi companions revoke ID            forget that approval: the card is held again from the next start
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from app.card_library import CardLibrary
from app.settings import load_settings


def add_companions_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Adds ``companions`` (with ``list``, ``approve``, ``revoke``) to an ``add_subparsers()`` object."""
    companions = subparsers.add_parser("companions", help="list, approve, import and export companion cards")
    commands = companions.add_subparsers(dest="companions_command", required=True)
    listing = commands.add_parser("list", help="list the companions and their cards")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    approve = commands.add_parser("approve", help="approve what a card runs and sends (as it is now)")
    approve.add_argument("id", help="the companion's id")
    revoke = commands.add_parser("revoke", help="forget the approval of a card")
    revoke.add_argument("id", help="the companion's id")
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
        print(f"{card_id}: nothing to approve (the card runs no program and sends no key of its own)", file=out)
        return 0
    library.approve(card_id)
    print(f"{card_id} ({entry.file}) approved; from its next start it may:", file=out)
    for line in lines:
        print(f"  {line}", file=out)
    print("A running Madoi takes it at once when approved in its window (Settings > Companions); a change to "
          "the card asks again.", file=out)
    return 0


def run_companions_command(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs a parsed ``madoi companions ...`` command; returns the exit code (0 ok, 1 failed)."""
    library = CardLibrary(load_settings())
    match args.companions_command:
        case "list":
            return _list(library, args.json, out, err)
        case "approve":
            return _approve(library, args.id, out, err)
        case "revoke":
            if library.revoke(args.id):
                print(f"{args.id}: approval forgotten; the card is held again from its next start", file=out)
            else:
                print(f"{args.id}: was not approved", file=out)
            return 0
    print(f"madoi companions: unknown command {args.companions_command!r}", file=err)
    return 2
