"""A loopback HTTP server that serves files the way Hugging Face does (and a GitHub release), for the download tests.

``/<repo>/resolve/<revision>/<file>`` answers 302 to ``/cdn/<file>?sig=...`` with ``X-Linked-Size`` and
``X-Linked-Etag`` (the sha256, quoted) and the same ``ETag``; the content server sends a strong ``ETag``,
``Content-Length`` and ``Accept-Ranges``, answers ``Range: bytes=N-`` with 206 and ``Content-Range``, and honours
``If-Range`` (another ETag: the whole file, 200). Faults on demand: drop the connection after some bytes, claim a
sha256 the bytes do not have, claim a size no disk has. A GitHub release's ``/<owner>/<repo>/releases/download/<tag>/
<file>`` answers 302 to the same content without the ``X-Linked-*`` headers (GitHub names no sha256).
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO

from scripts.verified_files import sha256_of
from tests.conftest import serving


@dataclass
class HostedFile:
    path: Path
    sha256: str
    declared_size: int | None = None  # what the host claims, when not the file's real size
    drop_after: list[int] | None = None  # for each of the next GETs: close the connection after so many bytes
    rate: int | None = None  # bytes per second (a slow line, so that a test can act in the middle of a download)

    @property
    def size(self) -> int:
        return self.declared_size if self.declared_size is not None else self.path.stat().st_size


class _Handler(BaseHTTPRequestHandler):
    server: HuggingFaceLikeHost
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        self.server.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        if match := re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/([^/?]+)", self.path):
            self._redirect(match.group(3))
        elif match := re.fullmatch(r"/([^/]+/[^/]+)/releases/download/([^/]+)/([^/?]+)", self.path):
            self._redirect(match.group(3), linked=False)
        elif match := re.fullmatch(r"/cdn/([^/?]+)\?sig=\w+", self.path):
            self._content(match.group(1), body=body)
        else:
            self._empty(404)

    def _redirect(self, name: str, *, linked: bool = True) -> None:
        hosted = self.server.files.get(name)
        if hosted is None:
            self._empty(404)
            return
        self.send_response(302)
        self.send_header("Location", f"/cdn/{name}?sig=abc123")
        if linked:
            self.send_header("X-Linked-Size", str(hosted.size))
            self.send_header("X-Linked-Etag", f'"{hosted.sha256}"')
            self.send_header("ETag", f'"{hosted.sha256}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _content(self, name: str, *, body: bool) -> None:
        hosted = self.server.files[name]
        size = hosted.path.stat().st_size
        etag = f'"{self.server.content_etag(name)}"'
        start = 0
        ranged = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if ranged and self.headers.get("If-Range", etag) == etag:
            start = int(ranged.group(1))
        self.send_response(206 if start else 200)
        self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(size - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        if not body:
            return
        count = size - start
        if hosted.drop_after:
            count = min(count, hosted.drop_after.pop(0))
        with hosted.path.open("rb") as f:
            if hosted.rate is None:
                self.connection.sendfile(f, start, count)  # zero-copy: the tests measure the client, not the host
            else:
                _send_slowly(self.connection, f, start, count, hosted.rate)
        if count < size - start:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)

    def _empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class HuggingFaceLikeHost(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, HostedFile] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.content_versions: dict[str, int] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def host(self, path: Path, *, sha256: str | None = None, **faults: object) -> HostedFile:
        """Serves ``path`` under its name (its real sha256 unless another is claimed)."""
        digest = sha256 or sha256_of(path)
        hosted = self.files[path.name] = HostedFile(path, digest, **faults)  # type: ignore[arg-type]
        return hosted

    def content_etag(self, name: str) -> str:
        return f"{self.files[name].sha256[:16]}-v{self.content_versions.get(name, 0)}"

    def reupload(self, name: str) -> None:
        """The file is uploaded again (a new ETag): a ranged request with the old If-Range gets it whole."""
        self.content_versions[name] = self.content_versions.get(name, 0) + 1

    def gets(self, name: str) -> list[dict[str, str]]:
        return [headers for method, path, headers in self.requests if method == "GET" and f"/cdn/{name}" in path]


def _send_slowly(connection: socket.socket, f: BinaryIO, start: int, count: int, rate: int) -> None:
    f.seek(start)
    step = max(1, rate // 50)
    while count > 0 and (block := f.read(min(step, count))):
        connection.sendall(block)
        count -= len(block)
        time.sleep(len(block) / rate)


@contextlib.contextmanager
def hugging_face_like_host() -> Iterator[HuggingFaceLikeHost]:
    with serving(server := HuggingFaceLikeHost()):
        yield server
