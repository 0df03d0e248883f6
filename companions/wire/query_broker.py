"""The query broker: sends Queries over the bus and matches their QueryResults (seed 000), without leaks.

Every query the broker knows is a *pending entry* ``id -> (query, allowed responders, future, timer)``. The entry
is removed, and its timer cancelled, on whichever comes first: an accepted result, the timeout, the caller's
cancellation, the loss of every allowed responder, or :meth:`QueryBroker.aclose`. Results for ids that are not
pending are dropped and counted (``duplicates`` when the id was answered recently, ``strays`` otherwise).

Who may answer (decided when the query is opened):

* the **external responders** registered for its type and its companion (:meth:`QueryBroker.register_external`:
  the bridge registers a client under a connection-unique id for the types it answers, optionally for some
  companions only, and hands the client's results in with :meth:`QueryBroker.submit_result` naming that id) are
  asked *first*. The **in-process responder** of the type (:meth:`QueryBroker.register`: the app's camera, its
  voice), if there is one, answers instead when they are all gone, when one of them answers unsuccessfully, or
  after their grace (``grace_s``, plus the time a ``speak`` line takes to say, :func:`client_grace`): a *fallback*.
  After a fallback a late client answer still wins (the app's task is cancelled: its speech stops).
* With no matching external responder, the in-process responder alone answers, as an owned task.
* Nobody: the query gets the error result ``unsupported query type: X`` at once.

A result from any responder that was not allowed is rejected (``rejected``), so a client cannot answer another
client's queries.

Who may use the app's devices (companions/trust/policy.py): a query sent through
:meth:`QueryBroker.send_query` comes from this app's own companions (their tools and lines) and is answered. A query
*published on the bus by others* (a bridge client: the bridge puts it there) reaches the in-process responder (the
camera, the voice) only when its ``from`` is a companion elsewhere (a guest) and the trust policy allows it: a
remembered *Always*, or the user's answer to the prompt in the window; headless or without an answer in time it is
refused. Such a query from the user's id, a ``user_<name>`` id, this app's own companions' ids or any other id is
refused at once, without asking (``refused``): none of them is who it says, since the window's user and companions never
publish queries. The check runs where the device would be used (the in-process responder is about to answer: at once, or
as the fallback of clients asked first), so a client that answers for its own companion is never held up by it.

Results therefore reach the broker *attributed*, never as anonymous bus items: a QueryResult that someone else
publishes on the bus cannot say who answered, so it is counted (``unattributed``) and ignored. Every final result
(accepted, timeout, failure) is then published on the ``queries`` topic, so observers and the client that asked
(for queries published on the bus by others, e.g. a bridge client) see it.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from companions.common.tasks import TaskSet
from companions.devices.query_bodies import SpeakRequest
from companions.trust.policy import Capability, Permission, Relation, TrustPolicy, refusal
from companions.wire.bus import Bus, BusItem, Subscription
from companions.wire.protocol import Query, QueryResult
from companions.wire.query_ports import QueryResponder

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S: Final = 30.0
IN_PROCESS: Final = "in-process"
_RECENT_IDS: Final = 4096  # answered ids kept to tell a duplicate from a stray
_OWN_ITEMS_CAP: Final = 65_536  # bound on items published and not yet seen back (the bus may drop some)
DEFAULT_GRACE_S: Final = 3.0
SPOKEN_CHARS_PER_S: Final = 5.0  # slower than any voice reads (Japanese ~8, English ~15 characters/s)
DEVICE_CAPABILITIES: Final[dict[str, Capability]] = {"vision": Capability.CAMERA, "speak": Capability.VOICE}


def client_grace(query: Query, grace_s: float) -> float:
    """How long a client is given before the app answers ``query`` itself: ``grace_s``, and for a ``speak``
    query also the time its line takes to say (a client answers a ``speak`` query once it has said it)."""
    if query.params.type != "speak":
        return grace_s
    return grace_s + len(SpeakRequest.message_of(query)) / SPOKEN_CHARS_PER_S


class Verdict(enum.Enum):
    """What :meth:`QueryBroker.submit_result` did with a result."""

    ACCEPTED = "accepted"
    STRAY = "no such pending query"
    DUPLICATE = "query already answered"
    NOT_ALLOWED = "responder not allowed to answer this query"
    FELL_BACK = "the app answers this query itself"  # an unsuccessful client answer: the in-process responder


@dataclass
class BrokerStats:
    sent: int = 0  # queries sent with send_query
    observed: int = 0  # queries published on the bus by others
    resolved: int = 0  # answered by an allowed responder
    timed_out: int = 0
    cancelled: int = 0
    unsupported: int = 0
    responder_failures: int = 0
    strays: int = 0
    duplicates: int = 0
    rejected: int = 0
    unattributed: int = 0
    fallbacks: int = 0  # queries the app answered after asking a client first
    refused: int = 0  # queries from others that the app's devices did not answer (trust)


@dataclass(frozen=True)
class External:
    """An external responder: the query types it answers, for which companions (``None``: all), its grace."""

    types: frozenset[str]
    companions: frozenset[str] | None = None
    grace_s: float = DEFAULT_GRACE_S

    def answers(self, query: Query) -> bool:
        return query.params.type in self.types and (self.companions is None or query.params.from_ in self.companions)


@dataclass(eq=False)
class _Pending:
    query: Query
    responders: frozenset[str]
    future: asyncio.Future[QueryResult] | None
    timeout: float
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None
    fallback: QueryResponder | None = None  # the in-process responder, while the clients are asked first
    fallback_timer: asyncio.TimerHandle | None = None
    observed: bool = False  # published on the bus by others (not through send_query): the trust rule applies


class QueryBroker:
    """Implements :class:`companions.wire.query_ports.QuerySender`; also a runtime component (``start``/``stop``)."""

    name = "query-broker"

    def __init__(self, bus: Bus, *, default_timeout: float = DEFAULT_TIMEOUT_S,
                 trust: TrustPolicy | None = None) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self._bus = bus
        self.default_timeout = default_timeout
        # Without a policy nobody can be asked: a query published by others never reaches the app's devices.
        self.trust = trust or TrustPolicy(bus=bus)
        self.stats = BrokerStats()
        self._responders: dict[str, QueryResponder] = {}
        self._external: dict[str, External] = {}
        self._pending: dict[str, _Pending] = {}
        self._answered: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._own: dict[int, BusItem] = {}  # id(item) -> item; strong refs keep the ids unique
        self._tasks = TaskSet("query-broker")
        self._subscription: Subscription | None = None
        self._live_timers = 0
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._ensure_started()

    async def stop(self) -> None:
        await self.aclose()

    def _ensure_started(self) -> None:
        if self._subscription is None and not self._closed:
            # Direct: the handler never blocks, and a query published by others is pending (its timer armed,
            # its responder running) before their publish returns; the broker's own items cost no task wake-up.
            self._subscription = self._bus.subscribe("queries", self._on_bus_item, name="query-broker",
                                                     direct=True)

    async def aclose(self) -> None:
        """Fails every pending query with a clear error, stops the responders and leaves the bus."""
        if self._closed:
            return
        self._closed = True
        for entry in list(self._pending.values()):
            self._finish(entry, QueryResult.fail(entry.query.id, "the query broker shut down"))
        if self._subscription is not None:
            self._subscription.close()
        await self._tasks.aclose()
        await self.trust.aclose()  # consent prompts still on screen go away (their requests are refused)
        self._own.clear()

    # -- registration ------------------------------------------------------------------------------------------

    def register(self, responder: QueryResponder) -> None:
        """Registers the in-process responder for ``responder.query_type`` (one per type)."""
        query_type = responder.query_type
        if query_type in self._responders:
            raise ValueError(f"a responder for query type {query_type!r} is already registered")
        self._responders[query_type] = responder

    def register_external(self, responder_id: str, query_types: Iterable[str], *,
                          companions: Iterable[str] | None = None, grace_s: float = DEFAULT_GRACE_S) -> None:
        """Lets the external responder ``responder_id`` (e.g. one bridge connection) answer these types, for the
        queries of ``companions`` only (``None``: every companion's), before the in-process responder (see the
        module's docstring). Registering again replaces what it answers (queries already open keep theirs)."""
        if responder_id == IN_PROCESS:
            raise ValueError(f"{IN_PROCESS!r} is reserved for in-process responders")
        self._external[responder_id] = External(
            frozenset(query_types), None if companions is None else frozenset(companions), grace_s)

    def unregister_external(self, responder_id: str) -> None:
        """Forgets an external responder; its open queries go to the app's responder, or fail at once."""
        self._external.pop(responder_id, None)
        for entry in list(self._pending.values()):
            if responder_id in entry.responders:
                entry.responders = entry.responders - {responder_id}
                if entry.fallback is not None and entry.responders.isdisjoint(self._external):
                    self._fall_back(entry)
                elif not entry.responders:
                    error = f"the responder for query type {entry.query.params.type!r} disconnected"
                    self._finish(entry, QueryResult.fail(entry.query.id, error))

    def externals(self) -> dict[str, External]:
        """The external responders and what each answers (for the settings: who answers which query)."""
        return dict(self._external)

    def responders_for(self, query_type: str, companion: str | None = None) -> frozenset[str]:
        """Who is asked first for a query of this type (from ``companion``) if it were sent now."""
        probe = Query.create(from_=companion or "-", type=query_type)
        asked = frozenset(rid for rid, ext in self._external.items()
                          if query_type in ext.types and (companion is None or ext.answers(probe)))
        if asked or query_type not in self._responders:
            return asked
        return frozenset({IN_PROCESS})

    # -- introspection -----------------------------------------------------------------------------------------

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    @property
    def timer_count(self) -> int:
        """Timeout timers scheduled and not yet fired or cancelled."""
        return self._live_timers

    @property
    def task_count(self) -> int:
        return len(self._tasks)

    def is_pending(self, query_id: str) -> bool:
        return query_id in self._pending

    # -- sending and answering ---------------------------------------------------------------------------------

    async def send_query(self, query: Query, timeout: float | None = None, *,
                         clients_only: bool = False) -> QueryResult:
        """Publishes ``query`` and returns its result, or an error result (timeout, unsupported, shutdown).
        ``clients_only``: the external responders registered for it answer, never the in-process one (a look through
        a client's own camera: companions/trust/policy.py ``NOT_THIS_COMPUTERS``); with none, it fails at once."""
        if self._closed:
            return QueryResult.fail(query.id, "the query broker is closed")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be positive")
        if query.id in self._pending:
            return QueryResult.fail(query.id, f"a query with id {query.id!r} is already pending")
        self._ensure_started()
        self.stats.sent += 1
        future: asyncio.Future[QueryResult] = asyncio.get_running_loop().create_future()
        entry = self._open(query, future, self.default_timeout if timeout is None else timeout, publish=True,
                           clients_only=clients_only)
        try:
            return await future
        finally:
            if self._pending.get(query.id) is entry:  # the caller was cancelled
                self.stats.cancelled += 1
                self._discard(entry)

    def submit_result(self, result: QueryResult, responder: str) -> Verdict:
        """Hands in a result from ``responder`` (an external responder id); resolves its query if allowed."""
        entry = self._pending.get(result.id)
        if entry is None:
            if result.id in self._answered:
                self.stats.duplicates += 1
                return Verdict.DUPLICATE
            self.stats.strays += 1
            return Verdict.STRAY
        if responder not in entry.responders:
            self.stats.rejected += 1
            log.warning("query %s (%s): result from %r rejected (allowed: %s)", result.id,
                        entry.query.params.type, responder, ", ".join(sorted(entry.responders)))
            return Verdict.NOT_ALLOWED
        if not result.succeeded and entry.fallback is not None:
            log.info("query %s (%s): %r could not answer (%s); the app answers", result.id,
                     entry.query.params.type, responder, result.error or "unsuccessful")
            self._fall_back(entry)
            return Verdict.FELL_BACK
        self.stats.resolved += 1
        self._finish(entry, result)
        return Verdict.ACCEPTED

    # -- internals ---------------------------------------------------------------------------------------------

    def _open(self, query: Query, future: asyncio.Future[QueryResult] | None, timeout: float, *,
              publish: bool, clients_only: bool = False) -> _Pending:
        query_type = query.params.type
        asked = {rid: ext for rid, ext in self._external.items() if ext.answers(query)}
        responder = None if clients_only else self._responders.get(query_type)
        entry = _Pending(query, frozenset(asked) if asked or responder is None else frozenset({IN_PROCESS}),
                         future, timeout, observed=not publish)
        self._pending[query.id] = entry
        if publish:
            self._publish_own(query)
        if self._pending.get(query.id) is not entry:
            return entry  # answered while it was published (a direct subscriber)
        if not entry.responders:
            self.stats.unsupported += 1
            error = (f"no client answers {query_type!r} for {query.params.from_} now" if clients_only
                     else f"unsupported query type: {query_type}")
            self._finish(entry, QueryResult.fail(query.id, error))
            return entry
        loop = asyncio.get_running_loop()
        entry.timer = loop.call_later(timeout, self._on_timeout, entry)
        self._live_timers += 1
        if responder is not None and asked:
            entry.fallback = responder
            grace = max(client_grace(query, ext.grace_s) for ext in asked.values())
            entry.fallback_timer = loop.call_later(grace, self._fall_back, entry)
        elif responder is not None:
            entry.task = self._tasks.spawn(self._run_responder(responder, entry), name=f"query:{query_type}")
        return entry

    def _fall_back(self, entry: _Pending) -> None:
        """The app's own responder answers a query its clients were asked first (they may still answer)."""
        responder, entry.fallback = entry.fallback, None
        if entry.fallback_timer is not None:
            entry.fallback_timer.cancel()
            entry.fallback_timer = None
        if responder is None or self._pending.get(entry.query.id) is not entry:
            return
        self.stats.fallbacks += 1
        entry.responders = entry.responders | {IN_PROCESS}
        entry.task = self._tasks.spawn(self._run_responder(responder, entry), name=f"query:{entry.query.params.type}")

    async def _permitted(self, query: Query) -> Permission | str:
        """Whether the app's device may answer ``query``, published on the bus by someone else (see the module's
        docstring): the policy's answer for a guest companion, the reason of the refusal for anyone else."""
        capability = DEVICE_CAPABILITIES.get(query.params.type)
        if capability is None:
            return f"Not allowed: nobody outside this app may ask its {query.params.type!r} responder."
        source = self.trust.source(query.params.from_)
        if source.relation is Relation.GUEST:
            return await self.trust.permit(source, capability, query.params.type)
        log.warning("query %s (%s) from %r (%s) published by others: refused", query.id, query.params.type,
                    source.id, source.relation)
        return refusal(source, capability, "the app's devices answer only its own companions, and companions "
                                           "elsewhere that the user allowed")

    async def _run_responder(self, responder: QueryResponder, entry: _Pending) -> None:
        query = entry.query
        try:
            if entry.observed:
                permission = await self._permitted(query)
                if isinstance(permission, str) or not permission.allowed:
                    self.stats.refused += 1
                    if self._pending.get(query.id) is entry:
                        reason = permission if isinstance(permission, str) else permission.reason
                        self._finish(entry, QueryResult.fail(query.id, reason))
                    return
            result = await responder.respond(query)
            if not isinstance(result, QueryResult) or result.id != query.id:
                raise TypeError("the responder did not return a QueryResult for this query")
        except Exception as err:
            self.stats.responder_failures += 1
            log.exception("%s responder failed on query %s", query.params.type, query.id)
            result = QueryResult.fail(query.id, f"{query.params.type} responder failed: {err}")
        if self._pending.get(query.id) is entry:
            self.stats.resolved += 1
            self._finish(entry, result)

    def _on_timeout(self, entry: _Pending) -> None:
        entry.timer = None
        self._live_timers -= 1
        if self._pending.get(entry.query.id) is entry:
            self.stats.timed_out += 1
            error = f"query {entry.query.params.type!r} timed out after {entry.timeout:g} s"
            self._finish(entry, QueryResult.fail(entry.query.id, error))

    def _discard(self, entry: _Pending) -> None:
        """Removes a pending entry: its timer is cancelled and its responder task (unless running us) stopped."""
        if self._pending.get(entry.query.id) is entry:
            del self._pending[entry.query.id]
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
            self._live_timers -= 1
        entry.fallback = None
        if entry.fallback_timer is not None:
            entry.fallback_timer.cancel()
            entry.fallback_timer = None
        task, entry.task = entry.task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def _finish(self, entry: _Pending, result: QueryResult) -> None:
        self._discard(entry)
        self._answered[entry.query.id] = None
        if len(self._answered) > _RECENT_IDS:
            self._answered.popitem(last=False)
        if entry.future is not None and not entry.future.done():
            entry.future.set_result(result)
        self._publish_own(result)

    def _publish_own(self, item: Query | QueryResult) -> None:
        if self._subscription is not None and not self._closed:
            if len(self._own) >= _OWN_ITEMS_CAP:
                del self._own[next(iter(self._own))]
            self._own[id(item)] = item
        self._bus.publish(item)

    def _on_bus_item(self, item: BusItem) -> None:
        if self._own.get(id(item)) is item:
            del self._own[id(item)]
            return
        if isinstance(item, Query):
            if item.id in self._pending or item.id in self._answered:
                log.warning("query id %s seen again on the bus; ignored", item.id)
                return
            self.stats.observed += 1
            self._open(item, None, self.default_timeout, publish=False)
        elif isinstance(item, QueryResult):
            self.stats.unattributed += 1
            log.warning("anonymous QueryResult %s on the bus ignored: results must come through the broker",
                        item.id)
