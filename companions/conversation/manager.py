"""The conversation manager: turns, selection, closing, pacing and user control, wired to the bus.

One conversation runs at a time, as one *driver* task: open a turn on a message, collect votes by the deadline,
select a speaker, let it compose (possibly while the previous speech still plays), wait for the floor, publish its
message, start its speech, and open the next turn on that message. A user message cancels the driver, cuts the
speech, calls the participants' interrupt hooks, and starts a new driver: conversations never fork.
Companion messages that arrive from elsewhere while a driver runs are heard (kept in the history) but do not open
a second thread. Each turn knows its *origin* (``TurnContext.origin``, companions/trust/policy.py): the ``from`` of the
latest message of its chain that did not come from this app's own companions, so a companion answering a line of
another one it asked from outside the window is still answering the outside. Every participant call runs as an
owned task with a bound, so nothing a participant does can stall the conversation or the shutdown.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any, Final

from companions.common.tasks import TaskSet
from companions.conversation.addressing import addressees, only_companion_addressed
from companions.conversation.ballot import Vote
from companions.conversation.calls import CallFailed, ParticipantCalls
from companions.conversation.closing import EndReason, RepetitionDetector, later_stage
from companions.conversation.config import ConversationConfig, config_from_settings
from companions.conversation.control_state import ControlOutcome, ControlState
from companions.conversation.direct import direct_selection, likely_speaker, user_answered
from companions.conversation.early_speech import EarlySpeech
from companions.conversation.heard_history import HeardHistory
from companions.conversation.pacing import Floor
from companions.conversation.participant import ComposedLine, Participant, TurnContext
from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, evolve
from companions.conversation.selection import Selection, select_speaker, settled_by
from companions.conversation.speaking_first import CUE_SENDER, GREETED, Occasion
from companions.conversation.vote_round import abstain, vote_round
from companions.conversation.warming import Warmer, WarmUp
from companions.llm.health import HealthEvent, ModelHealth, ModelTrouble, model_health, publish_model_health
from companions.llm.types import LLMError
from companions.trust.outbound import PRIVATE_KINDS, PrivateLine
from companions.wire.bus import Bus, Subscription
from companions.wire.protocol import Closing, Message, MessageMetadata, MessageParams, new_id

log = logging.getLogger(__name__)
INTERRUPT_TIMEOUT_S: Final = 0.5
ORIGINS_KEPT: Final = 256  # the origins of the latest lines of this app's companions (a turn resumed on one)


class ConversationManager:
    """Drives the group conversation among the registered participants. A runtime component (start/stop)."""

    name = "conversation"

    def __init__(self, bus: Bus, *, user_id: str = "user", config: ConversationConfig | None = None,
                 participants: Iterable[Participant] = (), health: ModelHealth = model_health) -> None:
        self.bus = bus
        self._health = health
        self._health_links: list[Callable[[], None]] = []
        self._trouble: ModelTrouble | None = None  # the latest trouble of a model since the turn began
        self.user_id = user_id
        self.config = config or ConversationConfig()
        self.control = ControlState()
        self._participants: dict[str, Participant] = {}
        self._hearing = HeardHistory(self.config.history_limit)
        self._own: collections.deque[str] = collections.deque(maxlen=64)
        self._origins: collections.OrderedDict[str, str] = collections.OrderedDict()  # own line's id -> its origin
        self._recent: collections.deque[str] = collections.deque(maxlen=self.config.recent_window)
        self._repetition = RepetitionDetector(threshold=self.config.repetition_threshold)
        self._tasks = TaskSet("conversation")
        self._calls = ParticipantCalls(TaskSet("conversation-calls"))
        self._warmer = Warmer(self._tasks, self.config.warm_after_s)
        self._floor = Floor(self._calls.tasks, on_change=lambda holder: self._update("floor", floor=holder))
        self._driver: asyncio.Task[None] | None = None
        self._waiting: str | None = None
        self._lock = asyncio.Lock()
        self._subscriptions: list[Subscription] = []
        self._settle: asyncio.Future[str] | None = None  # while votes are awaited: a remote line settles the turn
        self._last_speaker: str | None = None
        self._turn_number = 0
        self._turns_taken = 0
        self.view = ConversationView()
        for p in participants:
            self.add_participant(p)

    # -- participants ---------------------------------------------------------------------------------------
    @property
    def present(self) -> frozenset[str]:
        return frozenset(self._participants)

    def add_participant(self, participant: Participant) -> None:
        self._participants[participant.id] = participant
        self._hearing.join(participant.id)
        self._update("joined", present=tuple(sorted(self._participants)))

    def remove_participant(self, companion: str) -> None:
        self._participants.pop(companion, None)
        self._hearing.leave(companion)
        self.control.muted.discard(companion)
        self._update("left", present=tuple(sorted(self._participants)), muted=tuple(sorted(self.control.muted)))

    # -- component ------------------------------------------------------------------------------------------
    async def start(self) -> None:
        if not self._subscriptions:
            self._subscriptions = [
                self.bus.subscribe("messages", self.handle_message, name="conversation-messages", maxsize=10_000,
                                   overflow="drop_newest"),
            ]
            self._warmer.schedule(self._warm_up)
        if not self._health_links:  # the window hears on the bus of a model that stopped answering, and of its return
            self._health_links = [publish_model_health(self.bus, self._health), self._health.subscribe(self._heard)]

    async def stop(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions = []
        for unlink in self._health_links:
            unlink()
        self._health_links = []
        await self._halt()
        await self._tasks.aclose()
        await self._calls.tasks.aclose()

    # -- user control (the user's commands call these through user_commands.ConversationControl) -------------
    def mute(self, companion: str, muted: bool = True) -> ControlOutcome:
        outcome = self.control.set_muted(companion, muted, self.present)
        self._update("muted", muted=tuple(sorted(self.control.muted)), forced_next=self.control.forced)
        return outcome

    async def force_next(self, companion: str) -> ControlOutcome:
        """The companion takes the next turn; an idle or ended conversation resumes on the last message."""
        outcome = self.control.force(companion, self.present)
        self._update("forced", forced_next=self.control.forced)
        last = self._hearing.last
        if outcome.ok and not self.running and last is not None:
            async with self._lock:
                self._begin(last, resumed=True)
        return outcome

    def revise_message(self, message_id: str, text: str | None) -> None:
        """The user edited (``text``) or deleted (None) a message: the history turns are built from follows."""
        self._hearing.revise(message_id, text)

    def switched(self) -> None:
        """The user opened another conversation (the companions' memories already hold it): nothing heard in the
        last one is anyone's history any more, the view is idle with no turn (the next one is number 1), and whoever
        would answer next is warmed with the new context."""
        self._hearing.clear()
        self._repetition.reset()
        self._last_speaker = None
        self._recent.clear()
        # The view starts afresh too: no turn, idle, the next turn numbered 1 (views show what they are given).
        self._turn_number = 0
        self._update("switched", status="idle", turn=None, closing="none", ended_reason=None, ended_detail="",
                     turns_taken=0, repetition=0.0)
        if not self.running:
            self._warmer.schedule(self._warm_up)

    def models_changed(self) -> None:
        """The companions' models changed (the default model was found after the start, or the user chose another):
        while the conversation is idle, whoever would answer next is warmed on the new one (warming.py)."""
        if not self.running:
            self._warmer.schedule(self._warm_up)

    async def greet(self, companion: str, text: str) -> Message | None:
        """``companion`` opens a new conversation with ``text`` (its card's first greeting, as SillyTavern's first
        message): its own line to the user, published and said aloud, with no model request and no turn after it
        (the user answers). Nothing when a conversation is running, or the companion is not here or muted."""
        async with self._lock:
            speaker = self._participants.get(companion)
            if speaker is None or companion in self.control.muted or self.running or self._floor.busy \
                    or not text.strip():
                return None
            message = Message(params=MessageParams(id=new_id(), from_=companion, to=[self.user_id], message=text))
            self._own.append(message.params.id)
            self._hearing.hear(message)
            self.bus.publish(message)
            self._floor.start(companion, self._speech(speaker, message))  # a message or Esc cuts it, as any speech
            return message

    async def speak_first(self, occasion: Occasion, cue: str) -> bool:
        """Opens a turn on ``occasion`` (speaking_first.py): the present companions vote on ``cue``, which only
        they are told, and whoever the vote selects says one line; then they wait for the user. Returns whether the
        turn opened: not while a conversation runs or someone speaks aloud, nor with nobody here to vote."""
        async with self._lock:
            if self.running or self._floor.busy or not (self.present - self.control.muted):
                return False
            trigger = Message(params=MessageParams(id=new_id(), from_=CUE_SENDER, to=[], message=cue))
            self._hearing.hear(trigger)
            self._begin(trigger, resumed=False, occasion=occasion)
            return True

    async def stop_conversation(self) -> ControlOutcome:
        return await self._cut_in("stopped", "stopped by the user")

    async def interrupt(self) -> ControlOutcome:
        """Cuts in without a message: speech, generation and pending turns stop; the companions wait for the user."""
        return await self._cut_in("interrupted", "interrupted by the user")

    async def _cut_in(self, reason: EndReason, detail: str) -> ControlOutcome:
        async with self._lock:
            was_running = self.running
            await self._halt()
            if was_running:
                self._end(reason, detail)
        return ControlOutcome(was_running, detail if was_running else "nothing was running")

    @property
    def warm_ups(self) -> int:
        """How many warm-ups of a likely speaker's prompt ran to their end (warming.py)."""
        return self._warmer.warmed

    @property
    def running(self) -> bool:
        return self._driver is not None and not self._driver.done()

    # -- bus ------------------------------------------------------------------------------------------------
    async def handle_message(self, message: Message) -> None:
        """A message from the bus: a user's interrupts and opens a turn; a companion's opens one when idle."""
        if message.params.id in self._own:
            return
        async with self._lock:
            sender = self._participants.get(message.params.from_)
            if sender is not None:
                self._hearing.hear(message)
                if not self.running:
                    self._begin(message, resumed=False)
                elif self._settle is not None and not self._settle.done() and sender.description.remote:
                    self._settle.set_result(sender.id)  # its line settles the turn whose votes this node awaits
                return
            await self._halt()
            self._hearing.hear(message)
            self._begin(message, resumed=False)

    # -- the driver -----------------------------------------------------------------------------------------
    def _begin(self, trigger: Message, *, resumed: bool, occasion: Occasion | None = None) -> None:
        self._warmer.cancel()
        self._turns_taken = 0
        if not resumed and trigger.params.from_ not in self._participants:
            self._repetition.reset()
            self._last_speaker = None
        self._update("started", status="running", ended_reason=None, ended_detail="", turns_taken=0,
                     closing=self._repetition.pressure)
        self._driver = self._tasks.spawn(self._drive(trigger, occasion), name=f"conversation:{trigger.params.id}")

    def _origin_of(self, message: Message, chain: str | None) -> str:
        """Who a turn on ``message`` answers in the end: its ``from``, unless it is a line of this app's own
        companions, which answered the chain's origin (the one recorded for it when the turn was resumed)."""
        sender = self._participants.get(message.params.from_)
        if sender is None or not sender.description.own:
            return message.params.from_
        return chain if chain is not None else self._origins.get(message.params.id, message.params.from_)

    async def _drive(self, trigger: Message, occasion: Occasion | None = None) -> None:
        next_message: Message | None = trigger
        origin: str | None = None
        try:
            if occasion is not None:  # one line answers it (the user answers that), or nobody speaks
                said = await self._run_turn(trigger, self._origin_of(trigger, None), occasion)
                if said is not None:
                    await self._finish(self.view.turn or TurnView(trigger.params.id, CUE_SENDER, 0, "ended"),
                                       "spoke-first", f"{said.params.from_} spoke first")
                return
            while next_message is not None:
                origin = self._origin_of(next_message, origin)
                next_message = await self._run_turn(next_message, origin)
        except Exception as exc:  # a bug here must still leave a conversation that says it ended, and why
            log.exception("the conversation driver failed")
            self._end("failed", f"internal error: {type(exc).__name__}: {exc}")

    async def _run_turn(self, trigger: Message, origin: str, occasion: Occasion | None = None) -> Message | None:
        self._turn_number += 1
        self._trouble = None
        turn_id = trigger.params.id
        present = self.present
        eligible = present - self.control.muted
        forced = self.control.take_forced(present)
        turn = TurnView(turn_id, trigger.params.from_, self._turn_number, "voting", occasion=occasion)
        self._update("turn", turn=turn, forced_next=None)
        if self._turns_taken >= self.config.turn_cap and forced is None:
            abstain(self.bus, turn_id, [self._participants[c] for c in addressees(trigger, present, self.user_id)],
                    networked=any(p.description.remote for p in self._participants.values()))
            await self._finish(turn, "turn-cap", f"{self._turns_taken} turns reached the cap")
            return None
        voters = [v for v in addressees(trigger, present, self.user_id) if v in eligible]
        if occasion is not None:  # what this app noticed stays here: only its own companions hear the cue
            voters = [v for v in voters if not self._participants[v].description.remote]
        if not voters and forced is None:
            await self._finish(turn, "no-addressee", "the message was not addressed to any companion")
            return None
        pressure = self._repetition.pressure
        contexts = {v: self._context(v, trigger, pressure, origin) for v in voters}
        direct = self._direct(trigger, voters) if forced is None and occasion is None else None
        if direct is not None:
            votes: dict[str, Vote] = {}
            selection = direct
        else:
            turn, votes, selection = await self._vote(turn, trigger, voters, contexts, forced)
            greeting = occasion is not None and occasion.kind in GREETED
            if (not selection.ranking and (trigger.params.from_ == self.user_id or greeting)
                    and self._model_trouble() is None):
                # The user's message is never left unanswered, nor the user coming back to the desk ungreeted (the
                # real 0.5B model voted listen on every occasion: nobody ever said "おかえり"). Only this node's
                # companions (another node's would answer there), still present (one may have left during the votes).
                local = {v: p.description for v in voters
                         if (p := self._participants.get(v)) is not None and not p.description.remote}
                selection = user_answered(trigger, local, recent_turns=collections.Counter(self._recent),
                                          previous_speaker=self._last_speaker) or selection
        turn = evolve(turn, selection_reason=selection.reason, selection_rule=selection.rule)
        for candidate in selection.ranking:
            speaker = self._participants.get(candidate)
            if speaker is None or candidate in self.control.muted:
                continue
            vote = votes.get(candidate)
            closing = later_stage(vote.closing if vote is not None else "none", self._repetition.pressure)
            passed_over = turn.passed_over + ((turn.speaker,) if turn.speaker is not None else ())
            turn = evolve(turn, phase="composing", speaker=candidate, closing=closing, passed_over=passed_over)
            self._update("composing", turn=turn, closing=closing)
            context = contexts.get(candidate) or self._context(candidate, trigger, self._repetition.pressure, origin)
            early = self._early_speech(speaker)
            delivered = False
            try:
                try:
                    offer = early.offer if early is not None else None
                    line = await self._calls.bounded(
                        candidate, speaker.compose(dataclasses.replace(context, early=offer), closing),
                        self.config.compose_timeout_s)
                except CallFailed as err:
                    log.warning("%s could not compose (%s); the floor passes on", candidate, err)
                    if err.timed_out:
                        self._too_slow(speaker)
                    # What was already said aloud stays said, and is shown (as private as a line can be: what the
                    # failed turn held is not known here, companions/trust/outbound.py).
                    line = (ComposedLine(early.offered_text, private=PRIVATE_KINDS) if early is not None
                            and early.started else None)
                if isinstance(line, ComposedLine) and line.text.strip():
                    delivered = True
                    return await self._deliver(turn, speaker, line, closing, early, origin=origin)
            finally:
                if early is not None and not delivered:
                    await early.cancel()
        if not selection.ranking and (trouble := self._model_trouble()) is not None:
            # Nobody chose to speak while a model is down (said during this turn, or known down since before it): the
            # votes were its stand-ins (a joint vote that failed is every member's default), not the companions'.
            await self._finish(turn, "model-failed", trouble.detail)
        elif not selection.ranking:
            await self._finish(turn, "no-speaker", "nobody wanted to speak")
        elif (trouble := self._model_trouble()) is not None:
            await self._finish(turn, "model-failed", trouble.detail)
        else:
            await self._finish(turn, "failed", "no candidate could say anything")
        return None

    def _heard(self, event: HealthEvent) -> None:
        if isinstance(event, ModelTrouble):
            self._trouble = event

    def _too_slow(self, speaker: Participant) -> None:
        """``speaker``'s line took longer than the compose timeout: its model did not answer in time, which the health
        record hears as a request that timed out (the chat says so, a message the user sends waits, and a health
        check sees when the model answers again). A participant without a model endpoint (elsewhere, a double) has
        no model to blame: its turn just fails."""
        pace = speaker.description.pace()
        if pace is not None:
            self._health.failed(LLMError(
                f"{speaker.id}'s line took longer than {self.config.compose_timeout_s:g} s at {pace.endpoint}",
                retryable=True, kind="timed-out", endpoint=pace.endpoint))

    def _model_trouble(self) -> ModelTrouble | None:
        """Why no candidate could answer, when a model is to blame: a trouble heard during this turn, else a model
        known to be down since before it (its trouble was said then, once)."""
        if self._trouble is not None:
            return self._trouble
        return next((t for t in self._health.troubles if t.down), None)

    def _direct(self, trigger: Message, voters: list[str]) -> Selection | None:
        """A turn without a vote round (see direct.py), or ``None`` when the companions vote."""
        if not self.config.direct_turns or trigger.params.from_ in self._participants:
            return None
        return direct_selection(trigger, {v: self._participants[v].description for v in voters},
                                user_id=self.user_id, recent_turns=collections.Counter(self._recent),
                                previous_speaker=self._last_speaker, slow_round_s=self.config.slow_round_s)

    async def _vote(self, turn: TurnView, trigger: Message, voters: list[str], contexts: dict[str, TurnContext],
                    forced: str | None) -> tuple[TurnView, dict[str, Vote], Selection]:
        """The vote round (vote_round.py: every voter votes by its deadline); then the speaker is selected."""
        addressed = addressees(trigger, self.present, self.user_id)
        silent = [c for c in addressed if c in self.control.muted and not self._participants[c].description.remote]
        self._settle = settle = asyncio.get_running_loop().create_future()
        try:
            turn, votes = await vote_round(turn, {v: self._participants[v] for v in voters}, contexts,
                                           silent=silent, bus=self.bus, calls=self._calls, config=self.config,
                                           update=self._update, settle=settle)
        finally:
            self._settle = None
        selection = select_speaker(votes, recent_turns=collections.Counter(self._recent),
                                   previous_speaker=self._last_speaker, forced=forced,
                                   eligible=self.present - self.control.muted)
        return turn, votes, settled_by(selection, settle.result()) if settle.done() else selection

    def _early_speech(self, speaker: Participant) -> EarlySpeech | None:
        if not self.config.early_speech or not speaker.speaks_early:
            return None
        return EarlySpeech(speaker.id, speaker.speak_part, floor=self._floor, owner=self._calls.tasks,
                           max_chars=self.config.early_speech_chars)

    async def _deliver(self, turn: TurnView, speaker: Participant, line: ComposedLine,
                       closing: Closing, early: EarlySpeech | None = None, *, origin: str = "") -> Message | None:
        self._update("waiting", turn=evolve(turn, phase="waiting"))
        self._waiting = speaker.id  # composed but not yet said: told on interrupt that its words were dropped
        try:
            # pacing: never talk over the previous speech (an early speech waits for the floor itself)
            await (early.holding.wait() if early is not None and early.started else self._floor.wait_clear())
        finally:
            self._waiting = None
        to = list(line.to) or [*sorted(self.present - {speaker.id}), self.user_id]
        extra = dict(line.metadata)
        metadata = MessageMetadata(emotion=line.emotion, **extra) if line.emotion or extra else None
        message = line.published or Message(params=MessageParams(
            id=new_id(), from_=speaker.id, to=to, message=line.text, metadata=metadata))
        if line.published is None:  # a line published elsewhere is on the bus
            self._origins[message.params.id] = origin
            while len(self._origins) > ORIGINS_KEPT:
                self._origins.popitem(last=False)
            self._own.append(message.params.id)
            self._hearing.hear(message)
            if line.private:  # the doors hold it where the user did not allow it (companions/trust/outbound.py)
                self.bus.publish(PrivateLine(message.params.id, speaker.id, line.private, line.text))
            self.bus.publish(message)
        elif (last := self._hearing.last) is None or last.params.id != message.params.id:
            self._own.append(message.params.id)  # may still wait in the bus queue: the next turn's voters hear it
            self._hearing.hear(message)
        report = self._repetition.observe(line.text)
        self._turns_taken += 1
        self._recent.append(speaker.id)
        self._last_speaker = speaker.id
        if early is not None and early.started:
            await early.finish(line.text)  # the rest of the line follows its first sentences
        else:
            self._floor.start(speaker.id, self._speech(speaker, message))
        # The pressure this message adds applies to the next turn (its speaker is pushed to say goodbye);
        # only the speaker's own stage decides whether this was the last word.
        self._update("spoke", turn=evolve(turn, phase="speaking"), turns_taken=self._turns_taken,
                     closing=later_stage(closing, report.pressure), repetition=round(report.similarity, 3))
        if closing == "terminal":
            await self._finish(turn, "closed", f"{speaker.id} closed the conversation")
            return None
        return message

    async def _finish(self, turn: TurnView, reason: EndReason, detail: str) -> None:
        await self._floor.wait_clear()
        self._update("turn", turn=evolve(turn, phase="ended"))
        self._end(reason, detail)

    def _end(self, reason: EndReason, detail: str) -> None:
        log.info("conversation ended: %s (%s)", reason, detail)
        self._update("ended", status="ended", ended_reason=reason, ended_detail=detail)
        self._warmer.schedule(self._warm_up)

    def _warm_up(self) -> WarmUp | None:
        """The warm-up of whoever would answer the user's next message to everyone (warming.py), if it has one.
        That message resets the previous speaker (``_begin``) and its words are not known yet."""
        if self.running:
            return None
        who = likely_speaker(sorted(self.present - self.control.muted), text="",
                             recent_turns=collections.Counter(self._recent), previous_speaker=None, personas={})
        return self._participants[who].description.warm if who is not None else None

    async def _speech(self, speaker: Participant, message: Message) -> None:
        try:
            await self._calls.bounded(speaker.id, speaker.speak(message), self.config.speech_timeout_s)
        except CallFailed as err:
            log.warning("speech of %s failed: %s", speaker.id, err)

    # -- helpers --------------------------------------------------------------------------------------------
    async def _halt(self) -> None:
        """Cancels the driver, cuts the speech and calls the interrupt hooks of everyone with work in flight."""
        self._warmer.cancel()
        involved = set(self._calls.busy) | {p for p in (self._floor.holder, self._waiting) if p is not None}
        driver, self._driver = self._driver, None
        if driver is not None and not driver.done():
            driver.cancel()
            await asyncio.wait([driver])
            turn = self.view.turn
            if turn is not None and turn.phase not in ("ended", "speaking"):
                self._update("cancelled", turn=evolve(turn, phase="cancelled"))
        await self._floor.cut()
        hooks = [self._participants[p].interrupt() for p in sorted(involved) if p in self._participants]
        if hooks:
            results = await asyncio.wait([self._calls.tasks.spawn(h, name="interrupt") for h in hooks],
                                         timeout=INTERRUPT_TIMEOUT_S)
            if results[1]:
                log.warning("%d interrupt hooks did not return in time", len(results[1]))

    def _context(self, who: str, trigger: Message, pressure: Closing, origin: str) -> TurnContext:
        return TurnContext(turn_id=trigger.params.id, message=trigger, history=self._hearing.heard_by(who),
                           present=tuple(sorted(self.present)), user_id=self.user_id,
                           addressed_directly=only_companion_addressed(trigger, who, self.user_id),
                           closing_hint=pressure, origin=origin)

    def _update(self, change: str, **fields: Any) -> None:
        self.view = evolve(self.view, revision=self.view.revision + 1, **fields)
        self.bus.publish(ConversationChanged(self.view, change))


def conversation_manager_from_settings(bus: Bus, settings: Any, *, user_id: str,
                                       participants: Iterable[Participant] = ()) -> ConversationManager:
    """Factory for the assembly: ``settings`` is the app's ``ConversationSettings``."""
    return ConversationManager(bus, user_id=user_id, config=config_from_settings(settings), participants=participants)
