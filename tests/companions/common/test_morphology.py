"""Japanese words from MeCab over Open JTalk's dictionary, in the UniDic category names search and the classifier were
written for, with the text's own letters; and names in romaji from the same dictionary's readings."""

from __future__ import annotations

from companions.common.morphology import Morpheme, romaji, tagger


def _words(text: str) -> list[Morpheme]:
    found = tagger()
    assert found is not None
    return found(text)


def test_ipadic_categories_come_out_as_unidics() -> None:
    by_surface = {w.surface: w.feature for w in _words("超高速で3杯、田中さんと合併して出来る。できれば")}
    assert by_surface["超"].pos1 == "接頭辞"  # IPAdic's categories: 接頭詞
    assert (by_surface["さん"].pos1, by_surface["さん"].pos2) == ("接尾辞", "名詞的")  # IPAdic: 名詞,接尾
    assert by_surface["3"].pos2 == "数詞"  # IPAdic: 名詞,数
    assert by_surface["田中"].pos2 == "固有名詞"
    assert by_surface["し"].lemma == "為る"  # IPAdic: する
    assert by_surface["出来る"].lemma == "出来る"
    assert by_surface["できれ"].lemma == "出来る"  # Open JTalk's dictionary: a form of する
    assert _words("A社とB社")[0].feature.pos1 == "名詞"  # a letter standing for a name (記号,アルファベット)


def test_words_are_the_texts_own_letters_with_the_blanks_before_them() -> None:
    text = "ｶﾞｷﾞの Wi-Fi\tと　ＡＢＣ It's 😀。"  # MeCab reads ｶﾞ as ガ, a half-width letter as a full-width one
    words = _words(text)
    assert "".join(w.white_space + w.surface for w in words) == text
    assert words[0].surface == "ｶﾞｷﾞ"
    assert [w.white_space for w in words if w.surface == "と"] == ["\t"]
    assert "It's" in [w.surface for w in words]


def test_readings_are_spoken_forms_and_unknown_words_have_none() -> None:
    words = _words("今日はピカチュウへ行く")
    assert [w.feature.pron for w in words if not w.is_unk][:2] == ["キョー", "ワ"]
    assert words[0].feature.kana == "キョウ"
    unknown = [w for w in _words("ゲゲゲッポ") if w.is_unk]
    assert unknown
    assert all(w.feature.pron is None for w in unknown)


def test_names_in_romaji_come_from_the_dictionarys_readings() -> None:
    assert romaji("桜井さくら") == "sakurai sakura"
    assert romaji("颯太") == "souta"  # the name's reading, not the letter's (pykakasi said fuuta)
    assert romaji("キャサリン・ジョーンズ") == "kyasarin ・ joonzu"  # a long vowel doubled, as Hepburn without macrons
    assert romaji("ピカチュウ") == "pikachuu"  # not in the dictionary: spelt from its kana
