"""What makes a composed line one worth saying, and the turn instructions that ask for it.

Small local models answer English questions in Japanese, repeat the previous speaker, write another companion's
name as a prefix, write tool calls as text, and ramble. The companion asks for the right language and length in
the turn's instructions, and :func:`line_of` turns whatever came back (a ``speak`` call, a tool call written as
text, or plain prose) into a line: tool syntax and JSON dropped, names stripped, cut to the persona's length.
:func:`compose_line` retries once when the line repeats one of the recent lines (detected without an LLM) and
then falls back to a short line, so a companion never says the same thing twice in a row.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from companions.cards.card import CompanionCard
from companions.cards.lore import HEADING as LORE_HEADING
from companions.common.languages import LANGUAGES
from companions.common.untrusted_data import parse_json
from companions.companion.filler import FillerReason
from companions.companion.hooks import Abort, Continue, ControlFlow, ToolCallResult, WorkerHook
from companions.companion.lines import (
    FALLBACK_WORDINGS,
    NAME_MARK,
    NO_INSTRUCTIONS,
    Instructions,
    card_sample_lines,
    contradicts_itself,
    cut_off_quote,
    detect_language,
    every_sentence,
    fallback_line,
    folded,
    has_words,
    is_repeat,
    limit_length,
    made_of,
    only_a_date,
    only_a_greeting,
    only_unspoken,
    quotes_whole,
    reads_like_recalled_entry,
    repeats_itself,
    sentences_of,
    similarity,
    sounds_like_an_assistant,
    without_assistant_talk,
    without_dates,
    without_recalled_entries,
    without_sentences,
    without_unspoken,
    written_in_chinese,
    written_in_japanese_script,
)
from companions.companion.prompts import prompt_texts
from companions.companion.speech_stream import joining, said_back
from companions.conversation.early_speech import remainder
from companions.llm.text_tools import parse_text_tool_calls, strip_tool_text
from companions.llm.types import ToolSpec
from companions.memory.recall import HEADING as RECALL_HEADING
from companions.tools.builtins import PlannedSpeech
from companions.wire.protocol import EMOTIONS, Emotion, Message

log = logging.getLogger(__name__)

LANGUAGE_NOTE: Final = {"ja": "日本語で答えてください。", "en": "Reply in English."}
LENGTH_NOTE: Final = {"ja": "自分のセリフだけを{n}文字以内で。", "en": "Only your own line, at most {n} characters."}
ONLY_LANGUAGE_NOTE: Final = {"ja": "日本語だけで答えてください。英語は使いません。",
                              "en": "Answer in English only, without any Japanese."}
IDENTITY_NOTE: Final = {"ja": "あなたは{name}です。{name}として、自分の言葉で話してください。",
                         "en": "You are {name}. Speak as {name}, in your own words."}
REPEAT_NOTE: Final = {"ja": "直前の発言を繰り返さず、新しいことを短く言ってください。",
                      "en": "Do not repeat what was just said; say something new, briefly."}


@dataclass(frozen=True)
class FillerLine(PlannedSpeech):
    """A stock line said because the model gave nothing worth saying; ``reason`` says why
    (companions/companion/filler.py: the published message is marked with it)."""

    reason: FillerReason = "repeat"


def reply_language(message: Message | None, default: str) -> str:
    """The language to answer ``message`` in: the one it is written in, else ``default``."""
    found = detect_language(message.params.message) if message is not None else None
    return found or default


def turn_notes(language: str, max_chars: int) -> list[str]:
    """The instructions every turn gets: the language of the answer and the length of the line."""
    return [LANGUAGE_NOTE.get(language, LANGUAGE_NOTE["en"]),
            LENGTH_NOTE.get(language, LENGTH_NOTE["en"]).format(n=max_chars)]


def repeat_note(language: str) -> str:
    return REPEAT_NOTE.get(language, REPEAT_NOTE["en"])


def identity_note(language: str, name: str) -> str:
    return IDENTITY_NOTE.get(language, IDENTITY_NOTE["en"]).format(name=name)


_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")
_NUMBER_FIELDS: Final = frozenset({"max_chars", "n"})  # filled with a number: copied with any number


def _template(text: str) -> str:
    """An instruction text as a line may copy it: a number's placeholder as a number, the companion's name as
    :data:`NAME_MARK` (its name in a line is compared as that mark: measured on the 0.5B model,
    "あかりとして、私のセリフだけを日本語で言う。", the rule with her name, was kept while the rule was compared
    without it), the card's other fields left out (what the card says is the companion's own: its sample line may
    be said)."""
    return _PLACEHOLDER.sub(
        lambda m: "0" if m.group(1) in _NUMBER_FIELDS else NAME_MARK if m.group(1) == "name" else "", text)


def stock_instructions() -> tuple[str, ...]:
    """Every instruction text of the prompts, in every language of them: the system prompt's own words, the turn's
    guidance, the events and vote prompts, the closing hints (resources/prompts/*.toml), the turn notes and the
    headings of the blocks a prompt may hold (what the companion recalls, what its lorebook brought up)."""
    texts: list[str] = []
    for language in LANGUAGES:
        for field in dataclasses.fields(texts_of := prompt_texts(language)):
            value = getattr(texts_of, field.name)
            texts.extend(value.values() if isinstance(value, dict) else [value])
    for notes in (LANGUAGE_NOTE, LENGTH_NOTE, ONLY_LANGUAGE_NOTE, IDENTITY_NOTE, REPEAT_NOTE, RECALL_HEADING,
                  LORE_HEADING):
        texts.extend(notes.values())
    texts.extend(ECHOED_HEADINGS)
    return tuple(_template(text) for text in texts if text)


def card_instructions(card: CompanionCard) -> tuple[str, ...]:
    """The instructions of ``card``'s events, in every language they are written in."""
    found: list[str] = []
    for condition in card.events.conditions:
        for step in condition.execute:
            found.extend([step.instruction] if isinstance(step.instruction, str) else step.instruction.values())
    return tuple(found)


def instructions_for(card: CompanionCard | None = None) -> Instructions:
    """What a line of ``card``'s companion must not copy: the stock instructions and its events' instructions."""
    if card is None:
        return Instructions.of(stock_instructions())
    names = tuple(dict.fromkeys(card.name(language) for language in LANGUAGES))
    return Instructions.of((*stock_instructions(), *card_instructions(card)), names)


def strip_echoed(text: str, notes: Sequence[str]) -> str:
    """``text`` without the lines a small model copied from the turn's instructions (measured on a 0.5B model:
    "こんにちは！\n\n日本語で答えてください。\n\n81文字以内で、…" was its whole reply)."""
    marks = [_plain(n) for n in notes if len(_plain(n)) >= 6]
    kept = []
    for whole in text.splitlines():
        # an instructions mark or heading within a line ends what the model meant to say (measured: "…こんばんです。
        # (Instruction) # このターンの指示")
        line = whole[:found.start()] if (found := _INLINE_MARK.search(whole)) is not None else whole
        plain = _plain(_LIST_MARK.sub("", line))
        # a copy with a word changed is a copy too (measured: "- 自己のセリフだけを69文字以内で。")
        if (_INSTRUCTION_LINE.match(line) or _form_line().match(line) or any(h in plain for h in _HEADINGS)
                or (plain and any(plain in m or m in plain or similarity(plain, m) >= ECHO_SIMILARITY
                                  for m in marks))):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


PROMPT_COPY_CHARS: Final = 12  # shorter stretches ("こんにちは") are shared by any line and any prompt


def strip_prompt_copies(text: str, prompt: str) -> str:
    """``text`` without its lines that copy a stretch of the companion's own system ``prompt`` (measured on a 0.5B
    model: its persona recited, "私は明るく好奇心旺盛で、相手の話に素直に驚き…", and a rule of the prompt read out,
    "あなたの返事がそのままあなたのセリフとして表示され…")."""
    whole = _plain(prompt)
    if not whole:
        return text
    sentences = [p for p in (_plain(s) for s in re.split(r"[。！？!?\n]+|\.\s", prompt)) if len(p) >= PROMPT_COPY_CHARS]
    examples = [_plain(quoted) for pair in _QUOTED_EXAMPLE.findall(prompt) for quoted in pair if quoted]
    unquoted = whole  # what a line may not recite: the prompt but for its examples of the companion's own voice
    for example in examples:
        unquoted = unquoted.replace(example, "\n") if example else unquoted
    kept = []
    for line in text.splitlines():
        plain = _plain(line.rstrip("…"))
        japanese = detect_language(line) == "ja"
        if plain and any(plain in example for example in examples):
            kept.append(line)  # its own voice: the prompt's example of how it talks (measured: Souta's sample line)
            continue
        if ((len(plain) >= PROMPT_COPY_CHARS and plain in whole) or any(s in plain for s in sentences)
                or _recites(plain, unquoted, japanese) or (japanese and _persona_piece(plain, whole))
                or (japanese and (_tells_the_persona(plain, unquoted) or _tells_its_name(plain, examples)))):
            continue
        kept.append(line)
    personality = _personality_in(prompt)
    if personality:
        kept = [without_sentences(line, lambda s: _reads_out_its_personality(s, personality)) for line in kept]
    return "\n".join(line for line in kept if line).strip()


@functools.cache
def _personality_labels() -> tuple[str, ...]:
    """How each language's system prompt labels the card's personality field ("性格: ", "Personality: ")."""
    found = (re.search(r"^([^\n{}]+)\{personality\}", prompt_texts(language).system, re.MULTILINE)
             for language in LANGUAGES)
    return tuple(match.group(1) for match in found if match is not None)


def _personality_in(prompt: str) -> str:
    """The card's personality field as ``prompt`` holds it, letters only ("" when it holds none)."""
    for line in prompt.splitlines():
        for label in _personality_labels():
            if line.startswith(label):
                return _plain(line[len(label):])
    return ""


# A sentence in which the companion tells what it is or does ("私は…", "I'm …", "I …") in its card's words for its
# personality: the character sheet read out (measured in a fourteenth 30-line run on the 0.5B model: "…私は明るく
# 好奇心旺盛です。" from Akari, whose personality reads "明るく好奇心旺盛。…"). What it says of itself in its own words
# stays ("私、ちょっとおっちょこちょいなんだ": one word of the card in a sentence of its own).
_SELF_DESCRIPTION: Final = re.compile(
    r"^\s*(?:(?:私|わたし|あたし|僕|ぼく|俺|おれ|うち)(?:は|って|も)[、,]?|I(?:'m|’m| am)?\b)", re.IGNORECASE)
PERSONA_READ_OUT: Final = {True: (6, 0.6), False: (18, 0.6)}  # Japanese, English: (longest stretch, share)
# (English: one long word of the card is anyone's: "I'm a bit scatterbrained", 14 letters of it, stays)


def _reads_out_its_personality(sentence: str, personality: str) -> bool:
    """Whether ``sentence`` describes the companion mostly in the words of its card's ``personality`` (letters only):
    after "私は", "I'm" or "I" (in Japanese, with or without "私は"), a stretch of it of :data:`PERSONA_READ_OUT`
    letters that is most of what follows."""
    japanese = written_in_japanese_script(sentence)
    opening = _SELF_DESCRIPTION.match(sentence)
    if opening is None and not japanese:
        return False  # (Japanese leaves the "私は" out: "明るく好奇心旺盛だよ！", measured in the window's first run)
    rest = _plain(sentence[opening.end() if opening is not None else 0:])
    longest, share = PERSONA_READ_OUT[japanese]
    if len(rest) < longest:
        return False
    blocks = difflib.SequenceMatcher(None, rest, personality, autojunk=False).get_matching_blocks()
    said = [block.size for block in blocks if block.size >= 2]
    return max(said, default=0) >= longest and sum(said) / len(rest) >= share


PROMPT_PIECE_CHARS_JA: Final = 6
"""A Japanese line this long that is word for word a piece of the prompt is the prompt read out (measured on the 0.5B
model: Akari's whole line "明るく好奇心旺盛\n少しおっちょこちょい", two pieces of her personality, 8 and 10
characters); shorter ones ("こんにちは") any line may share."""
_QUOTED_EXAMPLE: Final = re.compile(r"「([^」\n]*)」|\"([^\"\n]*)\"")
"""What the system prompt quotes: the companion's name and its sample line, the example of how it talks. A line that
is a piece of one is the companion's own voice ("もっと聞かせて！" from its sample line), not the prompt read out."""


def _persona_piece(plain: str, prompt: str) -> bool:
    """Whether ``plain`` (a Japanese line, letters only) is a piece of ``prompt`` of at least
    :data:`PROMPT_PIECE_CHARS_JA` letters."""
    return len(plain) >= PROMPT_PIECE_CHARS_JA and plain in prompt


# Japanese, other: a stretch this long read out of the prompt (measured over 30 lines on the 0.5B model: 14 letters of
# the recall block's heading, "覚えていること（必要なときだけを使ってください）", with a particle put in)
PROMPT_RECITAL_CHARS: Final = {True: 12, False: 28}


_YOU_ARE: Final = ("あなたは",)  # (English "You're …" opens too many lines of talk: "You're right", "You're welcome")


def _tells_the_persona(plain: str, prompt: str) -> bool:
    """Whether ``plain`` tells the listener the prompt's "you are …" as if it were theirs (measured over 30 lines on
    the 0.5B model: "あなたは、天文部の高校二年生です。" from Akari): "あなたは" and then a piece of the prompt of
    :data:`PROMPT_PIECE_CHARS_JA` letters or more."""
    rest = next((plain[len(you):] for you in _YOU_ARE if plain.startswith(you)), None)
    if rest is None or len(rest) < PROMPT_PIECE_CHARS_JA:
        return False
    match = difflib.SequenceMatcher(None, rest, prompt, autojunk=False).find_longest_match(0, len(rest), 0, len(prompt))
    return match.size >= PROMPT_PIECE_CHARS_JA


NAME_CHARS: Final = 12  # a quoted piece of the prompt this short is a name, not a sample line
COPULA_CHARS: Final = 3  # "です", "だよ", "でーす"


def _tells_its_name(plain: str, quoted: Sequence[str]) -> bool:
    """Whether ``plain`` is the prompt's first sentence told to the listener: "あなたは" and the companion's name
    (a short piece the prompt quotes: ``quoted``) with no more than a copula after it (measured over 30 lines on the
    0.5B model: "あなたは、あかりです。" from Akari, answering Hina)."""
    rest = next((plain[len(you):] for you in _YOU_ARE if plain.startswith(you)), None)
    if rest is None:
        return False
    return any(name and len(name) <= NAME_CHARS and rest.startswith(name) and len(rest) - len(name) <= COPULA_CHARS
               for name in quoted)


def _recites(plain: str, prompt: str, japanese: bool) -> bool:
    """Whether ``plain`` holds a long stretch of ``prompt`` with a word changed around it (measured: "あなたの仕事は
    会話を明るく盛り上げ、ユーザーや他のコンパニオンに積極的に話す。", the role with its verb changed)."""
    least = PROMPT_RECITAL_CHARS[japanese]
    if len(plain) < least:
        return False
    match = difflib.SequenceMatcher(None, plain, prompt, autojunk=False).find_longest_match(
        0, len(plain), 0, len(prompt))
    return match.size >= least


def _unlisted(text: str) -> str:
    """``text`` without list marks opening its lines ("- I'm doing some research" -> "I'm doing some research")."""
    return "\n".join(_LIST_MARK.sub("", line) for line in text.splitlines()).strip()


# Headings of the turn's instructions and labels a small model wrote back (measured: "このターンの指示" as a whole
# line, "**あなたのセリフ:**").
ECHOED_HEADINGS: Final = ("このターンの指示", "Guidance for this turn", "あなたのセリフ")
# A line of the prompt's instructions or tools written back: its heading, or a label in brackets before a "#" heading
# (measured on the 0.5B model: "(Tools) # これで返信する" as the second line of Akari's reply, "（Tool: Speak）" as
# the second line of another).
_INSTRUCTION_LINE: Final = re.compile(
    r"^\s*(?:[(（]?\s*(?:instructions?|tools?)\b|（?\s*指示|#|[(（][^()（）\n]{1,16}[)）]\s*#)", re.IGNORECASE)
# A label of the system prompt's fields ("性格: {personality}"), in any language of the prompts.
_FIELD_LABEL: Final = re.compile(r"^([^\n#:{}\-][^\n:{}]{0,30}):[^\n]*\{\w+\}", re.MULTILINE)


@functools.cache
def _form_line() -> re.Pattern[str]:
    """A form the model filled in instead of speaking: a line opening with a name label (measured: "私の名前: あかり"
    as the first line of a reply) or with a label of the system prompt's fields (measured: "性格: 明るく好奇心旺盛。…",
    Akari's persona read out, its sentences each too short to be found as a copy of the prompt)."""
    labels = {"私の名前", "名前", "my name", "name"}
    for language in LANGUAGES:
        labels.update(label.strip() for label in _FIELD_LABEL.findall(prompt_texts(language).system))
    alternatives = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    return re.compile(rf"^\s*(?:{alternatives})\s*[:：]", re.IGNORECASE)
_LIST_MARK: Final = re.compile(r"^\s*(?:[-*・•]|\d+[.)])\s+")
ECHO_SIMILARITY: Final = 0.6  # measured: "日本語で答える" (0.63 to "日本語で答えてください。")
_INLINE_MARK: Final = re.compile(r"[(（]\s*instructions?\s*[)）]|#+\s*(?:このターンの指示|guidance for this turn)",
                                 re.IGNORECASE)


def _plain(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


_HEADINGS: Final = tuple(_plain(h) for h in ECHOED_HEADINGS)


def line_of(planned: PlannedSpeech | None, reply_text: str, tools: Sequence[ToolSpec],
            clean: Callable[[str], str], notes: Sequence[str] = (), *, prompt: str = "",
            instructions: Instructions = NO_INSTRUCTIONS) -> PlannedSpeech | None:
    """The line a turn produced: the planned ``speak``, else a ``speak`` call written as text, else the prose;
    lines copied from the turn's instructions ``notes`` or from the companion's system ``prompt`` are left out, and
    so are sentences that are mostly ``instructions`` copied out, nothing but a date or assistant boilerplate, and
    lines that read like an entry of the recall block, unless the line is nothing else (then it is kept whole, for
    :class:`LineCheck` to find it flawed: "prompt")."""
    found = _line_of(planned, reply_text, tools, clean, notes, prompt=prompt)
    if found is None:
        return None
    mine = without_recalled_entries(_own_sentences(found.text, instructions))
    return replace(found, text=mine) if mine and mine != found.text else found


def _line_of(planned: PlannedSpeech | None, reply_text: str, tools: Sequence[ToolSpec],
             clean: Callable[[str], str], notes: Sequence[str] = (), *, prompt: str = "") -> PlannedSpeech | None:
    reply_text = strip_prompt_copies(strip_echoed(reply_text, notes), prompt)
    if planned is not None:
        text = _unlisted(clean(strip_tool_text(strip_prompt_copies(strip_echoed(planned.text, notes), prompt))))
        return replace(planned, text=text) if text else None
    parsed = parse_text_tool_calls(reply_text, tools)
    for call in parsed.calls:
        if call.name != "speak":
            continue
        args = _arguments(call.arguments)
        text = _unlisted(clean(strip_tool_text(str(args.get("message") or args.get("text") or ""))))
        emotion = args.get("emotion")
        if text:
            return PlannedSpeech(text, (), emotion if emotion in EMOTIONS else "neutral")
    text = _unlisted(clean(strip_tool_text(parsed.text)))
    return PlannedSpeech(text, (), "neutral") if text else None


def _arguments(raw: str) -> dict[str, object]:
    try:
        value = parse_json(raw)  # a model's arguments: too deep to read is no arguments, never a RecursionError
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


PARROT_MIN_CHARS: Final = 12  # a greeting answered with a greeting is no parroting; a question asked back is


OTHERS_SENTENCE_MIN: Final = 12  # characters: another companion's sentence this long is its own, not a stock phrase


@dataclass(frozen=True)
class LineCheck:
    """The checks a line, or the beginning of one, must pass to be said (no LLM: patterns and character bigrams).

    Flawed: it speaks as someone else (``speaks_as_other``: "私はHinaです" from Akari) or as an AI assistant, is in
    another language than ``language`` (measured: English questions answered in Japanese), repeats one of
    ``recent`` or one of the companion's own lines said lately, in any conversation (``own_before``; measured over
    30 lines: Akari's "こんにちは！私のアシスタントは…" in three conversations), or parrots the message it answers
    (``answered``, measured: "Souta, what do you like to do on weekends?" asked of Souta came back as his line;
    "こんにちは！今日はみんな元気ですか。" as the answer to itself), or is nothing but the prompt's ``instructions``
    copied out (measured: "1〜2文、90文字以内。" as Hina's whole line) or a date (measured: "2026年11月", from the
    recall block), or contradicts itself ("今日は日曜日（月曜）です。")."""

    language: str
    recent: Sequence[str] = ()
    answered: str = ""
    speaks_as_other: Callable[[str], bool] = lambda text: False
    instructions: Instructions = NO_INSTRUCTIONS
    own_before: Sequence[str] = ()
    others_before: Sequence[str] = ()  # the others' lines it heard lately, the user's too (not to be said back)

    @property
    def _others(self) -> list[str]:
        """The others' lines heard lately (the user's too), and their sentences long enough to be someone's own ("I
        see." is anyone's; "Would you like a cup of something warm?" is Hina's)."""
        # A greeting alone is anyone's words; the message answered said back is parroting (its own note).
        lines = [line for line in self.others_before if line != self.answered and not only_a_greeting(line)]
        sentences = [s for line in lines for s in sentences_of(line) if len(s) >= OTHERS_SENTENCE_MIN]
        return [*lines, *sentences]

    @property
    def _parrot(self) -> list[str]:
        return [self.answered] if len(self.answered) >= PARROT_MIN_CHARS else []

    def flaw(self, text: str) -> FillerReason | None:
        """Why ``text`` may not be said, or None."""
        if not has_words(text):
            return "empty"
        if (self.instructions.only_copies(text) or only_a_date(text) or reads_like_recalled_entry(text)
                or only_unspoken(text) or cut_off_quote(text)):
            return "prompt"
        if contradicts_itself(text):
            return "contradiction"
        written_in = detect_language(text)
        if self.echoes(text):
            return "parrot"  # before the names: the message said back may name the one who answers it
        if self.speaks_as_other(text) or sounds_like_an_assistant(text):
            return "not-itself"
        if (written_in is not None and written_in != self.language) or every_sentence(text, written_in_chinese):
            return "language"
        if written_in is None and self.language == "en" and written_in_japanese_script(text):
            return "language"  # measured: "少" as Hina's whole answer to an English question
        if is_repeat(text, self.recent) or is_repeat(text, self.own_before) or repeats_itself(text):
            return "repeat"
        if is_repeat(text, self._others, threshold=0.8):
            return "repeat"  # measured over 30 lines: Souta saying Hina's line, sentence by sentence too
        if quotes_whole(text, self.answered):
            return "parrot"
        return None

    def echoes(self, sentence: str) -> bool:
        """Whether ``sentence`` only repeats the message being answered (a line may begin so; it is left out)."""
        return is_repeat(sentence, self._parrot, threshold=0.8) or (bool(self._parrot) and made_of(sentence,
                                                                                               self.answered))

    def note(self, reason: FillerReason, identity: str) -> list[str]:
        """What the next attempt is told after a line flawed for ``reason``."""
        if reason == "not-itself":
            return [identity] if identity else []
        if reason == "language":
            return [ONLY_LANGUAGE_NOTE.get(self.language, LANGUAGE_NOTE["en"])]
        if reason == "prompt":
            return []  # more instructions would be more to copy
        return [repeat_note(self.language)]


def clean_piece(text: str, clean: Callable[[str], str], notes: Sequence[str], prompt: str,
                instructions: Instructions = NO_INSTRUCTIONS) -> str:
    """A piece of a line (a sentence while it streams) cleaned as :func:`line_of` cleans the whole line; a
    sentence that is mostly ``instructions`` copied out, nothing but a date or assistant boilerplate, becomes "" (one
    that reads like an entry of the recall block is kept: :class:`LineCheck` finds it flawed, and nothing more of the
    request streams)."""
    return _own_sentences(_unlisted(clean(strip_tool_text(strip_prompt_copies(strip_echoed(text, notes), prompt)))),
                          instructions)


def _own_sentences(text: str, instructions: Instructions) -> str:
    """``text`` without its sentences that are mostly ``instructions`` copied out, nothing but a date, or assistant
    boilerplate: what a whole line (:func:`line_of`) and a streamed piece (:func:`clean_piece`) both leave out."""
    return without_sentences(without_assistant_talk(without_unspoken(without_dates(instructions.without_copies(text)))),
                             written_in_chinese)


async def compose_line(attempt: Callable[[list[str]], Awaitable[PlannedSpeech | None]], *, check: LineCheck,
                       max_chars: int, identity_note: str = "", released: Callable[[], str] = lambda: "",
                       retry_fits: Callable[[float], bool] = lambda elapsed_s: True,
                       retry: Callable[[list[str]], Awaitable[PlannedSpeech | None]] | None = None,
                       spare_lines: Sequence[str] = (), answers_user: bool = False) -> PlannedSpeech | None:
    """Runs ``attempt(extra_notes)`` once, or when the line is flawed (``check``: the same checks as the sentences
    released while it streamed) ``retry(extra_notes)`` (``attempt`` by default: the companion's asks with a shorter
    prompt), then says one of ``spare_lines`` (the card's own sample lines) that passes the checks and is not one of
    the companion's earlier lines (``check.own_before``), and only then a stock filler (:class:`FillerLine`, marked
    with the reason).

    ``released()`` is what the attempt just made showed and voiced before it ended (speech_stream.CheckedSentences:
    checked sentences): the line said begins with it, whatever follows, and an attempt that released something is
    never asked again: nothing heard is taken back. ``retry_fits(elapsed_s)`` says whether another attempt fits the
    turn's time budget after ``elapsed_s`` seconds of composing; when it does not, a spare line or the filler goes
    out at once. A first attempt that left nothing of the companion's own (e.g. only a line written for another,
    cleaned away) is asked for once more as itself; nothing twice passes the floor on (``None``), unless the line
    ``answers_user``: the user's own message is answered, by a spare line or the filler (measured over 30 real-model
    lines: twice the user's message went unanswered, "no candidate could say anything")."""
    language, recent, answered, said_before = check.language, check.recent, check.answered, check.own_before
    notes: list[str] = []
    reason: FillerReason = "empty"
    began = time.monotonic()
    for round_ in range(2):
        if round_ == 1 and not retry_fits(time.monotonic() - began):
            log.info("no time left for another attempt (%.1f s composing)", time.monotonic() - began)
            reason = "time" if reason == "empty" else reason
            break
        planned = await (attempt if round_ == 0 or retry is None else retry)(notes)
        said = released().strip()
        if planned is None:
            if said:
                return PlannedSpeech(said, (), "neutral")
            if round_ == 0 and identity_note:
                log.info("nothing of its own came back: asked once more")
                notes = [identity_note]
                continue
            if not answers_user:
                return None
            break
        text = (_without_echoed_sentences(_without_echo(planned.text, answered), check.echoes)
                if len(answered) >= PARROT_MIN_CHARS else planned.text)
        line = replace(planned, text=limit_length(text, max_chars=max_chars)) if text else planned
        flaw = check.flaw(line.text)
        if said and (flaw is not None or remainder(line.text, said) is None):
            # Shown and heard already: the checked beginning is the line (the rest failed, or differs).
            log.info("the line ends where its checked beginning ends (%s): %r", flaw or "differs", line.text[:80])
            return replace(planned, text=said)
        if flaw is None:
            return line
        reason, notes = flaw, check.note(flaw, identity_note)
        log.info("the line is flawed (%s): %r", reason, line.text[:80])
    spare = spare_line(spare_lines, check, said_before, max_chars=max_chars)
    if spare is not None:
        log.info("a sample line of the card stands in (%s): %r", reason, spare)
        return PlannedSpeech(spare, (), "neutral")
    emotion: Emotion = "neutral"
    # A wording not said lately: two fallbacks in a row were the same line (measured over 50 real-model lines).
    said_lately = {_plain(text) for text in (*recent, answered)}
    variant = next((v for v in range(FALLBACK_WORDINGS) if _plain(fallback_line(language, v)) not in said_lately), 0)
    return FillerLine(fallback_line(language, variant), (), emotion, reason)


def spare_line(candidates: Sequence[str], check: LineCheck, said_before: Sequence[str], *,
               max_chars: int) -> str | None:
    """The first of ``candidates`` that passes ``check`` (its language, not a repeat of the recent lines nor of
    the message answered), fits ``max_chars``, and repeats none of ``said_before``, is no piece of one (measured:
    "えっ、それほんと？" after "えっ、それほんと？ ねえねえ、もっと聞かせて！") and holds none; None when none does."""
    earlier = [plain for line in said_before if len(plain := folded(line)) >= SAID_PIECE_CHARS]
    for candidate in candidates:
        line, plain = candidate.strip(), folded(candidate)
        if (line and len(line) <= max_chars and check.flaw(line) is None and not is_repeat(line, said_before)
                and not any(plain in before or before in plain for before in earlier)):
            return line
    return None


SAID_PIECE_CHARS: Final = 4  # a line said before that a sample line must not hold ("うん" is in too many)


def sample_lines(sample: str) -> list[str]:
    """What a card's sample text offers as lines of the companion's own: each of its lines, then each sentence of
    one with several ("そうだったんですね。よかったら、温かいお茶でもいかがですか。" -> it, "そうだったんですね。",
    "よかったら、…")."""
    offered: list[str] = []
    for line in card_sample_lines(sample):
        sentences = sentences_of(line)
        offered += [line, *sentences] if len(sentences) > 1 else [line]
    return list(dict.fromkeys(offered))


def _without_echo(text: str, answered: str) -> str:
    """``text`` without a leading copy of the question it answers ("Souta, what do you like? I like maps." -> "I
    like maps."); ``text`` itself when it is nothing but the copy."""
    head = answered.strip()
    if head and text.startswith(head) and text[len(head):].strip():
        return text[len(head):].strip()
    return text


def _without_echoed_sentences(text: str, echoes: Callable[[str], bool]) -> str:
    """``text`` without its sentences that only say back the message it answers, or make the line before them say
    it back, wherever they come (measured on the 0.5B model: "うん、あかりだよ！ 今日は星がきれいだったよ。"
    answering "ただいま！今日は星がきれいだったよ。"; "こんにちは！みんな元気ですか？…" answering "こんにちは！みんな
    元気？"): what speech_stream.CheckedSentences releases of it; ``text`` itself when it is nothing else (then
    :class:`LineCheck` judges the whole)."""
    kept = ""

    def echoed(sentence: str) -> bool:
        nonlocal kept
        if said_back(kept, sentence, echoes):
            return True
        kept += joining(sentence)
        return False

    return without_sentences(text, echoed) or text


class EndAfterSpeech(WorkerHook):
    """Ends a composing turn (a hook of that turn alone) once ``speak`` was planned: asking the model again
    afterwards only costs a request (measured: an extra request per turn that said nothing)."""

    def __init__(self, plan: Sequence[PlannedSpeech]) -> None:
        self._plan = plan  # the turn's plan, which its `speak` writes

    async def after_tool_call(self, result: ToolCallResult) -> ControlFlow:
        if result.name == "speak" and not result.is_error and self._plan:
            return Abort("the line is planned")
        return Continue()
