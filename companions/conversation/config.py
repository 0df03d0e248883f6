"""The conversation manager's configuration (from the app's settings, or a test's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConversationConfig:
    """``vote_deadline_s`` is the least a vote round may take (it grows with the endpoints' measured speed);
    ``direct_turns`` lets a named companion answer without a vote round, and the likely speaker answer a user's
    message to everyone at once where a vote round would take longer than ``slow_round_s`` (see direct.py);
    ``early_speech`` lets a participant that can ``speak_part`` start speaking at its first sentence
    (early_speech.py); ``warm_after_s`` is how long the conversation is idle before the likely next speaker's
    prompt is evaluated ahead of the user's next message (warming.py; ``None``: never). ``remote_vote_wait_s``
    bounds the wait for the vote of a companion elsewhere, which its own node judges (vote_round.py): the longest
    adaptive deadline a node may set (direct.MAX_DEADLINE_S), plus its delivery."""

    vote_deadline_s: float = 4.0
    remote_vote_wait_s: float = 95.0
    direct_turns: bool = True
    slow_round_s: float = 2.0
    early_speech: bool = True
    early_speech_chars: int = 400
    warm_after_s: float | None = 1.5
    turn_cap: int = 12
    compose_timeout_s: float = 60.0
    speech_timeout_s: float = 180.0
    history_limit: int = 40
    recent_window: int = 6
    repetition_threshold: float = 0.6


def config_from_settings(settings: Any) -> ConversationConfig:
    """The configuration the app's ``ConversationSettings`` describe (vote_deadline_s, turn_cap, warm_prompts)."""
    warm = ConversationConfig.warm_after_s if getattr(settings, "warm_prompts", True) else None
    return ConversationConfig(vote_deadline_s=float(settings.vote_deadline_s), turn_cap=int(settings.turn_cap),
                              warm_after_s=warm)
