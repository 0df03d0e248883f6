"""Nothing misheard is sent, for real: Japanese speech (Open JTalk's Mei) and English speech (espeak-ng) played into
the file microphone, through the WebRTC detector and the built-in English recognizer (PocketSphinx) to the sender."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.voice_input.recognizers import PocketSphinxRecognizer
from tests.app.speech_audio import clip
from tests.app.voice_input.heard_speech import hear
from tests.app.voice_input.spoken_japanese import japanese_clip


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
async def test_japanese_speech_is_not_sent_as_english_words_and_english_still_is(tmp_path: Path) -> None:
    recognizer = PocketSphinxRecognizer()  # the voice input loads it (and closes it after each clip)
    japanese = await hear(recognizer, japanese_clip("おはようございます", tmp_path / "ja.wav", before_s=0.3,
                                                    after_s=1.0))
    assert [outcome for outcome, _, _ in japanese.outcomes] == ["not understood"]  # said; nothing in the box
    english = await hear(recognizer, clip("what is the weather like tomorrow", tmp_path / "en.wav", before_s=0.3,
                                          after_s=1.0))
    assert [(outcome, words) for outcome, _, words in english.outcomes] == \
        [("sent", "what is the weather like tomorrow")]


async def test_words_the_recognizer_is_unsure_of_wait_in_the_box_instead_of_going_out(tmp_path: Path) -> None:
    spoken = clip("please stop talking", tmp_path / "stop.wav", before_s=0.3, after_s=1.0)
    heard = await hear(PocketSphinxRecognizer(), spoken)  # "send at once" is on
    assert [(outcome, words) for outcome, _, words in heard.outcomes] == [("box", "please stop to look you")]
