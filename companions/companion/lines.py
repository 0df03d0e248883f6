"""What makes a companion's line acceptable: its language, only its own words, not a repeat, not too long.

Pure functions, no LLM: small local models answer English questions in Japanese, write another companion's name as
a prefix (``あかり (id: akari): ...``), narrate the others, wrap the line in quotes, write tool syntax, repeat the
previous speaker, and ramble. The turn (``composing.py``) asks for better and uses these to check and repair what
came back.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from companions.common.languages import Language
from companions.llm.text_tools import strip_tool_text
from companions.memory.context import name_label, strip_impersonation

_KANA: Final = re.compile(r"[\u3041-\u309f\u30a0-\u30ff\uff66-\uff9f]")
_KANJI: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD: Final = re.compile(r"[A-Za-z\u00c0-\u024f]{2,}")
_LATIN_LETTER: Final = re.compile(r"[A-Za-z\u00c0-\u024f]")
# Quotes a model puts around its whole line.
_QUOTE_PAIRS: Final = {"「": "」", "『": "』", '"': '"', "“": "”", "'": "'", "＂": "＂"}
_NOT_A_LETTER: Final = re.compile(r"[\W_]+")  # punctuation, symbols, whitespace
_LABEL_ONLY: Final = re.compile(r"^[^:：。！？!?]{1,20}[:：]\s*$")
# A document's label in markdown's bold opening a line, its colon inside or after the bold (measured in a fourteenth
# 30-line run on the 0.5B model: "**Tea Selection:** In order to make your evening more enjoyable, I recommend …"):
# the label goes, the words after it are the line (a name's label was handled before: a line for another goes whole).
# A list's mark before it goes with it (measured in a twenty-second run: "- **Find a tea that is cold**: The most …").
_BOLD_LABEL: Final = re.compile(r"^\s*(?:[-・•]\s*|\d+[.)]\s*|\*\s+)?\*\*[^*\n]{1,30}?(?:[:：]\s*\*\*|\*\*\s*[:：])\s*")
_SALUTATION: Final = re.compile(r"^[A-Z][A-Za-z'’-]{1,15},$")  # a name and a comma, as an English letter opens
# A Latin-letter word and a comma opening an English sentence: the companion's own name there is its speaker label
# written with a comma (measured in a 23rd and a 24th 30-line run: Hina's "Hina, I see. Would you like a cup of
# something warm?", her sample line); nobody calls themself by name in English. (In Japanese, a companion may: "あかり、
# それ知ってる！")
_OPENING_NAME: Final = re.compile(r"^\s*([A-Za-z][A-Za-z'’-]{1,15}),\s+(?=[A-Z])")
# A word opening a line before a colon ("Time: 3 pm", "おすすめ：…", or a speaker's label): a label only when it is a
# name of someone here, if in a mix of scripts (measured over 30 lines on the 0.5B model: "Hiな : I see." from Akari).
_LEADING_WORD: Final = re.compile(r"^\s*([^\s:：。、，,！？!?「」『』()（）]{1,12})\s*[:：]\s*(?=\S)")
_SENTENCE_END: Final = re.compile(r"(?:[。！？!?…]+|\.(?=\s|$|[\"'”」』)）]))[\"'”」』)）]*|\n")
_FALLBACKS: Final = {
    "ja": ("うん、そうだね。", "なるほどね。", "へえ、そうなんだ。", "たしかに。", "それ、いいね。", "うんうん。",
           "そっか、そうなんだね。", "おもしろいね。"),
    "en": ("Yes, I see.", "Right, I hear you.", "Oh, I see.", "That makes sense.", "Sounds nice.", "Mm-hm.",
           "Oh, really?", "Interesting."),
}
FALLBACK_WORDINGS: Final = min(len(lines) for lines in _FALLBACKS.values())


def card_sample_lines(sample: str) -> list[str]:
    """The lines of a card's sample text (``metadata.sample``: one line of the companion's per text line; an imported
    card's greetings and example dialogue are written that way too: companions/cards/character_cards.py)."""
    return [line.strip() for line in sample.splitlines() if line.strip()]


@dataclass(frozen=True)
class LineRules:
    """How long a companion's line may be, per language: three times its card's longest sample line, within bounds."""

    max_chars: dict[str, int]

    @classmethod
    def from_samples(cls, samples: dict[str, str]) -> LineRules:
        limits = {"ja": (60, 160), "en": (120, 320)}
        longest = {lang: max(map(len, card_sample_lines(text)), default=0) for lang, text in samples.items()}
        return cls({lang: max(low, min(high, 3 * longest.get(lang, 0))) for lang, (low, high) in limits.items()})

    def limit(self, language: str) -> int:
        return self.max_chars.get(language, self.max_chars.get("en", 240))


def detect_language(text: str) -> Language | None:
    """The language ``text`` is written in: "ja", "en" (any mostly Latin-letter text), or None (neither, too short).

    Japanese when it has kana and at least as many Japanese characters as Latin words ("Hi あかり, how are you?" is
    English), or at least two kanji and no Latin word; English when it has Latin letters (two at least).
    """
    text = unicodedata.normalize("NFKC", text)
    kana = len(_KANA.findall(text))
    kanji = len(_KANJI.findall(text))
    words = len(_LATIN_WORD.findall(text))
    if kana and kana + kanji >= words:
        return "ja"
    if kanji >= 2 and not words:
        return "ja"
    if len(_LATIN_LETTER.findall(text)) >= 2:
        return "en"
    return None


@functools.lru_cache(maxsize=64)
def _patterns(own: frozenset[str], others: frozenset[str]) -> tuple[re.Pattern[str] | None, ...]:
    """(a label after a sentence end, another's quoted line, an own quoted line, a stage direction naming anyone)."""
    everyone = own | others
    label = name_label(everyone)
    other_names = "|".join(re.escape(n) for n in sorted(others, key=len, reverse=True) if n.strip())
    own_names = "|".join(re.escape(n) for n in sorted(own, key=len, reverse=True) if n.strip())
    any_names = "|".join(x for x in (own_names, other_names) if x)
    flags = re.IGNORECASE
    inside = r"[^（）()\[\]*?？\n]"  # a stage direction is short, on one line, and asks nothing
    return (
        re.compile(rf"(?<=[。！？!?.…])[ \t　]*(?={label})", flags) if label else None,
        re.compile(rf"(?:{other_names})\s*[「『][^」』\n]*[」』]?", flags) if other_names else None,
        re.compile(rf"(?:^|(?<=\n))\s*(?:{own_names})\s*(?=[「『])", flags) if own_names else None,
        re.compile(rf"[（(\[](?:{inside}{{0,40}}?(?:{any_names}){inside}{{0,40}})[）)\]]"
                   rf"|(?<!\*)\*(?!\*)(?:{inside}{{0,40}}?(?:{any_names}){inside}{{0,40}})(?<!\*)\*(?!\*)", flags)
        if any_names else None,
    )


