"""How a stock filler line is marked on the bus: ``metadata.filler`` of the published message, with the reason.

When a companion's model gives nothing worth saying in time (a repeat, the user's words parroted, a line as
another companion, the wrong language, the prompt's instructions copied out, a line that contradicts itself,
nothing usable at all, or no time left for another try), the turn says a short stock line instead ("うん、そうだね。",
composing.py). The published ``message.send`` then carries the reason in its metadata, a plain string beside the
emotion::

    {"jsonrpc": "2.0", "method": "message.send",
     "params": {"id": "...", "from": "akari", "to": [...], "message": "うん、そうだね。",
                "metadata": {"emotion": "neutral", "filler": "parrot"}}}

The reference framework's message schema takes any metadata record (``z.record(z.string(), z.any())``), so external
wire clients still validate the message; the window reads :func:`filler_reason` to say quietly that a filler stood
in, and why. The reason words are a closed set (:data:`FillerReason`): the window translates each.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

from companions.wire.protocol import Message

FillerReason: TypeAlias = Literal[
    "repeat",  # the line repeated one of the recent lines
    "parrot",  # the line repeated the message it answered
    "not-itself",  # the line spoke as another companion, or as an AI assistant
    "language",  # the line was in another language than the message it answered
    "empty",  # nothing of the companion's own came back (only tool syntax, JSON, copied instructions)
    "time",  # no time was left to ask again (the turn's time budget, composing.py)
    "prompt",  # the line was nothing but the prompt's instructions copied out ("1〜2文、90文字以内。")
    "contradiction",  # the line contradicted itself ("今日は日曜日（月曜）です。")
]
FILLER_REASONS: Final[tuple[FillerReason, ...]] = get_args(FillerReason)
FILLER_KEY: Final = "filler"


def filler_metadata(reason: FillerReason) -> dict[str, str]:
    """The metadata entries that mark a published line as a stock filler said for ``reason``."""
    return {FILLER_KEY: reason}


def filler_reason(message: Message) -> FillerReason | None:
    """Why ``message`` is a stock filler, or None when it is the companion's own line (or a mark from elsewhere
    that is not one of :data:`FILLER_REASONS`: a peer's metadata is not trusted to name a reason)."""
    metadata = message.params.metadata
    if metadata is None or metadata.model_extra is None:
        return None
    value = metadata.model_extra.get(FILLER_KEY)
    for reason in FILLER_REASONS:
        if value == reason:
            return reason
    return None
