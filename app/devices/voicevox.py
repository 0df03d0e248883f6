"""VOICEVOX-compatible engines (VOICEVOX, AivisSpeech, and any engine with their HTTP API): speakers, synthesis and
the mora timing of what is said.

The engine's API (read from VOICEVOX/voicevox_engine, ``voicevox_engine/app/routers``): ``GET /version`` answers a
JSON string; ``GET /speakers`` a list of ``{name, speaker_uuid, styles: [{name, id, type}], version}`` (``type``
"talk" can speak; "sing", "singing_teacher" and "frame_decode" styles are listed too but refused by
``/audio_query``); ``POST /audio_query?text=..&speaker=<style id>`` answers an AudioQuery (``accent_phrases[]`` of
``moras[]`` with ``consonant_length``/``vowel_length`` in seconds and an optional ``pause_mora``, ``speedScale``,
``pitchScale``, ``volumeScale``, ``prePhonemeLength``, ``postPhonemeLength``, ``pauseLength``,
``pauseLengthScale``, ``outputSamplingRate``, ``outputStereo``, ``kana``); ``POST /synthesis?speaker=<style id>``
with that query as its JSON body answers ``audio/wav`` (16-bit PCM). Errors: 422 with ``{"detail": [...]}`` for a
request that does not validate (FastAPI), 422 with ``{"message": ...}`` for a style it does not have or that
cannot talk.

AivisSpeech adds fields to the query (``tempoDynamicsScale``...): the query goes back as the engine wrote it, with
only the speed, pitch, volume and mono output changed. Its mora lengths are placeholders (its model times the
speech itself): :func:`mora_timings` fits the timing to the WAV's real length when the two disagree.

Everything an engine answers is hostile until checked: each answer is read up to a size bound, JSON is validated
(shapes, finite numbers, counts), and the WAV is parsed and written again by this module (never played as sent).
An engine that does not answer, or answers wrongly, is a :class:`VoicevoxProblem` whose message a person reads.
"""

from __future__ import annotations

import io
import json
import logging
import math
import re
import threading
import wave
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from app.devices.audio_output import write_speech_wav
from companions.wire.bus import LocalEvent

log = logging.getLogger(__name__)

MAX_SMALL_BYTES: Final = 4096  # /version
MAX_SPEAKERS_BYTES: Final = 4 * 1024 * 1024  # VOICEVOX 0.25 lists ~100 characters in ~60 KB
MAX_QUERY_BYTES: Final = 2 * 1024 * 1024  # an AudioQuery of one chunk of text: a few KB
MAX_WAV_BYTES: Final = 32 * 1024 * 1024  # ~6 min of 48 kHz mono 16-bit: a chunk of text is seconds
MAX_WAV_SECONDS: Final = 300.0
MAX_SPEAKERS: Final = 2000
MAX_STYLES: Final = 200
MAX_MORAS: Final = 5000
MAX_NAME_CHARS: Final = 120
STYLE_ID_RANGE: Final = (-(2**31), 2**31 - 1)  # VOICEVOX's small ids, AivisSpeech's 32-bit hashes
FRAME_RATE: Final = 93.75  # the engine's frames per second: each phoneme's length is rounded to a frame
UPSPEAK_LENGTH_S: Final = 0.15  # a question's rising mora, added at synthesis (enable_interrogative_upspeak)
TIMING_TOLERANCE: Final = 0.25  # the query's timing farther than this from the WAV's length is refitted
CONNECT_TIMEOUT_S: Final = 1.5
SYNTHESIS_TIMEOUT_S: Final = 30.0
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")

ProblemKind = Literal["gone", "refused", "bad_answer"]


class VoicevoxProblem(Exception):
    """The engine cannot say the line: ``kind`` "gone" (nothing answers), "refused" (it answered an error) or
    "bad_answer" (its answer is not what the API says). ``str()`` reads as a person should see it."""

    def __init__(self, kind: ProblemKind, message: str) -> None:
        super().__init__(message)
        self.kind: ProblemKind = kind


@dataclass(frozen=True)
class EngineStyle:
    """One voice of an engine: a style of a character (``ずんだもん`` / ``ノーマル``), by its style id."""

    id: int
    speaker: str
    name: str
    speaker_uuid: str = ""


@dataclass(frozen=True)
class MoraTiming:
    """A mora of the line (its kana) and when it is heard, in seconds from the start of its WAV."""

    text: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class MorasSpoken(LocalEvent):
    """Published on the ``events`` topic as a chunk said by a VOICEVOX engine starts (the speaker's thread, handed
    to the loop): who says it, its text, when its audio started (``time.monotonic()``) and when each of its moras is
    heard from then, the engine's own timing (for a highlight that follows the voice)."""

    speaker_id: str
    text: str
    started: float
    moras: tuple[MoraTiming, ...]


