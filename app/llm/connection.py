"""The companions' language models: the default one found from the settings, each companion's from its card.

:class:`ModelConnection` resolves the default chat model (the settings' endpoint, else a local server found on this
machine, else none), builds each companion's ChatModel from its card over that default, and connects them again
when the settings change. A model that cannot be built becomes an :class:`UnavailableModel` that says why, so the
companion still appears and the window can tell the user what is missing.

From the moment the models are connected (the start, Save, Check again) their endpoints are learned in the
background at the lowest priority (companions/llm/learning.py), and what was learned is kept in the data directory
for the next start: the user's first turn pays for none of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeAlias

from app.settings.model import Settings
from companions.cards.card import CompanionCard
from companions.common.tasks import TaskSet
from companions.companion.companion import Companion
from companions.llm.choice import default_endpoint, model_for_card
from companions.llm.detect import ModelResolution, resolve_chat_model
from companions.llm.learning import FILE_NAME, LearnedEndpoints, keep_learned, learn_endpoints
from companions.llm.types import ChatModel, LLMError
from companions.llm.unavailable import UnavailableModel

log = logging.getLogger(__name__)

ModelFactory: TypeAlias = Callable[[CompanionCard], ChatModel]
"""Builds a companion's ChatModel from its card (``Runtime(make_model=...)`` substitutes the settings' choice)."""


async def resolve_default_model(settings: Settings) -> ModelResolution:
    """The default chat model: from the settings, else a local server found on this machine, else none."""
    s = settings.llm
    key = s.api_key.get_secret_value() if s.api_key is not None else None
    return await resolve_chat_model(s.base_url, s.model, key, autodetect=s.autodetect_local, timeout_s=s.timeout_s)


def companion_llm(settings: Settings, card: CompanionCard) -> tuple[str | None, str | None, str | None]:
    """``(base_url, model, api_key_env)`` of ``card``'s companion: the settings' choice for it over its card's.

    A model chosen without an endpoint runs where the card's model would (its endpoint, else the default one); the
    card's key variable goes only to the card's own endpoint."""
    chosen = settings.companion(card.id)
    base_url = chosen.base_url or card.llm.base_url
    same_server = (base_url or "").rstrip("/") == (card.llm.base_url or "").rstrip("/")
    return base_url, chosen.model or card.llm.model, card.llm.api_key_env if same_server else None


def companion_models(settings: Settings, resolution: ModelResolution, problems: list[str]) -> ModelFactory:
    """Each companion's ChatModel: its card's endpoint over the resolved default; a model that cannot be built
    becomes an :class:`UnavailableModel` that says why (and the reason goes to ``problems``)."""
    key = settings.llm.api_key.get_secret_value() if settings.llm.api_key is not None else None
    default = default_endpoint(resolution, key, settings.llm.timeout_s)

    def make_model(card: CompanionCard) -> ChatModel:
        base_url, model, api_key_env = companion_llm(settings, card)
        if default is None and not (base_url or model):
            return UnavailableModel(resolution.message)
        try:
            return model_for_card(card.name(settings.general.language), base_url=base_url, model=model,
                                  api_key_env=api_key_env, default=default)
        except LLMError as err:
            problems.append(str(err))
            return UnavailableModel(str(err))

    return make_model


class ModelConnection:
    """The default model found for the settings and the factory of the companions' models.

    ``given`` (tests, demos, benchmarks) replaces the settings' choice: then nothing is resolved or reconnected.
    """

    def __init__(self, resolution: ModelResolution, factory: ModelFactory, *, given: bool = False,
                 data_dir: Path | None = None) -> None:
        self.resolution = resolution
        self.factory = factory
        self.given = given
        self.learned = LearnedEndpoints(data_dir / FILE_NAME if data_dir is not None else None)
        self._tasks = TaskSet("model-learning")
        self._learning: asyncio.Task[None] | None = None
        self._models: list[ChatModel] = []

    @classmethod
    async def connect(cls, settings: Settings, problems: list[str], given: ModelFactory | None = None,
                      data_dir: Path | None = None) -> ModelConnection:
        """Resolves the default model for ``settings``; a model that cannot be built adds to ``problems``.
        ``data_dir`` keeps what is learned of the model servers across restarts."""
        resolution = await resolve_default_model(settings)
        log.info("language model: %s (%s)", resolution.message, resolution.source)
        if given is not None:
            return cls(resolution, given, given=True, data_dir=data_dir)
        return cls(resolution, companion_models(settings, resolution, problems), data_dir=data_dir)

    @property
    def learning(self) -> asyncio.Task[None] | None:
        """The learning of the endpoints under way or done (None before any, or for given models)."""
        return self._learning

    def learn(self, companions: Iterable[Companion]) -> asyncio.Task[None] | None:
        """Learns what the companions' model endpoints can do, in the background at the lowest priority (a learning
        still running for models replaced since is cancelled); returns the task (tests and benchmarks await it), or
        None for models given by the caller (their endpoints are learned from the turns' answers)."""
        if self._learning is not None and not self._learning.done():
            self._learning.cancel()
        if self.given:
            return None
        self._models = [c.model for c in companions]
        self._learning = self._tasks.spawn(learn_endpoints(list(self._models), self.learned), name="learn-models")
        return self._learning

    async def aclose(self) -> None:
        """Stops learning and keeps what the endpoints know now (their speed measured since the start too)."""
        await self._tasks.aclose()
        try:
            await keep_learned(self._models, self.learned)
        except Exception:  # what is not kept is learned again at the next start
            log.exception("could not keep what was learned of the model servers")

    async def reconnect(self, settings: Settings, companions: Iterable[Companion]) -> list[str]:
        """Resolves the default model again (an endpoint just saved, or a local server started since) and hands
        every companion its model; returns the problems met. The conversation goes on: each companion thinks
        with its new model from its next request."""
        if self.given:
            return []
        self.resolution = await resolve_default_model(settings)
        log.info("language model: %s (%s)", self.resolution.message, self.resolution.source)
        problems: list[str] = []
        self.factory = companion_models(settings, self.resolution, problems)
        companions = list(companions)
        for companion in companions:
            companion.use_model(self.factory(companion.card))
        self.learn(companions)
        return problems

    def use_choices(self, previous: Settings, settings: Settings, companions: Iterable[Companion]) -> list[str]:
        """Hands each companion whose model choice differs between ``previous`` and ``settings`` its new model,
        over the default already resolved (the LLM section unchanged); returns the problems met. Each thinks with
        it from its next request."""
        if self.given:
            return []
        problems: list[str] = []
        self.factory = companion_models(settings, self.resolution, problems)
        companions = list(companions)
        for companion in companions:
            if companion_llm(settings, companion.card) != companion_llm(previous, companion.card):
                companion.use_model(self.factory(companion.card))
        self.learn(companions)
        return problems

    @staticmethod
    def problem(companions: Iterable[Companion]) -> str | None:
        """Why no companion can talk (no language model could be reached or built), or None when one can.

        The window shows its first-run panel with this reason; None as well when there are no companions.
        """
        models = [c.model for c in companions]
        unavailable = [m for m in models if isinstance(m, UnavailableModel)]
        if not models or len(unavailable) < len(models):
            return None
        return unavailable[0].reason
