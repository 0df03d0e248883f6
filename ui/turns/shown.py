"""What the Turns panel says of the conversation's state beyond the core's view.

The core's view is the active conversation's own (the manager starts it afresh on a switch: idle, no turn, the next
turn numbered 1), so the panel shows it as given. Here:

- an idle conversation with stored messages says it can be continued, with their count;
- a turn that was stopped or cut off is no longer "voting" for the companions that had not voted yet
  (:func:`open_turn`; ``ui/turns/wording.py`` words their cell).
"""

from __future__ import annotations

from companions.conversation.readmodel import ConversationView, TurnView
from ui.turns.texts import turns_text


def open_turn(view: ConversationView, turn: TurnView | None) -> bool:
    """Whether ``turn`` may still collect votes (a stopped, cancelled or ended one does not)."""
    return turn is not None and view.status == "running" and turn.phase in ("voting", "composing", "waiting")


class ShownConversation:
    def __init__(self) -> None:
        self.stored_messages = 0  # of the active conversation, once its history was loaded

    def status_text(self, view: ConversationView, language: str | None = None) -> str:
        if view.status == "idle" and self.stored_messages:
            return turns_text("status.resumable", language, n=self.stored_messages)
        return turns_text(f"status.{view.status}", language)
