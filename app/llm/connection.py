"""The companions' language models: the default one found from the settings, each companion's from its card.

:class:`ModelConnection` resolves the default chat model (the settings' endpoint, else a local server found on this
machine, else none), builds each companion's ChatModel from its card over that default, and connects them again
when the settings change. A model that cannot be built becomes an :class:`UnavailableModel` that says why, so the
companion still appears and the window can tell the user what is missing.

The default model is resolved in the background (:meth:`ModelConnection.begin`): the window and the headless
ready line never wait on probing a server or loading a model file. Until it is known, each companion thinks with a
:class:`~app.llm.pending.PendingModel`, whose requests wait for it (bounded). ``llm.model_file`` (with no
``llm.base_url``) makes Madoi run that GGUF model itself (app/llm/embedded.py), the default for every companion
whose card names no endpoint of its own.

From the moment the models are connected (the start, Save, Check again) their endpoints are learned in the
background at the lowest priority (companions/llm/learning.py), and what was learned is kept in the data directory
for the next start: the user's first turn pays for none of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from app.llm.embedded import EmbeddedModel, ModelFileProblem
from app.llm.pending import PendingModel
from app.settings.model import Settings
from companions.cards.card import CompanionCard
from companions.common.tasks import TaskSet
from companions.companion.companion import Companion
from companions.llm.choice import default_endpoint, model_for_card
from companions.llm.detect import ModelResolution, resolve_chat_model
from companions.llm.learning import FILE_NAME, LearnedEndpoints, keep_learned, learn_endpoints
from companions.llm.openai_backend import build_chat_model
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


@dataclass(frozen=True)
class Resolved:
    """The default model found, and the key that goes with its endpoint (the settings' key, the runner's own)."""

    resolution: ModelResolution
    key: str | None


async def resolve_default(settings: Settings, embedded: EmbeddedModel | None) -> Resolved:
    """The default chat model: the model file Madoi runs itself when one is chosen and no endpoint is set (its runner
    started or kept), else :func:`resolve_default_model` (the runner stopped). Never raises."""
    s = settings.llm
    if s.base_url is None and s.model_file is not None and embedded is not None:
        try:
            endpoint = await embedded.run(s.model_file)
        except ModelFileProblem as err:
            return Resolved(ModelResolution(None, "none", f"The model file cannot be used: {err}"), None)
        model = build_chat_model(endpoint.base_url, endpoint.model, endpoint.api_key, timeout_s=s.timeout_s)
        return Resolved(ModelResolution(model, "settings", f"using {endpoint.model} from {s.model_file}, run by "
                                                           "Madoi"), endpoint.api_key)
    if embedded is not None:
        await embedded.stop()
    resolution = await resolve_default_model(settings)
    key = s.api_key.get_secret_value() if s.api_key is not None else None
    return Resolved(resolution, key if resolution.source == "settings" else None)


def companion_llm(settings: Settings, card: CompanionCard) -> tuple[str | None, str | None, str | None]:
    """``(base_url, model, api_key_env)`` of ``card``'s companion: the settings' choice for it over its card's.

    A model chosen without an endpoint runs where the card's model would (its endpoint, else the default one); the
    card's key variable goes only to the card's own endpoint."""
    chosen = settings.companion(card.id)
    base_url = chosen.base_url or card.llm.base_url
    same_server = (base_url or "").rstrip("/") == (card.llm.base_url or "").rstrip("/")
    return base_url, chosen.model or card.llm.model, card.llm.api_key_env if same_server else None


def companion_models(settings: Settings, resolution: ModelResolution, problems: list[str], *,
                     key: str | None = None) -> ModelFactory:
    """Each companion's ChatModel: its card's endpoint over the resolved default; a model that cannot be built
    becomes an :class:`UnavailableModel` that says why (and the reason goes to ``problems``). ``key`` is the default
    endpoint's (by default the settings' key)."""
    if key is None and settings.llm.api_key is not None:
        key = settings.llm.api_key.get_secret_value()
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


LOOKING: str = "looking for a language model"
"""The resolution's message while the default model is being found."""


