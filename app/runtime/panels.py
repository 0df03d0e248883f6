"""The runtime as the window's panels see it: the read models and commands of ``ui/window/panel_ports.py``.

Only the main window (and the launcher) know the runtime; they build these and give each panel what it shows.
Before the runtime has started (the window opens first) they answer as for an empty house: no companions, an idle
conversation, nothing available; commands then do nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.runtime.runtime import Runtime
from app.settings.model import Settings
from app.storage.database import ConversationInfo, StoredMessage
from companions.companion.guests import RemoteCompanion
from companions.conversation.readmodel import ConversationView
from companions.devices.ports import DeviceStatus
from companions.llm.types import ChatModel
from companions.network.people import remote_person
from companions.trust.policy import ConsentAsker

if TYPE_CHECKING:  # the adapters load OpenCV, the search engine and libp2p: only when the runtime starts
    from app.devices.camera import OpenCVCamera
    from app.downloads import DownloadableModel, DownloadOffer, DownloadProgress
    from app.llm.model_files import ModelFile
    from app.llm.runner import RunnerStatus
    from app.search.service import SearchService
    from companions.network.link import NetworkLink


@dataclass(frozen=True)
class RuntimePeople:
    """``ui.window.panel_ports.People``: the user, the runtime's cast, and the names of those that joined from
    elsewhere."""

    runtime: Runtime

    def user_id(self) -> str:
        return self.runtime.settings.general.user_name

    def companion_ids(self) -> Sequence[str]:
        if not self.runtime.started:
            return ()
        return [c.id for c in self.runtime.parts.cast]

    def name(self, who: str, language: str) -> str | None:
        if not self.runtime.started:
            return None
        companion = self.runtime.parts.cast.companions.get(who)
        if companion is not None:
            return companion.card.name(language)
        guest = next((m for m in self.runtime.parts.cast.roster() if m.id == who), None)
        if guest is not None:
            return guest.name
        person = remote_person(who)  # a user on another machine: their name there, and where (never this user)
        return person.shown if person is not None else None

    def away(self, who: str) -> bool:
        if not self.runtime.started:
            return False
        companion = self.runtime.parts.cast.companions.get(who)
        return companion is not None and not companion.present

    def present(self) -> Sequence[tuple[str, str]]:
        if not self.runtime.started:
            return ()
        return [(m.id, m.name) for m in self.runtime.parts.cast.roster()]


@dataclass(frozen=True)
class RuntimeControl:
    """``ui.window.panel_ports.ConversationControl``: the conversation manager's view; the user's commands are calls on
    the runtime's one ``ConversationControl`` (nothing before the runtime has started)."""

    runtime: Runtime

    def view(self) -> ConversationView:
        return self.runtime.parts.conversation_manager.view if self.runtime.started else ConversationView()

    def mute(self, companion_id: str, muted: bool) -> None:
        if self.runtime.started:
            self.runtime.parts.control.mute(companion_id, muted)

    def force(self, companion_id: str) -> None:
        if self.runtime.started:
            self.runtime.parts.control.force(companion_id)

    def interrupt(self) -> None:
        if self.runtime.started:
            self.runtime.parts.control.interrupt()

    def stop(self) -> None:
        if self.runtime.started:
            self.runtime.parts.control.stop_conversation()

    def set_present(self, companion_id: str, present: bool) -> None:
        if self.runtime.started:  # one of this app's; those from elsewhere come and go by themselves
            self.runtime.parts.control.set_present(companion_id, present)


@dataclass(frozen=True)
class RuntimeHistory:
    """``ui.window.panel_ports.ConversationHistory``: the stored conversations and the active one."""

    runtime: Runtime

    def active_id(self) -> int | None:
        return self.runtime.parts.conversations.active_id if self.runtime.started else None

    async def stored(self) -> list[ConversationInfo]:
        if self.runtime.started:  # with every message published so far counted
            return await self.runtime.parts.conversations.listed()
        return await self.runtime.store.list_conversations()

    async def messages(self, conversation_id: int, limit: int | None = None) -> list[StoredMessage]:
        if self.runtime.started:  # with every message published so far among them
            return await self.runtime.parts.conversations.messages(conversation_id, limit=limit)
        return await self.runtime.store.messages(conversation_id, limit=limit)

    async def new(self) -> int:
        return await self.runtime.parts.conversations.new()

    async def switch(self, conversation_id: int) -> None:
        await self.runtime.parts.conversations.switch(conversation_id)

    async def delete(self, conversation_id: int) -> int:
        return await self.runtime.parts.conversations.delete(conversation_id)

    async def revise(self, message_id: str, text: str | None) -> None:
        await self.runtime.parts.control.edit(message_id, text)  # the user's command: a turn in progress stops

    def send(self, text: str, to: list[str] | None = None) -> None:
        self.runtime.parts.conversations.send(text, to)


