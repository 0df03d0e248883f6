"""The interface's translations (Qt Linguist files): keep the .ts in step with the code, compile the .qm.

    python scripts/i18n.py update   # after changing a text: new texts appear in resources/i18n/madoi_ja.ts,
                                    # to translate there (Qt Linguist: pyside6-linguist, or any editor)
    python scripts/i18n.py build    # compiles madoi_<lang>.qm beside it (the installer and the bundle run this)
    python scripts/i18n.py check    # fails when a text in the code has no finished translation

Texts are marked in the code with ``QT_TRANSLATE_NOOP(context, "English")`` (ui/window/i18n.py ``Texts``), texts with a
count with ``Numerus.translate(context, "%n messages", None, 0)``. ``madoi_en.ts`` holds the English plural forms
of those only ("%n message" / "%n messages"; ``lupdate -pluralonly``), as Qt recommends for a source language with
plurals.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "resources" / "i18n"
LANGUAGES = ("ja", "en")
PLURALS_ONLY = frozenset({"en"})  # the texts' own language: only the plural forms of texts with a count
SOURCES = ("ui", "app")


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)  # the virtualenv's own, even when it is not on the PATH
    return str(beside) if beside.exists() else name


def _sources() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for d in SOURCES for p in (ROOT / d).rglob("*.py"))


def ts_path(language: str) -> Path:
    return I18N / f"madoi_{language}.ts"


def lupdate(target: Path, language: str | None = None) -> None:
    language = language or target.stem.removeprefix("madoi_")
    extra = ["-pluralonly", "-target-language", language] if language in PLURALS_ONLY else []
    subprocess.run([_tool("pyside6-lupdate"), *_sources(), "-locations", "none", "-no-obsolete", *extra,
                    "-ts", str(target)],
                   cwd=ROOT, check=True, capture_output=True, text=True)


def unfinished(ts: Path) -> list[tuple[str, str]]:
    """(context, source) of every message without a finished translation."""
    missing = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            forms = [f.text or "" for f in translation.iter("numerusform")] if translation is not None else []
            text = " ".join(forms) if forms else (translation.text or "") if translation is not None else ""
            if translation is None or translation.get("type") in ("unfinished", "vanished", "obsolete") \
                    or not text.strip() or any(not f.strip() for f in forms):
                missing.append((name, message.findtext("source") or ""))
    return missing


def build() -> None:
    for language in LANGUAGES:
        subprocess.run([_tool("pyside6-lrelease"), str(ts_path(language)), "-qm",
                        str(ts_path(language).with_suffix(".qm"))], check=True, capture_output=True, text=True)


def check() -> list[str]:
    """Problems: texts in the code missing from a .ts or untranslated there."""
    problems = []
    for language in LANGUAGES:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / ts_path(language).name
            fresh.write_bytes(ts_path(language).read_bytes())
            lupdate(fresh, language)  # the committed translations plus whatever the code has that they lack
            problems += [f"{language}: [{c}] {s!r} has no translation (python scripts/i18n.py update, then "
                         f"translate it in {ts_path(language).relative_to(ROOT)})" for c, s in unfinished(fresh)]
            if fresh.read_text(encoding="utf-8") != ts_path(language).read_text(encoding="utf-8"):
                problems.append(f"{language}: {ts_path(language).name} is not in step with the code "
                                "(python scripts/i18n.py update)")
    return problems


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "build"
    if command == "update":
        for language in LANGUAGES:
            lupdate(ts_path(language))
        for c, s in (m for language in LANGUAGES for m in unfinished(ts_path(language))):
            print(f"to translate: [{c}] {s}")
    elif command == "build":
        build()
    elif command == "check":
        problems = check()
        print("\n".join(problems) or "translations: every text is translated")
        return 1 if problems else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
