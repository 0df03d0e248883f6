"""The state of the user's control over the conversation (muted companions, the forced next speaker) and the
outcome of a command. The commands themselves are calls on one object, companions/conversation/commands.py.

A user message interrupts by itself (it cancels what is in flight and opens a new turn); an interrupt without one is
for a person who wants to cut in before typing: the speech playing, the generation and the pending turns stop, and
the companions wait for the user. Stop does the same work but means "that is enough": the two differ in the end
reason the read model shows. A refused command (unknown companion, forcing a muted one) says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ControlOutcome:
    ok: bool
    detail: str


@dataclass
class ControlState:
    """Muted companions and the one-shot forced speaker."""

    muted: set[str] = field(default_factory=set)
    forced: str | None = None

    def set_muted(self, companion: str, muted: bool, present: frozenset[str]) -> ControlOutcome:
        if companion not in present:
            return ControlOutcome(False, f"{companion} is not here")
        if muted:
            self.muted.add(companion)
            if self.forced == companion:
                self.forced = None
            return ControlOutcome(True, f"{companion} is muted")
        self.muted.discard(companion)
        return ControlOutcome(True, f"{companion} may speak again")

    def force(self, companion: str, present: frozenset[str]) -> ControlOutcome:
        if companion not in present:
            return ControlOutcome(False, f"{companion} is not here")
        if companion in self.muted:
            return ControlOutcome(False, f"{companion} is muted; unmute it first")
        self.forced = companion
        return ControlOutcome(True, f"{companion} speaks next")

    def take_forced(self, present: frozenset[str]) -> str | None:
        """Returns and clears the forced speaker, if it is still present and unmuted."""
        forced, self.forced = self.forced, None
        if forced is None or forced not in present or forced in self.muted:
            return None
        return forced
