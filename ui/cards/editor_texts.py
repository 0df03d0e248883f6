"""The companion editor's words (one table for all its parts, ``companion_editor`` in the catalogue), its buttons, and
how a form's text goes into a card's texts, which keep each language's."""

from __future__ import annotations

from typing import Final

from PySide6.QtWidgets import QPushButton

from companions.cards.card import Localized, localized
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

TEXTS: Final = Texts("companion_editor", {
    "title": QT_TRANSLATE_NOOP("companion_editor", "Companions"),
    "add": QT_TRANSLATE_NOOP("companion_editor", "Add"),
    "duplicate": QT_TRANSLATE_NOOP("companion_editor", "Duplicate"),
    "remove": QT_TRANSLATE_NOOP("companion_editor", "Remove"),
    "restore": QT_TRANSLATE_NOOP("companion_editor", "Restore sample"),
    "import": QT_TRANSLATE_NOOP("companion_editor", "Import…"),
    "export": QT_TRANSLATE_NOOP("companion_editor", "Export…"),
    "save": QT_TRANSLATE_NOOP("companion_editor", "Save"),
    "close": QT_TRANSLATE_NOOP("companion_editor", "Close"),
    "name": QT_TRANSLATE_NOOP("companion_editor", "Name"),
    "id": QT_TRANSLATE_NOOP("companion_editor", "Id"),
    "texts": QT_TRANSLATE_NOOP("companion_editor", "Words in"),
    "lang.ja": QT_TRANSLATE_NOOP("companion_editor", "Japanese"),
    "lang.en": QT_TRANSLATE_NOOP("companion_editor", "English"),
    "personality": QT_TRANSLATE_NOOP("companion_editor", "Personality"),
    "story": QT_TRANSLATE_NOOP("companion_editor", "Story"),
    "samples": QT_TRANSLATE_NOOP("companion_editor", "How it talks (sample lines, one per line)"),
    "greeting": QT_TRANSLATE_NOOP("companion_editor", "First greeting"),
    # one line under the field (a wrapped label breaks the form's heights); the whole rule in the tooltip
    "greeting.hint": QT_TRANSLATE_NOOP("companion_editor", "Said aloud to open a new conversation; no model is asked."),
    "greeting.hint.tip": QT_TRANSLATE_NOOP(
        "companion_editor", "Said aloud, with no model asked, when you start a new conversation with this companion "
        "(the one chosen in To, or the only one here). Empty: it waits for you to speak first."),
    "colour": QT_TRANSLATE_NOOP("companion_editor", "Colour"),
    "picture": QT_TRANSLATE_NOOP("companion_editor", "Picture"),
    "choose": QT_TRANSLATE_NOOP("companion_editor", "Choose…"),
    "model": QT_TRANSLATE_NOOP("companion_editor", "Model"),
    "model.hint": QT_TRANSLATE_NOOP("companion_editor", "Empty: as the card says, else the default model"),
    "voice": QT_TRANSLATE_NOOP("companion_editor", "Voice"),
    "voice.card": QT_TRANSLATE_NOOP("companion_editor", "As the card says"),
    "knowledge": QT_TRANSLATE_NOOP("companion_editor", "Knowledge"),
    "may_search": QT_TRANSLATE_NOOP("companion_editor", "May search your knowledge folders"),
    "may_search.tip": QT_TRANSLATE_NOOP(
        "companion_editor", "It searches them and recalls what they say; the folders are chosen in Settings > Search."),
    "events": QT_TRANSLATE_NOOP("companion_editor", "Events (for those who want them)"),
    "event.add": QT_TRANSLATE_NOOP("companion_editor", "Add a condition"),
    "event.expression": QT_TRANSLATE_NOOP("companion_editor", "When (CEL), e.g. need_response == true"),
    "event.instruction": QT_TRANSLATE_NOOP("companion_editor", "Then (an instruction)"),
    "event.ok": QT_TRANSLATE_NOOP("companion_editor", "valid CEL"),
    "event.bad": QT_TRANSLATE_NOOP("companion_editor", "not valid CEL: {error}"),
    "trust.title": QT_TRANSLATE_NOOP("companion_editor", "What this card runs, sends and uses"),
    "trust.held": QT_TRANSLATE_NOOP("companion_editor", "Held until you approve it: it"),
    "trust.approved": QT_TRANSLATE_NOOP("companion_editor", "Approved by you: it"),
    "trust.sample": QT_TRANSLATE_NOOP("companion_editor", "A sample shipped with Madoi: it"),
    "approve": QT_TRANSLATE_NOOP("companion_editor", "Approve"),
    "revoke": QT_TRANSLATE_NOOP("companion_editor", "Revoke"),
    "unused": QT_TRANSLATE_NOOP("companion_editor", "Kept from the imported card, not used by Madoi: {fields}"),
    "lore": QT_TRANSLATE_NOOP("companion_editor", "Lorebook: {n} entries ({keys} …)"),
    "err.name": QT_TRANSLATE_NOOP("companion_editor", "A companion needs a name."),
    "err.id": QT_TRANSLATE_NOOP("companion_editor", "Use letters, digits, '-', '_' or '.' (at most 64)."),
    "err.taken": QT_TRANSLATE_NOOP("companion_editor", "Another companion has this id."),
    "saved": QT_TRANSLATE_NOOP("companion_editor", "Saved: {name} talks like this from its next turn."),
    "removed": QT_TRANSLATE_NOOP("companion_editor", "{name} left the conversation; its card was removed."),
    "restored": QT_TRANSLATE_NOOP("companion_editor", "{name} is back as shipped."),
    "imported": QT_TRANSLATE_NOOP("companion_editor", "{name} joined from a {format} card."),
    "not_imported": QT_TRANSLATE_NOOP("companion_editor", "{file} was not imported: {reason}"),
    "exported": QT_TRANSLATE_NOOP("companion_editor", "Written to {file}."),
    "failed": QT_TRANSLATE_NOOP("companion_editor", "Not saved: {error}"),
    "drop": QT_TRANSLATE_NOOP("companion_editor", "Drop a character card (PNG or JSON) here to import it."),
    "new_name": QT_TRANSLATE_NOOP("companion_editor", "New companion"),
    "copy_of": QT_TRANSLATE_NOOP("companion_editor", "{name} (copy)"),
})


def with_text(old: Localized, language: str, text: str) -> Localized:
    """``old`` with its ``language`` text replaced (a plain string stands for every other language)."""
    current = localized(old, language) if old else ""
    if text == current:
        return old
    others = {k: v for k, v in old.items() if k != language} if isinstance(old, dict) else (
        {("en" if language == "ja" else "ja"): old} if old else {})
    merged = {**others, language: text} if text else others
    return merged or ""


def editor_button(key: str, language: str) -> QPushButton:
    """A button of the editor, named ``<key>CompanionButton``, its words the table's ``key``."""
    return named(QPushButton(TEXTS.text(key, language)), f"{key}CompanionButton")
