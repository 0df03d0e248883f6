"""Which queries a bridge client is asked first, and the ``speak`` queries the bridge answers for a client.

A client is asked a query type first (before the app's camera or voice; see companions/wire/query_broker.py) only in the
documented ways, and only for the companions it stands for:
* its hello lists the types and the companions (``"answers": ["vision"], "companions": ["akari"]``; a hello with
  ``answers`` and no companion, neither in the hello nor in the URL's ``?companion=``, is refused);
* its dialect implies it: the older client (``legacy``) answers ``vision`` for its one companion (the URL's
  ``?companion=``, or the one companion its messages are addressed to), and says every line of that companion
  itself, so the bridge answers that companion's ``speak`` queries for it at once (the app then never says those
  lines aloud);
* the settings list the type (``bridge.client_answers``) for the reference framework's clients, which do not
  announce themselves: the user chose to ask every such client first, for every companion (or for the URL's
  ``?companion=``, or for the companion whose query it answered first).

Nothing else makes a client an answerer: a client that answers a query it was not asked is refused, and learns
nothing from it (it used to be asked first from then on, so any client could silence the app's voice).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from app.bridge.client import ClientSession
from app.bridge.dialects import Dialect
from companions.devices.query_bodies import SpeakResult
from companions.wire.protocol import Query, QueryResult
from companions.wire.query_broker import QueryBroker

log = logging.getLogger(__name__)


class Answering:
    """Keeps the broker's view of each client (what it is asked first, for whom) up to date."""

    def __init__(self, broker: QueryBroker, *, settings_types: Iterable[str] = (), grace_s: float = 3.0) -> None:
        self._broker = broker
        self.settings_types = tuple(dict.fromkeys(settings_types))
        self.grace_s = grace_s

    def admitted(self, client: ClientSession) -> None:
        """A client is in (or changed its hello or dialect): what it answers follows from them."""
        client.any_companion = False
        if client.dialect is Dialect.LEGACY:
            client.speaks_itself = True
            self.add(client, ["vision"])
        elif client.dialect is Dialect.REFERENCE and self.settings_types:
            client.any_companion = True  # the user's choice: see the module's docstring
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
        if types and (client.companions or client.any_companion):
            self._broker.register_external(client.key, types, companions=client.companions, grace_s=self.grace_s)
        else:
            self._broker.unregister_external(client.key)

    def may_answer(self, client: ClientSession, query: Query) -> bool:
        """True when ``client`` is asked ``query`` (so its answer is worth reading at all)."""
        external = self._broker.externals().get(client.key)
        return external is not None and external.answers(query)

    def learn_companion(self, client: ClientSession, companion: str) -> None:
        """``companion`` is the one this client stands for (only the first one learnt counts)."""
        if client.companions is not None:
            return
        client.companions = {companion}
        log.info("bridge: client %s stands for %s", client.key, companion)
        self.register(client)

    def speak_for(self, client: ClientSession, query: Query) -> QueryResult | None:
        """The answer the bridge gives for a client that says its companion's lines itself, or ``None``."""
        if (not client.speaks_itself or query.params.type != "speak" or client.companions is None
                or query.params.from_ not in client.companions):
            return None
        return SpeakResult(success=True, skipped=True, voice=f"client {client.key}",
                           reason="the client says this companion's lines itself").answer(query)
