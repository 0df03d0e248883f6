"""Following a line while the model still writes it: the ``speak`` call's text, sentences, and a tool-text guard.

Three small incremental parsers, each fed the fragments of one streamed model request:

- :class:`MessageFieldExtractor` reads a tool call's JSON arguments as they stream (with pydantic's partial JSON
  parser) and yields the decoded text of one string field (``message`` for ``speak``) as soon as it is written:
  JSON escapes, ``\\uXXXX`` and surrogate pairs, an escape split across fragments, the key after other keys
  (nested values included), any whitespace.
- :class:`SentenceChunker` cuts text into sentences as it grows (Japanese 。！？, English .!? before a space,
  newlines), never a piece shorter than ``min_chars`` nor at an abbreviation ("Mr.") or a decimal ("3.5"), and
  hands out the rest at :meth:`SentenceChunker.flush`. Conversation control sends one ``speak`` query per
  sentence, so the voice starts at the first sentence while the rest is generated.
- :class:`ToolTextGuard` passes plain streamed text through until it looks like tool syntax or JSON
  (``{``, ``[``, ``<tool_call>``, ``<tools>``, ``functions.``, a code fence) and holds back everything from there:
  a small model that writes its tool call as text never shows it while it streams.

And :class:`CheckedSentences` releases a line being composed only sentence by sentence, as each passes the checks
that apply to a sentence, so what is shown and voiced early is never taken back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, Literal, Protocol

from pydantic_core import from_json

from companions.llm.text_tools import looks_like_tool_text


class MessageFieldExtractor:
    """Yields the decoded value of the top-level string field ``field`` of a JSON object as its text streams.

    ``feed`` returns the new characters of the value (possibly ""); once the value's closing quote was read,
    :attr:`complete` is True and further input is ignored. Input that is not a JSON object, a field whose value is
    not a string, or JSON that breaks off (a raw control character in a string, a lone surrogate: what the tool's
    own ``json.loads`` refuses too) yields nothing more (and never raises).

    The arguments so far are read again at every fragment by pydantic's partial JSON parser
    (``from_json(..., allow_partial="trailing-strings")``: an unfinished string is read as far as it goes, an escape
    cut in two is left out until it is whole); whether the value's closing quote came is the same parser without
    ``trailing-strings``, asked only when the fragment holds a quote. Re-reading costs more than the hand-written
    character reader this replaced, but nothing a user notices (bench/streamed_arguments.py against it in one run,
    load average 2.6): a 400-character line 0.37 ms in all instead of 0.13 ms, 6 µs for its last fragment; 4,000
    characters 13 ms instead of 1.4 ms, 33 µs for the last fragment, spread over the seconds the model writes them.
    """

    def __init__(self, field: str = "message") -> None:
        self.field = field
        self.complete = False
        self.failed = False
        self._arguments = ""  # everything fed so far
        self.text = ""  # everything yielded so far

    def feed(self, fragment: str) -> str:
        if self.complete or self.failed or not fragment:
            return ""
        self._arguments += fragment
        head = self._arguments.lstrip()
        if not head:
            return ""
        if not head.startswith("{"):
            self.failed = True
            return ""
        value = self._value("trailing-strings")
        if value is None:
            return ""
        if not value.startswith(self.text):  # never happens with a well-behaved parser: stop rather than repeat
            self.failed = True
            return ""
        new, self.text = value[len(self.text):], value
        if '"' in fragment and self._value(True) is not None:
            self.complete = True
        return new

    def _value(self, partial: Literal[True, "trailing-strings"]) -> str | None:
        """The field's value in the arguments so far (None while it has not begun or when reading failed)."""
        try:
            arguments = from_json(self._arguments, allow_partial=partial, cache_strings=False)
        except ValueError:
            self.failed = True
            return None
        value = arguments.get(self.field) if isinstance(arguments, dict) else None
        if value is not None and not isinstance(value, str):
            self.failed = True
            return None
        return value


# -- sentences --------------------------------------------------------------------------------------------------

