"""A real browser at the bridge's door: Debian's Chromium, headless, opens a page that connects to the bridge.

The page is served on loopback twice: as ``http://localhost:<port>`` (an origin the bridge allows by default, as a
local avatar page's) it connects and talks, as itself: it says ``from: "user"``, but without the bridge's token a
page is not the user's own client, so its words reach the app as the page's (under its origin); as
``http://evil.localhost:<port>`` (Chromium resolves ``*.localhost`` to this computer, so the page runs here, but its
origin is another site's) its handshake is refused and nothing it says reaches the app. The page reports what
happened to the server it came from (``/report?...``).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from app.bridge import BridgeServer
from app.bridge.origins import BridgeOriginRefused
from companions.wire.bus import BusItem, InProcessBus
from companions.wire.protocol import Message, WireItem
from companions.wire.query_broker import QueryBroker
from tests.conftest import serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/bootstrap.sh dev)")

# The flags headless Chromium needs on a machine without a network (nothing of its own goes out) and as root.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--mute-audio")

PAGE = """<!doctype html><meta charset="utf-8"><title>avatar</title>
<script>
function report(what) { fetch("/report?what=" + encodeURIComponent(what)); }
const ws = new WebSocket("ws://127.0.0.1:BRIDGE_PORT/");
ws.onopen = () => {
  report("open");
  ws.send(JSON.stringify({topic: "messages", body: {jsonrpc: "2.0", method: "message.send",
    params: {id: "from-" + location.hostname, from: "user", to: ["akari"], message: "hello from " + location.host}}}));
};
ws.onmessage = (event) => {
  const frame = JSON.parse(event.data);
  if (frame.method === "message.send") report("echo:" + frame.params.id);
};
ws.onclose = (event) => report("closed:" + event.code);
</script>"""


class PageServer(http.server.ThreadingHTTPServer):
    """Serves the page on every host name and keeps what the pages reported, by host."""

    def __init__(self, bridge_port: int) -> None:
        super().__init__(("127.0.0.1", 0), PageHandler)
        self.page = PAGE.replace("BRIDGE_PORT", str(bridge_port)).encode()
        self.reports: list[tuple[str, str]] = []  # (Host header, what)
        self.reported = threading.Condition()


class PageHandler(http.server.BaseHTTPRequestHandler):
    server: PageServer

    def do_GET(self) -> None:  # the name http.server calls
        url = urlsplit(self.path)
        if url.path == "/report":
            with self.server.reported:
                self.server.reports.append((self.headers.get("Host", ""), parse_qs(url.query)["what"][0]))
                self.server.reported.notify_all()
            body, kind = b"ok", "text/plain"
        else:
            body, kind = self.server.page, "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def avatar_pages(bridge_port: int) -> Iterator[PageServer]:
    server = PageServer(bridge_port)
    with serving(server):
        yield server


@contextlib.asynccontextmanager
async def browser(url: str, profile: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    assert CHROMIUM is not None
    process = await asyncio.create_subprocess_exec(
        CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def reported(server: PageServer, host: str, prefix: str, timeout: float = 60) -> str:
    def find() -> str | None:
        return next((what for h, what in server.reports if h == host and what.startswith(prefix)), None)

    def wait() -> str | None:
        with server.reported:
            server.reported.wait_for(lambda: find() is not None, timeout)
            return find()

    found = await asyncio.to_thread(wait)
    assert found is not None, f"{host} never reported {prefix!r}: {server.reports}"
    return found


async def test_a_page_from_an_allowed_origin_talks_and_one_from_another_origin_is_refused(tmp_path: Path) -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    seen: list[BusItem] = []
    bus.subscribe(("messages", "events"), seen.append, name="recorder")
    bridge = BridgeServer(bus, broker, port=0)
    await bridge.start()
    try:
        with avatar_pages(bridge.port) as pages:
            port = pages.server_address[1]
            allowed, evil = f"localhost:{port}", f"evil.localhost:{port}"
            async with browser(f"http://{allowed}/", tmp_path / "profile-allowed"):
                assert await reported(pages, allowed, "open") == "open"
                assert await reported(pages, allowed, "echo:") == "echo:from-localhost"  # it talked, and heard
            async with browser(f"http://{evil}/", tmp_path / "profile-evil"):
                closed = await reported(pages, evil, "closed:")
            await bus.drain()
    finally:
        await bridge.stop()
        await broker.aclose()
        await bus.aclose()
    messages: list[WireItem] = [item for item in seen if isinstance(item, Message)]
    # the evil page's message never arrived; the allowed page's arrived as the page's words, not the user's
    assert [(m.params.id, m.params.from_) for m in messages] == [("from-localhost", f"http://{allowed}")]
    assert closed == "closed:1006"  # the browser's word for a refused handshake
    assert not any(what == "open" for host, what in pages.reports if host == evil)
    assert [item.origin for item in seen if isinstance(item, BridgeOriginRefused)] == [f"http://{evil}"]
    assert bridge.origins.refused == {f"http://{evil}": 1}
