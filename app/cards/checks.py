"""What the settings dialog's Companions tab asks of the app: the companions' cards, the models the default server
lists, one short request to a companion's model, the voices of a language, and a sentence said in one of them.

The model test builds the companion's model exactly as the running app would for the settings in the form
(:func:`app.llm.connection.companion_models` over the default resolved for them) and sends one short request:
what works here works in the conversation. Voices come from the app's one speaker (its engine, on its thread); a
dialog opened without a running app offers no voices and no voice test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from app.devices.voices import VoiceChoice, voice_choices
from app.llm.connection import companion_models, resolve_default_model
from app.llm.connection_check import check_connection
from app.settings.model import Paths, Settings, VoiceSettings
from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.llm.types import ChatMessage, ChatRequest, LLMError, complete
from companions.llm.unavailable import UnavailableModel

if TYPE_CHECKING:
    from app.devices.wiring import Devices
    from app.runtime.runtime import Runtime

MODEL_TEST_TIMEOUT_S = 60.0
ModelCheckKind = Literal["ok", "refused", "unknown", "unreachable", "timeout", "none", "failed"]


@dataclass(frozen=True)
class ModelCheck:
    """How a companion's model answered one short request: ``kind`` for the interface to word, ``error`` the
    backend's own words (never the key), ``url`` where it was asked."""

    kind: ModelCheckKind
    model: str = ""
    url: str = ""
    seconds: float = 0.0
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def _kind(err: LLMError) -> ModelCheckKind:
    text = str(err)
    if err.status in (401, 403):
        return "refused"
    if err.status == 404:
        return "unknown"
    if "timed out" in text:
        return "timeout"
    if text.startswith("cannot reach"):
        return "unreachable"
    return "failed"


async def check_companion_model(settings: Settings, card: CompanionCard,
                                timeout_s: float = MODEL_TEST_TIMEOUT_S) -> ModelCheck:
    """One short request to ``card``'s companion's model as ``settings`` choose it; never raises for trouble
    with the server."""
    resolution = await resolve_default_model(settings)
    model = companion_models(settings, resolution, [])(card)
    if isinstance(model, UnavailableModel):
        url = settings.llm.base_url
        if url is None or resolution.model is not None:
            return ModelCheck("none", error=model.reason)
        refused = "401" in resolution.message or "403" in resolution.message
        return ModelCheck("refused" if refused else "unreachable", url=url, error=resolution.message)
    url = str(getattr(model, "base_url", "") or "")
    request = ChatRequest(messages=(ChatMessage.user("Say hello in three words."),), max_tokens=12,
                          tool_choice="none")
    began = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            await complete(model, request)
    except TimeoutError:
        return ModelCheck("timeout", model.name, url, error=f"no answer within {timeout_s:g} s")
    except LLMError as err:
        return ModelCheck(_kind(err), model.name, url, error=str(err))
    return ModelCheck("ok", model.name, url, time.perf_counter() - began)


class CompanionChecks:
    """The Companions tab's port onto the app. ``cards`` lists the companions; ``devices`` returns the running
    app's devices (None before it started, or in a dialog without an app)."""

    def __init__(self, cards: Callable[[], Sequence[CompanionCard]],
                 devices: Callable[[], Devices | None] = lambda: None) -> None:
        self._cards = cards
        self._devices = devices

    @classmethod
    def from_files(cls, paths: Paths) -> CompanionChecks:
        """The sample and the user's cards read from disk, no devices (a dialog opened outside the app)."""
        return cls(lambda: load_cards([sample_cards_dir(), paths.cards_dir]).cards)

    @classmethod
    def for_runtime(cls, runtime: Runtime) -> CompanionChecks:
        """The running app's companions (its cards from disk before it started) and devices."""
        from_files = cls.from_files(runtime.paths)

        def cards() -> Sequence[CompanionCard]:
            return [c.card for c in runtime.parts.cast] if runtime.started else from_files.cards()

        return cls(cards, lambda: runtime.parts.devices if runtime.started else None)

    def cards(self) -> list[CompanionCard]:
        return list(self._cards())

    async def models(self, settings: Settings) -> list[str]:
        """The models the default server lists (``GET /v1/models``), or none when it does not answer."""
        url = settings.llm.base_url
        if url is None:
            resolution = await resolve_default_model(settings)
            url = getattr(resolution.model, "base_url", None) if resolution.model is not None else None
        if not url:
            return []
        key = settings.llm.api_key.get_secret_value() if settings.llm.api_key is not None else None
        result = await check_connection(url, key)
        return result.models if result.ok else []

    async def test_model(self, settings: Settings, card: CompanionCard) -> ModelCheck:
        return await check_companion_model(settings, card)

    def voices(self, language: str) -> list[VoiceChoice]:
        devices = self._devices()
        if devices is None:
            return []
        return voice_choices(devices.speaker.voices, language, espeak=devices.speaker.espeak)

    @property
    def can_speak(self) -> bool:
        return self._devices() is not None

    async def say(self, voice: VoiceSettings, sentence: str, voice_id: str | None) -> None:
        """Says ``sentence`` in ``voice_id`` through the app's speaker; raises with the reason when nothing could
        be heard."""
        devices = self._devices()
        if devices is None:
            raise RuntimeError("the speaker has not started yet")
        await devices.test_voice(voice, sentence, voice_id)
