"""The words of the companion roster and the turn-taking view, in English and Japanese (the language setting picks)."""

from __future__ import annotations

from typing import Final

from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts

TEXTS: Final = Texts("turns", {
    # roster
    "roster.title": QT_TRANSLATE_NOOP("turns", "Companions"),
    "state.listening": QT_TRANSLATE_NOOP("turns", "listening"),
    "state.thinking": QT_TRANSLATE_NOOP("turns", "thinking…"),
    "state.speaking": QT_TRANSLATE_NOOP("turns", "speaking"),
    "state.muted": QT_TRANSLATE_NOOP("turns", "muted"),
    "state.absent": QT_TRANSLATE_NOOP("turns", "not here"),
    "mute": QT_TRANSLATE_NOOP("turns", "Mute"),
    "unmute": QT_TRANSLATE_NOOP("turns", "Unmute"),
    "speak_next": QT_TRANSLATE_NOOP("turns", "Speak next"),
    "leave": QT_TRANSLATE_NOOP("turns", "Leave the conversation"),
    "gesture.wave": QT_TRANSLATE_NOOP("turns", "waving"),
    "gesture.nod": QT_TRANSLATE_NOOP("turns", "nodding"),
    "gesture.shake_head": QT_TRANSLATE_NOOP("turns", "shaking the head"),
    "gesture.bow": QT_TRANSLATE_NOOP("turns", "bowing"),
    "gesture.jump": QT_TRANSLATE_NOOP("turns", "jumping"),
    "gesture.think": QT_TRANSLATE_NOOP("turns", "thinking it over"),
    "join": QT_TRANSLATE_NOOP("turns", "Join the conversation"),
    "mute.tooltip": QT_TRANSLATE_NOOP("turns", "Mute the chosen companion: it neither votes nor speaks until unmuted"),
    "speak_next.tooltip": QT_TRANSLATE_NOOP(
        "turns", "The chosen companion takes the next turn (a finished conversation resumes)"),
    # turn-taking view
    "turns.title": QT_TRANSLATE_NOOP("turns", "Turn-taking"),
    "you": QT_TRANSLATE_NOOP("turns", "you"),
    "status.idle": QT_TRANSLATE_NOOP("turns", "No conversation yet: write to the companions."),
    "status.running": QT_TRANSLATE_NOOP("turns", "Conversation running"),
    "status.ended": QT_TRANSLATE_NOOP("turns", "Conversation ended"),
    "status.resumable": Numerus.translate("turns", "This conversation has %n messages: write to continue it.", None,
                                          0),
    "turn": QT_TRANSLATE_NOOP("turns", "Turn {n} · after {who} · {phase}"),
    "turn.none": QT_TRANSLATE_NOOP("turns", "No turn yet"),
    "phase.voting": QT_TRANSLATE_NOOP("turns", "voting"),
    "phase.composing": QT_TRANSLATE_NOOP("turns", "composing"),
    "phase.waiting": QT_TRANSLATE_NOOP("turns", "waiting to speak"),
    "phase.speaking": ("turns.phase", QT_TRANSLATE_NOOP("turns.phase", "speaking")),
    "phase.done": QT_TRANSLATE_NOOP("turns", "done"),
    "phase.cancelled": QT_TRANSLATE_NOOP("turns", "cancelled"),
    "phase.ended": QT_TRANSLATE_NOOP("turns", "last turn"),
    "column.companion": QT_TRANSLATE_NOOP("turns", "Companion"),
    "column.vote": QT_TRANSLATE_NOOP("turns", "Vote"),
    "column.selected": QT_TRANSLATE_NOOP("turns", "Named"),
    "column.closing": QT_TRANSLATE_NOOP("turns", "Closing"),
    "vote.pending": QT_TRANSLATE_NOOP("turns", "voting…"),
    "vote.stopped": QT_TRANSLATE_NOOP("turns", "stopped before voting"),
    "vote.speak": QT_TRANSLATE_NOOP("turns", "speak"),
    "vote.listen": QT_TRANSLATE_NOOP("turns", "listen"),
    "vote.missing": QT_TRANSLATE_NOOP("turns", "no vote: listens"),
    "vote.invalid": QT_TRANSLATE_NOOP("turns", "unreadable vote: listens"),
    "vote.muted": QT_TRANSLATE_NOOP("turns", "muted"),
    "vote.not_asked": QT_TRANSLATE_NOOP("turns", "not asked"),
    "selected.yes": QT_TRANSLATE_NOOP("turns", "✓ named"),
    "closing.none": QT_TRANSLATE_NOOP("turns", "going on"),
    "closing.pre-closing": QT_TRANSLATE_NOOP("turns", "winding down"),
    "closing.closing": QT_TRANSLATE_NOOP("turns", "wrapping up"),
    "closing.terminal": QT_TRANSLATE_NOOP("turns", "goodbye"),
    "closing.label": QT_TRANSLATE_NOOP("turns", "Closing:"),
    "floor.speaker": QT_TRANSLATE_NOOP("turns", "Speaker: {who}"),
    "floor.nobody": QT_TRANSLATE_NOOP("turns", "Nobody takes the floor"),
    "floor.pending": QT_TRANSLATE_NOOP("turns", "Speaker: not chosen yet"),
    "floor.now": QT_TRANSLATE_NOOP("turns", "Speaking now: {who}"),
    "floor.silent": QT_TRANSLATE_NOOP("turns", "Nobody is speaking"),
    "floor.next": QT_TRANSLATE_NOOP("turns", "Next: {who} (asked by you)"),
    "rule.forced": QT_TRANSLATE_NOOP("turns", "{who} was asked to speak next"),
    "rule.named": QT_TRANSLATE_NOOP("turns", "{who} was named"),
    "rule.wants": QT_TRANSLATE_NOOP("turns", "{who} wants to speak most (importance {importance})"),
    "rule.spread": QT_TRANSLATE_NOOP("turns", "{who} speaks: the most eager one just spoke"),
    "rule.first": QT_TRANSLATE_NOOP(
        "turns", "{who} answers first (the model server takes one request at a time: the others vote on the next "
                 "line)"),
    "rule.answers-user": QT_TRANSLATE_NOOP("turns", "{who} answers you (nobody asked for the floor)"),
    "rule.settled": QT_TRANSLATE_NOOP("turns", "{who} spoke first, chosen on another machine"),
    "rule.nobody": QT_TRANSLATE_NOOP("turns", "nobody wants to speak"),
    "rule.named.passed": QT_TRANSLATE_NOOP("turns", "{named} was named but could not answer, so {who} answers"),
    "rule.passed": QT_TRANSLATE_NOOP("turns", "{passed} could not answer, so {who} answers"),
    # why a vote is missing (the reason under its row; conversation control says it in English)
    "problem.late": QT_TRANSLATE_NOOP("turns", "no vote within {n} s"),
    "problem.settled": QT_TRANSLATE_NOOP("turns", "not needed: {who} took the turn"),
    "problem.settled_elsewhere": QT_TRANSLATE_NOOP("turns", "not needed: the turn was decided"),
    "problem.cancelled": QT_TRANSLATE_NOOP("turns", "the vote was called off"),
    "problem.unreadable": QT_TRANSLATE_NOOP("turns", "the answer was not a vote"),
    "reason.no-usable-vote": QT_TRANSLATE_NOOP("turns", "no vote came from the language model"),
    "ended": QT_TRANSLATE_NOOP("turns", "Ended: {reason}"),
    "end.closed": QT_TRANSLATE_NOOP("turns", "{who} said goodbye"),
    "end.no-speaker": QT_TRANSLATE_NOOP("turns", "nobody wanted to speak"),
    "end.turn-cap": Numerus.translate("turns", "the limit of %n turns was reached", None, 0),
    "end.stopped": QT_TRANSLATE_NOOP("turns", "stopped by you"),
    "end.interrupted": QT_TRANSLATE_NOOP("turns", "you cut in; the companions are waiting for you"),
    "end.no-addressee": QT_TRANSLATE_NOOP("turns", "the message was addressed to no companion"),
    "end.model-failed": QT_TRANSLATE_NOOP("turns", "the language model did not answer (the chat says why)"),
    "end.failed": QT_TRANSLATE_NOOP("turns", "something went wrong ({detail})"),
    "end.failed.no-candidate": QT_TRANSLATE_NOOP(
        "turns", "those who wanted to speak could not say anything (the language model gave no answer)"),
    "end.failed.internal": QT_TRANSLATE_NOOP("turns", "something went wrong inside Madoi (the log file says what)"),
    "history.title": QT_TRANSLATE_NOOP("turns", "Earlier turns"),
    "history.spoke": QT_TRANSLATE_NOOP("turns", "{n}. {who} — {why}"),
    "history.silent": QT_TRANSLATE_NOOP("turns", "{n}. nobody spoke — {why}"),
    "stop": QT_TRANSLATE_NOOP("turns", "Stop"),
    "stop.tooltip": QT_TRANSLATE_NOOP("turns", "End the conversation now"),
    "interrupt": QT_TRANSLATE_NOOP("turns", "Interrupt"),
    "interrupt.tooltip": QT_TRANSLATE_NOOP(
        "turns", "Cut in: the speech and the thinking in progress stop, and the companions wait for you"),
})


def turns_text(key: str, language: str | None = None, /, **values: object) -> str:
    """The text for ``key`` in ``language`` ("ja" or "en"), with ``values`` filled in."""
    return TEXTS.text(key, language, **values)
