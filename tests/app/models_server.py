"""A tiny OpenAI-compatible ``/v1/models`` server on loopback (its own thread), optionally asking for a key."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.conftest import serving


class _ModelsHandler(BaseHTTPRequestHandler):
    """``GET /v1/models`` answers a model list, or 401 when the server demands another key."""

    server: ModelsServer

    def do_GET(self) -> None:
        self.server.requests.append((self.path, self.headers.get("Authorization", "")))
        if self.path != "/v1/models":
            self._send(404, {"error": {"message": "not found"}})
        elif self.server.required_key and self.headers.get("Authorization") != f"Bearer {self.server.required_key}":
            self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        else:
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "me"}
                                                        for m in self.server.models]})

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean


class ModelsServer(ThreadingHTTPServer):
    def __init__(self, models: list[str], required_key: str | None) -> None:
        super().__init__(("127.0.0.1", 0), _ModelsHandler)
        self.models = models
        self.required_key = required_key
        self.requests: list[tuple[str, str]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextlib.contextmanager
def models_server(models: list[str] | None = None, required_key: str | None = None) -> Iterator[ModelsServer]:
    server = ModelsServer(models if models is not None else ["llama3.2", "qwen2.5"], required_key)
    with serving(server):
        yield server