@functools.lru_cache(maxsize=256)
def _sound(text: str) -> str:
    """``text`` in Latin letters as it sounds (kana in Hepburn romaji, with jaconv: 3 ms to import, where pykakasi's
    dictionary took a second of the loop), case-folded, without spaces or marks: "Hiな", "ひな" and "Hina" sound
    alike; kanji stay as they are."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if _KANA.search(text):
        import jaconv

        text = jaconv.kana2alphabet(jaconv.kata2hira(text))
    return _NOT_A_LETTER.sub("", text)


def _without_name_label(line: str, names: frozenset[str]) -> str:
    """``line`` without a name of ``names`` as a label opening it, in any mix of scripts (:data:`_LEADING_WORD`)."""
    match = _LEADING_WORD.match(line)
    if match is None or not names:
        return line
    word = _sound(match.group(1))
    return line[match.end():] if word and any(_sounds_like(word, _sound(name)) for name in names) else line


def _without_own_name_opening(line: str, own: frozenset[str]) -> str:
    """``line`` without this companion's own name and a comma opening an English sentence (:data:`_OPENING_NAME`)."""
    match = _OPENING_NAME.match(line)
    if match is None or match.group(1).casefold() not in {name.casefold() for name in own}:
        return line
    return line[match.end():]


def _sounds_like(word: str, name: str) -> bool:
    """Whether ``word`` is ``name`` as it sounds, or (four letters or more) one letter off it, changed, put in or
    left out: "Ahari" and "Ahかり" (ahkari) are Akari misspelt; "Hinata" is a word of its own, not Hina."""
    if word == name:
        return True
    if min(len(word), len(name)) < 4 or abs(len(word) - len(name)) > 1:
        return False
    if len(word) == len(name):
        return sum(a != b for a, b in zip(word, name, strict=True)) == 1
    short, long = sorted((word, name), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def clean_line(text: str, *, own_names: Iterable[str], other_names: Iterable[str]) -> str:
    """``text`` as a line this companion can say: only its own words, no tool syntax, no labels or quotes.

    Removes tool syntax and JSON (:func:`~companions.llm.text_tools.strip_tool_text`), this companion's own label
    (``あかり (id: akari): ``, ``**Akari**:``, ``[akari]``), lines written for others (``Hina: ...``,
    ``Hina says: ...``, ``[souta] ...``, also after a sentence end within a line), another's quoted line
    (``ひな「...」``), stage directions naming anyone (``（ひなは笑った）``, ``*Hina smiles*``), and quotes put
    around the whole line. Returns "" when nothing of this companion's own remains (a name alone included).
    """
    own = frozenset(n.strip() for n in own_names if n.strip())
    others = frozenset(n.strip() for n in other_names if n.strip()) - own
    inline_label, other_quote, own_quote, direction = _patterns(own, others)
    line = strip_tool_text(text)
    if other_quote is not None:
        line = other_quote.sub("", line)
    if own_quote is not None:
        line = own_quote.sub("", line)
    if inline_label is not None:
        line = inline_label.sub("\n", line)
    line = strip_impersonation(line, own, others)
    if direction is not None:  # after the labels: "[souta] ..." is another's line, not a stage direction
        line = direction.sub("", line)
    # a label with nothing after it is no line of talk (measured: "読者本：" as a whole answer); a name's before words
    # is left out
    lines = [_unquote(" ".join(_without_own_name_opening(_BOLD_LABEL.sub("", _without_name_label(part, own | others)),
                                                         own).split()))
             for part in line.splitlines() if not _LABEL_ONLY.match(part)]
    lines = [part for part in lines if part]
    if len(lines) > 1 and _SALUTATION.match(lines[0]):
        lines = lines[1:]  # a letter's "Dear …," (measured: "Akkari,\nThank you for sharing that. …" from Hina)
    cleaned = _unquote("\n".join(lines))
    # Nothing but a name is no line, in any spelling (measured on a 0.5B model: "あかり" as Akari's whole answer to
    # "こんばんは！", "Akkari," as Hina's).
    letters = _NOT_A_LETTER.sub("", cleaned)
    alone = _sound(letters) if len(letters) <= NAME_ALONE_LETTERS else ""
    return "" if alone and any(_sounds_like(alone, _sound(n)) for n in own | others) else cleaned


NAME_ALONE_LETTERS: Final = 16  # a line longer than this is more than a name, whoever it names


_ID_LEAK: Final = re.compile(r"(?<![A-Za-z])id\s*(?:[:：]\s*[A-Za-z_]|は|is\b)", re.IGNORECASE)  # "私のIDは"
_SELF: Final = r"(?:私|わたし|あたし|僕|ぼく|俺|おれ|うち|我)(?:の名前)?(?:(?:は|が)[、,]?|[、,])\s*"  # 我が: measured
_SELF_EN: Final = r"(?:i'm|i’m|i am|my name is|my name's)\s+"
# an honorific a small model puts after the name it claims (measured: "こんにちは！私はHinaさんです。" from Akari)
_HONORIFICS: Final = r"(?:さん|ちゃん|くん|君|様|さま)"
_HONORIFIC: Final = _HONORIFICS + "?"
_CLAIM_END: Final = r"(?:です|だよ|(?:だ|よ)?(?:[。！!？?、,\s]|$))"


def misidentified(text: str, *, other_names: Iterable[str], own_names: Iterable[str] = ()) -> bool:
    """Whether ``text`` speaks as someone else ("私はひなです" from Akari, "I'm Souta" from Hina), greets its own
    speaker (``own_names``: "Hi, Akari!" from Akari), or leaks the prompt's speaker ids ("あなたの id: akari と一緒
    に…"): measured on a 0.5B model, none can be cleaned into a line, so the line is asked for again (composing.py)."""
    if _ID_LEAK.search(text) or _greets_itself(text, own_names):
        return True
    names = [n.strip() for n in other_names if n.strip()]
    if not names:
        return False
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # a particle slipped in after the name claimed (measured: "私はひながです。" from Akari)
    claim = (rf"{_SELF}(?:{alternatives})が?{_HONORIFIC}{_CLAIM_END}|{_SELF_EN}(?:{alternatives})(?![\w'’])"
             rf"|(?:^|[。！!？?、,\s])(?:{alternatives}){_HONORIFIC}(?:です|だよ)(?:[。！!？?\s]|$)")  # "Soutaです。"
    return re.search(claim, text, re.IGNORECASE) is not None


_ASSISTANT: Final = re.compile(
    r"\b(?:I'm sorry,? but I (?:can't|cannot|am unable to|don'?t have (?:a |any )?(?:specific|personal|information|"
    r"access|the ability))|"
    r"I (?:can't|cannot) assist|as an AI\b|I'm an AI\b|"
    r"I am an AI\b|language model\b|how can I (?:help|assist) you|I'm glad I could help|summarized as follows|"
    r"I'd be happy to help(?: you)?\s*[.!]|"  # measured: "Sure, I'd be happy to help you. Please tell me what…"
    r"I don'?t have (?:much |any )?(?:personal )?(?:background or )?(?:knowledge|experiences?|opinions|feelings) "
    r"(?:about|of|on))"
    r"|AI(?:アシスタント|言語モデル)|お手伝いできません|お答えできません|お手伝いできること(?:は|が)ありますか"
    r"|何でもお手伝い|お手伝いできます|何か(?:ご)?質問があれば|ご質問があれば|いつでもお(?:知らせ|尋ね|気軽に)"
    # measured on the 0.5B model (bench/line_quality.py): "あなたの質問が何でもお答えします。", "Let me know if there's
    # anything else I can assist with today."
    r"|何でもお答え|どんな(?:ご)?質問(?:で|に)もお答え|anything else I can (?:help|assist)"
    # measured over 30 lines: "何かお手伝いできることがありましたら、どうぞお気軽にお知らせください。",
    # "私のアシスタントは、あなたに質問を返すために使用できます。"
    r"|お手伝いできること|お気軽に(?:お知らせ|ご連絡|お声がけ)|(?:私の|AI)アシスタント|アシスタントとして"
    # a shop's "please feel free to…" (measured over 30 lines: "誰でもお気軽に相手と話してみてください。")
    r"|お気軽に[^。！？!?]*ください|\bready to (?:help|assist)\b"  # measured: "Okay, I'm ready to help."
    # measured in the fifth 30-line run: "あかりさん、私はAIです。", "I'm sorry, I can't help you with that.", "I'm just
    # a friendly AI, so feel free to ask anything you need.", "I'm glad you found the information helpful.", "Good
    # evening, I'm sorry for the inconvenience.", "何か問題があればどうぞ。"
    r"|私は(?:ただの)?AI|\bI'm (?:just )?(?:a|an) (?:friendly |helpful )?AI\b"
    r"|\bI (?:can't|cannot) help (?:you )?with that"
    r"|\bfeel free to ask\b|found the information helpful|sorry for the inconvenience|何か問題があれば"
    # measured on Madoi's runner: "こんにちは！何かお手伝いできたりしたいですか？"
    r"|何か(?:お)?手伝(?:い|え)(?:でき|し|ま)"
    # measured in a thirteenth 30-line run: "私は、あなたをサポートするための情報提供者であり、…適切なアドバイスを提供
    # します。"
    r"|情報提供者|アドバイスを提供"  # (not "あなたをサポートする": a caring companion's words too)
    # measured on the 0.5B model (a grammar kept its script, tried and left out): "申し訳ありませんが、私はアかりと
    # しており、あなたの質問を返すことができません。", "ご質問をお聞かせください。", "Sorry, but I don't understand the
    # request.", "I'm sorry, but I don't have any background or knowledge about astronomy in mind."
    r"|申し訳ありません(?:が|けど)[^。！？]*(?:できません|わかりません|分かりません)|質問を返すこと"
    r"|質問を(?:教えて|お聞かせ)|\bsorry,? but I (?:don'?t|do not) understand|\bunderstand (?:the|your) request\b"
    # an answer's introduction, its list never given (measured over 15 lines: "Sure! Here's a tea recommendation for
    # cold evening:", "…以下の星座が最も適切です:"): a sentence that ends with a colon is no line of a conversation
    r"|[:：][\s*_]*$"  # measured in a twelfth 30-line run: "Here's my answer:**", the colon in markdown's bold
    # measured in a sixth 30-line run: "Thank you for providing guidance. I will now proceed to the next
    # conversation.", "あなたの質問は何ですか？", "いいえ、何かご質問があるようお願い申し上げます。"
    r"|\bthank you for (?:providing |the |your )?(?:guidance|instructions?)\b"
    r"|\bproceed (?:to|with) the (?:next )?(?:conversation|question|turn|task)\b"
    # measured in a ninth: "Alright, please proceed with the turn.", "Searching for information." (a tool's status)
    r"|^\s*(?:searching|looking) (?:for|up) (?:the )?information\b"
    # measured in a tenth: "すみません、私の能力では、…記録することはできません。"
    r"|私の能力では|\bmy (?:abilities|capabilities) (?:do not|don'?t)\b"
    r"|質問は(?:何|なん)(?:です|でしょう)か|ご質問が(?:ある|あり)"
    # measured in a seventh: "すみませんが、私は「あかり」の役割をサポートするための情報を
    # 提供できません。", "申し訳ありませんが、彼の役割をサポートするためには、情報を提供します。",
    # "Please provide me with the tea name so I can help you find it.", "あなたの質問を理解するためには、…"
    r"|役割をサポート|情報を提供(?:でき|します|いたし)|質問を理解|\bplease provide me with\b"
    r"|\bso (?:that )?I can (?:help|assist) you\b"
    # the prompt's instructions spoken of, and what the model says it can do (measured in a fifteenth 30-line run:
    # "すみませんが、その指示を達成できません。", "私は様々な言葉を用いて、あなたの質問を答えることができます。")
    # (in a sixteenth: "すみませんが、あなたは何か特定の指示を提供しているか？")
    r"|指示を(?:達成|実行|遂行|完了|理解|守|提供)|(?:この|その|あの|特定の|具体的な)指示"
    r"|質問(?:に|を)(?:お)?答え(?:ることができ|られます)"
    r"|\b(?:follow|fulfil|fulfill|complete|carry out|understand) (?:the|your|these|those|that|this|my) instructions?\b"
    # measured in a twentieth: "私は、料理や芸術の人気を学ぶための言語モデルです。", "何か特定の情報が必要であれば、
    # 詳細を教えていただけますか？", "If you don't know how to do it, let me know and I'll help you with that."
    r"|言語モデル|(?:特定|具体的)の情報が必要|\blet me know(?: and| if)? I(?:'ll| will| can) help\b"
    # measured in a 25th: "私はあなたに話を促すのに役立つツールです。", "申し訳ありませんが、何を返すのか教えてくだ
    # さい。" (what its answer should be, asked as of a task)
    r"|(?:私|わたし)は[^。！？]{0,24}ツール(?:です|だよ|なの)|役(?:に)?立つツール|何を返す(?:の|べき)"
    r"|\bI'm (?:just )?an? (?:helpful |useful )?tool(?:\s+(?:for|that|to)\b|\s*[.!]|$)"
    # measured in a 26th: "すみませんが、私は「颯太」の性格と背景に合わせた…なので、あなたがおしゃべりをする内容を
    # 提供することはできません。" (the card's fields spoken of, and a refusal to provide)
    r"|を提供することは(?:でき|出来)ません|(?:性格|人格)と背景",
    re.IGNORECASE)


_GREETING_EN: Final = r"(?:hi|hello|hey|welcome|good (?:morning|afternoon|evening|night))"  # "Welcome, Akari!"
_GREETING_JA: Final = r"(?:こんにちは|こんばんは|おはよう(?:ございます)?|やあ|やっほー|はじめまして)"


_GREETING_ONLY: Final = re.compile(
    rf"^\s*(?:{_GREETING_EN}|{_GREETING_JA})(?:[\s,、]*(?:everyone|everybody|all|there|みんな|皆さん|みなさん))?"
    r"[\s!！.。~〜]*$", re.IGNORECASE)


def only_a_greeting(text: str) -> bool:
    """Whether ``text`` is a greeting and nothing else ("Hello everyone!", "こんにちは、みんな！"): anyone's
    words, never a line said back."""
    return _GREETING_ONLY.match(text) is not None


def _greets_itself(text: str, own_names: Iterable[str]) -> bool:
    """Whether ``text`` opens by greeting one of ``own_names`` (measured on the 0.5B model: "Hi, Akari! …" as Akari's
    line). A greeting that says who speaks ("やっほー、あかりだよ！", "Hi, Akari here!") is no such line."""
    names = "|".join(re.escape(n) for n in sorted({n.strip() for n in own_names}, key=len, reverse=True) if n)
    if not names:
        return False
    # ... or calls itself by its name with an honorific, as one calls another (measured in a fifteenth 30-line run:
    # "あかりさん、昨日は天気が温かいですね。" from Akari; "あかり、がんばるね！" is her talking of herself)
    greeting = (rf"^\s*(?:{_GREETING_EN}[\s,]+(?:{names})\s*[!,.?]"
                rf"|{_GREETING_JA}[、,！!\s]*(?:{names}){_HONORIFIC}\s*(?:[！!。、,?？]|$)"
                rf"|(?:{names}){_HONORIFICS}\s*[、,！!])")
    return re.search(greeting, text, re.IGNORECASE) is not None


def sounds_like_an_assistant(text: str) -> bool:
    """A small instruct model falling out of its persona into assistant boilerplate (measured on a 0.5B model:
    "I'm sorry, but I can't assist with that request." as a companion's answer to a question about weekends)."""
    return _ASSISTANT.search(text) is not None


_NOT_SPOKEN: Final = re.compile(
    # a label in brackets and nothing else, a heading of the prompt in its words or another's (measured on the 0.5B
    # model: "(提示)\n(提示)", "(Instuctions)" as whole lines)
    r"^\s*(?:[(（【\[<＜][^()（）【】\[\]<>＜＞\n]{1,24}[)）】\]>＞]\s*)+[。.!！]?\s*$"
    # a name with a number in brackets: the vote's importance written out (measured: "あかり (24), ひな (50)",
    # "Ahari (50), ively, hina (70).")
    r"|\w\s*[(（]\s*\d{1,3}\s*[)）]"
    # the card's personality field read out as a sentence (measured: "私の性格は明るく好奇心旺盛です。"; a companion
    # may still speak of what it likes: "週末は…常連さんの話を聞くのが好き。" stays)
    r"|^\s*(?:私|わたし|僕|ぼく|俺)の性格は|^\s*my personality is\b"
    # the system prompt's own words for what a line must not hold, and the tools it may use (measured over 30 lines on
    # the 0.5B model: "今日は、ラベルとして「スインジム」や「オーカイション」などのト書きを書いています。", "私はツール
    # を用いないため、あなたに返信することはできません。"): no conversation speaks of its prompt's stage directions
    r"|ト書き|名前のラベル|speak\s*ツール|ツールを(?:用|使)(?:い|わ|っ|う|え)|\bJSON\b|stage directions?|name labels?"
    r"|\bspeak tool\b|\b(?:use|using|call|calling) (?:no |any |the |my )?tools?\b"
    # the recall block's way of telling what was said, or a transcript's bold label (measured over 30 lines: "**週末**：
    # 「週末は何をして過ごすのが好き？」と言いました。")
    r"|[」』]と言いました|^\s*と言いました|^\s*\*\*[^*\n]{1,20}\*\*\s*[:：]"
    # ... and a document's "it reads" (measured in an eleventh 30-line run: "私の質問は、「週末は何をして過ごすのが
    # 好き？」とあります。", "とあります。" as a whole line)
    r"|[」』]\s*とあります|^\s*とあります"
    # the turn's guidance heading with its first word changed (measured in a seventh 30-line run:
    # "そのターンの指示です。" from Hina; the heading is "このターンの指示")
    r"|ターンの指示|guidance for (?:this|the|that) turn"
    # a plan's numbered steps (measured in a tenth 30-line run: "(Step 1) あなたはひなです。わあ、すごい！")
    r"|[(（]\s*step\s*\d+\s*[)）]"
    # a document's heading in markdown, a whole line in bold or after "#" (measured in a twelfth 30-line run:
    # "**Greetings and Welcome**" as Hina's whole line)
    r"|^\s*\*\*[^*\n]{1,60}\*\*\s*$|^\s*#{1,6}\s"
    # a form's blank left in (measured in a sixteenth 30-line run: "The tea for a cold evening is [your choice].")
    r"|\[\s*(?:your|insert|enter|name of|topic|placeholder)\b[^\]\n]{0,30}\]", re.IGNORECASE)


def cut_off_quote(text: str) -> bool:
    """Whether ``text`` ends inside a quote it opened: the recall block's report of who said what, cut off (measured
    in three 30-line runs on the 0.5B model: "週末は、ひなが「I see.", "週末は、あかりが「こんにちは！" as whole lines).
    Judged on a whole line: a quote of several sentences is cut into sentences inside it."""
    opened = text.rfind("「")
    return opened >= 0 and "」" not in text[opened:]


def not_spoken(sentence: str) -> bool:
    """Whether ``sentence`` is no line of a conversation: only a label in brackets, a name with a score in brackets,
    the card's personality read out, or the prompt's words for its rules and tools."""
    return _NOT_SPOKEN.search(sentence) is not None


# Chinese: a sentence opening as a Chinese answer does ("好的", "是的"; not "当然", Japanese too), or holding
# characters that only simplified Chinese writes (measured on the 0.5B model: a Japanese line beginning "好的き、…").
# Japanese never uses these forms.
_SIMPLIFIED_ONLY: Final = "你们这说吗么个还时为过问题让给请谢欢应该样实现觉习发开关见听吧呢啊哦嗯"  # "你好！" measured
_CHINESE: Final = re.compile(rf"^\s*(?:好的|是的|没问题)|[{_SIMPLIFIED_ONLY}]")


def written_in_chinese(sentence: str) -> bool:
    """Whether ``sentence`` is Chinese (:data:`_CHINESE`), never Japanese."""
    return _CHINESE.search(sentence) is not None


def only_unspoken(text: str) -> bool:
    """Whether every sentence of ``text`` is no speech at all (:func:`not_spoken`), and it has one at least."""
    return every_sentence(text, not_spoken)


def without_unspoken(text: str) -> str:
    """``text`` without its sentences that are no speech at all (:func:`not_spoken`)."""
    return without_sentences(text, not_spoken)


def without_assistant_talk(text: str) -> str:
    """``text`` without its sentences of assistant boilerplate (:func:`sounds_like_an_assistant`): measured on the
    0.5B model, "週末は大変楽しいですね。何かお手伝いできることがありましたら教えてください。", a line of its own
    and then the assistant's offer."""
    return without_sentences(text, sounds_like_an_assistant)


def _unquote(text: str) -> str:
    """``text`` without quotes around all of it (``「やあ」`` -> ``やあ``; ``「a」と「b」`` stays)."""
    text = text.strip()
    while len(text) >= 2 and (close := _QUOTE_PAIRS.get(text[0])) is not None and text.endswith(close):
        inner = text[1:-1]
        if close in inner or text[0] in inner:
            break
        text = inner.strip()
    return text


@functools.lru_cache(maxsize=512)
def _bigrams(text: str) -> frozenset[str]:
    norm = _NOT_A_LETTER.sub("", unicodedata.normalize("NFKC", text).casefold())
    if len(norm) < 2:
        return frozenset((norm,)) if norm else frozenset()
    return frozenset(norm[i : i + 2] for i in range(len(norm) - 1))


def similarity(a: str, b: str) -> float:
    """How alike two lines are, 0..1: the Dice coefficient of their character bigrams, after NFKC, case folding and
    removing punctuation, symbols and whitespace (so "Really?!" and "really" are the same line)."""
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 1.0 if x == y else 0.0
    return 2 * len(x & y) / (len(x) + len(y))


def is_repeat(line: str, previous: Sequence[str], threshold: float = 0.6) -> bool:
    """Whether ``line`` repeats one of ``previous``: as similar as ``threshold`` or more, or quoting most of one
    (nine tenths of a previous line of ten characters or more inside it, or it being a long piece of one)."""
    mine = _bigrams(line)
    if not mine:
        return False
    for before in previous:
        theirs = _bigrams(before)
        if not theirs:
            continue
        shared = len(mine & theirs)
        if 2 * shared / (len(mine) + len(theirs)) >= threshold:
            return True
        if len(theirs) >= 9 and shared >= 0.9 * len(theirs):  # quotes most of the earlier line
            return True
        if len(mine) >= 11 and shared >= 0.9 * len(mine):  # a long piece cut out of the earlier line
            return True
    return False


def without_cut_off_end(text: str) -> str:
    """``text`` without the sentence a token limit cut off: what follows its last sentence end ("" when it has
    none). Measured over 30 lines on the 0.5B model: "こんにちは！\nまた、相手がおしゃべ" was Akari's line, the
    request's tokens spent on a line the checks then left out."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[:ends[-1]].strip() if ends else ""


def has_words(text: str) -> bool:
    """Whether ``text`` says anything: a letter or a digit of any script (measured on the 0.5B model: "(" was a
    whole line, and streamed into the chat)."""
    return _NOT_A_LETTER.sub("", text) != ""


QUOTED_MIN_LETTERS: Final = 6  # 「こんにちは」って嬉しいな quotes a greeting; a whole sentence quoted back is a report


def quotes_whole(line: str, source: str) -> bool:
    """Whether ``line`` quotes all of ``source`` (its letters, in 「」 or quotation marks): the message answered told
    back as reported speech (measured on the 0.5B model: "あかりとして、あなたが「みんな、こんばんは！」と言いました。"
    answering "みんな、こんばんは！"). Sources of fewer than six letters are never judged."""
    wanted = _NOT_A_LETTER.sub("", unicodedata.normalize("NFKC", source).casefold())
    if len(wanted) < QUOTED_MIN_LETTERS:
        return False
    for opening, closing in _QUOTE_PAIRS.items():
        start = line.find(opening)
        while start != -1:
            end = line.find(closing, start + 1)
            if end == -1:
                break
            inside = _NOT_A_LETTER.sub("", unicodedata.normalize("NFKC", line[start + 1:end]).casefold())
            if inside == wanted:
                return True
            start = line.find(opening, end + 1)
    return False


def repeats_itself(text: str) -> bool:
    """Whether ``text`` says one of its sentences twice (measured on the 0.5B model: "こんにちは！" six times in one
    line). Sentences of fewer than four letters ("はい！はい！", "Mr." twice) are not judged."""
    seen: set[str] = set()
    for sentence in _SENTENCE_END.split(text):
        letters = _NOT_A_LETTER.sub("", unicodedata.normalize("NFKC", sentence).casefold())
        if len(letters) < 4:
            continue
        if letters in seen:
            return True
        seen.add(letters)
    return False


def written_in_japanese_script(text: str) -> bool:
    """Whether ``text`` has kana or kanji (a line too short for :func:`detect_language` may still be Japanese)."""
    return bool(_KANA.search(text) or _KANJI.search(text))


PARROT_SHARE: Final = 0.8
PARROT_MIN_BIGRAMS: Final = 5  # "こんばんは！" (4) answering a longer greeting is a greeting, not parroting


def made_of(line: str, source: str) -> bool:
    """Whether ``line`` is mostly ``source``'s words said back: most of its character bigrams are in ``source``
    (measured on a 0.5B model: "今日は疲れたな。" answering "今日はちょっと疲れたな。": a paraphrase that the
    Dice similarity of :func:`is_repeat` puts at 0.63). Lines of fewer than five bigrams are never judged."""
    mine = _bigrams(line)
    if len(mine) < PARROT_MIN_BIGRAMS:
        return False
    return len(mine & _bigrams(source)) >= PARROT_SHARE * len(mine)


def limit_length(text: str, *, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters: after the last sentence end that fits (。！？.!? or a line
    break) when that keeps a third of the room or more, else at a word boundary (or any character, for text
    without spaces) with an ellipsis. A non-blank ``text`` never becomes empty."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return text[:1]
    cut = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > max_chars:
            break
        cut = m.end()
    if cut >= max(1, max_chars // 3):
        return text[:cut].strip()
    room = text[: max_chars - 1]
    space = room.rfind(" ")
    if space >= max_chars // 2:
        room = room[:space]
    return room.rstrip(" 、，,;；:：-") + "…"


_DIGITS: Final = re.compile(r"\d+")
# Chosen on examples (tests/companions/companion/test_instruction_copies.py): a sentence is an instruction copied
# when three quarters of its n-grams are in one instruction sentence, and it holds a good part of that sentence (two
# fifths: "I'd rather listen." is a quarter of the vote's "if you would rather listen") or is long itself.
INSTRUCTION_SHARE: Final = 0.75
INSTRUCTION_COVERAGE: Final = 0.4
INSTRUCTION_LONG_GRAMS: Final = 20
INSTRUCTION_PIECE_LETTERS: Final = 4  # a Japanese sentence that is this much of an instruction and nothing else
INSTRUCTION_MIN_GRAMS: Final = 4  # "日本語で。" and shorter are not judged: too little to tell
# A sentence pieced together from several instructions (measured on the 0.5B model:
# "短くあなたの紹介を日本語で言う。", from "短く自己紹介をする。" and "自分のセリフだけを日本語で言う。", at most 43% in
# any one of them) is one when this share of its n-grams is in the instructions taken together and it is said as
# they are: a Japanese sentence that ends as one of them ends, in the plain form (a companion's line is polite or
# casual: "…です。" and "…ます。" are left out), an English one that begins with the word one of them begins with.
# Chosen on the lines of tests/companions/companion/test_instruction_copies.py and 78 lines of the real model
# (bench/line_quality.py).
INSTRUCTION_BLEND_SHARE: Final = 0.8
_POLITE_ENDINGS: Final = frozenset({"です", "ます", "さい", "せん", "ょう", "した"})
_FIRST_WORD: Final = re.compile(r"[a-z']+")
# The companion's name where an instruction names it ("{name}として、…"), and in a line compared with it: a rule read
# out with the name is a copy, and the name alone is as much evidence as one letter ("あかりです。" is not
# "あなたは{name}です。"). A word character, so folding keeps it; no line has it.
NAME_MARK: Final = "〆"
# A sentence that recites a stretch of one instruction sentence with a few letters left out, changed or put in along it
# is a copy too, however much else it says (measured over 30 lines on the 0.5B model: "これらすべての会話で覚えている
# ことによって、…", the recall block's heading "以前の会話などで覚えていること" without its "など": 11 letters in two
# runs, a fifth of the sentence). A stretch is runs of two letters or more in the same order in both, each at most
# :data:`RECITED_GAP` letters after the one before in both; it counts with two runs or more, this many letters in all
# and one run this long at least, by script (bigrams: Japanese; trigrams: Latin letters, five words about 24 letters).
# One run alone is the prompt read out word for word (composing.PROMPT_RECITAL_CHARS). Chosen on 211 lines of the
# real model: "あなたが何を話したいか教えてください。" (runs of 4, 5 and 5 letters of "あなたが次に話したいかを決めて
# ください") is a line, not a copy.
RECITED_LETTERS: Final = {2: (10, 6), 3: (24, 12)}  # (letters in all, the longest run)
# A Japanese sentence that ends as an instruction ends, in its plain form, for this many letters, is the instruction
# said with other words before it (measured over 30 lines on the 0.5B model: "あかりは、私自身を日本語で言う。", from
# "自分のセリフだけを日本語で言う。"); a companion's line is polite or casual, and shares a shorter ending at most.
RECITED_ENDING: Final = 7
# ... and as few letters when they hold a kanji, the instruction's own word ("矩短あなたの紹介をする。", from the card's
# event "短く自己紹介をする。", measured over 30 lines on the 0.5B model). No sentence of JSQuAD's 7,852 (Wikipedia's
# plain form, and the questions) ends as an instruction does in five letters with a kanji, nor any ordinary line.
RECITED_WORD_ENDING: Final = 5
RECITED_GAP: Final = 3
# A sentence in Latin letters that says this many letters of one instruction sentence in one run, as they are, is
# the instruction's words in a line (measured over 30 lines on the 0.5B model: "I'm curious to see what the other
# person said.", 22 letters of "Do not repeat what the other person said; …"). None of LoCoMo's 6,920 sentences of
# conversation shares a run of 20 letters with an instruction sentence (18: "how important it is to", five).
RECITED_LATIN_RUN: Final = 20


def folded(text: str) -> str:
    """``text`` compared as instructions are: NFKC, case folded, every run of digits one "0" (a number filled in
    or changed is the same instruction), no punctuation, symbols or whitespace."""
    return _NOT_A_LETTER.sub("", _DIGITS.sub("0", unicodedata.normalize("NFKC", text).casefold()))


def recited_stretches(line: str, instruction: str) -> list[tuple[int, int]]:
    """The stretches of ``instruction`` that ``line`` recites, each as (its letters, its longest run): runs of two
    letters or more found in both in the same order, each at most :data:`RECITED_GAP` letters after the one before
    in both."""
    stretches: list[tuple[int, int]] = []
    end_a = end_b = -RECITED_GAP - 1
    for a, b, size in difflib.SequenceMatcher(None, line, instruction, autojunk=False).get_matching_blocks():
        if size < 2:
            continue
        if stretches and a - end_a <= RECITED_GAP and b - end_b <= RECITED_GAP:
            total, longest = stretches[-1]
            stretches[-1] = (total + size, max(longest, size))
        else:
            stretches.append((size, size))
        end_a, end_b = a + size, b + size
    return stretches


def _first_word(sentence: str) -> str:
    """The first Latin-letter word of ``sentence``, case folded ("" when it begins otherwise)."""
    found = _FIRST_WORD.match(unicodedata.normalize("NFKC", sentence).casefold().lstrip(" \t\n\"'(-*"))
    return found.group(0) if found else ""


def _grams(text: str, n: int) -> tuple[str, ...]:
    return tuple(text[i : i + n] for i in range(len(text) - n + 1))


def _gram_size(text: str) -> int:
    """Character bigrams for Japanese (a kanji or a kana carries a word), trigrams for Latin-letter text."""
    return 2 if written_in_japanese_script(text) else 3


def sentences_of(text: str) -> list[str]:
    """The sentences of ``text`` (cut after 。！？!? and a closing quote, at "." before a space, at line breaks)."""
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)]
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [piece.strip() for piece in pieces if piece.strip()]


@dataclass(frozen=True)
class Instructions:
    """The sentences of a prompt's instructions, as character n-grams: what a line must not copy.

    Made with :meth:`of` from the instruction texts (placeholders already filled or removed); a sentence of a line
    copies them when most of its n-grams (:data:`INSTRUCTION_SHARE`) are in one instruction sentence, whatever the
    order, numbers or punctuation: "1〜2文、90文字以内。" copies "1〜2文、{max_chars}文字以内。", "日本語で、自分の
    セリフだけを言う" copies "自分のセリフだけを日本語で言う。"."""

    sentences: tuple[tuple[frozenset[str], frozenset[str]], ...]  # per sentence: its bigrams, its trigrams
    plains: tuple[str, ...] = ()  # per sentence: its letters, folded (what a recital is measured against)
    names: tuple[str, ...] = ()  # the companion's names, folded: each is NAME_MARK in a line compared
    together: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())  # every sentence's, in one
    endings: frozenset[str] = frozenset()  # how the Japanese sentences end: their last two letters (plain form)
    tails: frozenset[str] = frozenset()  # ... and their last RECITED_ENDING letters (RECITED_WORD_ENDING: a kanji)
    openings: frozenset[str] = frozenset()  # how the English sentences begin: their first word

    @staticmethod
    @functools.lru_cache(maxsize=32)
    def of(texts: tuple[str, ...], names: tuple[str, ...] = ()) -> Instructions:
        """The instructions ``texts`` (the companion's name in them as :data:`NAME_MARK`) of the companion
        called ``names``."""
        grams = []
        plains: list[str] = []
        endings: set[str] = set()
        tails: set[str] = set()
        openings: set[str] = set()
        for text in texts:
            for sentence in sentences_of(text):
                plain = folded(sentence)
                if len(plain) >= 2:
                    grams.append((frozenset(_grams(plain, 2)), frozenset(_grams(plain, 3))))
                    plains.append(plain)
                    if _gram_size(sentence) == 2:
                        endings.add(plain[-2:])
                        if plain[-2:] not in _POLITE_ENDINGS:
                            tails.update(tail for tail in (plain[-RECITED_ENDING:], plain[-RECITED_WORD_ENDING:])
                                         if len(tail) == RECITED_ENDING
                                         or (len(tail) == RECITED_WORD_ENDING and _KANJI.search(tail)))
                    elif word := _first_word(sentence):
                        openings.add(word)
        longest_first = sorted({folded(name) for name in names if folded(name)}, key=len, reverse=True)
        together = (frozenset().union(*(bi for bi, _ in grams)), frozenset().union(*(tri for _, tri in grams)))
        return Instructions(tuple(grams), tuple(plains), tuple(longest_first), together,
                            frozenset(endings - _POLITE_ENDINGS), frozenset(tails), frozenset(openings))

    def _folded(self, sentence: str) -> str:
        """``sentence`` folded, with the companion's names as :data:`NAME_MARK`."""
        plain = folded(sentence)
        for name in self.names:
            plain = plain.replace(name, NAME_MARK)
        return plain

    def share(self, sentence: str) -> float:
        """The largest share of ``sentence``'s character n-grams found in one instruction sentence (0 for a
        sentence too short to judge)."""
        return max((share for share, _ in self._matches(sentence)), default=0.0)

    def copied(self, sentence: str) -> bool:
        """Whether ``sentence`` is mostly instruction text: most of it is in one instruction sentence, and it
        holds a good part of that sentence or is long (:data:`INSTRUCTION_SHARE`, :data:`INSTRUCTION_COVERAGE`)."""
        long = len(_grams(self._folded(sentence), _gram_size(sentence))) >= INSTRUCTION_LONG_GRAMS
        return (any(share >= INSTRUCTION_SHARE and (long or coverage >= INSTRUCTION_COVERAGE)
                    for share, coverage in self._matches(sentence))
                or self._blended(sentence) or self._recites(sentence) or self._a_piece(sentence))

    def _a_piece(self, sentence: str) -> bool:
        """Whether ``sentence``, in Japanese, is nothing but a word or phrase of one instruction sentence of
        :data:`INSTRUCTION_PIECE_LETTERS` letters or more (measured in an eighteenth 30-line run on the 0.5B model:
        "おしゃべり", from "…おしゃべりしています。", as Souta's whole line). None of JSQuAD's 3,419 sentences of four
        letters or more is one; the words that could be: おしゃべり, 話を振る, 新しい話題, 自己紹介."""
        plain = self._folded(sentence)
        return (_gram_size(sentence) == 2 and len(plain) >= INSTRUCTION_PIECE_LETTERS
                and any(plain in theirs for theirs in self.plains))

    def _recites(self, sentence: str) -> bool:
        """Whether ``sentence`` recites a stretch of one instruction sentence with a few letters changed
        (:data:`RECITED_LETTERS`), or, in Latin letters, a run of :data:`RECITED_LATIN_RUN` as it is."""
        n = _gram_size(sentence)
        least, run = RECITED_LETTERS[n]
        alone = RECITED_LATIN_RUN if n == 3 else math.inf  # one run this long counts by itself (Japanese: none)
        plain = self._folded(sentence)
        if n == 2 and not self.tails.isdisjoint((plain[-RECITED_ENDING:], plain[-RECITED_WORD_ENDING:])):
            return True
        shortest = int(min(least, alone))
        if len(plain) < shortest:
            return False
        # Only instruction sentences sharing enough letter pairs are compared letter by letter (a stretch of
        # ``shortest`` letters in runs of two or more holds ``shortest // 2`` pairs at least): ~10x fewer comparisons.
        pairs = frozenset(_grams(plain, 2))
        return any(
            (total >= least and longest >= run and total > longest) or longest >= alone
            for (bigrams, _), theirs in zip(self.sentences, self.plains, strict=True)
            if len(theirs) >= shortest and len(pairs & bigrams) >= shortest // 2
            for total, longest in recited_stretches(plain, theirs))

    def _blended(self, sentence: str) -> bool:
        """Whether ``sentence`` is pieced together from several instruction sentences and said as they are
        (:data:`INSTRUCTION_BLEND_SHARE`)."""
        n = _gram_size(sentence)
        plain = self._folded(sentence)
        mine = _grams(plain, n)
        if len(mine) < INSTRUCTION_MIN_GRAMS:
            return False
        said_so = plain[-2:] in self.endings if n == 2 else _first_word(sentence) in self.openings
        return said_so and sum(g in self.together[n - 2] for g in mine) / len(mine) >= INSTRUCTION_BLEND_SHARE

    def _matches(self, sentence: str) -> list[tuple[float, float]]:
        """Per instruction sentence: the share of ``sentence``'s n-grams in it, and the share of its n-grams in
        ``sentence`` (nothing for a sentence too short to judge)."""
        n = _gram_size(sentence)
        mine = _grams(self._folded(sentence), n)
        if len(mine) < INSTRUCTION_MIN_GRAMS:
            return []
        distinct = frozenset(mine)
        return [(sum(g in theirs[n - 2] for g in mine) / len(mine), len(distinct & theirs[n - 2]) / len(theirs[n - 2]))
                for theirs in self.sentences if theirs[n - 2]]

    def without_copies(self, text: str) -> str:
        """``text`` without its sentences that are mostly instruction text ("" when all of them are)."""
        return without_sentences(text, self.copied) if self.sentences else text

    def only_copies(self, text: str) -> bool:
        """Whether every sentence of ``text`` is mostly instruction text (and it has one at least)."""
        return every_sentence(text, self.copied)


