"""Whose name the window shows, and how: one place for every panel (the chat, the turns, the roster, the network,
the search, the camera's looks, the memory).

In the window's language:

- the user: "You" where a name stands alone (a line's sender, a speaker's label), "you" inside a sentence ("Turn 3,
  opened by you"); あなた in Japanese;
- this app's companions: their card's name in that language;
- a companion from elsewhere (a bridge client's or a peer's guest): the name it joined with;
- a person on another machine: ``<name>@<peer>``, as the network names them (``RemotePerson.shown``);
- anyone else: the id itself.

The names themselves come from the ``People`` port (the app's runtime, or a test's fake); the user and the
fallbacks are decided here.
"""

from __future__ import annotations

from ui.chat.texts import chat_text
from ui.turns.texts import turns_text
from ui.window.i18n import window_language
from ui.window.panel_ports import People


class DisplayNames:
    """The shown name of anyone taking part (see the module doc)."""

    def __init__(self, people: People) -> None:
        self.people = people

    def of(self, who: str | None, *, in_sentence: bool = False) -> str:
        """``who``'s name as the window shows it ("" for nobody)."""
        if not who:
            return ""
        if who == self.people.user_id():
            return turns_text("you") if in_sentence else chat_text("you")
        return self.people.name(who, window_language()) or who
