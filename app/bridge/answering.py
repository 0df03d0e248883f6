"""Which queries a bridge client is asked first, and the ``speak`` queries the bridge answers for a client.

A client is asked a query type first (before the app's camera or voice; see companions/query_broker.py) when:
* its hello lists it (``"answers": ["vision"]``, optionally ``"companions": ["akari"]``);
* its dialect implies it: the older client (``legacy``) answers ``vision`` for its companion, and says every line
  of its companion itself, so the bridge answers that companion's ``speak`` queries for it at once (the app then
  never says those lines aloud);
* the settings list the type (``bridge.client_answers``) for clients that do not announce themselves;
* it answered a query of that type the app had already answered: from then on it is asked first.

A client's companion is its URL's ``?companion=``, its hello's ``companions``, or learnt: the one companion a
``legacy`` client's messages are addressed to, or the companion whose query it answered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from app.bridge.client import ClientSession
from app.bridge.dialects import Dialect
from companions.protocol import Query, QueryResult, QueryResultBody
from companions.query_broker import QueryBroker

log = logging.getLogger(__name__)


class Answering:
    """Keeps the broker's view of each client (what it is asked first, for whom) up to date."""

    def __init__(self, broker: QueryBroker, *, settings_types: Iterable[str] = (), grace_s: float = 3.0) -> None:
        self._broker = broker
        self.settings_types = tuple(dict.fromkeys(settings_types))
        self.grace_s = grace_s

    def admitted(self, client: ClientSession) -> None:
        """A client is in (or changed its hello or dialect): what it answers follows from them."""
        if client.dialect is Dialect.LEGACY:
            client.speaks_itself = True
            self.add(client, ["vision"])
        elif client.dialect is Dialect.REFERENCE and self.settings_types:
            self.add(client, self.settings_types)
        else:
            self.register(client)

    def add(self, client: ClientSession, types: Iterable[str]) -> None:
        client.answers = list(dict.fromkeys([*client.answers, *types]))
        self.register(client)

    def register(self, client: ClientSession) -> None:
        types = [t for t in client.answers if not (t == "speak" and client.speaks_itself)]
        if client.speaks_itself and client.companions:
            types.append("speak")  # only for its own companion: the bridge answers them (see speak_for)
        if types:
            self._broker.register_external(client.key, types, companions=client.companions, grace_s=self.grace_s)
        else:
            self._broker.unregister_external(client.key)

    def learn_companion(self, client: ClientSession, companion: str) -> None:
        """``companion`` is the one this client stands for (only the first one learnt counts)."""
        if client.companions is not None:
            return
        client.companions = {companion}
        log.info("bridge: client %s stands for %s", client.key, companion)
        self.register(client)

    def learn_from_late_answer(self, client: ClientSession, query: Query | None) -> None:
        """The client answered ``query`` after the app did: ask it first for that type (and companion)."""
        if query is None:
            return
        if query.params.type not in client.answers:
            log.info("bridge: client %s answers %s queries; it is asked first from now on", client.key,
                     query.params.type)
            self.add(client, [query.params.type])
        self.learn_companion(client, query.params.from_)

    def speak_for(self, client: ClientSession, query: Query) -> QueryResult | None:
        """The answer the bridge gives for a client that says its companion's lines itself, or ``None``."""
        if (not client.speaks_itself or query.params.type != "speak" or client.companions is None
                or query.params.from_ not in client.companions):
            return None
        body = {"duration": 0.0, "interrupted": False, "skipped": True, "voice": f"client {client.key}",
                "reason": "the client says this companion's lines itself"}
        return QueryResult(id=query.id, result=QueryResultBody(success=True, body=body))
