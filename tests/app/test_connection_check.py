"""The "Test connection" check with the real openai client against tiny loopback HTTP servers."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app.connection_check import check_connection, llm_configured
from app.settings import Settings
from tests.conftest import free_port

KEY = "sk-test-key-1234567890"


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
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), name="models-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_a_working_local_server_reports_its_models() -> None:
    with models_server(["b", "a", "c"]) as server:
        result = await check_connection(server.base_url, None)
    assert result.ok
    assert result.models == ["a", "b", "c"]
    assert result.summary == "OK: 3 models"
    assert server.requests[0][0] == "/v1/models"


async def test_a_wrong_key_is_reported_without_showing_the_key() -> None:
    with models_server(required_key="the-right-one") as server:
        result = await check_connection(server.base_url, KEY)
    assert not result.ok
    assert result.error is not None
    assert "401" in result.error
    assert KEY not in result.summary
    assert server.requests[0][1] == f"Bearer {KEY}"  # the key did go to the server, only to the server


async def test_the_right_key_passes() -> None:
    with models_server(["gpt-x"], required_key=KEY) as server:
        result = await check_connection(server.base_url, KEY)
    assert result.summary == "OK: 1 model"


async def test_a_url_without_v1_gets_a_hint() -> None:
    with models_server() as server:
        result = await check_connection(server.base_url.removesuffix("/v1"), None)
    assert result.error is not None
    assert "/v1" in result.error


async def test_nothing_listening_is_a_clear_error_not_an_exception() -> None:
    result = await check_connection(f"http://127.0.0.1:{free_port()}/v1", None, timeout_s=2)
    assert not result.ok
    assert result.error is not None
    assert "cannot connect" in result.error


async def test_a_non_http_url_is_refused_before_any_request() -> None:
    result = await check_connection("localhost:11434", None)
    assert result.error == "the URL must start with http:// or https://"


def test_llm_configured_means_an_endpoint_was_named() -> None:
    settings = Settings()
    assert not llm_configured(settings)
    settings.llm.base_url = "http://127.0.0.1:11434/v1"
    assert llm_configured(settings)
