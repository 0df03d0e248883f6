"""A SearXNG instance on loopback that answers a search with one page, and serves that page."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = "https://example.org/sen-no-rikyu"
SNIPPET = "千利休は豊臣秀吉に仕えた茶人で、侘び茶を大成した。"


class FakeSearxng:
    """SearXNG's ``/search?format=json`` with one result; ``json_enabled=False`` answers 403 as SearXNG does."""

    def __init__(self, *, json_enabled: bool = True) -> None:
        self.queries: list[dict[str, list[str]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                fake.queries.append(query)
                if url.path != "/search" or not json_enabled or query.get("format") != ["json"]:
                    self.send_error(403)
                    return
                body = json.dumps({"query": query["q"][0], "results": [
                    {"url": PAGE, "title": "千利休 - 茶の湯の歴史", "content": SNIPPET, "engine": "fake"},
                    {"url": "javascript:alert(1)", "title": "not a page", "content": "x"},
                ]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
