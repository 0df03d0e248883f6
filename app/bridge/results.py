"""A client's answer to a query (a QueryResult): to the broker, a client's picture first described as the app's
camera pictures are (client_vision.py); the companion a client answers for is learnt (answering.py).

An answer from a client that was not asked that query (answering.py) goes to the broker as it came, which refuses
it: its picture is never decoded, and the client learns nothing from it."""

from __future__ import annotations

from collections.abc import Callable

from app.bridge.answering import Answering
from app.bridge.client import ClientSession
from app.bridge.client_vision import picture_of, with_description
from app.bridge.errors import ErrorCode, FrameRejected
from app.bridge.relay import Relay
from companions.common.tasks import TaskSet
from companions.wire.protocol import QueryResult
from companions.wire.query_broker import QueryBroker, Verdict


class ClientResults:
    """Takes the clients' query results; ``accepted`` counts those that answered a query first, ``described`` the
    pictures decoded to describe them."""

    def __init__(self, broker: QueryBroker, relay: Relay, answering: Answering, tasks: TaskSet,
                 reject: Callable[[ClientSession, FrameRejected], None]) -> None:
        self._broker = broker
        self._relay = relay
        self._answering = answering
        self._tasks = tasks
        self._reject = reject  # for a result rejected after a description: the frame was taken long ago
        self.accepted = 0
        self.described = 0

    def answer(self, client: ClientSession, result: QueryResult) -> None:
        """Raises :class:`FrameRejected` for a result the broker does not take."""
        query = self._relay.recent_query(result.id)
        picture = None
        if query is not None and query.params.type == "vision" and self._answering.may_answer(client, query):
            picture = picture_of(result)  # only the picture of a client that was asked is decoded
        if picture is not None and self._broker.is_pending(result.id):
            self._tasks.spawn(self._answer_described(client, result, picture), name=f"bridge-vision:{result.id}")
        else:
            self._submit(client, result)

    async def _answer_described(self, client: ClientSession, result: QueryResult, picture: bytes) -> None:
        """A client's picture gets the app camera's on-device description before the broker has it."""
        self.described += 1
        described = await with_description(result, picture)
        try:
            self._submit(client, described)
        except FrameRejected as rejected:
            self._reject(client, rejected)

    def _submit(self, client: ClientSession, result: QueryResult) -> None:
        verdict = self._broker.submit_result(result, client.key)
        if verdict in (Verdict.ACCEPTED, Verdict.FELL_BACK):
            self.accepted += verdict is Verdict.ACCEPTED
            query = self._relay.recent_query(result.id)
            if query is not None:
                self._answering.learn_companion(client, query.params.from_)
            return
        code = ErrorCode.FORBIDDEN if verdict is Verdict.NOT_ALLOWED else ErrorCode.REJECTED_RESULT
        raise FrameRejected(code, verdict.value, result.id)