_WHITESPACE: Final = " \t\r\n"
_CJK_ENDS: Final = "。！？｡．"  # end a sentence where they stand (Japanese needs no space after them)
_LATIN_ENDS: Final = ".!?…"  # end a sentence only before whitespace (so "3.5" and "example.com" stay whole)
_CLOSERS: Final = "\"'”’」』）)]】〕》>"
_ABBREVIATIONS: Final = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "no", "approx", "mt", "ca",
})
_QUOTE_GOES_ON: Final = "とっ"  # a quotation inside a sentence: 「…！」と言った, 「…。」って
_CUT_AFTER: Final = "、，,;；:："  # where an overlong sentence may be cut for an early start
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


class SentenceChunker:
    """Cuts streamed text into sentences for speech.

    ``feed(text)`` returns the sentences completed by ``text`` (stripped, each at least ``min_chars`` long);
    ``flush()`` returns what is left (the last sentence, or "" if nothing). A sentence longer than ``max_chars``
    without an end is cut after its last comma or space, so a long first sentence does not delay the voice.
    """

    def __init__(self, *, min_chars: int = 6, max_chars: int = 160) -> None:
        if min_chars < 1 or max_chars <= min_chars:
            raise ValueError("need 1 <= min_chars < max_chars")
        self.min_chars = min_chars
        self.max_chars = max_chars
        self._buffer = ""
        self._scanned = 0  # positions before this were looked at already

    def feed(self, text: str) -> list[str]:
        self._buffer += text
        out: list[str] = []
        while (cut := self._next_cut()) is not None:
            piece, self._buffer = self._buffer[:cut].strip(), self._buffer[cut:]
            self._scanned = 0
            if piece:
                out.append(piece)
        return out

    def flush(self) -> str:
        """The rest of the text (the last sentence, whatever its length); the chunker is empty afterwards."""
        rest, self._buffer, self._scanned = self._buffer.strip(), "", 0
        return rest

    @property
    def pending(self) -> str:
        """Text fed but not handed out yet."""
        return self._buffer

    def _next_cut(self) -> int | None:
        buffer = self._buffer
        i = self._scanned
        while i < len(buffer):
            char = buffer[i]
            end: int | None = None
            if char == "\n":
                end = i + 1
            elif char in _CJK_ENDS or char in _LATIN_ENDS:
                j = i + 1
                while j < len(buffer) and (buffer[j] in _CJK_ENDS or buffer[j] in _LATIN_ENDS
                                           or buffer[j] in _CLOSERS):
                    j += 1
                if j == len(buffer):
                    self._scanned = i  # what follows decides (a space, a digit, more punctuation)
                    return self._overlong()
                quoted = buffer[j - 1] in "」』" and buffer[j] in _QUOTE_GOES_ON  # 「えっ！」と驚いた。
                if (char in _CJK_ENDS and not quoted) or buffer[j] in _WHITESPACE:
                    end = j if not (char == "." and self._abbreviation(i)) else None
                i = j - 1
            if end is not None and len(buffer[:end].strip()) >= self.min_chars:
                return end
            i += 1
        self._scanned = len(buffer)
        return self._overlong()

    def _abbreviation(self, dot: int) -> bool:
        match = _WORD_BEFORE.search(self._buffer[:dot])
        if match is None:
            return False
        word = match.group(1).lower().rstrip(".")
        return word in _ABBREVIATIONS or len(word) == 1  # "J. Smith", "U.S."

    def _overlong(self) -> int | None:
        buffer = self._buffer
        if len(buffer) <= self.max_chars:
            return None
        window = buffer[: self.max_chars]
        cut = max(window.rfind(c) for c in (*_CUT_AFTER, " "))
        if cut + 1 < self.min_chars:
            return self.max_chars
        return cut + 1


# -- plain text that is really a tool call ----------------------------------------------------------------------

_MARKERS: Final = ("<tool_call>", "<tools>", "<function", "functions.", "```", '{"', "[{")
_START_MARKERS: Final = ("{", "[")


