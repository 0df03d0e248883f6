"""The bodies of the queries this app defines, typed: ``speak`` (say a line) and ``vision`` (look through the camera).

A query's body is a free JSON object on the wire (the reference's ``query.send``), so its shape is this module's:
the action that sends a query builds the body here (:meth:`SpeakRequest.body`), the responder that answers it reads
it here (:meth:`SpeakRequest.of`, which refuses a bad body with the reason a client reads), and so does anyone
else that needs a field (the broker's grace for a client that says the line itself). The wire stays the
reference's: ``{"message", "emotion"?}``, with Madoi's ``"voice"?``, ``"rate"?`` and, for a line said sentence by
sentence while it is composed, ``"messageId"?``, ``"part"?``, ``"final"?`` (companions/devices/responders.py says how).
Unknown fields are ignored, as a reference client may send its own.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError, model_validator

from companions.wire.protocol import EMOTIONS, Emotion, Query

MAX_SPEAK_CHARS: Final = 5000


class QueryBodyInvalid(ValueError):
    """A query's body that does not have its type's shape; ``str()`` is the reason, as the sender reads it."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class SpeakRequest(_Body):
    """The body of a ``speak`` query: say ``message`` (``part`` of the line ``message_id`` when said in parts)."""

    message: StrictStr
    emotion: Emotion = "neutral"
    voice: StrictStr | None = None
    rate: StrictInt | None = Field(default=None, ge=50, le=400)  # words per minute before the emotion's factor
    message_id: StrictStr | None = Field(default=None, alias="messageId", min_length=1)
    part: StrictInt = Field(default=0, ge=0)
    final: StrictBool = True

    @model_validator(mode="before")
    @classmethod
    def _text_as_message(cls, data: Any) -> Any:
        """A body with ``text`` instead of ``message`` (some clients say it so) is read as the message."""
        if isinstance(data, dict) and "message" not in data and "text" in data:
            return {**data, "message": data["text"]}
        return data

    @classmethod
    def of(cls, query: Query) -> SpeakRequest:
        """The request ``query`` carries.

        Raises:
            QueryBodyInvalid: a missing, empty or overlong message, or a field of the wrong kind.
        """
        body = query.params.body or {}
        try:
            request = cls.model_validate(body)
        except ValidationError as err:
            raise QueryBodyInvalid(_speak_reason(err, body)) from None
        if not request.message.strip():
            raise QueryBodyInvalid(_SPEAK_REASONS["message"])
        if len(request.message) > MAX_SPEAK_CHARS:
            raise QueryBodyInvalid(f"speak: message longer than {MAX_SPEAK_CHARS} characters")
        return request

    @classmethod
    def message_of(cls, query: Query) -> str:
        """The text a ``speak`` query asks to say, as sent (empty when it has none: no exception)."""
        text = (query.params.body or {}).get("message")
        return text if isinstance(text, str) else ""

    def body(self) -> dict[str, Any]:
        """The query body on the wire: ``message`` and ``emotion``, and the optional fields that are set."""
        out: dict[str, Any] = {"message": self.message, "emotion": self.emotion}
        if self.voice:
            out["voice"] = self.voice
        if self.rate is not None:
            out["rate"] = self.rate
        if self.message_id is not None:
            out |= {"messageId": self.message_id, "part": self.part}
            if not self.final:
                out["final"] = False
        return out


_SPEAK_REASONS: Final = {
    "message": "speak: 'message' must be a non-empty string",
    "voice": "speak: 'voice' must be a string",
    "rate": "speak: 'rate' must be words per minute, 50 to 400",
    "messageId": "speak: 'messageId' must be a non-empty string",
    "part": "speak: 'part' must be a whole number from 0",
    "final": "speak: 'final' must be true or false",
}


def _speak_reason(err: ValidationError, body: dict[str, Any]) -> str:
    field = str(err.errors()[0]["loc"][0]) if err.errors()[0]["loc"] else "message"
    if field == "emotion":
        return f"speak: unknown emotion {body.get('emotion')!r} (one of {', '.join(EMOTIONS)})"
    return _SPEAK_REASONS.get(field, _SPEAK_REASONS["message"])


class VisionRequest(_Body):
    """The body of a ``vision`` query: ``describe`` adds the on-device description of the picture (default)."""

    describe: StrictBool = True

    @classmethod
    def of(cls, query: Query) -> VisionRequest:
        """The request ``query`` carries.

        Raises:
            QueryBodyInvalid: ``describe`` that is not true or false.
        """
        try:
            return cls.model_validate(query.params.body or {})
        except ValidationError:
            raise QueryBodyInvalid("vision: 'describe' must be true or false") from None

    def body(self) -> dict[str, Any]:
        """The query body on the wire (empty for the default: the reference's clients send none)."""
        return {} if self.describe else {"describe": False}


class VisionPicture(_Body):
    """The body of a successful ``vision`` answer, as this app's camera gives it and as a client's is read:
    ``image`` (base64, or a data URL), ``mime``, the size and time, and the on-device ``description`` (one sentence,
    computed without a model) with its measurements. A client may send only the picture, or only a description;
    a field of the wrong kind is read as missing, never fails the answer."""

    image: str | None = None
    mime: str = "image/jpeg"
    width: int | None = None
    height: int | None = None
    timestamp: float | None = None
    description: str | None = None
    description_details: dict[str, Any] | None = None

    @classmethod
    def read(cls, body: dict[str, Any] | None) -> VisionPicture:
        """What an answer's body holds, each field kept only when it has its kind."""
        fields = cls.model_fields
        kept: dict[str, Any] = {}
        for name, value in (body or {}).items():
            if name not in fields:
                continue
            try:
                cls.model_validate({name: value})
            except ValidationError:
                continue
            kept[name] = value
        return cls.model_validate(kept)

    def image_url(self) -> str | None:
        """The picture as a URL a model takes (a data URL for base64), or None without one."""
        if not self.image:
            return None
        if self.image.startswith(("data:", "http:", "https:")):
            return self.image
        return f"data:{self.mime};base64,{self.image}"

    def body(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)
