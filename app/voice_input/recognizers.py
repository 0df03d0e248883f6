"""Speech recognizers (the core's ``Recognizer`` port): PocketSphinx offline; faster-whisper or whisper.cpp once
downloaded.

- :class:`PocketSphinxRecognizer`: CMU PocketSphinx 5 with the US English acoustic model, dictionary and language
  model inside its wheel: no network and no download, streaming (partial results as the audio comes). It decodes
  as the user speaks, so at the end of the utterance only the last frames remain (tens of ms). The companions'
  names are added to its dictionary (``use_words``): "Akari" is not an English word, and a name it cannot spell is
  a name it never hears. Quality on espeak-ng's voice is modest (``bench/hearing.py`` reports the word error rate).
- :class:`WhisperRecognizer`: whisper.cpp (``pywhispercpp``) with a multilingual ggml model the user downloaded
  (``recognizer_models.py``), for Japanese and English. Whisper decodes whole utterances, not streams: a partial
  result decodes what was heard so far, only while that keeps up (each costs one decoding), and the final one
  decodes the utterance once more.
- :class:`FasterWhisperRecognizer`: Whisper through faster-whisper (CTranslate2, int8), downloaded from the
  settings. Each utterance is encoded once; Whisper's language detection on that encoding decides the language:
  speech in a language the settings do not accept (Japanese and English for "auto") is not decoded at all but
  reported "foreign", never decoded as another language. The companions' and the user's names go into the
  decoder's prompt (``use_words``) in the script of the language heard. The encoder sees the utterance and the
  silence after it up to :func:`encoder_frames` (10 s at least), not Whisper's whole 30 s window: its cost grows
  with the window (1.26 s for 30 s, 0.24 s for 10 s on this machine's 2 cores), and with less than a few seconds
  of silence after the words Whisper repeats them to fill the window (``bench/hearing.py whisper``).

Whisper decodes whole utterances: a partial result decodes what was heard so far, only while that keeps up, and the
final one decodes the utterance once more, unless the user has paused (:meth:`_WhisperSession.pause`): what was
heard up to the pause is decoded while the end-of-speech silence runs, and when that silence ends the utterance,
nothing new came and that decoding is the final one.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np

from app.voice_input.recognizer_models import MODELS, WHISPER_MAGIC, RecognizerChoice, installed, model_path
from companions.voice_input.audio import SAMPLE_RATE
from companions.voice_input.recognition import Certainty, RecognitionSession, Recognized, RecognizerUnavailable

log = logging.getLogger(__name__)

# PocketSphinx's certainty (:func:`word_posterior`), chosen on the calibration half of ``bench/hearing.py
# confidence --calibrate`` (25 espeak-ng English sentences, 12 Open JTalk Japanese ones, through the file microphone):
# the Japanese went up to 0.375, the English from 0.365 (median 0.64). Sure from just above every Japanese one;
# "foreign" below every English one (it suggested 0.344 and 0.377).
FOREIGN_BELOW: Final = 0.34
SURE_FROM: Final = 0.38

# Romaji to ARPAbet, for the companions' names (ids are romanized Japanese: akari, hina, souta...).
_ROMAJI: Final = [
    ("shi", "SH IY"), ("chi", "CH IY"), ("tsu", "T S UW"), ("sh", "SH"), ("ch", "CH"), ("ts", "T S"),
    ("ou", "OW"), ("ei", "EY"), ("ai", "AY"), ("a", "AA"), ("i", "IY"), ("u", "UW"), ("e", "EH"), ("o", "OW"),
    ("k", "K"), ("s", "S"), ("t", "T"), ("n", "N"), ("h", "HH"), ("f", "F"), ("m", "M"), ("y", "Y"), ("r", "R"),
    ("w", "W"), ("g", "G"), ("z", "Z"), ("j", "JH"), ("d", "D"), ("b", "B"), ("p", "P"), ("v", "V"), ("l", "L"),
]


def romaji_phones(word: str) -> str | None:
    """ARPAbet phones for a romanized name ("akari" -> "AA K AA R IY"), None when it has other letters."""
    word = word.lower()
    phones: list[str] = []
    index = 0
    while index < len(word):
        for spelling, sound in _ROMAJI:
            if word.startswith(spelling, index):
                phones.append(sound)
                index += len(spelling)
                break
        else:
            return None
    return " ".join(phones) or None


class _SphinxSession:
    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        decoder.start_utt()

    def accept(self, pcm: bytes) -> None:
        self._decoder.process_raw(pcm, False, False)

    def partial(self) -> str:
        hypothesis = self._decoder.hyp()
        return hypothesis.hypstr if hypothesis is not None else ""

    def pause(self) -> None:
        """Streaming: nothing is left to decode ahead (not called: the recognizer is ``streaming``)."""

    def finish(self) -> Recognized:
        self._decoder.end_utt()
        hypothesis = self._decoder.hyp()
        text = _clean(hypothesis.hypstr if hypothesis is not None else "")
        if not text:
            return Recognized("")
        confidence = word_posterior(self._decoder)
        return Recognized(text, certainty(confidence), round(confidence, 3))


def word_posterior(decoder: Any) -> float:
    """How sure PocketSphinx is of its words: the mean of their posterior probabilities in the utterance's lattice
    (0 to 1; fillers and silences left out). Speech in another language is made of English words that barely win
    over their neighbours in the lattice, and so is English it misheard."""
    posteriors = [min(1.0, segment.prob) for segment in decoder.seg()
                  if not segment.word.startswith(("<", "[", "+"))]
    return sum(posteriors) / len(posteriors) if posteriors else 0.0


def certainty(confidence: float) -> Certainty:
    if confidence < FOREIGN_BELOW:
        return "foreign"
    return "unsure" if confidence < SURE_FROM else "sure"


def _clean(text: str) -> str:
    """PocketSphinx marks alternates "word(2)" and fillers "<sil>", "[noise]": words only."""
    text = re.sub(r"\(\d+\)", "", text)
    return " ".join(w for w in text.split() if not w.startswith(("<", "[", "++")))


class PocketSphinxRecognizer:
    """Offline US English; one decoder, one utterance at a time (the controller's one thread)."""

    name = "pocketsphinx"
    languages = ("en",)
    streaming = True

    def __init__(self) -> None:
        self._decoder: Any = None

    def prepare(self) -> None:
        if self._decoder is not None:
            return
        try:
            from pocketsphinx import Decoder
        except ImportError as err:
            raise RecognizerUnavailable(f"speech recognition: PocketSphinx is not installed ({err})") from err
        try:
            self._decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
        except Exception as err:
            raise RecognizerUnavailable(f"speech recognition: PocketSphinx could not load its model: {err}") \
                from err

    def use_words(self, words: Iterable[str]) -> None:
        if self._decoder is None:
            return
        for word in {w.lower() for w in words}:
            if not re.fullmatch(r"[a-z]+", word) or self._decoder.lookup_word(word) is not None:
                continue
            phones = romaji_phones(word)
            if phones is not None:
                self._decoder.add_word(word, phones, True)

    def begin(self) -> RecognitionSession:
        if self._decoder is None:
            self.prepare()
        return _SphinxSession(self._decoder)

    def close(self) -> None:
        self._decoder = None


class _WholeUtterances(Protocol):
    keeps_up: bool

    def recognize(self, pcm: bytes, *, final: bool = True) -> Recognized: ...


class _WhisperSession:
    """An utterance for a recognizer that decodes whole buffers: each decoding is kept with the length it covered,
    so the final words reuse it when no audio came since (a pause's decoding)."""

    PARTIAL_AFTER_S: Final = 1.0  # new audio before a partial result is decoded again

    def __init__(self, recognizer: _WholeUtterances) -> None:
        self._recognizer = recognizer
        self._chunks: list[bytes] = []
        self._samples = 0
        self._decoded: tuple[int, Recognized] | None = None  # (samples covered, what they said)
        self._final = False  # the last decoding was a final one (not a partial's quicker one)

    def accept(self, pcm: bytes) -> None:
        self._chunks.append(pcm)
        self._samples += len(pcm) // 2

    def _decode(self, final: bool = True) -> Recognized:
        if self._decoded is None or self._decoded[0] != self._samples or (final and not self._final):
            self._decoded = (self._samples, self._recognizer.recognize(b"".join(self._chunks), final=final))
            self._final = final
        return self._decoded[1]

    def partial(self) -> str:
        done = self._decoded[0] if self._decoded is not None else 0
        if (self._samples - done) / SAMPLE_RATE >= self.PARTIAL_AFTER_S and self._recognizer.keeps_up:
            self._decode(final=False)
        decoded = self._decoded[1] if self._decoded is not None else None
        return decoded.text if decoded is not None and decoded.certainty != "foreign" else ""

    def pause(self) -> None:
        self._decode()

    def finish(self) -> Recognized:
        return self._decode()


class WhisperRecognizer:
    """whisper.cpp with a downloaded model; ``language`` "auto", "ja" or "en"."""

    streaming = False

    def __init__(self, choice: RecognizerChoice, data_dir: Path, language: str = "auto", threads: int = 2) -> None:
        self.choice = choice
        self.model = MODELS[choice]
        self.data_dir = data_dir
        self.language = language
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self.keeps_up = True  # the last decoding took less than half the audio's length

    @property
    def name(self) -> str:
        return self.choice

    @property
    def languages(self) -> tuple[str, ...]:
        return () if self.language == "auto" else (self.language,)

    def prepare(self) -> None:
        if self._model is not None:
            return
        path = model_path(self.data_dir, self.model)
        if not installed(self.data_dir, self.model):
            raise RecognizerUnavailable(f"speech recognition: the {self.choice} model is not downloaded yet "
                                        "(Settings > Voice input)")
        with path.open("rb") as file:
            if file.read(4) != WHISPER_MAGIC:
                raise RecognizerUnavailable(f"speech recognition: {path} is not a whisper.cpp model")
        try:
            from pywhispercpp.model import Model
        except ImportError as err:
            raise RecognizerUnavailable(f"speech recognition: whisper.cpp is not installed ({err})") from err
        try:
            self._model = Model(str(path), redirect_whispercpp_logs_to=None, n_threads=self.threads,
                                print_progress=False, print_realtime=False, no_context=True, single_segment=True)
        except Exception as err:
            raise RecognizerUnavailable(f"speech recognition: whisper.cpp could not load {path.name}: {err}") \
                from err

    def use_words(self, words: Iterable[str]) -> None:
        """Whisper spells names from its own vocabulary; an initial prompt would bias every utterance."""

    def begin(self) -> RecognitionSession:
        self.prepare()
        return _WhisperSession(self)

    def transcribe(self, pcm: bytes) -> str:
        return self.recognize(pcm).text

    def recognize(self, pcm: bytes, *, final: bool = True) -> Recognized:
        if not pcm:
            return Recognized("")
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        began = time.monotonic()
        with self._lock:
            segments = self._model.transcribe(audio, language=self.language)
        self.keeps_up = time.monotonic() - began < 0.5 * audio.size / SAMPLE_RATE
        return Recognized(" ".join(s.text.strip() for s in segments).strip())

    def close(self) -> None:
        self._model = None


# faster-whisper's certainty of its words: the mean log-probability of their tokens, and the chance the window held
# no speech at all (Whisper's own no-speech token). Its own transcribe() falls back to sampling below -1.0 and calls
# a window silent above 0.6; here the words then wait in the message box ("unsure").
SURE_LOGPROB: Final = -1.0
# A language Whisper gives at least this probability is the one spoken; below it, none stood out (short utterances).
FOREIGN_FROM: Final = 0.5
NO_SPEECH_FROM: Final = 0.6
# The language heard is sure only at this many times the probability of any other language accepted: a short
# utterance may sound as much Japanese as English ("how old are you": 0.24 each), and its words then wait in the
# message box. The 37 sentences of bench/hearing.py whisper that were right had 6.8 or more.
LANGUAGE_MARGIN: Final = 4.0
_WINDOW_FRAMES: Final = 3000  # Whisper's 30 s window of 10 ms mel frames
_LEAST_FRAMES: Final = 1000  # 10 s
_SILENCE_AFTER_FRAMES: Final = 500  # 5 s
_WHOLE_BELOW_FRAMES: Final = 140  # 1.4 s: under 0.7 s of speech with the pre-roll and the pause's silence


def encoder_frames(frames: int) -> int:
    """How many mel frames the encoder sees for an utterance of ``frames`` (10 ms each): the utterance and at least
    5 s of silence after it, 10 s at least, 30 s at most. Measured on the 37 sentences of ``bench/hearing.py
    whisper`` (1-4 s each), decoded alone: with 30 s, English WER 0.140, Japanese CER 0.118, the encoder 1.26 s at
    load 0.5; with 10 s, 0.093 and 0.129, 0.24 s; with the utterance and 1 s or 2 s after it, Whisper repeats the
    words until the token limit (WER 18.4 and 9.7); with 6 s, 0.150 and 0.129 and two names lost. A word or two
    alone (under 1.4 s with the pre-roll: "あかりさん" before a pause, 0.5 s) gets the whole 30 s: in 10 s Whisper
    took it for Indonesian (0.67) and "そうたくん" became "相達", in 30 s both were right (Japanese 0.43). Where
    the language is in doubt after 10 s, :meth:`FasterWhisperRecognizer.recognize` hears it again in 30 s."""
    if frames < _WHOLE_BELOW_FRAMES:
        return _WINDOW_FRAMES
    return min(_WINDOW_FRAMES, max(_LEAST_FRAMES, frames + _SILENCE_AFTER_FRAMES))


class FasterWhisperRecognizer:
    """Whisper through faster-whisper with a downloaded model folder; ``language`` "auto" (Japanese and English),
    "ja" or "en": the languages accepted."""

    streaming = False

    def __init__(self, choice: RecognizerChoice, data_dir: Path, language: str = "auto", threads: int = 2) -> None:
        self.choice = choice
        self.model = MODELS[choice]
        self.data_dir = data_dir
        self.language = language
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._words: tuple[str, ...] = ()
        self.keeps_up = True  # the last decoding took less than half the audio's length
        self.heard: dict[str, float] = {}  # the last utterance's language probabilities (the bench reads them)

    @property
    def name(self) -> str:
        return self.choice

    @property
    def languages(self) -> tuple[str, ...]:
        return ("ja", "en") if self.language == "auto" else (self.language,)

    def prepare(self) -> None:
        if self._model is not None:
            return
        if not installed(self.data_dir, self.model):
            raise RecognizerUnavailable(f"speech recognition: the {self.choice} model is not downloaded yet "
                                        "(Settings > Voice input)")
        try:
            from faster_whisper import WhisperModel
        except ImportError as err:
            raise RecognizerUnavailable(f"speech recognition: faster-whisper is not installed ({err})") from err
        path = model_path(self.data_dir, self.model)
        try:
            self._model = WhisperModel(str(path), device="cpu", compute_type="int8", cpu_threads=self.threads)
        except Exception as err:
            raise RecognizerUnavailable(f"speech recognition: faster-whisper could not load {path.name}: {err}") \
                from err

    def use_words(self, words: Iterable[str]) -> None:
        """Names (the companions' ids, romanized, and the user's): the decoder's prompt spells them."""
        self._words = tuple(dict.fromkeys(w.strip() for w in words if w.strip()))

    def prompt(self, language: str) -> str:
        """The names in the script of ``language``: "Akari, Hina, Souta." or "アカリ、ヒナ、ソウタ。"."""
        if not self._words:
            return ""
        if language == "ja":
            import jaconv

            names = [jaconv.alphabet2kata(w.lower()) if w.isascii() else w for w in self._words]
            return "、".join(names) + "。"
        return ", ".join(w[:1].upper() + w[1:] if w.isascii() else w for w in self._words) + "."

    def window(self, frames: int) -> int:
        """The encoder's input for an utterance of ``frames`` mel frames (:func:`encoder_frames`)."""
        return encoder_frames(frames)

    def begin(self) -> RecognitionSession:
        self.prepare()
        return _WhisperSession(self)

    def transcribe(self, pcm: bytes) -> str:
        return self.recognize(pcm).text

    def recognize(self, pcm: bytes, *, final: bool = True) -> Recognized:
        """The words of ``pcm``; ``final`` False (a partial result while the user speaks): quicker, in the 10 s
        window whatever the length, heard once."""
        if not pcm:
            return Recognized("")
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        model = self._model
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        began = time.monotonic()
        with self._lock:
            mel = model.feature_extractor(audio)[:, :_WINDOW_FRAMES]
            window = self.window(mel.shape[1]) if final else max(_LEAST_FRAMES, mel.shape[1] + _SILENCE_AFTER_FRAMES)
            while True:
                encoded = model.encode(pad_or_trim(mel, min(window, _WINDOW_FRAMES)))
                self.heard = {token[2:-2]: probability
                              for token, probability in model.model.detect_language(encoded)[0]}
                language, doubt = self._language()
                if not doubt or not final or window >= _WINDOW_FRAMES:
                    break
                window = _WINDOW_FRAMES  # a second hearing in the whole window before a doubt is kept
            if language not in self.languages:  # never decoded as another language
                return Recognized(f"<{language}>", "foreign", round(self.heard[language], 3))
            tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=language)
            prompt_text = self.prompt(language)
            previous = tokenizer.encode(" " + prompt_text) if prompt_text else []
            prompt = model.get_prompt(tokenizer, previous, without_timestamps=True)
            result = model.model.generate(encoded, [prompt], beam_size=1, max_length=model.max_length,
                                          return_scores=True, return_no_speech_prob=True, suppress_blank=True,
                                          suppress_tokens=[-1])[0]
        self.keeps_up = time.monotonic() - began < 0.5 * audio.size / SAMPLE_RATE
        tokens = result.sequences_ids[0]
        text = tokenizer.decode(tokens).strip()
        log_probability = result.scores[0] * len(tokens) / (len(tokens) + 1)
        sure = log_probability >= SURE_LOGPROB and result.no_speech_prob < NO_SPEECH_FROM and not doubt
        return Recognized(text, "sure" if sure else "unsure", round(float(np.exp(log_probability)), 3))

    def _language(self) -> tuple[str, bool]:
        """The language to decode in from what Whisper heard (``heard``), and whether it is in doubt: one the
        settings do not accept at ``FOREIGN_FROM`` or more is returned as it is (foreign); else the likeliest
        accepted one, in doubt when another language was likelier or an accepted one came within
        ``LANGUAGE_MARGIN``."""
        heard = self.heard
        language = max(heard, key=heard.__getitem__)
        if language not in self.languages and heard[language] >= FOREIGN_FROM:
            return language, True
        doubt = language not in self.languages  # no language stood out (a short utterance): left in the box
        language = max(self.languages, key=lambda code: heard.get(code, 0.0))
        rival = max((heard.get(code, 0.0) for code in self.languages if code != language), default=0.0)
        return language, doubt or heard[language] < LANGUAGE_MARGIN * rival

    def close(self) -> None:
        self._model = None


def build_recognizer(choice: RecognizerChoice, data_dir: Path, language: str = "auto") \
        -> PocketSphinxRecognizer | WhisperRecognizer | FasterWhisperRecognizer:
    if choice == "pocketsphinx":
        return PocketSphinxRecognizer()
    if MODELS[choice].engine == "faster-whisper":
        return FasterWhisperRecognizer(choice, data_dir, language)
    return WhisperRecognizer(choice, data_dir, language)
