"""Assembly: which concrete components a runtime gets for its settings.

This is the one place that names concrete adapters (LLM endpoints, camera, speaker, bridge, companions, search).
Components are returned in start order; the runtime stops them in reverse, so the conversation stops before the
companions, the companions before the devices, and the broker last.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from companions.cards import CompanionCard, sample_cards_dir
from companions.cast import CompanionCast, build_cast
from companions.companion_participant import CompanionParticipant
from companions.conversation import ConversationManager, conversation_manager_from_settings
from companions.llm.choice import default_endpoint, model_for_card
from companions.llm.detect import ModelResolution, resolve_chat_model
from companions.llm.types import ChatModel, LLMError
from companions.llm.unavailable import UnavailableModel
from companions.query_broker import QueryBroker

if TYPE_CHECKING:
    from app.runtime import Component, Runtime
    from app.search_service import SearchService
    from companions.actions import SearchEngine as SearchPort

log = logging.getLogger(__name__)

ModelFactory: TypeAlias = Callable[[CompanionCard], ChatModel]
"""Builds a companion's ChatModel from its card (``Runtime(make_model=...)`` substitutes the settings' choice)."""


async def resolve_default_model(runtime: Runtime) -> ModelResolution:
    """The default chat model: from the settings, else a local server found on this machine, else none."""
    s = runtime.settings.llm
    key = s.api_key.get_secret_value() if s.api_key is not None else None
    return await resolve_chat_model(s.base_url, s.model, key, autodetect=s.autodetect_local, timeout_s=s.timeout_s)


def companion_models(runtime: Runtime, resolution: ModelResolution,
                     problems: list[str]) -> Callable[[CompanionCard], ChatModel]:
    """Each companion's ChatModel: its card's endpoint over the resolved default; a model that cannot be built
    becomes an :class:`UnavailableModel` that says why (and the reason goes to ``problems``)."""
    s = runtime.settings
    key = s.llm.api_key.get_secret_value() if s.llm.api_key is not None else None
    default = default_endpoint(resolution, key, s.llm.timeout_s)

    def make_model(card: CompanionCard) -> ChatModel:
        if default is None and not (card.llm.base_url or card.llm.model):
            return UnavailableModel(resolution.message)
        try:
            return model_for_card(card.name(s.general.language), base_url=card.llm.base_url, model=card.llm.model,
                                  api_key_env=card.llm.api_key_env, default=default)
        except LLMError as err:
            problems.append(str(err))
            return UnavailableModel(str(err))

    return make_model


def build_companions(runtime: Runtime, broker: QueryBroker, resolution: ModelResolution,
                     search: SearchPort | None = None) -> CompanionCast:
    """The cast from the sample and user cards; a companion whose model cannot be built still appears."""
    s = runtime.settings
    model_problems: list[str] = []
    cast = build_cast(
        [sample_cards_dir(), runtime.paths.cards_dir],
        runtime.make_model or companion_models(runtime, resolution, model_problems),
        bus=runtime.bus, queries=broker, language=s.general.language,
        memory_path=runtime.paths.database,  # one database: the memory table lives beside the conversations
        user_id=s.general.user_name,
        search_engine=search,
        mcp_servers=s.mcp.servers,  # every companion's, beside its card's own
        report=runtime.loaded.problems.append,  # plugins that do not load, MCP servers that fail (also on the bus)
    )
    if runtime.only_companions is not None:  # `madoi --headless --companions souta`: the others run elsewhere
        for unknown in sorted(runtime.only_companions - set(cast.companions)):
            runtime.loaded.problems.append(f"--companions: no companion card has the id {unknown!r}")
        cast.companions = {i: c for i, c in cast.companions.items() if i in runtime.only_companions}
    for problem in cast.problems:
        runtime.loaded.problems.append(f"companion card {problem}")
    runtime.loaded.problems.extend(model_problems)
    return cast


async def reconnect_models(runtime: Runtime) -> list[str]:
    """Resolves the default model again from ``runtime.settings`` (an endpoint just saved, or a local server
    started since) and hands every companion its model; returns the problems met. The conversation goes on:
    each companion thinks with its new model from its next request."""
    if runtime.cast is None or runtime.make_model is not None:  # not started, or models given by the caller
        return []
    runtime.model_resolution = await resolve_default_model(runtime)
    log.info("language model: %s (%s)", runtime.model_resolution.message, runtime.model_resolution.source)
    problems: list[str] = []
    make_model = companion_models(runtime, runtime.model_resolution, problems)
    for companion in runtime.cast:
        companion.use_model(make_model(companion.card))
    return problems


def build_search(runtime: Runtime, model: ChatModel | None) -> SearchService | None:
    """The search component (offline embedding model, background indexing), or None when it cannot start."""
    from app.search_service import build_search_service  # numpy and the embedding model load only here

    try:
        return build_search_service(runtime.settings, runtime.paths, runtime.bus, model)
    except Exception as err:  # a broken index path or model must not keep the companions from starting
        log.exception("search could not be set up")
        runtime.loaded.problems.append(f"search not available: {err}")
        return None


async def build_components(runtime: Runtime) -> list[Component]:
    """The components for ``runtime``'s settings, in start order."""
    # Adapters that pull in OpenCV, pyttsx3 and websockets are imported here, when a runtime starts, so importing
    # the runtime (the window does it first thing) stays cheap.
    from app.bridge import BridgeConfigError, build_bridge
    from app.devices.wiring import build_devices
    from companions.search.tool import TextSearch

    components: list[Component] = []
    broker = QueryBroker(runtime.bus)
    runtime.query_broker = broker
    components.append(broker)

    speech_dir = runtime.settings.voice.output_dir
    devices = build_devices(runtime.settings, runtime.bus, speech_dir=speech_dir)
    runtime.devices = devices
    components.extend(devices.components)
    for responder in devices.responders:
        broker.register(responder)

    # Resolve the model before the bridge listens: the local-server probe must never find Madoi's own port.
    runtime.model_resolution = await resolve_default_model(runtime)
    log.info("language model: %s (%s)", runtime.model_resolution.message, runtime.model_resolution.source)

    search = build_search(runtime, runtime.model_resolution.model)
    if search is not None:
        runtime.search = search
        runtime.search_engine = search.engine
        components.append(search)

    cast = build_companions(runtime, broker, runtime.model_resolution,
                            TextSearch(search.engine) if search is not None else None)
    runtime.cast = cast
    components.append(cast)

    manager: ConversationManager = conversation_manager_from_settings(
        runtime.bus, runtime.settings.conversation, user_id=runtime.settings.general.user_name,
        participants=[CompanionParticipant(c) for c in cast],
    )
    runtime.conversation = manager
    components.append(manager)

    from app.network import build_network  # libp2p and trio load only when the network is on

    runtime.network = build_network(runtime)
    if runtime.network is not None:
        components.append(runtime.network)

    if search is not None:
        from app.conversation_indexing import ConversationIndexer

        indexer = ConversationIndexer(runtime.store, search.engine, runtime.bus, lambda: runtime.conversation_id)
        runtime.conversation_indexer = indexer
        components.append(indexer)

    try:
        bridge = build_bridge(runtime.bus, broker, runtime.settings, reserved_ids=lambda: set(cast.companions))
    except BridgeConfigError as err:
        log.error("bridge: %s", err)
        runtime.loaded.problems.append(f"bridge not started: {err}")
        bridge = None
    if bridge is not None:
        runtime.bridge = bridge
        components.append(bridge)
    return components
