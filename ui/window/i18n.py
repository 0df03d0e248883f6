"""The interface's languages through Qt's translation machinery.

Texts are written in English in the code, each table marked for Qt's ``lupdate`` with
``QT_TRANSLATE_NOOP(context, text)`` (:class:`Texts`, one per module). Their Japanese lives in
``resources/i18n/madoi_ja.ts``, kept by ``pyside6-lupdate`` (``python scripts/i18n.py update`` after changing a
text), and is compiled to ``madoi_ja.qm`` at install time (``python scripts/i18n.py build``: scripts/bootstrap.sh
and the bundle's build run it; the ``.qm`` is generated, not kept in git).

The window's language is the application's: :func:`use_language` installs the language's translators (Madoi's
texts and Qt's own, such as a message box's standard buttons) and Qt then sends every widget a ``LanguageChange``
event. A widget shows its words with ``Texts.text(key)`` (the window's language, :func:`window_language`) and says
them again in ``changeEvent`` when the language changes (:func:`is_language_change`): no widget is handed the
language. A language that is data (the language a companion's line or a recalled note is in) is passed as such:
``Texts.text(key, language)`` and :func:`translate` take it explicitly; a ``QTranslator`` per language answers them.

Texts with a count use Qt's plural forms ("numerus"): marked with ``Numerus.translate(context, "%n messages", None,
0)`` (the call's shape is what ``lupdate`` reads as a numerus message), they are looked up with the count
(``Texts.text(key, language, n=1)``: "1 message", "2 messages"). English has its plural forms too, as Qt
recommends: ``madoi_en.ts`` holds only the numerus messages (``lupdate -pluralonly``), so the English words in the
code stay the source.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator

from resources import RESOURCES_DIR

log = logging.getLogger(__name__)

SOURCE_LANGUAGE: Final = "en"
I18N_DIR: Final = RESOURCES_DIR / "i18n"
CATALOGUE: Final = "madoi"

_translators: dict[str, QTranslator | None] = {}
_installed: list[QTranslator] = []
_window_language: list[str] = [SOURCE_LANGUAGE]  # the language use_language set last
_applied: list[tuple[str, QCoreApplication]] = []  # the language whose translators the application has


def window_language() -> str:
    """The language the window speaks (the one :func:`use_language` installed; English before any)."""
    return _window_language[0]


def is_language_change(event: QEvent) -> bool:
    """Whether ``event`` (a widget's ``changeEvent``) says the window's language changed."""
    return event.type() == QEvent.Type.LanguageChange


def QT_TRANSLATE_NOOP(context: str, source: str) -> str:
    """Marks ``source`` as a text of ``context`` for ``pyside6-lupdate`` and returns it as it is (Qt's own
    ``QT_TRANSLATE_NOOP``, typed: PySide's returns ``object``)."""
    return source


def qm_path(language: str) -> Path:
    return I18N_DIR / f"{CATALOGUE}_{language}.qm"


def translator(language: str) -> QTranslator | None:
    """The translator of Madoi's texts into ``language`` (for English, its plural forms only); None when the
    compiled catalogue is missing (then English shows, and the log says how to build it)."""
    if language not in _translators:
        loaded: QTranslator | None = QTranslator()
        assert loaded is not None
        if not loaded.load(str(qm_path(language))):
            log.error("interface texts in %r not found (%s): run `python scripts/i18n.py build` "
                      "(scripts/bootstrap.sh does); English is shown", language, qm_path(language))
            loaded = None
        _translators[language] = loaded
    return _translators[language]


def translate(context: str, source: str, language: str, n: int | None = None) -> str:
    """``source`` (an English text marked in ``context``) in ``language``; the English itself when untranslated.
    With ``n``, the plural form for that count, ``%n`` replaced by it."""
    if n is None:
        if language == SOURCE_LANGUAGE:
            return source  # English is the texts' own language (its catalogue holds plural forms only)
        found = translator(language)
        text = found.translate(context, source) if found is not None else ""
        return text or source
    found = translator(language)
    text = found.translate(context, source, None, n) if found is not None else ""
    return (text or source).replace("%n", str(n))


class Counted(str):
    """A text with a count (``%n``), looked up in its plural form (a ``str``: the English source itself)."""


class Numerus:
    """The marker of texts with a count: ``Numerus.translate(context, "%n messages", None, 0)`` reads to
    ``lupdate`` as a numerus message, and is the text (a :class:`Counted`) for a :class:`Texts` table."""

    @staticmethod
    def translate(context: str, source: str, disambiguation: None = None, n: int = 0) -> tuple[str, str]:
        return context, Counted(source)


class Texts:
    """One module's texts: keys to English texts marked with ``QT_TRANSLATE_NOOP(context, ...)``.

    An entry may be ``(context, text)`` for a text whose English is the same as another's in ``context`` but whose
    translation differs (Qt tells messages apart by context and source text).
    """

    def __init__(self, context: str, entries: Mapping[str, str | tuple[str, str]]) -> None:
        self.context = context
        self._entries = {key: (value if isinstance(value, tuple) else (context, value))
                         for key, value in entries.items()}

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._entries)

    def source(self, key: str) -> str:
        return self._entries[key][1]

    def text(self, key: str, language: str | None = None, /, **values: object) -> str:
        """The text for ``key`` in ``language`` (the window's when None), with ``values`` filled in
        (``str.format``); a text with a count (:class:`Numerus`) takes its plural form for ``values["n"]``."""
        context, source = self._entries[key]
        language = window_language() if language is None else language
        if isinstance(source, Counted):
            count = values.pop("n")
            assert isinstance(count, int), f"{key}: the count must be an int"
            template = translate(context, source, language, count)
        else:
            template = translate(context, source, language)
        return template.format(**values) if values else template


def use_language(language: str, app: QCoreApplication | None = None) -> None:
    """Makes ``language`` the window's: installs its translators in the application (Madoi's texts and Qt's own),
    replacing the last language's; Qt then posts every top-level widget a ``LanguageChange`` event (also when no
    catalogue was there to install or remove), which the event loop delivers: each widget passes it to its
    children. Nothing happens when ``language`` is the application's already.

    The events are left to the loop, as Qt does, not delivered here: a switch asked for from inside a handler (a
    constructor, a slot, a coroutine step) then never re-enters every widget of the application at once (doing so
    crashed the screenshots' script twice in five runs, in a window's constructor)."""
    app = app or QCoreApplication.instance()
    if _applied and _applied[0] == (language, app):
        return
    _window_language[0] = language
    if app is None:
        return
    _applied[:] = [(language, app)]
    changed = bool(_installed)
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    if language != SOURCE_LANGUAGE:  # English is the texts' own words (plural forms come through Texts.text)
        qt_own = QTranslator(app)
        if qt_own.load(QLocale(language), "qtbase", "_",
                       QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            app.installTranslator(qt_own)
            _installed.append(qt_own)
        ours = translator(language)
        if ours is not None:
            app.installTranslator(ours)
            _installed.append(ours)
    if not changed and not _installed:  # nothing installed nor removed: Qt sent nothing, tell the widgets
        QCoreApplication.sendEvent(app, QEvent(QEvent.Type.LanguageChange))


def deliver_language_change() -> None:
    """Delivers the ``LanguageChange`` events Qt posted now rather than when the loop next runs (for a caller that
    reads the widgets' words at once: a test, a script taking a picture)."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LanguageChange.value)
