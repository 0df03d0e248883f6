"""The bodies of the queries this app defines and of their answers, typed: ``speak`` (say a line; answered with a
:class:`SpeakResult`) and ``vision`` (look through the camera; answered with a :class:`VisionPicture` that may carry
the on-device :class:`VisionDescription`).

A query's body is a free JSON object on the wire (the reference's ``query.send``), so its shape is this module's:
the action that sends a query builds the body here (:meth:`SpeakRequest.body`), the responder that answers it reads
it here (:meth:`SpeakRequest.of`, which refuses a bad body with the reason a client reads), and so does anyone
else that needs a field (the broker's grace for a client that says the line itself). The wire stays the
reference's: ``{"message", "emotion"?}``, with Madoi's ``"voice"?``, ``"rate"?`` and, for a line said sentence by
sentence while it is composed, ``"messageId"?``, ``"part"?``, ``"final"?`` (companions/devices/responders.py says how).
Unknown fields are ignored, as a reference client may send its own. An answer's body is read the same way by
whoever needs it (:meth:`SpeakResult.of`, :meth:`VisionPicture.read`): a client's answer of another shape is read
field by field, never fails.
"""

from __future__ import annotations

from typing import Any, Final, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    model_serializer,
    model_validator,
)

from companions.wire.protocol import EMOTIONS, Emotion, Query, QueryResult, QueryResultBody

MAX_SPEAK_CHARS: Final = 5000


class QueryBodyInvalid(ValueError):
    """A query's body that does not have its type's shape; ``str()`` is the reason, as the sender reads it."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    @classmethod
    def _read(cls, body: dict[str, Any] | None, **given: Any) -> Self:
        """``body`` read field by field (a client's answer may have any shape): each field is kept only when it has
        its kind, the others keep their defaults; ``given`` are the fields the body does not say."""
        kept = dict(given)
        for key, value in (body or {}).items():
            if key in given:
                continue
            try:
                cls.model_validate({**given, key: value})
            except ValidationError:
                continue
            kept[key] = value
        return cls.model_validate(kept)


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


class SpeakResult(_Body):
    """How a line said ended: what the speaker gives back and, as :meth:`body`, the answer to a ``speak`` query.

    ``success`` is True when it was spoken to the end, or deliberately *skipped* because there is no audio device
    (``skipped=True``, ``reason`` says why): speech is optional and the conversation must go on. It is False when
    it was interrupted or synthesis failed (``reason`` says which). ``success`` goes on the wire as the answer's own
    ``success``; ``spoken_text`` (what the engine was given, e.g. Japanese converted to kana) stays here.
    """

    success: bool
    duration_s: float = Field(default=0.0, alias="duration")  # length of the audio that was produced
    interrupted: bool = False
    skipped: bool = False
    reason: str = ""
    voice: str = ""
    spoken_text: str = ""
    wav_path: str | None = Field(default=None, alias="wav")  # when rendering to files instead of a sound device

    def body(self) -> dict[str, Any]:
        """The answer's body on the wire: ``{"duration", "interrupted", "skipped", "voice", "reason"?, "wav"?}``."""
        out: dict[str, Any] = {"duration": round(self.duration_s, 3), "interrupted": self.interrupted,
                               "skipped": self.skipped, "voice": self.voice}
        if self.reason:
            out["reason"] = self.reason
        if self.wav_path is not None:
            out["wav"] = self.wav_path
        return out

    def answer(self, query: Query) -> QueryResult:
        """The answer to ``query`` that says this."""
        return QueryResult(id=query.id, result=QueryResultBody(success=self.success, body=self.body()))

    @classmethod
    def of(cls, result: QueryResult) -> SpeakResult:
        """What the answer to a ``speak`` query says (a failed query's error is its reason)."""
        failure = {"reason": result.error} if not result.succeeded and result.error else {}
        return cls._read(result.result.body if result.result is not None else None, success=result.succeeded,
                         **failure)


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


class Colour(_Body):
    """One of a picture's main colours: a plain word, its hex code and its share of the picture (0 to 1)."""

    name: str
    hex: str
    share: float


class SeenThing(_Body):
    """A notable thing in a picture, as a person would point at it: its colour word (``red``), its shape (``round``,
    ``square``, ``rectangle``, ``long`` or ``""`` when it has none to speak of), where it is (``middle``,
    ``top left`` ...: the picture's own left and right) and its share of the picture (0 to 1)."""

    colour: str
    shape: str = ""
    place: str
    share: float = 0.0


class SinceLastLook(_Body):
    """What changed since the previous look: the people counted then, the text read now and not then (and the
    reverse), the things that came, went or moved (by colour and shape), and whether the light changed
    (``darker``, ``brighter`` or ``""``)."""

    people_before: int | None = None
    text_new: tuple[str, ...] = ()
    text_gone: tuple[str, ...] = ()
    things_new: tuple[SeenThing, ...] = ()
    things_gone: tuple[SeenThing, ...] = ()
    things_moved: tuple[SeenThing, ...] = ()  # where they are now
    light: str = ""


_SAID_WHEN_SET: Final = ("text", "text_on_paper", "text_problem", "things", "since_last", "summaries")


class VisionDescription(_Body):
    """The on-device description of a camera picture (app/devices/vision_description.py), made without any model:
    the faces counted (the people), the text read by OCR (``text``, one line each; ``text_on_paper`` when it is
    written on a white sheet; ``text_problem`` when it could not be read, e.g. no OCR installed), notable things in
    place words, what changed since the last look, and the measurements (brightness, motion, main colours).
    ``summary`` says it in plain words (English), ``summaries`` in each language it was put into (``en``, ``ja``):
    a consumer picks its conversation's language. ``faces`` is None when this OpenCV build cannot count them,
    ``motion`` and ``since_last`` on the first look."""

    source: str
    faces: int | None
    brightness: float
    brightness_label: str
    motion: float | None
    motion_label: str
    colours: tuple[Colour, ...]
    text: tuple[str, ...] = ()
    text_on_paper: bool = False
    text_problem: str | None = None
    things: tuple[SeenThing, ...] = ()
    since_last: SinceLastLook | None = None
    summary: str = ""
    summaries: dict[str, str] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _without_unsaid(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields added after the measurements are on the wire only when they say something (no text read, no
        thing, a first look: left out), so a description's body is what it was for the clients that read it."""
        out: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        for name in _SAID_WHEN_SET:
            if name in out and getattr(self, name) == fields[name].get_default(call_default_factory=True):
                del out[name]
        return out

    def in_language(self, language: str) -> str:
        """The summary in ``language`` when it was put into it, else the English one."""
        return self.summaries.get(language) or self.summary


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
    description_details: VisionDescription | None = None

    @classmethod
    def read(cls, body: dict[str, Any] | None) -> VisionPicture:
        """What an answer's body holds, each field kept only when it has its kind."""
        return cls._read(body)

    def image_url(self) -> str | None:
        """The picture as a URL a model takes (a data URL for base64), or None without one."""
        if not self.image:
            return None
        if self.image.startswith(("data:", "http:", "https:")):
            return self.image
        return f"data:{self.mime};base64,{self.image}"

    def body(self) -> dict[str, Any]:
        """The answer's body on the wire: the fields that are set (the description's measurements all, as made)."""
        out = self.model_dump(exclude_none=True, exclude={"description_details"})
        if self.description_details is not None:
            out["description_details"] = self.description_details.model_dump(mode="json")
        return out