NO_INSTRUCTIONS: Final = Instructions(())  # nothing to copy: every sentence is the line's own


def _joined(sentences: Sequence[str]) -> str:
    """Sentences put back together: a space after a Latin-letter sentence, none after a Japanese one."""
    out = ""
    for sentence in sentences:
        out += ("" if not out or not out[-1].isascii() else " ") + sentence
    return out


_DATE_ONLY: Final = re.compile(r"(?:\d+(?:年|月|日|時|分|秒)?)+(?:[月火水木金土日](?:曜日?)?)?")


def only_a_date(text: str) -> bool:
    """Whether ``text`` says nothing but a date or a time, numbers and their units only (measured on the 0.5B
    model: "2026年11月" as Akari's whole line, the date of the recall block in its prompt)."""
    return _DATE_ONLY.fullmatch(_NOT_A_LETTER.sub("", unicodedata.normalize("NFKC", text))) is not None


def every_sentence(text: str, test: Callable[[str], bool]) -> bool:
    """Whether ``text`` has a sentence and every one passes ``test`` (what :func:`without_sentences` would empty)."""
    sentences = sentences_of(text)
    return bool(sentences) and all(test(s) for s in sentences)


def without_sentences(text: str, unwanted: Callable[[str], bool]) -> str:
    """``text`` without its sentences that are ``unwanted`` ("" when all of them are); a line that keeps all of its
    sentences is kept as it was written."""
    kept = []
    for line in text.splitlines():
        sentences = sentences_of(line)
        mine = [s for s in sentences if not unwanted(s)]
        if len(mine) == len(sentences):
            kept.append(line)
        elif mine:
            kept.append(_joined(mine))
    return "\n".join(kept).strip()


