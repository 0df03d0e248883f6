"""Downloading a model file from its public host, with the user's consent, resumable and checked: the language
model of the first run (app/llm/recommended_model.py) and the neural voice Kokoro (app/devices/kokoro_files.py).

Two steps, so that nothing is downloaded before the user said yes: :func:`prepare_download` asks the host about the
file (without downloading it) and returns a :class:`DownloadOffer` (name, size, licence, the space it needs, whether
that space is free); the caller shows it and, once the user agrees, passes it to :func:`download`.

The host is Hugging Face's ``/<repo>/resolve/<revision>/<file>``: it answers with a redirect to a content server and
says the file's size and sha256 in ``X-Linked-Size`` and ``X-Linked-Etag`` (an LFS file's ETag is its sha256). A
GitHub release's ``/<repo>/releases/download/<tag>/<file>`` redirects without them: the size comes from the content
server and the sha256 is Madoi's own (pinned). The content server sends ``ETag`` and ``Content-Length`` and honours
``Range``. So the download

- writes into ``<file>.part`` and keeps ``<file>.part.json`` (the URL, size, sha256 and the content's ETag): after a
  dropped connection, a cancel or a closed app it continues from the part's end (``Range``), with ``If-Range`` so
  that a file changed on the host in between is sent whole again rather than spliced;
- checks the free space before the first byte; reports progress; stops on ``cancel`` (an event) or task
  cancellation, keeping the part for the next time;
- checks the size and the sha256 of what arrived: a wrong checksum deletes the part and says so, and only a
  verified file is renamed into place.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Final, Literal

import httpx

from companions.common.private_files import new_private_dir, private_file

SPACE_MARGIN: Final = 256 * 1024 * 1024
"""Bytes left free after the download: a full disk breaks more than the download (settings, the database)."""
CHUNK: Final = 1024 * 1024
PROGRESS_EVERY_S: Final = 0.1
_SHA256: Final = re.compile(r"[0-9a-f]{64}")


class DownloadError(RuntimeError):
    """The download cannot go on; the message says why in plain words."""


class NotEnoughSpace(DownloadError):
    pass


class ChecksumMismatch(DownloadError):
    pass


class DownloadCancelled(DownloadError):
    pass


@dataclass(frozen=True)
class DownloadableModel:
    """A model file on Hugging Face (``<host>/<repo>/resolve/<revision>/<file>``) or attached to a GitHub release
    (``<host>/<repo>/releases/download/<revision>/<file>``, ``layout="github"``, the revision being the release's
    tag): what the consent card shows (name, size, licence) and how to check it."""

    name: str
    repo: str
    file: str
    revision: str
    size: int
    sha256: str | None
    licence: str
    licence_url: str
    host: str = "https://huggingface.co"
    layout: Literal["huggingface", "github"] = "huggingface"

    @property
    def url(self) -> str:
        """Where the file is asked for: the host answers with a redirect to the content."""
        if self.layout == "github":
            return f"{self.host}/{self.repo}/releases/download/{self.revision}/{self.file}"
        return f"{self.host}/{self.repo}/resolve/{self.revision}/{self.file}"

    @property
    def page(self) -> str:
        return f"{self.host}/{self.repo}"


@dataclass(frozen=True)
class DownloadOffer:
    """What the user consents to: the model (name, licence), its size, where it goes, and the space it needs."""

    model: DownloadableModel
    size: int
    sha256: str
    destination: Path
    already_have: int
    free_space: int

    @property
    def needs(self) -> int:
        """Bytes still to download (less than ``size`` when an earlier download is resumed)."""
        return self.size - self.already_have

    @property
    def fits(self) -> bool:
        return self.free_space >= self.needs + SPACE_MARGIN


@dataclass(frozen=True)
class DownloadProgress:
    done: int
    total: int
    bytes_per_s: float

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True)
class _PartInfo:
    """What ``.part.json`` keeps: a part continues only the same file (URL, size, sha256) from the same content."""

    url: str
    size: int
    sha256: str
    etag: str | None = None


def part_path(destination: Path) -> Path:
    return destination.with_name(destination.name + ".part")


def _info_path(destination: Path) -> Path:
    return destination.with_name(destination.name + ".part.json")


def _etag_value(header: str | None) -> str | None:
    """``"abc"`` or ``W/"abc"`` -> ``abc``."""
    if not header:
        return None
    return header.removeprefix("W/").strip().strip('"') or None


def _free_space(folder: Path) -> int:
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    return shutil.disk_usage(existing).free


async def prepare_download(model: DownloadableModel, destination: Path, *,
                           http: httpx.AsyncClient | None = None) -> DownloadOffer:
    """Asks the host about ``model`` (a HEAD, nothing downloaded) and returns what the user is asked to agree to.

    Refuses (DownloadError) when the host does not have the file, or offers another one than Madoi knows (size or
    sha256 differing from ``model``'s), or gives no sha256 to check it by."""
    async with _client(http) as client:
        try:
            answer = await client.head(model.url, follow_redirects=False)
            # Hugging Face: an LFS file's facts are on the redirect itself; other hosts say them on the content.
            size_header = answer.headers.get("x-linked-size") if answer.is_redirect else None
            digest = _etag_value(answer.headers.get("x-linked-etag")) if answer.is_redirect else None
            if answer.is_redirect and size_header is None:
                answer = await client.head(model.url, follow_redirects=True)
            if not answer.is_redirect:
                answer.raise_for_status()
        except httpx.HTTPStatusError as err:
            raise DownloadError(f"{model.page} answered {err.response.status_code} for {model.file}") from None
        except httpx.TransportError as err:
            raise DownloadError(f"cannot reach {model.host}: {err}") from None
        size = int(size_header or answer.headers.get("content-length") or -1)
        digest = digest or _etag_value(answer.headers.get("etag"))
    sha256 = _checked_identity(model, size, digest)
    info = _read_info(destination)
    part = part_path(destination)
    resumable = info is not None and info.url == model.url and info.sha256 == sha256 and part.exists()
    have = min(part.stat().st_size, size) if resumable else 0
    return DownloadOffer(model, size, sha256, destination, have, _free_space(destination.parent))


def _checked_identity(model: DownloadableModel, size: int, digest: str | None) -> str:
    """The sha256 to check the download by: the host's and Madoi's must agree where both are known."""
    if size < 0:
        raise DownloadError(f"{model.host} does not say how large {model.file} is")
    if size != model.size:
        raise DownloadError(f"{model.host} offers {model.file} with {size} bytes, not the {model.size} Madoi knows: "
                            "not downloaded")
    host_sha = digest.lower() if digest and _SHA256.fullmatch(digest.lower()) else None
    if model.sha256 and host_sha and host_sha != model.sha256:
        raise DownloadError(f"{model.host} offers another {model.file} (sha256 {host_sha}) than the one Madoi knows "
                            f"({model.sha256}): not downloaded")
    sha256 = model.sha256 or host_sha
    if sha256 is None:
        raise DownloadError(f"{model.host} gives no sha256 for {model.file}: it could not be checked, so it is not "
                            "downloaded")
    return sha256


def _read_info(destination: Path) -> _PartInfo | None:
    try:
        return _PartInfo(**json.loads(_info_path(destination).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _write_info(destination: Path, info: _PartInfo) -> None:
    private_file(_info_path(destination)).write_text(json.dumps(asdict(info)), encoding="utf-8")


def discard_part(destination: Path) -> None:
    """Deletes an unfinished download of ``destination`` (the part and what it knows about it)."""
    for path in (part_path(destination), _info_path(destination)):
        path.unlink(missing_ok=True)


class _Part:
    """The ``.part`` file being written, and the sha256 of everything in it."""

    def __init__(self, destination: Path, keep: int) -> None:
        self.path = part_path(destination)
        self.hash = hashlib.sha256()
        self.size = 0
        fresh = not (keep and self.path.exists())
        private_file(self.path)  # 0600 from its first byte, as every file under the data directory
        self._file: IO[bytes] = self.path.open("wb" if fresh else "r+b")
        if keep:
            while self.size < keep and (block := self._file.read(min(CHUNK, keep - self.size))):
                self.hash.update(block)
                self.size += len(block)
        self._file.seek(self.size)
        self._file.truncate()

    def restart(self) -> None:
        self._file.seek(0)
        self._file.truncate()
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self.hash.update(chunk)
        self.size += len(chunk)

    def close(self) -> None:
        self._file.close()


class _Reporter:
    def __init__(self, total: int, start: int, progress: Callable[[DownloadProgress], None] | None) -> None:
        self.total, self.start, self.progress = total, start, progress
        self.began = self.last = time.monotonic()

    def __call__(self, done: int, *, final: bool = False) -> None:
        now = time.monotonic()
        if self.progress is None or (not final and now - self.last < PROGRESS_EVERY_S):
            return
        self.last = now
        speed = (done - self.start) / max(now - self.began, 1e-6)
        self.progress(DownloadProgress(done, self.total, speed))


async def download(offer: DownloadOffer, *, progress: Callable[[DownloadProgress], None] | None = None,
                   cancel: asyncio.Event | None = None, http: httpx.AsyncClient | None = None,
                   retries: int = 5, retry_delay_s: float = 1.0) -> Path:
    """Downloads the offered file to ``offer.destination`` and returns its path once its sha256 is checked.

    A dropped connection continues from where it stopped (up to ``retries`` times in a row without progress);
    ``cancel`` (or cancelling the task) stops it with the part kept for a later call. Raises NotEnoughSpace before
    the first byte, ChecksumMismatch (the part deleted) when the bytes are not the file, DownloadCancelled,
    DownloadError otherwise."""
    destination = offer.destination
    new_private_dir(destination.parent)
    if _free_space(destination.parent) < offer.needs + SPACE_MARGIN:  # again: the user may have taken a while
        raise NotEnoughSpace(f"{offer.model.name} needs {offer.needs / 1e9:.2f} GB and "
                             f"{_free_space(destination.parent) / 1e9:.2f} GB are free in {destination.parent}")
    info = _read_info(destination) or _PartInfo(offer.model.url, offer.size, offer.sha256)
    part = await asyncio.to_thread(_Part, destination, offer.already_have)
    report = _Reporter(offer.size, part.size, progress)
    try:
        async with _client(http) as client:
            failures = 0
            while part.size < offer.size:
                before = part.size
                info = _read_info(destination) or info  # the content's ETag, once a request has said it
                try:
                    info = await _fetch(client, offer, info, part, report=report, cancel=cancel)
                except httpx.TransportError as err:
                    failures = 0 if part.size > before else failures + 1
                    if failures > retries:
                        raise DownloadError(f"the download of {offer.model.file} stopped at {part.size} of "
                                            f"{offer.size} bytes: {err or type(err).__name__}") from None
                    await asyncio.sleep(retry_delay_s * min(failures, 5))
        report(part.size, final=True)
    finally:
        part.close()
    return await asyncio.to_thread(_finish, offer, part)


async def _fetch(client: httpx.AsyncClient, offer: DownloadOffer, info: _PartInfo, part: _Part, *,
                 report: _Reporter, cancel: asyncio.Event | None) -> _PartInfo:
    """One request: the rest of the file from ``part.size`` on (``Range`` + ``If-Range``), or all of it again."""
    headers = {}
    if part.size:
        headers["Range"] = f"bytes={part.size}-"
        if info.etag:
            headers["If-Range"] = f'"{info.etag}"'
    async with client.stream("GET", offer.model.url, headers=headers, follow_redirects=True) as answer:
        if answer.status_code == 206:
            if not answer.headers.get("content-range", "").startswith(f"bytes {part.size}-"):
                raise DownloadError(f"the host sent another part of {offer.model.file} than the one asked for")
        elif answer.status_code == 200:
            part.restart()  # no ranges, or the content changed since the part began (If-Range)
        else:
            raise DownloadError(f"the host answered {answer.status_code} for {offer.model.file}")
        etag = answer.headers.get("etag")
        info = _PartInfo(offer.model.url, offer.size, offer.sha256,
                         _etag_value(etag) if etag and not etag.startswith("W/") else None)
        _write_info(offer.destination, info)
        async for chunk in answer.aiter_bytes():  # as they arrive: a drop loses none of what came
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled(f"the download of {offer.model.file} was cancelled at {part.size} of "
                                        f"{offer.size} bytes; it continues from there next time")
            if part.size + len(chunk) > offer.size:
                raise DownloadError(f"the host sent more than the {offer.size} bytes of {offer.model.file}")
            part.write(chunk)
            report(part.size)
    return info


def _finish(offer: DownloadOffer, part: _Part) -> Path:
    """Renames a verified part into place; deletes a wrong one and says so."""
    digest = part.hash.hexdigest()
    if part.size != offer.size or digest != offer.sha256:
        discard_part(offer.destination)
        raise ChecksumMismatch(f"{offer.model.file} arrived with sha256 {digest} ({part.size} bytes), not "
                               f"{offer.sha256} ({offer.size} bytes): the download was deleted")
    os.replace(part.path, offer.destination)
    _info_path(offer.destination).unlink(missing_ok=True)
    return offer.destination


@contextlib.asynccontextmanager
async def _client(http: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """``http`` as it is (the caller closes it), else a client of our own for the block."""
    if http is not None:
        yield http
        return
    timeout = httpx.Timeout(30.0, connect=15.0)
    async with httpx.AsyncClient(timeout=timeout, headers={"User-Agent": "Madoi"}) as client:
        yield client