class ModelConnection:
    """The default model found for the settings and the factory of the companions' models.

    Made pending (:meth:`pending`): the companions think with :class:`PendingModel` until :meth:`begin` has resolved
    the default model in the background and handed each its own. ``given`` (tests, demos, benchmarks) replaces the
    settings' choice: then the companions keep the models given (the default is still resolved, for search).
    ``embedded`` runs ``llm.model_file`` when it is chosen (None: a model file is not run).
    """

    def __init__(self, resolution: ModelResolution, factory: ModelFactory, *, given: bool = False,
                 data_dir: Path | None = None, embedded: EmbeddedModel | None = None) -> None:
        self.resolution = resolution
        self.factory = factory
        self.given = given
        self.embedded = embedded
        self.learned = LearnedEndpoints(data_dir / FILE_NAME if data_dir is not None else None)
        self.problems: list[str] = []  # what the last resolution could not build (a card's endpoint...)
        self._key: str | None = None
        self._tasks = TaskSet("model-learning")
        self._learning: asyncio.Task[None] | None = None
        self._resolving: asyncio.Task[list[str]] | None = None
        self._resolved = asyncio.Event()
        self._models: list[ChatModel] = []
        self._listeners: list[Callable[[ModelResolution], None]] = []

    @classmethod
    def pending(cls, *, given: ModelFactory | None = None, data_dir: Path | None = None,
                embedded: EmbeddedModel | None = None) -> ModelConnection:
        """A connection whose default model is not known yet: :meth:`begin` finds it. Costs nothing: no server is
        probed and no model loaded here."""
        connection = cls(ModelResolution(None, "none", LOOKING), given or _no_factory, given=given is not None,
                         data_dir=data_dir, embedded=embedded)
        if given is None:
            connection.factory = connection._pending_factory()
        return connection

    @property
    def resolving(self) -> bool:
        """Whether the companions wait for the default model being found (a server probed, a model file loading);
        never for models given by the caller."""
        return not self.given and not self._resolved.is_set()

    async def resolved(self) -> ModelResolution:
        """The resolution once the one under way (if any) is done."""
        await self._resolved.wait()
        return self.resolution

    def waiting(self) -> str:
        """What the companions wait for, in plain words."""
        status = self.embedded.status if self.embedded is not None else None
        if status is not None and self.resolving:
            return f"{status.options.model_file.name} is loading ({status.reason})"
        return "Madoi is still looking for a model server" if self.resolving else self.resolution.message

    def begin(self, settings: Settings,
              companions: Callable[[], Iterable[Companion]]) -> asyncio.Task[list[str]]:
        """Resolves the default model for ``settings`` in the background (one under way is cancelled), then hands
        each of ``companions()`` its model; until then each thinks with a :class:`PendingModel`. Returns the task:
        its result is the problems met (also in :attr:`problems`)."""
        if self._resolving is not None and not self._resolving.done():
            self._resolving.cancel()
        self._resolved.clear()
        self.resolution = ModelResolution(None, "none", LOOKING)
        if not self.given:
            self.factory = self._pending_factory()
            for companion in companions():
                companion.use_model(self.factory(companion.card))
        self._resolving = self._tasks.spawn(self._resolve(settings, companions), name="resolve-model")
        return self._resolving

    async def _resolve(self, settings: Settings, companions: Callable[[], Iterable[Companion]]) -> list[str]:
        problems: list[str] = []
        try:
            found = await resolve_default(settings, self.embedded)
            self.resolution, self._key = found.resolution, found.key
        except Exception as err:  # a bug must not leave the companions waiting: they say there is no model
            log.exception("the language model could not be resolved")
            self.resolution, self._key = ModelResolution(None, "none", f"no language model: {err}"), None
        log.info("language model: %s (%s)", self.resolution.message, self.resolution.source)
        if not self.given:
            self.factory = companion_models(settings, self.resolution, problems, key=self._key)
            cast = list(companions())
            for companion in cast:
                companion.use_model(self.factory(companion.card))
            self.learn(cast)
        for problem in problems:
            log.warning("language model: %s", problem)
        self.problems = problems
        self._resolved.set()
        for listener in list(self._listeners):
            try:
                listener(self.resolution)
            except Exception:
                log.exception("a listener of the language model failed")
        return problems

    def when_resolved(self, listener: Callable[[ModelResolution], None]) -> None:
        """Calls ``listener`` with every resolution from now on (search's classifier thinks with the model)."""
        self._listeners.append(listener)

    def _pending_factory(self) -> ModelFactory:
        def make_model(card: CompanionCard) -> ChatModel:
            async def resolved() -> ChatModel:
                await self._resolved.wait()
                return self.factory(card)

            return PendingModel(resolved, self.waiting)

        return make_model

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

    def cancel(self) -> None:
        """Stops finding the default model (a probe, a model loading): the app is stopping."""
        if self._resolving is not None and not self._resolving.done():
            self._resolving.cancel()

    async def aclose(self) -> None:
        """Stops finding the model and learning, stops the model Madoi runs (no process left holding its file), and
        keeps what the endpoints know now (their speed measured since the start too)."""
        await self._tasks.aclose()
        if self.embedded is not None:
            await self.embedded.stop()
        try:
            await keep_learned(self._models, self.learned)
        except Exception:  # what is not kept is learned again at the next start
            log.exception("could not keep what was learned of the model servers")

    async def reconnect(self, settings: Settings, companions: Iterable[Companion]) -> list[str]:
        """Resolves the default model again (an endpoint or a model file just saved, or a local server started
        since) and hands every companion its model; returns the problems met. The conversation goes on: each
        companion thinks with its new model from its next request (waiting for it meanwhile)."""
        if self.given:
            return []
        cast = list(companions)
        return await self.begin(settings, lambda: cast)

    def use_choices(self, previous: Settings, settings: Settings, companions: Iterable[Companion]) -> list[str]:
        """Hands each companion whose model choice differs between ``previous`` and ``settings`` its new model,
        over the default already resolved (the LLM section unchanged); returns the problems met. Each thinks with
        it from its next request."""
        if self.given:
            return []
        if self.resolving:  # the resolution under way hands each its model of the new settings' choice
            return []
        problems: list[str] = []
        self.factory = companion_models(settings, self.resolution, problems, key=self._key)
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


def _no_factory(card: CompanionCard) -> ChatModel:
    raise AssertionError("replaced in ModelConnection.pending")