def without_dates(text: str) -> str:
    """``text`` without its sentences that are nothing but a date or a time (measured on the 0.5B model:
    "こんにちは！\n2026年11月28日、", the recall block's date after a greeting)."""
    return without_sentences(text, only_a_date)


# The shape of a recall block's entry (companions/memory/recall.py item_line), read out as a line: a date, who, and
# "said" (measured on the 0.5B model: 'On 28 November 2026, user said: "Wait, really? Tell me more!"\nOn 2', an
# entry it made up in the recall block's words, and the start of the next one; '28 November 2026: "Hello everyone…"',
# '2026年11月28日、ahariが「Wait, really?').
_EN_DATE: Final = r"\d{1,2}\s+[A-Z][a-z]+\s+\d{4}"
_JA_DATE: Final = r"\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日"
_RECALLED_ENTRY: Final = re.compile(
    rf"^\s*(?:[-*•・]\s*)?(?:(?:On\s+)?{_EN_DATE},.*\bsaid\b|Noted on {_EN_DATE}:|{_EN_DATE}\s*[:：]"
    rf"|{_JA_DATE}(?:、.*と言いました|のメモ[:：]|、[^「」。]{{0,20}}が[「『]|\s*[:：]))"
    rf"|^\s*(?:[-*•・]\s*)?(?:On\s+\d{{1,2}}(?:\s+[A-Z][a-z]*)?|On\s+{_EN_DATE},?(?:\s+\S{{1,12}})?"
    rf"|\d{{4}}年(?:\d{{1,2}}月?)?)\s*$")


