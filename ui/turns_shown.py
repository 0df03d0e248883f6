"""What the Turns panel shows of the core's conversation view: the active conversation's own state only.

The core keeps one :class:`ConversationView` for the app's life, so on its own the panel went on showing the
conversation the user had left (ended, its last turn and votes) and numbered the next conversation's turns after
the previous one's; and after a restart it said "no conversation yet" beside a stored conversation. Here:

- after a switch (a new or another stored conversation), the turns of the conversation left are not shown: the view
  is idle until the next turn, numbered from 1;
- an idle conversation with stored messages says it can be continued, with their count;
- a turn that was stopped or cut off is no longer "voting" for the companions that had not voted yet
  (:func:`open_turn`; ``ui/turns_wording.py`` words their cell).
"""

from __future__ import annotations

import dataclasses

from companions.conversation.readmodel import ConversationView, TurnView
from ui.turns_texts import turns_text


def open_turn(view: ConversationView, turn: TurnView | None) -> bool:
    """Whether ``turn`` may still collect votes (a stopped, cancelled or ended one does not)."""
    return turn is not None and view.status == "running" and turn.phase in ("voting", "composing", "waiting")


class ShownConversation:
    def __init__(self) -> None:
        self._base = 0  # the last turn number of the conversations left: the active one counts from there
        self._latest = 0  # the highest turn number seen
        self.stored_messages = 0  # of the active conversation, once its history was loaded

    def shown(self, view: ConversationView) -> ConversationView:
        """``view`` as the panel shows it (see the module's description)."""
        turn = view.turn
        if turn is None:
            return view
        self._latest = max(self._latest, turn.number)
        if turn.number > self._base:
            return view if self._base == 0 else dataclasses.replace(
                view, turn=dataclasses.replace(turn, number=turn.number - self._base))
        return dataclasses.replace(view, turn=None, status="idle" if view.status == "ended" else view.status,
                                   closing="none", ended_reason=None, ended_detail="", turns_taken=0,
                                   repetition=0.0)

    def switched(self) -> None:
        """The user opened another (or a new) conversation: what came before it is not shown any more."""
        self._base = self._latest
        self.stored_messages = 0

    def status_text(self, view: ConversationView, language: str) -> str:
        if view.status == "idle" and self.stored_messages:
            return turns_text("status.resumable", language, n=self.stored_messages)
        return turns_text(f"status.{view.status}", language)
