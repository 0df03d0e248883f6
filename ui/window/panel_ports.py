"""What the panels are built from: the read models they show and the small command interfaces they call.

A panel takes these, never the runtime (napari's ``QtDims(viewer.dims)``): the main window builds them from the
runtime (``app/runtime/panels.py``), and a test builds a panel from a fake in milliseconds. Live changes reach a
panel over the bus it is given (``companions.wire.bus.Bus``: a panel follows it with
``ui.window.bus_bridge.BusFollower``). Before the runtime has started, the read models answer as for an empty house (no
companions, no conversation, nothing available), and the commands do nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.settings.model import Settings
from app.storage.database import ConversationInfo, StoredMessage
from companions.companion.guests import RemoteCompanion
from companions.conversation.readmodel import ConversationView
from companions.llm.types import ChatModel
from companions.memory.context import HeardLine
from companions.memory.notes import Note
from companions.trust.policy import ConsentAsker

if TYPE_CHECKING:
    from app.downloads import DownloadOffer, DownloadProgress
    from app.llm.model_files import ModelFile
    from app.llm.runner import RunnerStatus
    from app.search.service import SearchService  # numpy and the embedding model: only where search runs


class People(Protocol):
    """Who takes part: the user, this app's companions, and by name those from elsewhere."""

    def user_id(self) -> str: ...

    def companion_ids(self) -> Sequence[str]:
        """This app's companions, in the cast's order (those from elsewhere: :meth:`present`, ``RemoteCompanions``)."""
        ...

    def name(self, who: str, language: str) -> str | None:
        """A companion's name in ``language``; None for anyone not known as a companion."""
        ...

    def away(self, who: str) -> bool:
        """Whether one of this app's companions has left the current conversation (the user let it go)."""
        ...

    def present(self) -> Sequence[tuple[str, str]]:
        """``(id, name)`` of every companion in the conversation now, this app's and those from elsewhere."""
        ...


class ConversationControl(Protocol):
    """The turn-taking of the running conversation: its state, and the user's say over it."""

    def view(self) -> ConversationView: ...

    def mute(self, companion_id: str, muted: bool) -> None: ...

    def force(self, companion_id: str) -> None: ...

    def interrupt(self) -> None: ...

    def stop(self) -> None: ...

    def set_present(self, companion_id: str, present: bool) -> None:
        """Lets one of this app's companions leave the conversation, or brings it back."""
        ...


class ConversationHistory(Protocol):
    """The user's stored conversations: which is active, what was said, and the user's commands on them."""

    def active_id(self) -> int | None: ...

    async def stored(self) -> list[ConversationInfo]:
        """The stored conversations, the most recently updated first."""
        ...

    async def messages(self, conversation_id: int, limit: int | None = None) -> list[StoredMessage]: ...

    async def new(self) -> int: ...

    async def switch(self, conversation_id: int) -> None: ...

    async def delete(self, conversation_id: int) -> int: ...

    async def revise(self, message_id: str, text: str | None) -> None: ...

    def send(self, text: str, to: list[str] | None = None) -> None:
        """Sends the user's message (to everyone present when ``to`` is empty); raises when it cannot go out."""
        ...


class RemoteCompanions(Protocol):
    """The companions that run elsewhere as they are when a view opens (what changes later comes over the bus)."""

    def network(self) -> Sequence[RemoteCompanion]: ...

    def guests(self) -> Sequence[RemoteCompanion]: ...


class SearchAccess(Protocol):
    """Search as the search panel uses it: the search part (None when it could not start, or before the runtime
    started), the language model research thinks with (None: none connected), and why search is missing."""

    def service(self) -> SearchService | None: ...

    def model(self) -> ChatModel | None: ...

    def problems(self) -> Sequence[str]: ...


class MemoryAccess(Protocol):
    """What each companion remembers of earlier conversations, the user's switch for it, and forgetting
    (the Memory view, ui/memory/view.py; app/memory/access.py)."""

    def enabled(self, companion_id: str) -> bool: ...

    def set_enabled(self, companion_id: str, on: bool) -> None:
        """Lets a companion recall earlier conversations, or not (saved in the settings at once)."""
        ...

    async def remembered(self, companion_id: str, containing: str = "", limit: int = 200) -> list[HeardLine]:
        """The lines it remembers, newest first, only those holding ``containing`` when given."""
        ...

    async def notes(self, companion_id: str) -> list[tuple[int, Note]]:
        """The notes it wrote about the user (id, note), newest first."""
        ...

    async def count(self, companion_id: str) -> int: ...

    async def forget(self, companion_id: str, message_ids: Sequence[str]) -> None:
        """Forgets these lines (message ids) and notes (``note:<id>``), and every note citing a line forgotten."""
        ...

    async def forget_all(self, companion_id: str) -> None: ...


class ConsentPort(Protocol):
    """Where the window's consent prompt plugs in (the runtime's trust policy asks through it)."""

    def use_asker(self, asker: ConsentAsker | None) -> None: ...


class ModelSetup(Protocol):
    """A model on this computer for the companions (the first-run card's "Talk now"): the GGUF files found here,
    a file the user picks, the recommended model to download, and the model runner's state."""

    async def found(self) -> Sequence[ModelFile]:
        """The GGUF models of LM Studio, GPT4All, Ollama and the Hugging Face cache on this computer."""
        ...

    async def check(self, path: Path) -> ModelFile:
        """The file the user picked, once it is known to be a GGUF model; NotAModelFile says why it is not."""
        ...

    async def offer(self) -> DownloadOffer:
        """The recommended model's download as the user is asked to agree to it (a part already downloaded is
        continued); DownloadError says why it cannot be offered."""
        ...

    async def download(self, offer: DownloadOffer, progress: Callable[[DownloadProgress], None],
                       cancel: asyncio.Event) -> Path:
        """Downloads the offered file (checked by its sha256); DownloadCancelled keeps the part for later."""
        ...

    async def use(self, path: Path) -> Settings:
        """Saves ``path`` as the model the companions talk to (``llm.model_file``, instead of a server) and returns
        the settings written; the window applies them (the model starts)."""
        ...

    async def restart(self) -> None:
        """Stops the model Madoi runs and starts it again (or looks for the model server again); what was known of
        the models' trouble is forgotten, so a message waiting for the model goes once it answers."""
        ...

    def status(self) -> RunnerStatus | None:
        """The model runner's state (None: Madoi runs no model file)."""
        ...

    def follow_status(self, listener: Callable[[RunnerStatus], None]) -> Callable[[], None]:
        """Calls ``listener`` with each state of the model runner; returns what stops it."""
        ...