def without_recalled_entries(text: str) -> str:
    """``text`` without its lines that read like an entry of the recall block ("On 28 November 2026, Hina said:
    …", "2026年11月28日、ひなが「…」と言いました。") or the cut-off start of one ("On 2"): the prompt's format, not
    speech, whether copied or made up in its words."""
    return "\n".join(line for line in text.splitlines() if not _RECALLED_ENTRY.search(line)).strip()


def reads_like_recalled_entry(text: str) -> bool:
    """Whether a line or a sentence of ``text`` reads like an entry of the recall block (a line being streamed is
    judged sentence by sentence, its line breaks gone)."""
    return any(_RECALLED_ENTRY.search(piece) for piece in (*text.splitlines(), *sentences_of(text)))


_WEEKDAYS_JA: Final = "月火水木金土日"
_WEEKDAYS_EN: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_JA: Final = rf"([{_WEEKDAYS_JA}])曜日?"
_DAY_EN: Final = rf"({'|'.join(_WEEKDAYS_EN)}|{'|'.join(d[:3] for d in _WEEKDAYS_EN)})\.?"
_WEEKDAY_THEN_OTHER: Final = re.compile(
    rf"{_DAY_JA}\s*[（(]\s*([{_WEEKDAYS_JA}])(?:曜日?)?\s*[)）]"
    rf"|\b{_DAY_EN}\s*\(\s*{_DAY_EN}\s*\)", re.IGNORECASE)


def contradicts_itself(text: str) -> bool:
    """Whether ``text`` names a weekday and then another one in brackets, as if to say which it is (measured on
    the 0.5B model: "今日は日曜日（月曜）です。"); the same day again ("土曜日（土）", "Sat (Saturday)") is no
    contradiction, nor is a date's weekday ("11月28日（土）": no weekday before the brackets)."""
    for match in _WEEKDAY_THEN_OTHER.finditer(text):
        first, second, third, fourth = match.groups()
        if first is not None and first != second:
            return True
        if third is not None and third.casefold()[:3] != fourth.casefold()[:3]:
            return True
    return False


def fallback_line(language: str, variant: int = 0) -> str:
    """A short, natural line for when a retry still repeats: "うん、そうだね。" / "Yes, I see." (``variant`` picks
    another wording, so two fallbacks in a row need not be the same)."""
    lines = _FALLBACKS.get(language, _FALLBACKS["en"])
    return lines[variant % len(lines)]
