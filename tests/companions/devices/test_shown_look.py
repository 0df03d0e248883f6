"""What the camera saw at the end of a user's message is told apart only where the mark says what the text holds
(companions/devices/shown_look.py): a mark from elsewhere that is not the end of the message, is all of it, or is not
text is ignored, and the text is shown as it is."""

from __future__ import annotations

from typing import Any

from companions.devices.shown_look import look_metadata, shown_look, shown_parts, split_look
from companions.wire.protocol import Message, MessageMetadata, MessageParams, to_wire

LOOK = "[The user shows you what the camera sees. On-device description: 1 face detected.]"


def _message(text: str, metadata: dict[str, Any] | None) -> Message:
    return Message(params=MessageParams(id="m", from_="user", to=[], message=text,
                                        metadata=MessageMetadata.model_validate(metadata) if metadata else None))


def test_the_users_words_and_the_look_come_apart() -> None:
    message = _message(f"Can you see me?\n{LOOK}", look_metadata(LOOK))
    assert shown_look(message) == LOOK
    assert shown_parts(message) == ("Can you see me?", LOOK)
    assert to_wire(message)["params"]["metadata"] == {"look": LOOK}  # a free record, as the reference's schema takes


def test_a_mark_that_does_not_say_what_the_text_holds_is_ignored() -> None:
    for text, metadata in [
        (f"Can you see me?\n{LOOK}", {"look": "something else"}),  # not the end of the message
        (LOOK, look_metadata(LOOK)),  # all of it: there would be no words of the user's
        (f"Can you see me?{LOOK}", look_metadata(LOOK)),  # not after a line break
        (f"Can you see me?\n{LOOK}", {"look": 42}),  # not text
        (f"Can you see me?\n{LOOK}", {"look": ""}),
        (f"Can you see me?\n{LOOK}", None),
    ]:
        message = _message(text, metadata)
        assert shown_look(message) is None
        assert shown_parts(message) == (text, "")


def test_an_edited_message_keeps_its_look_only_while_it_still_ends_with_it() -> None:
    assert split_look(f"Now?\n{LOOK}", LOOK) == ("Now?", LOOK)
    assert split_look("Now? (the look deleted)", LOOK) == ("Now? (the look deleted)", "")
