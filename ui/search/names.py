"""What a person reads instead of the search index's internal names: a stored conversation's source
(``conversation:3``) becomes "Conversation 3", and the speakers' ids at the start of a line of a conversation
(``akari: ...``, ``user: ...``) become their names ("Akari: ...", "You: ...")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from ui.window.i18n import QT_TRANSLATE_NOOP, translate, window_language

if TYPE_CHECKING:
    from ui.roster.display_names import DisplayNames


_CONVERSATION: Final = QT_TRANSLATE_NOOP("search.names", "Conversation {id}")


class SourceNames:
    """``speakers``: the name shown for each id that may begin a line (the companions' and the user's)."""

    def __init__(self, speakers: Mapping[str, str], language: str) -> None:
        self.language = "ja" if language == "ja" else "en"
        self.speakers = dict(speakers)
        ids = sorted(self.speakers, key=len, reverse=True)
        # An id and a colon at the start of the text or after a space or line break: how a conversation is indexed
        # (app/conversations/indexing.py, one line per message; snippets fold line breaks into spaces). An id
        # elsewhere is a word like any other.
        self._line_start = re.compile(r"(^|\s)(" + "|".join(map(re.escape, ids)) + r"):") if ids else None

    def source(self, source: str) -> str | None:
        """A conversation's name for ``source``, or None when it is not a conversation."""
        if source.startswith("conversation:"):
            number = source.removeprefix("conversation:")
            return translate("search.names", _CONVERSATION, self.language).format(id=number)
        return None

    def text(self, text: str) -> str:
        if self._line_start is None:
            return text
        return self._line_start.sub(lambda m: f"{m.group(1)}{self.speakers[m.group(2)]}:", text)


def source_names(names: DisplayNames) -> SourceNames:
    """The names of the companions and the user, as the window shows them now."""
    people = names.people
    speakers = {who: names.of(who) for who in (*people.companion_ids(), people.user_id())}
    return SourceNames(speakers, window_language())
