"""Finding VOICEVOX-compatible engines, as model servers are found (companions/llm/detect.py): concurrent probes with
short timeouts, in the background (the speaker starts without waiting for them).

Found automatically: VOICEVOX (``127.0.0.1:50021``) and AivisSpeech (``127.0.0.1:10101``), on this machine only.
An engine elsewhere is used only when the user gave its URL (``voice.engines`` in the settings). A probe is a TCP
connect (a closed port is known at once), then ``GET /version`` (a JSON string) and ``GET /speakers`` (a list of
characters with talk styles): anything else listening there (a web server, Madoi's bridge) is not an engine.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from app.devices.audio_output import WavPlayer, find_player
from app.devices.voicevox import EngineStyle, VoicevoxEngine, VoicevoxProblem, address_of, normalize_url
from companions.llm.detect import port_open

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S: Final = 1.5


@dataclass(frozen=True)
class EngineCandidate:
    name: str
    base_url: str
    given: bool = False  # the user gave its URL (else found on this machine)


KNOWN_ENGINES: Final = (
    EngineCandidate("VOICEVOX", "http://127.0.0.1:50021"),
    EngineCandidate("AivisSpeech", "http://127.0.0.1:10101"),
)


@dataclass(frozen=True)
class FoundEngine:
    """An engine that answered like one: its name, URL, version and talk styles (``problem``: why it is not usable,
    for an engine the user gave that does not answer)."""

    name: str
    base_url: str
    version: str = ""
    styles: tuple[EngineStyle, ...] = ()
    given: bool = False
    problem: str = ""

    @property
    def address(self) -> str:
        return address_of(self.base_url)

    @property
    def usable(self) -> bool:
        return not self.problem and bool(self.styles)


@dataclass
class EngineSearch:
    """What a search found: the usable engines and those the user gave that do not answer."""

    engines: list[FoundEngine] = field(default_factory=list)

    @property
    def usable(self) -> list[FoundEngine]:
        return [e for e in self.engines if e.usable]


def candidates(given_urls: Sequence[str] = (), *, find_local: bool = True) -> list[EngineCandidate]:
    """The known local engines (``find_local``), then the user's, each address once; an URL that is not one is
    left out (logged)."""
    found: list[EngineCandidate] = list(KNOWN_ENGINES) if find_local else []
    seen = {address_of(c.base_url) for c in found}
    for url in given_urls:
        try:
            base = normalize_url(url)
        except ValueError as err:
            log.warning("voice engines: %s", err)
            continue
        if address_of(base) in seen:
            found = [EngineCandidate(c.name, c.base_url, True) if address_of(c.base_url) == address_of(base) else c
                     for c in found]
            continue
        seen.add(address_of(base))
        found.append(EngineCandidate(_name_for(base), base, given=True))
    return found


def _name_for(base_url: str) -> str:
    port = urlsplit(base_url).port
    return next((c.name for c in KNOWN_ENGINES if urlsplit(c.base_url).port == port), "VOICEVOX-compatible")


async def probe(candidate: EngineCandidate, timeout_s: float = PROBE_TIMEOUT_S) -> FoundEngine | None:
    """The engine at ``candidate`` if one answers there (None: nothing, or something else, for a local guess; a
    :class:`FoundEngine` with its ``problem`` for an URL the user gave)."""

    def missing(problem: str) -> FoundEngine | None:
        log.debug("no voice engine at %s: %s", candidate.base_url, problem)
        return FoundEngine(candidate.name, candidate.base_url, given=True, problem=problem) if candidate.given \
            else None

    if not await port_open(candidate.base_url, timeout_s):
        return missing(f"nothing answers at {candidate.base_url}")
    engine = VoicevoxEngine(candidate.base_url, candidate.name, timeout_s=timeout_s)
    try:
        version = await asyncio.to_thread(engine.version, timeout_s)
        styles = await asyncio.to_thread(engine.styles, timeout_s)
    except VoicevoxProblem as err:
        return missing(str(err))
    finally:
        engine.close()
    if not styles:
        return missing(f"{candidate.base_url} lists no voice that can talk")
    return FoundEngine(candidate.name, candidate.base_url, version, tuple(styles), candidate.given)


async def find_engines(given_urls: Sequence[str] = (), *, find_local: bool = True,
                       timeout_s: float = PROBE_TIMEOUT_S) -> EngineSearch:
    """Probes the local engines and the user's URLs concurrently; the order is the candidates'."""
    tried = candidates(given_urls, find_local=find_local)
    results = await asyncio.gather(*(probe(c, timeout_s) for c in tried))
    search = EngineSearch([r for r in results if r is not None])
    for engine in search.usable:
        log.info("voice engine: %s %s at %s, %d voices", engine.name, engine.version, engine.base_url,
                 len(engine.styles))
    return search


async def say_sample(found: FoundEngine, style: int, sentence: str, volume: float = 1.0) -> None:
    """Says ``sentence`` in ``style`` of ``found`` straight through the engine and the sound device (the settings'
    test of an engine); raises with the reason, as a person reads it, when nothing could be heard."""
    command = find_player()
    if command is None:
        raise RuntimeError("no audio device: no audio player (pw-play, paplay, aplay) found")
    engine = VoicevoxEngine(found.base_url, found.name)
    with tempfile.TemporaryDirectory(prefix="madoi-engine-test-") as folder:
        path = Path(folder) / "sample.wav"
        try:
            await asyncio.to_thread(engine.render, sentence, style, path, volume=volume)
        except VoicevoxProblem as err:
            raise RuntimeError(str(err)) from None
        finally:
            engine.close()
        player = WavPlayer(command)
        try:
            await asyncio.to_thread(player.play, path)
        except asyncio.CancelledError:
            player.stop()
            raise