class ToolTextGuard:
    """Filters the plain text of one streamed request: what may be shown now, never tool syntax or JSON.

    Text is released as it comes while it reads like a line; a marker (at the start: ``{`` or ``[``; anywhere:
    ``<tool_call>``, ``<tools>``, ``<function``, ``functions.``, a code fence, ``{"``, ``[{``) stops the release
    for the rest of the request. A tail that may be the beginning of a marker waits for the next fragment.
    """

    def __init__(self) -> None:
        self._held = ""
        self._started = False  # the first visible characters were judged
        self.blocked = False

    def feed(self, fragment: str) -> str:
        if self.blocked:
            return ""
        self._held += fragment
        if not self._started:
            head = self._held.lstrip()
            if not head:
                return ""
            if looks_like_tool_text(head):  # one judgement of a reply's beginning, shared with text_tools
                if any(head.casefold().startswith(m) for m in (*_MARKERS, *_START_MARKERS, "✿function")):
                    self.blocked = True
                    self._held = ""
                return ""
            self._started = True
        text = self._held
        found = min((i for m in _MARKERS if (i := text.find(m)) >= 0), default=-1)
        if found >= 0:
            self.blocked = True
            self._held = ""
            return text[:found].rstrip()
        keep = _possible_marker_start(text)
        self._held = text[keep:]
        return text[:keep]

    def flush(self) -> str:
        """What was held back at the end of the request, when it did not become tool syntax."""
        held, self._held = self._held, ""
        if self.blocked or (not self._started and not held.strip()):
            return ""
        return held


def _possible_marker_start(text: str) -> int:
    """The position from which ``text``'s tail could begin a marker (len(text) when none could)."""
    for start in range(max(0, len(text) - max(len(m) for m in _MARKERS) + 1), len(text)):
        tail = text[start:]
        if any(m.startswith(tail) for m in _MARKERS):
            return start
    return len(text)


# -- what of a line may be shown and said before the line is complete -------------------------------------------


class TextFilter(Protocol):
    """What a streamed text passes through before it is shown (a turn's ``RunContext.stream_filter``)."""

    def feed(self, text: str) -> str: ...

    def flush(self) -> str: ...


class CheckedSentences:
    """Releases a line being streamed sentence by sentence, each sentence only once the line so far passed the
    checks that apply to a sentence; from the first that fails, nothing more of the request is released.

    Measured: a 0.5B model's first attempt was voiced early and streamed into the chat ("こんにちは！今日は
    みんな元気ですか。", the user's own words; the prompt itself, "(Instructions) # このターンの指示 ...") and then
    replaced. Here a sentence is first ``clean``-ed as the whole line will be (tool syntax, labels, copied
    instructions removed: it may become empty and is then skipped); a sentence that only repeats the message being
    answered (``echo``), or makes the line so far repeat it, is skipped wherever it comes (the line leaves it out
    too: composing.py; measured on the 0.5B model: "こんにちは！みんな元気ですか？少しでも話すのが楽しいですね。"
    answering "こんにちは！みんな元気？" was said as "こんにちは！" alone); then the line so far must pass ``flaw``
    (None: no flaw) and stay within ``max_chars``. What was released is
    :attr:`released`: the line that is finally said must begin with it (composing.py), so nothing shown or heard is
    taken back.
    """

    def __init__(self, *, clean: Callable[[str], str], flaw: Callable[[str], object | None],
                 echo: Callable[[str], bool] = lambda sentence: False, max_chars: int = 400) -> None:
        self._clean = clean
        self._flaw = flaw
        self._echo = echo
        self._max_chars = max_chars
        self._chunker = SentenceChunker()
        self.released = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """The text that may be shown now (whole, checked sentences; possibly "")."""
        return "".join(self._take(sentence) for sentence in self._chunker.feed(text))

    def flush(self) -> str:
        """The last sentence, checked, at the end of the request."""
        rest = self._chunker.flush()
        return self._take(rest) if rest else ""

    def _take(self, sentence: str) -> str:
        if self.stopped:
            return ""
        cleaned = self._clean(sentence).strip()
        if not cleaned or said_back(self.released, cleaned, self._echo):
            return ""
        candidate = self.released + cleaned
        if len(candidate) > self._max_chars or self._flaw(candidate) is not None:
            self.stopped = True
            return ""
        piece = joining(cleaned)
        self.released += piece
        return piece


def said_back(said: str, sentence: str, echo: Callable[[str], bool]) -> bool:
    """Whether ``sentence`` only repeats the message being answered (``echo``), or makes the line ``said`` before
    it repeat it: left out wherever it comes, while the line streams (:class:`CheckedSentences`) and from the whole
    line (composing.py)."""
    return echo(sentence) or echo(said + sentence)


def joining(sentence: str) -> str:
    """``sentence`` as it joins the line before it: with a space after it when it ends in a Latin letter or mark."""
    return sentence + (" " if sentence[-1].isascii() else "")
