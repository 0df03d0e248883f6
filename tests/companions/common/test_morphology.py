"""Japanese words from MeCab with IPAdic, in the UniDic category names search and the classifier were written for."""

from __future__ import annotations

from companions.common.morphology import Morpheme, tagger


def _words(text: str) -> list[Morpheme]:
    found = tagger()
    assert found is not None
    return found(text)


def test_ipadic_categories_come_out_as_unidics() -> None:
    by_surface = {w.surface: w.feature for w in _words("超高速で3杯、田中さんと合併して出来る")}
    assert by_surface["超"].pos1 == "接頭辞"  # IPAdic: 接頭詞
    assert (by_surface["さん"].pos1, by_surface["さん"].pos2) == ("接尾辞", "名詞的")  # IPAdic: 名詞,接尾
    assert by_surface["3"].pos2 == "数詞"  # IPAdic: 名詞,数
    assert by_surface["田中"].pos2 == "固有名詞"
    assert by_surface["し"].lemma == "為る"  # IPAdic: する
    assert by_surface["出来る"].lemma == "出来る"


def test_readings_are_spoken_forms_and_unknown_words_have_none() -> None:
    words = _words("今日はピカチュウへ行く")
    assert [w.feature.pron for w in words if not w.is_unk][:2] == ["キョー", "ワ"]
    assert words[0].feature.kana == "キョウ"
    unknown = [w for w in _words("ゲゲゲッポ") if w.is_unk]
    assert unknown
    assert all(w.feature.pron is None for w in unknown)