@dataclass(frozen=True)
class Rendered:
    """A chunk said by the engine: its WAV (written by this module), its length and its moras' timing."""

    path: Path
    duration_s: float
    moras: tuple[MoraTiming, ...]


def clean_name(value: object, fallback: str = "?") -> str:
    """A name from an engine as a person may see it: a string, no control or direction characters, bounded."""
    if not isinstance(value, str):
        return fallback
    text = _CONTROL.sub("", value).strip()
    return text[:MAX_NAME_CHARS] or fallback


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def normalize_url(url: str) -> str:
    """``http://host:port`` of a URL a person typed (a path or a trailing slash dropped); raises ValueError."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http:// address")
    try:
        port = parts.port
    except ValueError as err:
        raise ValueError(f"{url!r} has no valid port") from err
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def address_of(base_url: str) -> str:
    """``host:port`` of an engine's URL: how a voice id names the engine."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else parts.hostname
    return f"{host}:{port}"


# -- validation of what an engine answers ------------------------------------------------------------------------


def _finite(value: object, *, low: float = 0.0, high: float = 3600.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a number")
    if not low <= value <= high:
        raise ValueError(f"{value!r} is out of range")
    return float(value)


def parse_speakers(data: object) -> list[EngineStyle]:
    """The talk styles of a ``GET /speakers`` answer; a malformed character or style is left out (logged), an
    answer that is not a list of characters is refused."""
    if not isinstance(data, list):
        raise VoicevoxProblem("bad_answer", "its speaker list is not a list")
    styles: list[EngineStyle] = []
    seen: set[int] = set()
    for speaker in data[:MAX_SPEAKERS]:
        if not isinstance(speaker, dict) or not isinstance(speaker.get("styles"), list):
            log.debug("voicevox: a speaker left out: %.200r", speaker)
            continue
        name = clean_name(speaker.get("name"))
        uuid = clean_name(speaker.get("speaker_uuid"), "")
        for style in speaker["styles"][:MAX_STYLES]:
            if not isinstance(style, dict):
                continue
            style_id = style.get("id")
            if isinstance(style_id, bool) or not isinstance(style_id, int) \
                    or not STYLE_ID_RANGE[0] <= style_id <= STYLE_ID_RANGE[1] or style_id in seen:
                continue
            if style.get("type", "talk") != "talk":  # singing styles are listed too; /audio_query refuses them
                continue
            seen.add(style_id)
            styles.append(EngineStyle(style_id, name, clean_name(style.get("name")), uuid))
    return styles


def _check_mora(mora: object) -> None:
    if not isinstance(mora, dict) or not isinstance(mora.get("text"), str) or not isinstance(mora.get("vowel"), str):
        raise ValueError("a mora without text or vowel")
    _finite(mora.get("vowel_length"), high=60.0)
    if mora.get("consonant_length") is not None:
        _finite(mora.get("consonant_length"), high=60.0)
    if mora.get("pitch") is not None:
        _finite(mora.get("pitch"), low=-1000.0, high=1000.0)


def check_audio_query(data: object) -> dict[str, Any]:
    """An ``/audio_query`` answer, checked: the shape :func:`mora_timings` and ``/synthesis`` need, finite numbers in
    range, bounded counts. Unknown fields stay (an engine's own, such as AivisSpeech's)."""
    try:
        if not isinstance(data, dict) or not isinstance(data.get("accent_phrases"), list):
            raise ValueError("no accent_phrases")
        count = 0
        for phrase in data["accent_phrases"]:
            if not isinstance(phrase, dict) or not isinstance(phrase.get("moras"), list):
                raise ValueError("an accent phrase without moras")
            for mora in phrase["moras"]:
                _check_mora(mora)
            if phrase.get("pause_mora") is not None:
                _check_mora(phrase["pause_mora"])
            count += len(phrase["moras"]) + 1
            if count > MAX_MORAS:
                raise ValueError("too many moras")
        _finite(data.get("speedScale"), low=0.01, high=100.0)
        for key in ("prePhonemeLength", "postPhonemeLength"):
            _finite(data.get(key), high=60.0)
        if data.get("pauseLength") is not None:
            _finite(data.get("pauseLength"), high=60.0)
        _finite(data.get("pauseLengthScale", 1.0), high=100.0)
        rate = data.get("outputSamplingRate")
        if isinstance(rate, bool) or not isinstance(rate, int) or not 8000 <= rate <= 192000:
            raise ValueError(f"outputSamplingRate {rate!r}")
    except ValueError as err:
        raise VoicevoxProblem("bad_answer", f"its audio query is not valid ({err})") from None
    return data


def mora_timings(query: Mapping[str, Any], *, upspeak: bool = True) -> tuple[tuple[MoraTiming, ...], float]:
    """When each mora of ``query`` is heard, and the whole WAV's length, as the engine times them
    (voicevox_engine/tts_pipeline/tts_engine.py): the silence before (``prePhonemeLength``), each mora's consonant
    then vowel, a phrase's ``pause_mora`` (``pauseLength`` instead of its own when set, times
    ``pauseLengthScale``), a question's rising mora (0.15 s) when its last mora is voiced, the silence after; all
    divided by ``speedScale``, each phoneme rounded to the engine's frame (1/93.75 s)."""
    speed = float(query["speedScale"])

    def frames(seconds: float) -> int:
        return round(seconds / speed * FRAME_RATE)  # round half to even, as numpy's round in the engine

    pause_length, pause_scale = query.get("pauseLength"), float(query.get("pauseLengthScale", 1.0))
    position = frames(float(query["prePhonemeLength"]))
    timings: list[MoraTiming] = []
    for phrase in query["accent_phrases"]:
        moras = list(phrase["moras"])
        for mora in moras:
            length = frames(float(mora.get("consonant_length") or 0.0)) + frames(float(mora["vowel_length"]))
            timings.append(MoraTiming(mora["text"], position / FRAME_RATE, (position + length) / FRAME_RATE))
            position += length
        if upspeak and phrase.get("is_interrogative") and moras and float(moras[-1].get("pitch") or 0.0) > 0:
            length = frames(UPSPEAK_LENGTH_S)
            timings.append(MoraTiming("ー", position / FRAME_RATE, (position + length) / FRAME_RATE))
            position += length
        pause = phrase.get("pause_mora")
        if pause is not None:
            seconds = float(pause["vowel_length"]) if pause_length is None else float(pause_length)
            position += frames(seconds * pause_scale)
    position += frames(float(query["postPhonemeLength"]))
    return tuple(timings), position / FRAME_RATE


def fit_timings(moras: tuple[MoraTiming, ...], expected_s: float, duration_s: float) -> tuple[MoraTiming, ...]:
    """``moras`` timed for a WAV of ``expected_s``, fitted to the real one of ``duration_s`` when they disagree by
    more than :data:`TIMING_TOLERANCE` (AivisSpeech's placeholder lengths: spread evenly over the WAV)."""
    if not moras or duration_s <= 0:
        return moras
    if expected_s > 0 and abs(expected_s - duration_s) <= TIMING_TOLERANCE * duration_s:
        return moras
    if expected_s <= 0 or moras[-1].end_s <= moras[0].start_s:
        step = duration_s / len(moras)
        return tuple(MoraTiming(m.text, i * step, (i + 1) * step) for i, m in enumerate(moras))
    scale = duration_s / expected_s
    return tuple(MoraTiming(m.text, m.start_s * scale, m.end_s * scale) for m in moras)


def read_wav(data: bytes) -> tuple[bytes, int, int]:
    """16-bit PCM samples (mono: channels averaged), their rate and frame count from an engine's WAV; raises
    :class:`VoicevoxProblem` for anything else (another format, a header that lies, too long)."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            channels, width, rate, count = wav.getnchannels(), wav.getsampwidth(), wav.getframerate(), \
                wav.getnframes()
            if width != 2 or not 1 <= channels <= 2 or not 8000 <= rate <= 192000:
                raise ValueError(f"{channels} channels of {width * 8} bits at {rate} Hz")
            if count / rate > MAX_WAV_SECONDS:
                raise ValueError(f"{count / rate:.0f} s long")
            frames = wav.readframes(count)
    except (wave.Error, EOFError, ValueError) as err:
        raise VoicevoxProblem("bad_answer", f"its audio is not a 16-bit PCM WAV ({err})") from None
    count = len(frames) // (2 * channels)  # a header may promise more than it holds
    if channels == 2:
        import numpy as np

        stereo = np.frombuffer(frames[:count * 4], dtype="<i2").reshape(-1, 2).astype(np.int32)
        frames = (stereo.sum(axis=1) // 2).astype("<i2").tobytes()
    return frames[:count * 2], rate, count


# -- the HTTP client -----------------------------------------------------------------------------------------


def _error_text(status: int, body: bytes) -> str:
    """An engine's error answer, in a few words: its ``message``, or its first validation error."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    said = ""
    if isinstance(data, dict):
        if isinstance(data.get("message"), str):
            said = data["message"]
        elif isinstance(data.get("detail"), list) and data["detail"] and isinstance(data["detail"][0], dict):
            first = data["detail"][0]
            where = ".".join(str(p) for p in first.get("loc", []) if isinstance(p, str | int))
            said = f"{where}: {first.get('msg', '')}"
        elif isinstance(data.get("detail"), str):
            said = data["detail"]
    return f"HTTP {status}" + (f": {clean_name(said, '')}" if clean_name(said, "") else "")


class VoicevoxEngine:
    """One engine at ``base_url``, for one thread at a time per method call (its HTTP client is shared, locked)."""

    def __init__(self, base_url: str, name: str = "VOICEVOX", *, timeout_s: float = SYNTHESIS_TIMEOUT_S) -> None:
        self.base_url = normalize_url(base_url)
        self.name = name
        self.timeout_s = timeout_s
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return address_of(self.base_url)

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _http(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                timeout = httpx.Timeout(self.timeout_s, connect=CONNECT_TIMEOUT_S)
                self._client = httpx.Client(base_url=self.base_url, timeout=timeout, follow_redirects=False,
                                            trust_env=False)  # loopback must not go through a proxy
            return self._client

    def _call(self, method: str, path: str, limit: int, *, params: dict[str, Any] | None = None,
              body: Any = None, timeout_s: float | None = None) -> tuple[bytes, str]:
        """The answer's body (at most ``limit`` bytes) and content type; raises :class:`VoicevoxProblem`."""
        import httpx

        where = f"{self.name} at {self.base_url}"
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"accept-encoding": "identity"}  # read as sent: a compressed answer could be a bomb
        if content is not None:
            headers["content-type"] = "application/json"
        timeout = httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s)) if timeout_s else None
        try:
            with self._http().stream(method, path, params=params, content=content, headers=headers,
                                     **({"timeout": timeout} if timeout else {})) as answer:
                declared = answer.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > limit:
                    raise VoicevoxProblem("bad_answer", f"{where} answered {int(declared)} bytes (at most {limit})")
                if answer.headers.get("content-encoding", "identity").lower() not in ("identity", ""):
                    raise VoicevoxProblem("bad_answer", f"{where} answered in an encoding it was not asked for")
                chunks, size = [], 0
                for chunk in answer.iter_raw():
                    size += len(chunk)
                    if size > limit:
                        raise VoicevoxProblem("bad_answer", f"{where} answered more than {limit} bytes")
                    chunks.append(chunk)
                data = b"".join(chunks)
                if answer.status_code != 200:
                    raise VoicevoxProblem("refused", f"{where} refused {path}: {_error_text(answer.status_code, data)}")
                return data, answer.headers.get("content-type", "")
        except httpx.TimeoutException:
            raise VoicevoxProblem("gone", f"{where} does not answer in time") from None
        except (httpx.TransportError, OSError) as err:
            raise VoicevoxProblem("gone", f"{where} does not answer ({type(err).__name__})") from None

    def _json(self, method: str, path: str, limit: int, **kwargs: Any) -> Any:
        data, _ = self._call(method, path, limit, **kwargs)
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nesting thousands deep
            raise VoicevoxProblem("bad_answer", f"{self.name} at {self.base_url} answered {path} with something "
                                                "that is not JSON") from None

    def version(self, timeout_s: float | None = None) -> str:
        """The engine's version (``GET /version``: a JSON string); raises when the answer is not one."""
        value = self._json("GET", "/version", MAX_SMALL_BYTES, timeout_s=timeout_s)
        if not isinstance(value, str):
            raise VoicevoxProblem("bad_answer", f"{self.base_url}/version is not an engine's version")
        return clean_name(value, "")

    def styles(self, timeout_s: float | None = None) -> list[EngineStyle]:
        """The styles that can talk (``GET /speakers``)."""
        return parse_speakers(self._json("GET", "/speakers", MAX_SPEAKERS_BYTES, timeout_s=timeout_s))

    def audio_query(self, text: str, style: int) -> dict[str, Any]:
        return check_audio_query(self._json("POST", "/audio_query", MAX_QUERY_BYTES,
                                            params={"text": text, "speaker": style}))

    def synthesis(self, query: Mapping[str, Any], style: int) -> bytes:
        data, _ = self._call("POST", "/synthesis", MAX_WAV_BYTES, params={"speaker": style}, body=dict(query))
        return data

    def render(self, text: str, style: int, path: Path, *, speed: float = 1.0, pitch: float = 0.0,
               volume: float = 1.0) -> Rendered:
        """``text`` said in ``style``, written to ``path`` (0600, mono 16-bit), with its moras' timing.

        ``speed`` is the query's ``speedScale`` (clamped 0.5-2.0, the engine's range), ``pitch`` its
        ``pitchScale`` (-0.15-0.15), ``volume`` its ``volumeScale`` (0-2)."""
        query = self.audio_query(text, style)
        query["speedScale"] = max(0.5, min(2.0, speed))
        query["pitchScale"] = max(-0.15, min(0.15, pitch))
        query["volumeScale"] = max(0.0, min(2.0, volume))
        query["outputStereo"] = False
        moras, expected = mora_timings(query)
        frames, rate, count = read_wav(self.synthesis(query, style))
        write_speech_wav(path, frames, rate)
        duration = count / rate
        return Rendered(path, duration, fit_timings(moras, expected, duration))

