"""Long-term recall: what a companion remembers from earlier conversations, brought into each of its turns.

A companion's context (companions/memory/context.py) holds the conversation on the screen, within ~2,000 tokens. What it
heard in earlier conversations, notes about the user written while idle (companions/memory/notes.py) and the
knowledge folders it may search are *recalled*: before it votes or speaks, the message it answers (with the line
before it when the message is short) is searched in the app's one search index through the :class:`Recall` port
(app/memory/recall.py), and the best items go into the prompt as one system message, after the stable prefix
(persona and conversation, which a server's prompt cache reuses) and before the turn's instructions, within a token
budget (300 by default: a small local model's prompt stays short), each dated ("On 8 May 2023, you said ...").

No language model is asked on the turn's path: recall is one hybrid search (keyword, semantic, graph) and a lookup
of what this companion heard. A companion recalls only lines it heard (the memory table knows who heard what), in
their current words (an edited line as edited, a deleted one never); lines still in its context are not recalled
twice. :class:`CompanionRecall` is what a companion holds: it remembers the last few messages' recall (the vote and
the reply answer the same message), honours the user's switch (memory off), and tells the bus what was recalled
(:class:`MemoryRecalled`, shown in the Turns panel).
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from companions.common.tasks import TaskSet
from companions.memory.context import estimate_tokens
from companions.wire.bus import LocalEvent
from companions.wire.protocol import Message

log = logging.getLogger(__name__)

RecalledKind = Literal["line", "note", "knowledge"]
DEFAULT_BUDGET_TOKENS: Final = 300
SHORT_QUERY_CHARS: Final = 24  # a message shorter than this is searched with the line before it ("why?", "and you?")
READY_WAIT_S: Final = 0.75  # a turn waits this long for its recall at most (a search takes tens of ms)
KEPT_TURNS: Final = 8  # messages whose recall is remembered (a vote and a reply answer the same message)
ITEM_CHARS: Final = 240  # a recalled item is cut to this (a long line must not take the whole budget)


class RecalledItem(BaseModel):
    """One thing recalled: a line heard (``message_id``), a note (``note:<id>``) or a knowledge passage."""

    model_config = ConfigDict(frozen=True)

    kind: RecalledKind
    message_id: str
    text: str
    at: float | None  # when it was said or noted (seconds since the epoch); None for knowledge
    score: float
    speaker_id: str = ""
    speaker_name: str = ""
    source: str = ""  # the conversation ("conversation:3"), the note's, or the knowledge file's path
    sources: tuple[str, ...] = ()  # a note's: the message ids of the lines it came from
    # A line of an imported conversation (or a note written from one): said elsewhere, whoever its speaker is.
    imported: bool = False

    @property
    def time_iso(self) -> str:
        """``at`` as ISO-8601 in UTC ("" for knowledge)."""
        if self.at is None:
            return ""
        return dt.datetime.fromtimestamp(self.at, dt.UTC).isoformat().replace("+00:00", "Z")


class Recall(Protocol):
    """The memory a companion recalls from (app/memory/recall.py: the search index and the memory table)."""

    async def recall(self, companion_id: str, text: str, *, before: float | None = None, limit: int | None = None,
                     exclude: Collection[str] = ()) -> list[RecalledItem]:
        """The items ``companion_id`` may recall for ``text``, best first, at most ``limit`` (the budget's worth
        when None); only lines said before ``before`` when given, none of the message ids in ``exclude``."""
        ...


@dataclass(frozen=True)
class MemoryRecalled(LocalEvent):
    """A companion recalled ``items`` for the message ``message_id`` (on ``events``; the Turns panel lists them)."""

    companion_id: str
    message_id: str
    items: tuple[RecalledItem, ...]


_MONTHS_EN: Final = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                     "October", "November", "December")
HEADING: Final = {  # the recall block's (a line reciting it is prompt text: composing.stock_instructions)
    "ja": "以前の会話などで覚えていること（必要なときだけ使ってください）:",
    "en": "What you remember from earlier conversations (use it only where it helps):",
}


def spoken_date(at: float, language: str) -> str:
    """A date as a person says it: "8 May 2023", "2023年5月8日" (local time)."""
    day = dt.datetime.fromtimestamp(at)
    if language == "ja":
        return f"{day.year}年{day.month}月{day.day}日"
    return f"{day.day} {_MONTHS_EN[day.month - 1]} {day.year}"


def item_line(item: RecalledItem, companion_id: str, language: str) -> str:
    """One recalled item as the prompt says it: dated, with who said it."""
    text = item.text if len(item.text) <= ITEM_CHARS else item.text[: ITEM_CHARS - 1] + "…"
    ja = language == "ja"
    if item.kind == "knowledge":
        name = item.source.rsplit("/", 1)[-1]
        return f"- 資料「{name}」より: {text}" if ja else f"- From your documents ({name}): {text}"
    when = spoken_date(item.at, language) if item.at is not None else ""
    if item.kind == "note":
        return f"- {when}のメモ: {text}" if ja else f"- Noted on {when}: {text}"
    who = item.speaker_name or item.speaker_id
    if item.imported:  # never "you said": nobody said it here, whatever name the file gave the speaker
        return (f"- {when}、取り込んだ会話で{who}が「{text}」と言いました。" if ja
                else f'- On {when}, in an imported conversation, {who} said: "{text}"')
    if item.speaker_id == companion_id:
        return f"- {when}、あなたは「{text}」と言いました。" if ja else f'- On {when}, you said: "{text}"'
    return f"- {when}、{who}が「{text}」と言いました。" if ja else f'- On {when}, {who} said: "{text}"'


def recall_block(items: Sequence[RecalledItem], *, companion_id: str, language: str,
                 budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> tuple[str, tuple[RecalledItem, ...]]:
    """The prompt's recall message for ``items`` (best first) within ``budget_tokens``, oldest first inside it
    (a story reads in order), and the items it holds; ("", ()) when none fits."""
    heading = HEADING["ja" if language == "ja" else "en"]
    used = estimate_tokens(heading)
    kept: list[tuple[RecalledItem, str]] = []
    for item in items:
        line = item_line(item, companion_id, language)
        cost = estimate_tokens(line)
        if used + cost > budget_tokens:
            continue  # a shorter item further down may still fit
        used += cost
        kept.append((item, line))
    if not kept:
        return "", ()
    ordered = sorted(kept, key=lambda pair: (pair[0].at is None, pair[0].at or 0.0))
    return "\n".join([heading, *(line for _, line in ordered)]), tuple(item for item, _ in kept)


def recall_query(message: Message, earlier: Sequence[str]) -> str:
    """What is searched for ``message``: its words, with the line before it when it is short ("why?")."""
    text = message.params.message.strip()
    if len(text) < SHORT_QUERY_CHARS and earlier:
        return f"{earlier[-1]}\n{text}"
    return text


class CompanionRecall:
    """One companion's recall: the port, the user's switch, the budget, and the last messages' recall.

    The companion calls :meth:`prepare_soon` when it hears a message it may answer (the search runs while the bus
    goes on delivering: hearing never waits for it), :meth:`ready` before it builds a prompt for that message, and
    :meth:`block_for` to place what was recalled (synchronous)."""

    def __init__(self, companion_id: str, recall: Recall, *, enabled: Callable[[], bool] = lambda: True,
                 budget_tokens: Callable[[], int] = lambda: DEFAULT_BUDGET_TOKENS,
                 publish: Callable[[MemoryRecalled], None] | None = None) -> None:
        self.companion_id = companion_id
        self.port = recall
        self.enabled = enabled
        self.budget_tokens = budget_tokens
        self.publish = publish
        self.tasks = TaskSet(f"recall:{companion_id}")
        self._kept: collections.OrderedDict[str, asyncio.Task[tuple[RecalledItem, ...]]] = collections.OrderedDict()
        self._published: set[str] = set()
        self._waited: set[str] = set()  # messages a prompt already waited for
        self._shown: dict[str, tuple[RecalledItem, ...]] = {}  # what each message's recall block holds

    def forget_cached(self) -> None:
        """Drops the remembered recall (the user erased memory: nothing recalled before is used again)."""
        for task in self._kept.values():
            task.cancel()
        self._kept.clear()
        self._published.clear()
        self._waited.clear()
        self._shown.clear()

    @property
    def closed(self) -> bool:
        """Closed (the companion stopped): nothing more is recalled."""
        return self.tasks.closed

    async def aclose(self) -> None:
        await self.tasks.aclose()

    def prepare_soon(self, message: Message, *, earlier: Sequence[str] = (),
                     in_context: Collection[str] = ()) -> asyncio.Task[tuple[RecalledItem, ...]]:
        """Starts recalling for ``message`` (once per message)."""
        key = message.params.id
        task = self._kept.get(key)
        if task is None or task.cancelled():
            task = self.tasks.spawn(self._recall(message, list(earlier), set(in_context)), name=f"recall:{key}")
            self._kept[key] = task
            while len(self._kept) > KEPT_TURNS:
                dropped, old = self._kept.popitem(last=False)
                old.cancel()
                self._published.discard(dropped)
                self._waited.discard(dropped)
                self._shown.pop(dropped, None)
        return task

    async def ready(self, message: Message, wait_s: float = READY_WAIT_S) -> tuple[RecalledItem, ...]:
        """What is recalled for ``message`` once its search is done (started now if it was not heard first); ()
        when it takes longer than ``wait_s`` (the search index's one thread busy with a file, say): the turn goes
        on without it, and a later prompt for the same message gets it if it is there by then. Only the first
        prompt for a message waits (the vote); the reply after it takes what there is."""
        task = self.prepare_soon(message)
        if message.params.id not in self._waited:
            self._waited.add(message.params.id)
            await asyncio.wait({task}, timeout=wait_s)
        return task.result() if task.done() and not task.cancelled() else ()

    async def _recall(self, message: Message, earlier: list[str], in_context: set[str]) -> tuple[RecalledItem, ...]:
        """Nothing while the user has memory off or the budget is 0; a failing search recalls nothing either (the
        turn goes on without it)."""
        if not self.enabled() or self.budget_tokens() <= 0:
            return ()
        key = message.params.id
        try:
            return tuple(await self.port.recall(self.companion_id, recall_query(message, earlier),
                                                exclude={key, *in_context}))
        except Exception:  # recall is a help, never a reason for a turn to fail
            log.exception("%s: recall failed", self.companion_id)
            return ()

    def holds_imported(self, message: Message | None) -> bool:
        """Whether a recall block given for ``message`` held a line said elsewhere (an imported conversation's):
        untrusted text in that turn's prompt (the companion's turn then answers to it: companions/trust)."""
        return any(item.imported for item in self.shown(message))

    def shown(self, message: Message | None) -> tuple[RecalledItem, ...]:
        """What the recall block given for ``message`` held (its speakers and files are where its words came from:
        companions/trust), () before one was given."""
        return self._shown.get(message.params.id, ()) if message is not None else ()

    def block_for(self, message: Message | None, language: str) -> str:
        """The prompt's recall message for ``message`` ("" when nothing was recalled for it, or not yet); the first
        time, the bus hears what it holds (:class:`MemoryRecalled`)."""
        if message is None or not self.enabled():
            return ""
        task = self._kept.get(message.params.id)
        if task is None or not task.done() or task.cancelled():
            return ""
        text, shown = recall_block(task.result(), companion_id=self.companion_id, language=language,
                                   budget_tokens=self.budget_tokens())
        self._shown[message.params.id] = tuple(shown)
        if self.publish is not None and message.params.id not in self._published:
            self._published.add(message.params.id)
            self.publish(MemoryRecalled(self.companion_id, message.params.id, shown))
        return text
