"""A VOICEVOX-compatible engine for tests and demos: real HTTP on loopback (stdlib asyncio streams), real WAVs.

The engines cannot be installed here (VOICEVOX's core and voices are a separate download, AivisSpeech's models
too). This double speaks the engine's published API as its own source has it (VOICEVOX/voicevox_engine:
``voicevox_engine/app/routers/{tts_pipeline,character,engine_info}.py``, ``model.py``, ``tts_pipeline/model.py``,
``metas/metas.py``, ``app/global_exceptions.py`` and the e2e snapshots), quirks included:

- ``GET /version`` answers a JSON *string* (``"0.25.0"``), not an object;
- ``GET /speakers`` lists characters (``name``, ``speaker_uuid``, ``styles[{name, id, type}]``, ``version``,
  ``supported_features``) and their *singing* styles too (``type: "sing"``), which ``/audio_query`` refuses;
- ``POST /audio_query`` takes its text and style id in the *query string* (``?text=..&speaker=ID``: the style id
  is called ``speaker``) and a POST with no body; the AudioQuery it answers has ``prePhonemeLength`` and
  ``postPhonemeLength`` 0.1, ``pauseLength`` null, ``outputSamplingRate`` 24000, lengths in seconds, a phrase's
  ``pause_mora`` (vowel ``pau``) after 、and ``is_interrogative`` for ？;
- a style it does not have: 422 ``{"message": "指定されたスタイルが見つかりませんでした。"}``; a singing style: 422
  ``{"message": "指定されたスタイルはこの機能をサポートしていません。"}`` (not 404);
- a request that does not validate: 422 ``{"detail": [{"type", "loc", "msg", "input"}]}`` (FastAPI's), e.g.
  ``missing`` at ``["query", "text"]``, ``int_parsing`` at ``["query", "speaker"]``, ``json_invalid`` for a body
  that is not JSON; an unknown path 404 ``{"detail": "Not Found"}``, a wrong method 405;
- ``POST /synthesis?speaker=ID`` with the query as JSON answers ``audio/wav``, 16-bit PCM, timed as the engine
  times it: the silence before, each mora's consonant and vowel, a pause mora (``pauseLength`` when set, times
  ``pauseLengthScale``), a question's rising 0.15 s mora, the silence after, all over ``speedScale``, each
  phoneme rounded to 1/93.75 s. Each mora is a tone (its pitch from the mora's), so a test can hear the timing.

``profile="aivisspeech"`` behaves like AivisSpeech (port 10101): 32-bit style ids, 44.1 kHz, the query's extra
``tempoDynamicsScale``, and placeholder mora lengths (0.0) while its WAV has a length of its own.

``synthesis_rtf`` makes synthesis take that fraction of the audio's length (a real engine's real-time factor),
so that a test or a benchmark can see whether the next sentence is synthesised while the current one plays.
Run it standalone for a demo: ``python -m companions.testing.voicevox_engine --port 50021``.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import json
import math
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import parse_qs, urlsplit

from companions.testing.loopback import LoopbackServer, read_request_head

FRAME_RATE: Final = 93.75
NOT_FOUND_STYLE: Final = "指定されたスタイルが見つかりませんでした。"
UNSUPPORTED_STYLE: Final = "指定されたスタイルはこの機能をサポートしていません。"
_REASONS: Final = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 422: "Unprocessable Entity",
                   500: "Internal Server Error"}
_PUNCTUATION: Final = set("、。，．,.！!？?…「」『』（）()　 \n")

Profile = Literal["voicevox", "aivisspeech"]

VOICEVOX_SPEAKERS: Final[list[dict[str, Any]]] = [
    {"name": "四国めたん", "speaker_uuid": "7ffcb7ce-00ec-4bdc-82cd-45a8889e43ff",
     "styles": [{"name": "ノーマル", "id": 2, "type": "talk"}, {"name": "あまあま", "id": 0, "type": "talk"},
                {"name": "ノーマル", "id": 6000, "type": "sing"}],
     "version": "0.25.0", "supported_features": {"permitted_synthesis_morphing": "SELF_ONLY"}},
    {"name": "ずんだもん", "speaker_uuid": "388f246b-8c41-4ac1-8e2d-5d79f3ff56d9",
     "styles": [{"name": "ノーマル", "id": 3, "type": "talk"}, {"name": "ささやき", "id": 22, "type": "talk"}],
     "version": "0.25.0", "supported_features": {"permitted_synthesis_morphing": "SELF_ONLY"}},
]
AIVIS_SPEAKERS: Final[list[dict[str, Any]]] = [
    {"name": "まい", "speaker_uuid": "e756b8e4-b606-4e15-99b1-3f9c6a1b2317",
     "styles": [{"name": "ノーマル", "id": 1431611904, "type": "talk"},
                {"name": "ひそひそ", "id": 1431611905, "type": "talk"}],
     "version": "1.1.0", "supported_features": {"permitted_synthesis_morphing": "NOTHING"}},
]


@dataclass
class EngineRequest:
    method: str
    path: str
    params: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)


class VoicevoxTestEngine(LoopbackServer):
    """See the module docstring. ``speakers`` replaces the profile's list; ``broken`` makes ``/synthesis``
    answer something hostile: "huge" (more bytes than any chunk needs), "not_wav", "bad_json" (``/audio_query``
    answers a non-JSON body), "nan" (an AudioQuery with NaN lengths)."""

    keeps_address = True  # stopped (a user closed VOICEVOX), it comes back at the same address, where clients look

    def __init__(self, *, profile: Profile = "voicevox", port: int = 0, synthesis_rtf: float = 0.0,
                 speakers: list[dict[str, Any]] | None = None, broken: str | None = None) -> None:
        super().__init__(port)
        self.profile: Profile = profile
        self.speakers = speakers if speakers is not None else (
            AIVIS_SPEAKERS if profile == "aivisspeech" else VOICEVOX_SPEAKERS)
        self.synthesis_rtf = synthesis_rtf
        self.broken = broken
        self.requests: list[EngineRequest] = []
        self.synthesized: list[tuple[float, float]] = []  # (started, finished) of each /synthesis

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # -- HTTP -------------------------------------------------------------------------------------------------

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await read_request_head(reader)
        if head is None:
            return False
        method, target, headers = head
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        request = EngineRequest(method, parts.path, params, body)
        self.requests.append(request)
        status, payload, content_type = await self._route(request)
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\ncontent-type: {content_type}\r\n"
                     f"content-length: {len(data)}\r\n\r\n".encode() + data)
        await writer.drain()
        return headers.get("connection", "").lower() != "close"

    async def _route(self, request: EngineRequest) -> tuple[int, Any, str]:
        routes = {"/version": "GET", "/speakers": "GET", "/audio_query": "POST", "/synthesis": "POST"}
        wanted = routes.get(request.path)
        if wanted is None:
            return 404, {"detail": "Not Found"}, "application/json"
        if request.method != wanted:
            return 405, {"detail": "Method Not Allowed"}, "application/json"
        if request.path == "/version":
            return 200, "1.1.0" if self.profile == "aivisspeech" else "0.25.0", "application/json"
        if request.path == "/speakers":
            return 200, self.speakers, "application/json"
        problems = self._check_params(request, need_text=request.path == "/audio_query")
        if problems:
            return 422, {"detail": problems}, "application/json"
        style = int(request.params["speaker"])
        refusal = self._style_refusal(style)
        if refusal is not None:
            return 422, {"message": refusal}, "application/json"
        if request.path == "/audio_query":
            if self.broken == "bad_json":
                return 200, b"<html>not json</html>", "application/json"
            return 200, self._audio_query(request.params["text"]), "application/json"
        try:
            query = json.loads(request.body)
        except (ValueError, UnicodeDecodeError) as err:
            return 422, {"detail": [{"type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error",
                                     "input": {}, "ctx": {"error": str(err)}}]}, "application/json"
        missing = [key for key in ("accent_phrases", "speedScale", "pitchScale", "intonationScale", "volumeScale",
                                   "prePhonemeLength", "postPhonemeLength", "outputSamplingRate", "outputStereo")
                   if not isinstance(query, dict) or key not in query]
        if missing:
            return 422, {"detail": [{"type": "missing", "loc": ["body", key], "msg": "Field required",
                                     "input": query} for key in missing]}, "application/json"
        started = time.monotonic()
        wav, seconds = self._synthesis(query)
        if self.synthesis_rtf > 0:
            await asyncio.sleep(self.synthesis_rtf * seconds)
        self.synthesized.append((started, time.monotonic()))
        if self.broken == "huge":
            wav += bytes(64 * 1024 * 1024)
        elif self.broken == "not_wav":
            wav = b"<!DOCTYPE html><html>oops</html>"
        return 200, wav, "audio/wav"

    @staticmethod
    def _check_params(request: EngineRequest, *, need_text: bool) -> list[dict[str, Any]]:
        problems: list[dict[str, Any]] = []
        if need_text and "text" not in request.params:
            problems.append({"type": "missing", "loc": ["query", "text"], "msg": "Field required", "input": None})
        speaker = request.params.get("speaker")
        if speaker is None:
            problems.append({"type": "missing", "loc": ["query", "speaker"], "msg": "Field required",
                             "input": None})
        elif not speaker.lstrip("-").isdigit():
            problems.append({"type": "int_parsing", "loc": ["query", "speaker"],
                             "msg": "Input should be a valid integer, unable to parse string as an integer",
                             "input": speaker})
        return problems

    def _style_refusal(self, style: int) -> str | None:
        for speaker in self.speakers:
            styles: list[dict[str, Any]] = speaker["styles"]
            for entry in styles:
                if entry["id"] == style:
                    return None if entry.get("type", "talk") == "talk" else UNSUPPORTED_STYLE
        return NOT_FOUND_STYLE

    # -- the engine's work ------------------------------------------------------------------------------------

    def _audio_query(self, text: str) -> dict[str, Any]:
        aivis = self.profile == "aivisspeech"
        phrases: list[dict[str, Any]] = []
        moras: list[dict[str, Any]] = []

        def close(pause: bool, question: bool) -> None:
            nonlocal moras
            if moras:
                pause_mora = {"text": "、", "consonant": None, "consonant_length": None, "vowel": "pau",
                              "vowel_length": 0.0 if aivis else 0.35, "pitch": 0.0} if pause else None
                phrases.append({"moras": moras, "accent": 1, "pause_mora": pause_mora, "is_interrogative": question})
                moras = []

        for index, char in enumerate(text):
            if char in "、，,":
                close(True, False)
            elif char in "？?":
                close(index + 1 < len(text), True)
            elif char in _PUNCTUATION:
                close(index + 1 < len(text.rstrip("。．.！!…」』）) \n")), False)
            else:
                # One mora per character: a double needs no dictionary, only the engine's shape and timing.
                vowel = "aiueo"[ord(char) % 5]
                pitch = 0.0 if aivis else 5.5 + (ord(char) % 7) / 10
                moras.append({"text": char, "consonant": None if aivis else "k",
                              "consonant_length": None if aivis else 0.05, "vowel": vowel,
                              "vowel_length": 0.0 if aivis else 0.1, "pitch": pitch})
        close(False, False)
        query: dict[str, Any] = {
            "accent_phrases": phrases, "speedScale": 1.0, "pitchScale": 0.0, "intonationScale": 1.0,
            "volumeScale": 1.0, "prePhonemeLength": 0.1, "postPhonemeLength": 0.1, "pauseLength": None,
            "pauseLengthScale": 1.0, "outputSamplingRate": 44100 if aivis else 24000, "outputStereo": False,
            "kana": "/".join("".join(m["text"] for m in p["moras"]) for p in phrases)}
        if aivis:
            query["tempoDynamicsScale"] = 1.0
        if self.broken == "nan":
            query["prePhonemeLength"] = float("nan")
        return query

    def _synthesis(self, query: dict[str, Any]) -> tuple[bytes, float]:
        """The WAV of ``query``: silence, then a tone per mora for its consonant and vowel frames, as the engine
        times them (AivisSpeech: 0.12 s a mora whatever the query says)."""
        rate = int(query["outputSamplingRate"])
        speed = float(query["speedScale"]) or 1.0
        volume = max(0.0, float(query["volumeScale"]))

        def frames(seconds: float) -> int:
            return round(seconds / speed * FRAME_RATE)

        pieces: list[tuple[int, float]] = [(frames(float(query["prePhonemeLength"])), 0.0)]  # (frames, hertz)
        for phrase in query["accent_phrases"]:
            for mora in phrase["moras"]:
                if self.profile == "aivisspeech":
                    pieces.append((frames(0.12), 330.0))
                    continue
                length = frames(float(mora.get("consonant_length") or 0.0)) + frames(float(mora["vowel_length"]))
                pieces.append((length, 110.0 * math.exp(float(mora.get("pitch") or 0.0) - 4.7)))
            moras = phrase["moras"]
            if phrase.get("is_interrogative") and moras and float(moras[-1].get("pitch") or 0.0) > 0:
                pieces.append((frames(0.15), 440.0))
            pause = phrase.get("pause_mora")
            if pause is not None:
                seconds = float(pause["vowel_length"]) if query.get("pauseLength") is None \
                    else float(query["pauseLength"])
                pieces.append((frames(seconds * float(query.get("pauseLengthScale", 1.0))), 0.0))
        pieces.append((frames(float(query["postPhonemeLength"])), 0.0))
        values = array.array("h")
        for count, hertz in pieces:
            total = round(count / FRAME_RATE * rate)
            amplitude = 0.0 if hertz == 0 else 8000.0 * min(2.0, volume)
            step = 2 * math.pi * hertz / rate
            values.extend(round(amplitude * math.sin(step * i)) for i in range(total))
        channels = 2 if query.get("outputStereo") else 1
        if channels == 2:
            values = array.array("h", (v for value in values for v in (value, value)))
        if sys.byteorder == "big":
            values.byteswap()
        samples = values.tobytes()
        seconds = len(samples) / 2 / channels / rate
        header = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVEfmt " + struct.pack(
            "<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16) + b"data" + struct.pack(
            "<I", len(samples))
        return header + bytes(samples), seconds


def main() -> None:  # pragma: no cover - a demo
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=50021)
    parser.add_argument("--profile", choices=("voicevox", "aivisspeech"), default="voicevox")
    args = parser.parse_args()

    async def run() -> None:
        async with VoicevoxTestEngine(profile=args.profile, port=args.port) as engine:
            print(f"a VOICEVOX-compatible test engine at {engine.base_url}", flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