@dataclass(frozen=True)
class RuntimeRemoteCompanions:
    """``ui.window.panel_ports.RemoteCompanions``: the network's companions and the bridge's guests as they are now."""

    runtime: Runtime

    def network(self) -> Sequence[RemoteCompanion]:
        network = self.runtime.parts.network if self.runtime.started else None
        return network.listed() if network is not None else ()

    def guests(self) -> Sequence[RemoteCompanion]:
        bridge = self.runtime.parts.bridge if self.runtime.started else None
        return bridge.guests.listed() if bridge is not None else ()


@dataclass(frozen=True)
class RuntimeDevices:
    """The runtime's devices as panels read them (None before start)."""

    runtime: Runtime

    def camera(self) -> OpenCVCamera | None:
        return self.runtime.parts.devices.camera if self.runtime.started else None

    def speaker_status(self) -> DeviceStatus | None:
        return self.runtime.parts.devices.speaker.status if self.runtime.started else None

    def network(self) -> NetworkLink | None:
        return self.runtime.parts.network if self.runtime.started else None


@dataclass(frozen=True)
class RuntimeSearch:
    """``ui.window.panel_ports.SearchAccess``: the search part, the model research thinks with, and why search is
    missing."""

    runtime: Runtime

    def service(self) -> SearchService | None:
        return self.runtime.parts.search if self.runtime.started else None

    def model(self) -> ChatModel | None:
        return self.runtime.parts.models.resolution.model if self.runtime.started else None

    def problems(self) -> Sequence[str]:
        return self.runtime.loaded.problems


@dataclass(frozen=True)
class RuntimeConsent:
    """``ui.window.panel_ports.ConsentPort``: the window's prompt asks the user for the runtime's trust policy
    (companions/trust/policy.py), through the runtime's relay; ``None`` when the window goes away (requests from
    outside are then refused)."""

    runtime: Runtime

    def use_asker(self, asker: ConsentAsker | None) -> None:
        self.runtime.asker.connect(asker)


MODELS_DIR = "models"
"""Where downloaded models go, in the data directory."""


@dataclass(frozen=True)
class RuntimeModelSetup:
    """``ui.window.panel_ports.ModelSetup``: the model files of this computer, the recommended download (``model``:
    another host in tests), the choice saved through the settings store, and the runner of the runtime's models."""

    runtime: Runtime
    model: DownloadableModel | None = None

    async def found(self) -> Sequence[ModelFile]:
        from app.llm.model_files import find_model_files

        return await asyncio.to_thread(find_model_files)

    async def check(self, path: Path) -> ModelFile:
        from app.llm.model_files import chosen_model_file

        return await asyncio.to_thread(chosen_model_file, path)

    async def offer(self) -> DownloadOffer:
        from app.downloads import prepare_download

        model = self._model()
        return await prepare_download(model, self.runtime.paths.data_dir / MODELS_DIR / model.file)

    async def download(self, offer: DownloadOffer, progress: Callable[[DownloadProgress], None],
                       cancel: asyncio.Event) -> Path:
        from app.downloads import download

        return await download(offer, progress=progress, cancel=cancel)

    async def use(self, path: Path) -> Settings:
        """The model file replaces a server the settings named (which did not answer: the card shows only then)."""
        current = self.runtime.settings
        llm = current.llm.model_copy(update={"model_file": path, "base_url": None, "model": None})
        settings = current.model_copy(update={"llm": llm})
        await self.runtime.loaded.save(settings)
        return settings

    async def restart(self) -> None:
        from companions.llm.health import model_health

        embedded = self.runtime.parts.models.embedded if self.runtime.started else None
        if embedded is not None and embedded.status is not None:
            await embedded.stop()  # the file is run again when the models are connected again
        await self.runtime.reconnect_models()
        model_health.clear()  # a runner started anew answers at a new address: the old one's trouble is over

    def status(self) -> RunnerStatus | None:
        embedded = self.runtime.parts.models.embedded if self.runtime.started else None
        return embedded.status if embedded is not None else None

    def follow_status(self, listener: Callable[[RunnerStatus], None]) -> Callable[[], None]:
        embedded = self.runtime.parts.models.embedded if self.runtime.started else None
        return embedded.subscribe(listener) if embedded is not None else _nothing

    def _model(self) -> DownloadableModel:
        from app.llm.recommended_model import RECOMMENDED_MODEL

        return self.model or RECOMMENDED_MODEL


def _nothing() -> None:
    pass
