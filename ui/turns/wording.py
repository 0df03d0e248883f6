"""The read model in words: how the turn-taking view says who takes the floor and why, each vote, and how a
conversation ended, in the user's language (ui/turns/texts.py holds the words)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, assert_never

from companions.companion.companion import NO_USABLE_VOTE
from companions.conversation.readmodel import ConversationView, TurnView, VoteView
from companions.conversation.speaking_first import Occasion
from ui.turns.texts import turns_text

if TYPE_CHECKING:
    pass

# Why a vote is missing, as conversation control says it (companions/conversation/vote_round.py), and its text here.
_PROBLEMS: Final = (
    (re.compile(r"no vote within (?P<seconds>[\d.]+) s"), "problem.late"),
    (re.compile(r"not needed: the turn went to (?P<who>\S+)"), "problem.settled"),
    (re.compile(r"not needed: .*"), "problem.settled_elsewhere"),
    (re.compile(r"the vote was cancelled"), "problem.cancelled"),
    (re.compile(r"not a Vote: .*"), "problem.unreadable"),
)
_DECIMALS: Final = re.compile(r"\d+\.\d+")
# Why a conversation failed, as conversation control says it (companions/conversation/manager.py), and its text here:
# a detail said in English inside a Japanese sentence read as a leftover of the translation.
_FAILURES: Final = (
    (re.compile(r"no candidate could say anything"), "end.failed.no-candidate"),
    (re.compile(r"internal error: .*", re.DOTALL), "end.failed.internal"),
)


class TurnsWording:
    """Sentences in the window's language; ``name`` turns an id (a companion's or the user's) into the name shown
    inside a sentence (``DisplayNames.of(who, in_sentence=True)``)."""

    def __init__(self, name: Callable[[str | None], str]) -> None:
        self.name = name

    def text(self, key: str, **values: object) -> str:
        return turns_text(key, **values)

    def why(self, turn: TurnView) -> str:
        """Why the turn's speaker takes the floor (the selection rule), or "" when there is no speaker. When those
        ranked first could not answer, the rule named them, not the speaker: "Hina was named but could not answer,
        so Akari answers" (it said "Akari was named")."""
        rule = turn.selection_rule
        if turn.speaker is None or rule is None or rule == "nobody":
            return ""
        if turn.passed_over:
            if rule == "named":
                return self.text("rule.named.passed", named=self.name(turn.passed_over[0]),
                                 who=self.name(turn.speaker))
            return self.text("rule.passed", passed=", ".join(self.name(p) for p in turn.passed_over),
                             who=self.name(turn.speaker))
        vote = turn.vote_of(turn.speaker)
        importance = vote.importance if vote is not None and vote.importance is not None else 0
        return self.text(f"rule.{rule}", who=self.name(turn.speaker), importance=importance)

    def floor(self, turn: TurnView | None) -> str:
        """Who takes the floor this turn, and why."""
        if turn is None:
            return ""
        if turn.speaker is None:
            if turn.selection_rule == "nobody":
                return f"{self.text('floor.nobody')} — {self.text('rule.nobody')}"
            return self.text("floor.pending")
        speaker = self.text("floor.speaker", who=self.name(turn.speaker))
        why = self.why(turn)
        return f"{speaker} — {why}" if why else speaker

    def vote_cells(self, vote: VoteView | None, *, muted: bool, voting: bool = True) -> tuple[list[str], int | None]:
        """The vote, importance, named, closing and reason cells of a row, and the importance to draw (if any);
        ``voting``: whether the turn still collects votes (a pending one of a stopped turn never comes)."""
        if vote is None:
            return [self.text("vote.muted" if muted else "vote.not_asked"), "", "", "", ""], None
        if vote.status == "pending" and not voting:
            return [self.text("vote.stopped"), "", "", "", ""], None
        answered = vote.status == "voted"
        importance = vote.importance if answered else None
        return [
            self.text(f"vote.{vote.state}" if answered else f"vote.{vote.status}"),
            str(importance) if importance is not None else "",
            self.text("selected.yes") if vote.selected else "",
            self.text(f"closing.{vote.closing}") if answered else "",
            self.reason(vote.reason) or self.problem(vote.error),
        ], importance

    def occasion(self, occasion: Occasion | None) -> str:
        """Why a turn opened without a message ("you came back after 12 minutes"), or ""."""
        if occasion is None:
            return ""
        return self.text(f"occasion.{occasion.kind}", n=max(1, occasion.minutes))

    def turn_label(self, turn: TurnView, phase: str) -> str:
        """The turn's heading: its number, what opened it (who spoke, or the occasion) and its phase."""
        if turn.occasion is not None:
            return self.text("turn.first", n=turn.number, why=self.occasion(turn.occasion), phase=phase)
        return self.text("turn", n=turn.number, who=self.name(turn.opened_by), phase=phase)

    def reason(self, reason: str) -> str:
        """A vote's reason: the companion's own words, or the stand-in vote's (no model answered) in words."""
        return self.text("reason.no-usable-vote") if reason == NO_USABLE_VOTE.reason else reason

    def problem(self, error: str) -> str:
        """Why a vote is missing, in words and with whole seconds ("no vote within 12 s", not 11.9293 s)."""
        for pattern, key in _PROBLEMS:
            match = pattern.fullmatch(error.strip())
            if match is not None:
                values = match.groupdict()
                if "seconds" in values:
                    values["n"] = str(max(1, round(float(values.pop("seconds")))))
                if "who" in values:
                    values["who"] = self.name(values["who"])
                return self.text(key, **values)
        return _DECIMALS.sub(lambda m: f"{float(m.group()):.1f}".removesuffix(".0"), error)

    def history_line(self, view: ConversationView) -> str:
        """One finished (or cancelled) turn of ``view``: who spoke and why, or why nobody did."""
        turn = view.turn
        assert turn is not None
        if turn.phase == "cancelled":
            why = self.text("phase.cancelled")
        elif turn.speaker is not None:
            why = self.why(turn)
        elif view.status == "ended":
            why = self.ended(view)
        else:
            why = self.text("rule.nobody")
        if turn.occasion is not None:  # what opened it, first
            why = self.text("history.occasion", occasion=self.occasion(turn.occasion), why=why)
        key = "history.spoke" if turn.speaker is not None else "history.silent"
        return self.text(key, n=turn.number, who=self.name(turn.speaker), why=why)

    def failure(self, detail: str) -> str:
        """Why the conversation failed, in the window's language when conversation control's detail is a known one
        (else the detail as it is, in "something went wrong (...)")."""
        for pattern, key in _FAILURES:
            if pattern.fullmatch(detail.strip()):
                return self.text(key)
        return self.text("end.failed", detail=detail)

    def ended(self, view: ConversationView) -> str:
        """Why the conversation ended ("" while it has not)."""
        reason = view.ended_reason
        match reason:
            case "closed":
                return self.text("end.closed", who=self.name(view.turn.speaker if view.turn is not None else None))
            case "turn-cap":
                return self.text("end.turn-cap", n=view.turns_taken)
            case "failed":
                return self.failure(view.ended_detail)
            case "spoke-first":
                turn = view.turn
                return self.text("end.spoke-first", who=self.name(turn.speaker if turn is not None else None),
                                 why=self.occasion(turn.occasion if turn is not None else None))
            case "no-speaker" | "stopped" | "interrupted" | "no-addressee" | "model-failed":
                return self.text(f"end.{reason}")
            case None:
                return ""
            case _:
                assert_never(reason)
