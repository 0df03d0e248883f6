"""The user's commands to the conversation, in one place: :class:`ConversationControl`.

Mute or unmute a companion, have one speak next, stop the conversation, interrupt it, let one of this app's
companions leave the conversation or come back, edit or delete a message: each is a call on this object (the
window's buttons and keys, the voice input's barge-in, a test). The bus carries what happened, never a request:
the manager's ``ConversationChanged`` says muted, forced, ended "stopped" or "interrupted", and the views follow.

Calls are obeyed one at a time, in the order they were made, by the control's own task (a runtime component), so
Esc followed by a message, or Regenerate's delete-then-force, happen in that order whoever made them. Each call
returns a future of its :class:`~companions.conversation.control_state.ControlOutcome`: a caller on the loop may await
it, a button does not. A command that fails is logged and answered with a failed outcome; the next one is still obeyed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from companions.common.tasks import TaskSet
from companions.companion.participant import seat
from companions.conversation.control_state import ControlOutcome

if TYPE_CHECKING:
    from companions.companion.companion import Companion
    from companions.conversation.manager import ConversationManager

log = logging.getLogger(__name__)

Command = Callable[[], Awaitable[ControlOutcome]]


class ConversationControl:
    """The user's say over the running conversation (``manager``). ``companions`` are this app's, by id (set
    present applies to them; those from elsewhere come and go by themselves); ``revise`` changes a message where it
    is stored and remembered and the conversation's history follows (app/conversations/active.py; without it, the
    history
only), after the conversation built on its old words was stopped."""

    name = "conversation-control"

    def __init__(self, manager: ConversationManager, *,
                 companions: Callable[[], Mapping[str, Companion]] = dict,
                 revise: Callable[[str, str | None], Awaitable[None]] | None = None) -> None:
        self._manager = manager
        self._companions = companions
        self._revise = revise
        self._queue: asyncio.Queue[tuple[str, Command, asyncio.Future[ControlOutcome]]] = asyncio.Queue()
        self._tasks = TaskSet("conversation-control")

    # -- component ------------------------------------------------------------------------------------------
    async def start(self) -> None:
        if not self._tasks:
            self._tasks.spawn(self._obey(), name="conversation-control")

    async def stop(self) -> None:
        await self._tasks.aclose()
        while not self._queue.empty():
            self._queue.get_nowait()[2].cancel()

    # -- the commands ---------------------------------------------------------------------------------------
    def mute(self, companion: str, muted: bool = True) -> asyncio.Future[ControlOutcome]:
        """A muted companion neither votes nor is picked; unmuted, it may speak again."""

        async def mute() -> ControlOutcome:
            return self._manager.mute(companion, muted)

        return self._put("mute", mute)

    def force(self, companion: str) -> asyncio.Future[ControlOutcome]:
        """``companion`` takes the next turn (once); an idle or ended conversation resumes on the last message."""
        return self._put("force", lambda: self._manager.force_next(companion))

    def stop_conversation(self) -> asyncio.Future[ControlOutcome]:
        """That is enough: pending turns, generation and speech are cancelled; the conversation ends "stopped"."""
        return self._put("stop", self._manager.stop_conversation)

    def interrupt(self) -> asyncio.Future[ControlOutcome]:
        """Cuts in without a message: speech, generation and pending turns stop; the companions wait for the user."""
        return self._put("interrupt", self._manager.interrupt)

    def set_present(self, companion: str, present: bool) -> asyncio.Future[ControlOutcome]:
        """One of this app's companions leaves the conversation (it no longer hears, votes or is named as present;
        its memory keeps what it heard) or comes back (it hears from the next message on)."""

        async def set_present() -> ControlOutcome:
            found = self._companions().get(companion)
            if found is None:
                return ControlOutcome(False, f"{companion} is not one of this app's companions")
            seat(self._manager, found, present)
            return ControlOutcome(True, f"{companion} is {'here' if present else 'away'}")

        return self._put("set-present", set_present)

    def edit(self, message_id: str, text: str | None) -> asyncio.Future[ControlOutcome]:
        """The user edited (``text``) or deleted (None) a message: a turn in progress was built on the old words and
        is stopped first; then the stored conversation, every memory and the history follow."""

        async def edit() -> ControlOutcome:
            await self._manager.stop_conversation()
            if self._revise is not None:
                await self._revise(message_id, text)
            else:
                self._manager.revise_message(message_id, text)
            return ControlOutcome(True, "deleted" if text is None else "edited")

        return self._put("edit", edit)

    # -- obeying --------------------------------------------------------------------------------------------
    def _put(self, name: str, command: Command) -> asyncio.Future[ControlOutcome]:
        outcome: asyncio.Future[ControlOutcome] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((name, command, outcome))
        return outcome

    async def _obey(self) -> None:
        while True:
            name, command, outcome = await self._queue.get()
            if outcome.cancelled():
                continue
            try:
                result = await command()
            except Exception as err:  # a failing command is reported; the next one is still obeyed
                log.exception("conversation command %s failed", name)
                result = ControlOutcome(False, f"{name} failed: {err}")
            if not outcome.done():
                outcome.set_result(result)
