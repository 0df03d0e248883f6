"""Built-in actions (speak, gesture) and knowledge (companion network, vision, search) of every companion.

One :class:`BuiltinTools` object per companion holds what the tools need; ``from`` is always this companion's id,
never something the model chose. ``speak`` waits until the speech has finished (or failed) before it publishes the
Message, so the text and the voice stay in step and the next speaker does not talk over this one. A turn that only
composes its line gets a ``speak`` of its own (:meth:`BuiltinTools.planning`) that writes the line into that turn's
plan instead: nothing of one turn is set on the long-lived tools.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal, Protocol

from companions.devices.query_bodies import SpeakRequest, SpeakResult, VisionPicture, VisionRequest
from companions.llm.types import ChatMessage, ChatModel, ChatRequest, ImagePart, LLMError, TextPart, complete
from companions.tools.functions import BaseTool, ToolRegistry, tool
from companions.trust.policy import NOT_THIS_COMPUTERS, Capability
from companions.wire.bus import Bus
from companions.wire.protocol import Action, CompanionMetadata, Emotion, Message, Query
from companions.wire.query_ports import QuerySender

log = logging.getLogger(__name__)

SPEAK_TIMEOUT = 120.0
VISION_TIMEOUT = 10.0
Gesture = Literal["wave", "nod", "shake_head", "bow", "jump", "think"]


@dataclass(frozen=True)
class PlannedSpeech:
    """What ``speak`` was asked to say while the companion only composes (the conversation manager delivers it)."""

    text: str
    to: tuple[str, ...]
    emotion: Emotion
    # what the turn that composed it held of the camera's, the user's files or past conversations
    # (companions/trust/outbound.py): where it may go beyond this window
    private: frozenset[Capability] = field(default=frozenset(), kw_only=True)


class SearchEngine(Protocol):
    """The search port (the hybrid search engine implements it)."""

    async def search(self, query: str) -> str:
        """Returns a readable answer or the best passages for ``query``."""
        ...


class BuiltinTools:
    """The built-in tools of one companion. Register the enabled ones with :meth:`register`."""

    def __init__(
        self,
        companion_id: str,
        *,
        bus: Bus,
        queries: QuerySender,
        model: ChatModel,
        roster: Callable[[], Sequence[CompanionMetadata]],
        default_audience: Callable[[], list[str]] = list,
        voice: Callable[[str], str | None] = lambda text: None,
        sanitize: Callable[[str], str] = lambda text: text,
        search_engine: SearchEngine | None = None,
        language: str = "ja",
        user_id: str = "user",
    ) -> None:
        self.companion_id = companion_id
        self.bus = bus
        self.queries = queries
        self.model = model
        self.roster = roster
        self.default_audience = default_audience
        self.voice = voice
        self.sanitize = sanitize
        self.search_engine = search_engine
        self.language = language
        self.user_id = user_id

    def register(self, registry: ToolRegistry, names: Sequence[str]) -> None:
        """Adds the tools named in ``names`` (a card's actions and knowledge) to ``registry``."""
        registry.add_object(self, names)
        if "speak" in names:
            registry.add(_Speak(self).speak)

    def planning(self, plan: list[PlannedSpeech]) -> BaseTool:
        """A ``speak`` for one turn that only composes: the line goes into ``plan`` (that turn's own record), is
        neither voiced nor published (conversation control does both later)."""
        return _Speak(self, plan).speak

    async def speak_aloud(self, text: str, to: list[str] | None, emotion: Emotion) -> str:
        """Voices ``text`` and then publishes it (the ``speak`` tool outside composing); what the model reads."""
        result = await self.say(text, emotion)
        self.bus.publish(Message.create(from_=self.companion_id, to=self.audience(to), message=text, emotion=emotion))
        if result.success:
            return "You said it; everyone addressed heard you."
        return f"Your words were shown as text, but the voice failed: {result.reason or 'the voice failed'}"

    def audience(self, to: list[str] | None, *, default: bool = True) -> list[str]:
        """Ids for ``to``: names a small model wrote instead of ids are mapped, unknown entries are dropped."""
        by_key: dict[str, str] = {self.user_id.casefold(): self.user_id}
        for m in self.roster():
            by_key[m.id.casefold()] = m.id
            by_key[m.name.casefold()] = m.id
        for speaker in self.default_audience():
            by_key.setdefault(speaker.casefold(), speaker)
        resolved: list[str] = []
        for entry in to or []:
            target = by_key.get(entry.strip().casefold())
            if target is not None and target != self.companion_id and target not in resolved:
                resolved.append(target)
        if resolved or not default:
            return resolved
        return self.default_audience()

    async def say(self, text: str, emotion: Emotion = "neutral", *, line_id: str | None = None,
                  part: int = 0) -> SpeakResult:
        """Voices ``text`` (a whole line, or with ``line_id`` one sentence ``part`` of a line said while it is
        composed) through the ``speak`` query; returns how it ended once the speech finished or failed."""
        # The voice of the line's own language, not the interface's: a Japanese line, a Japanese voice.
        request = SpeakRequest(message=text, emotion=emotion, voice=self.voice(text) or None, message_id=line_id,
                               part=part)
        query = Query.create(from_=self.companion_id, type="speak", body=request.body())
        return SpeakResult.of(await self.queries.send_query(query, timeout=SPEAK_TIMEOUT))

    @tool
    async def gesture(self, type: Annotated[Gesture, "The gesture to make."]) -> str:
        """Make a gesture with your body (shown by the client)."""
        self.bus.publish(Action.create(from_=self.companion_id, name="gesture", params={"type": type}))
        return f"You made the gesture {type!r}."

    @tool
    async def companions_network(self) -> str:
        """List the companions present right now (id, name, personality, story), as JSON, one per line."""
        present = [m for m in self.roster() if m.id != self.companion_id]
        if not present:
            return "No other companion is present."
        return "\n".join(json.dumps(m.model_dump(), ensure_ascii=False) for m in present)

    @tool(timeout=60.0, needs=[Capability.CAMERA])
    async def vision(self) -> str:
        """Look through the camera and describe what you see."""
        query = Query.create(from_=self.companion_id, type="vision", body=VisionRequest().body())
        if Capability.CAMERA in NOT_THIS_COMPUTERS.get():  # the gate let it through as the client's own camera
            result = await self.queries.send_query(query, timeout=VISION_TIMEOUT, clients_only=True)
        else:
            result = await self.queries.send_query(query, timeout=VISION_TIMEOUT)
        if not result.succeeded or result.result is None:
            return f"You could not see anything: {result.error or 'the camera gave no picture'}"
        picture = VisionPicture.read(result.result.body)
        url = picture.image_url()
        if self.model.supports_images and url is not None:
            prompt = ("カメラに映っているものを短く具体的に説明してください。" if self.language == "ja"
                      else "Describe briefly and concretely what the camera shows.")
            request = ChatRequest(
                messages=(ChatMessage(role="user", content=[TextPart(text=prompt), ImagePart(url=url)]),)
            )
            try:
                return f"What you see: {(await complete(self.model, request)).message.text.strip()}"
            except LLMError as err:
                log.warning("%s: describing the camera image failed: %s", self.companion_id, err)
        # In the companion's language, where the device put it into that one (app/devices/picture_words.py).
        details = picture.description_details
        description = details.in_language(self.language) if details is not None else picture.description
        if description:
            return f"On-device description of the camera picture (not your own eyes): {description}"
        return "You got a picture but could not make out anything in it."

    @tool(timeout=60.0, needs=[Capability.FILES, Capability.MEMORY])
    async def search(self, query: Annotated[str, "What to look up, in a few words."]) -> str:
        """Search the user's documents and past conversations for facts."""
        if self.search_engine is None:
            return "Search is not available right now."
        return await self.search_engine.search(query)


class _Speak:
    """The ``speak`` tool of one companion: said aloud and published, or with ``plan`` (one composing turn's record)
    written there instead."""

    def __init__(self, tools: BuiltinTools, plan: list[PlannedSpeech] | None = None) -> None:
        self._tools = tools
        self._plan = plan

    @tool
    async def speak(
        self,
        message: Annotated[str, "What you say, as yourself only (no 'Name:' prefix)."],
        emotion: Annotated[Emotion, "The feeling of your voice."] = "neutral",
        to: Annotated[
            list[str] | None,
            "Ids of who you talk to. Leave empty to talk to everyone who took part in the conversation.",
        ] = None,
    ) -> str:
        """Say something aloud to the others. This is the only way your words reach anyone."""
        text = self._tools.sanitize(message)
        if not text:
            return "Nothing was said: the message was empty once lines written for others were removed."
        if self._plan is None:
            return await self._tools.speak_aloud(text, to, emotion)
        if self._plan:
            return "You already said something this turn. Do not call speak again; end your turn."
        self._plan.append(PlannedSpeech(text, tuple(self._tools.audience(to, default=False)), emotion))
        return "Noted: you will say this as soon as you hold the floor. Your turn is done."
