"""Assembly: which concrete parts a runtime gets for its settings.

This is the one place that names concrete adapters (LLM endpoints, camera, speaker, bridge, companions, search).
:func:`assemble` returns the :class:`~app.runtime.parts.Parts` it built; the runtime starts them in order and stops them
in reverse. Nothing here keeps a reference to the runtime.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.conversations.active import Conversations
from app.conversations.speaking_first import SpeakingFirst
from app.llm.connection import ModelConnection, ModelFactory
from app.llm.embedded import EmbeddedModel
from app.llm.health_check import ModelHealthCheck
from app.memory.store import SqliteMemoryStore
from app.runtime.parts import Parts
from app.settings.model import Settings, SettingsStore
from app.storage.database import ConversationStore
from app.trust.policy import Consent
from companions.cards.approval import CardTrust
from companions.cards.card import sample_cards_dir
from companions.companion.cast import CompanionCast, build_cast
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationManager, conversation_manager_from_settings
from companions.conversation.commands import ConversationControl
from companions.llm.types import ChatModel
from companions.trust.policy import NOTICED, ConsentAsker
from companions.wire.bus import Bus
from companions.wire.query_broker import QueryBroker

if TYPE_CHECKING:
    from app.search.service import SearchService
    from companions.memory.recall import CompanionRecall
    from companions.tools.builtins import SearchEngine as SearchPort

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Setup:
    """What the assembly builds from: the settings, the bus and store the runtime opened, who asks the user for
    consent (``asker``; ``None``: nobody) and a caller's choices (``make_model`` replaces the settings' ChatModels;
    ``only_companions`` keeps those companions only)."""

    loaded: SettingsStore
    bus: Bus
    store: ConversationStore
    make_model: ModelFactory | None = None
    only_companions: frozenset[str] | None = None
    asker: ConsentAsker | None = None

    def problem(self, text: str) -> None:
        """Something the user should know about (shown in the window and logged at start)."""
        self.loaded.problems.append(text)


def card_trust(settings: Settings) -> CardTrust:
    """Which cards may run and send what they ask: the samples, and those the user approved ([[trust.cards]])."""
    return CardTrust.of([sample_cards_dir()], settings.trust.cards)


def build_companions(setup: Setup, broker: QueryBroker, models: ModelConnection, memory: SqliteMemoryStore, *,
                     search: SearchPort | None = None,
                     recall: Callable[[str], CompanionRecall] | None = None) -> CompanionCast:
    """The cast from the sample and user cards; a companion whose model cannot be built still appears."""
    s = setup.loaded.settings
    cast = build_cast(
        [sample_cards_dir(), setup.loaded.paths.cards_dir],
        lambda card: models.factory(card),  # noqa: PLW0108 (the factory of the moment: it changes on reconnect)
        bus=setup.bus, queries=broker, language=s.general.language,
        store=memory,  # one database: the memory table lives beside the conversations
        user_id=s.general.user_name,
        search_engine=search,
        mcp_servers=s.mcp.servers,  # every companion's, beside its card's own
        report=setup.problem,  # plugins that do not load, MCP servers that fail (also on the bus), held cards
        trust=card_trust(s),  # the user's own cards run nothing and send no key until approved
        trust_policy=broker.trust,  # what a turn from outside the window may use (app/trust/policy.py)
        recall=recall,  # long-term memory (app/memory/recall.py), when search runs
        only=setup.only_companions,  # `madoi --headless --companions souta`: the others run elsewhere
    )
    for unknown in sorted((setup.only_companions or set()) - set(cast.companions)):
        setup.problem(f"--companions: no companion card has the id {unknown!r}")
    for problem in cast.problems:
        setup.problem(f"companion card {problem}")
    return cast


def build_search(setup: Setup, model: ChatModel | None) -> SearchService | None:
    """The search part (offline embedding model, background indexing), or None when it cannot start."""
    from app.search.service import build_search_service  # numpy and the embedding model load only here

    try:
        return build_search_service(setup.loaded.settings, setup.loaded.paths, setup.bus, model)
    except Exception as err:  # a broken index path or model must not keep the companions from starting
        log.exception("search could not be set up")
        setup.problem(f"search not available: {err}")
        return None


def use_model_for_queries(search: SearchService, model: ChatModel | None) -> None:
    """Search classifies queries with ``model`` (the rules when there is none)."""
    from companions.search.classify.query_classifier import make_query_classifier

    search.engine.classifier = make_query_classifier(model)


async def assemble(setup: Setup) -> Parts:
    """The parts for ``setup``'s settings."""
    # Adapters that pull in OpenCV, pyttsx3 and websockets are imported here, when a runtime starts, so importing
    # the runtime (the window does it first thing) stays cheap.
    from app.bridge import BridgeConfigError, build_bridge
    from app.devices.wiring import build_devices
    from app.network import build_network  # libp2p and trio load only when the network is on
    from companions.search.tool import TextSearch

    settings = setup.loaded.settings
    # Who may use the camera, the voice, files and tools; this app's companions are the cast's.
    consent = Consent(setup.loaded, setup.bus, own=lambda: cast.companions, names=lambda i: cast.name_of(i),  # noqa: PLW0108 (cast: built below)
                      asker=setup.asker)
    broker = QueryBroker(setup.bus, trust=consent.policy)
    devices = build_devices(settings, setup.bus, speech_dir=settings.voice.output_dir,
                            data_dir=setup.loaded.paths.data_dir)
    for responder in devices.responders:
        broker.register(responder)

    # The default model is found after the start (Runtime.start begins it): the companions' first requests wait for
    # it. Probing finds no bridge by mistake: only an answer shaped like a model list counts (companions/llm/detect.py).
    # A model file is run with its log (model-runner.log) beside madoi.log.
    models = ModelConnection.pending(given=setup.make_model, data_dir=setup.loaded.paths.data_dir,
                                     embedded=EmbeddedModel(setup.loaded.paths.data_dir))
    search = build_search(setup, None)
    if search is not None:  # its query classifier thinks with the default model once it is found
        models.when_resolved(lambda resolution: use_model_for_queries(search, resolution.model))
    settings_now = lambda: setup.loaded.settings  # noqa: E731 (the settings of the moment: the user saves new ones)
    memory = SqliteMemoryStore(setup.loaded.paths.database)  # the cast closes it when it stops
    notes = recall = None
    if search is not None:  # long-term memory recalls from the search index
        from app.memory.notes import NotesStore
        from app.memory.recall import build_memory_recall, companion_recall

        notes = NotesStore(memory.path)
        recall = build_memory_recall(search.engine, memory, settings_now, lambda: {c.id: c.card for c in cast}, notes)
    cast = build_companions(setup, broker, models, memory,
                            search=TextSearch(search.engine) if search is not None else None,
                            recall=companion_recall(recall, settings_now, setup.bus) if recall is not None else None)

    manager: ConversationManager = conversation_manager_from_settings(
        setup.bus, settings.conversation, user_id=settings.general.user_name,
        participants=[CompanionParticipant(c) for c in cast],
    )
    # The one warm-up after the start finds the model not there yet (still probed, or still loading): once it is,
    # the likely speaker's prompt is warmed on it.
    models.when_resolved(lambda resolution: manager.models_changed())
    network = build_network(settings, setup.bus, cast, manager)

    indexer = None
    if search is not None and notes is not None:
        from app.conversations.indexing import ConversationIndexer
        from app.memory.recall import note_writer

        def active() -> int | None:
            return conversations.active_id

        indexer = ConversationIndexer(setup.store, search.engine, setup.bus, active, names=cast.name_of,
                                      notes=note_writer(notes, memory, search.engine, setup.bus, cast,
                                                        settings=settings_now, current=active))
    conversations = Conversations(setup.store, setup.bus, user_id=lambda: setup.loaded.settings.general.user_name,
                                  talk=manager, memories=lambda: [c.memory for c in cast], indexing=indexer)
    control = ConversationControl(manager, companions=lambda: cast.companions, revise=conversations.revise)
    speaking_first = SpeakingFirst(setup.bus, manager, lambda: setup.loaded.settings.conversation,
                                   user_id=lambda: setup.loaded.settings.general.user_name,
                                   language=lambda: setup.loaded.settings.general.language)
    from app.voice_input.wiring import barge_in, build_voice_input, spoken_names  # the microphone

    devices.voice_input = build_voice_input(
        settings, setup.bus, devices.speaker, setup.loaded.paths.data_dir,
        send=lambda text: conversations.send(text).params.id,
        words=lambda: spoken_names(cast.companions, setup.loaded.settings.general.user_name),
        interrupt=lambda: barge_in(control, devices.speaker))
    try:
        # No client speaks as a companion of this app, or as what it noticed (companions/trust/policy.py NOTICED).
        bridge = build_bridge(setup.bus, broker, settings, reserved_ids=lambda: {*cast.companions, NOTICED.id},
                              roster=manager, guests=cast.guests)
    except BridgeConfigError as err:
        log.error("bridge: %s", err)
        setup.problem(f"bridge not started: {err}")
        bridge = None
    return Parts(conversations=conversations, broker=broker, devices=devices, models=models, cast=cast, memory=memory,
                 conversation_manager=manager, control=control, speaking_first=speaking_first,
                 health_check=ModelHealthCheck(setup.bus, settings=setup.loaded),
                 search=search, indexer=indexer, network=network, bridge=bridge)
