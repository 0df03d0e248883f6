"""The architecture guide stays a guide to the code as it is: short, without history, citing only paths that exist.

docs/ARCHITECTURE.md is read by whoever joins the project first; the figures live in docs/measurements.md and the
history in git. Both documents are checked for the paths they cite (``app/...``, ``companions/...``, ``ui/...``,
``bench/...``, ``tests/...`` and the other top-level folders), so a module moved or removed fails here until the
document follows it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
DOCS = (ARCHITECTURE, ROOT / "docs" / "measurements.md")
MAX_LINES = 600
ISSUE_NUMBER = re.compile(r"\bissues?\s*(?:no\.?\s*)?#?\s*\d+", re.IGNORECASE)
# A path inside the repository: one of its top-level folders, then path characters; not preceded by a path character
# (so ``<config dir>/companions/`` or ``../shared/seeds/`` are not read as repository paths).
CITED_PATH = re.compile(
    r"(?<![\w./<>-])((?:app|companions|ui|bench|tests|docs|resources|scripts|packaging)/[\w./-]*)")


def cited_paths(text: str) -> set[str]:
    """The repository paths ``text`` cites, without trailing punctuation."""
    return {match.rstrip(".,-") for match in CITED_PATH.findall(text)}


def test_architecture_is_at_most_600_lines() -> None:
    lines = ARCHITECTURE.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"docs/ARCHITECTURE.md has {len(lines)} lines (at most {MAX_LINES})"


def test_architecture_names_no_issue_numbers() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in ISSUE_NUMBER.finditer(text)]
    assert not found, f"docs/ARCHITECTURE.md describes the code as it is, not its history: {found}"


CODE_FOLDERS = ("app", "companions", "ui", "bench", "scripts", "tests", "packaging")


def test_the_code_names_no_issue_numbers() -> None:
    """Code says what it does and why, not which issue asked for it (the history is in git)."""
    found = []
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue  # this file spells the pattern's examples
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                      for m in ISSUE_NUMBER.finditer(text)]
    assert not found, found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_cited_paths_exist(doc: Path) -> None:
    paths = cited_paths(doc.read_text(encoding="utf-8"))
    assert paths, f"{doc.name} cites no paths: the pattern no longer matches how it cites them"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"{doc.name} cites paths that do not exist: {missing}"


def test_the_checks_catch_what_they_are_for() -> None:
    assert ISSUE_NUMBER.search("as issue 22 said")
    assert ISSUE_NUMBER.search("Issue #7")
    assert not ISSUE_NUMBER.search("a known issue with 2 servers")
    assert not ISSUE_NUMBER.search("opencv/opencv#20391")
    assert cited_paths("see `app/devices/camera.py`, and companions/wire/.") == {
        "app/devices/camera.py", "companions/wire/"}
    assert cited_paths("<config dir>/companions/ and ../shared/seeds/ and app.main") == set()
