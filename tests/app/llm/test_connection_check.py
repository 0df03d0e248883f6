"""The "Test connection" check with the real openai client against tiny loopback HTTP servers."""

from __future__ import annotations

from app.llm.connection_check import check_connection, llm_configured
from app.settings.model import Settings
from tests.app.models_server import models_server
from tests.conftest import free_port

KEY = "sk-test-key-1234567890"


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
