"""Per-companion model choice: cards may name their own endpoint; the user's key never leaks to another server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from companions.llm.choice import DefaultEndpoint, default_endpoint, model_for_card
from companions.llm.detect import resolve_chat_model
from companions.llm.openai_backend import OpenAIChatModel
from companions.llm.scripted import ScriptedModel
from companions.llm.types import ChatMessage, ChatRequest, LLMError, complete
from companions.testing.openai_server import OpenAITestServer, text_reply

HELLO = ChatRequest(messages=(ChatMessage.user("hi"),))


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(models=["app-model", "card-model"]) as s:
        yield s


def test_a_card_without_llm_section_shares_the_default() -> None:
    shared = ScriptedModel("default")
    default = DefaultEndpoint(shared, "http://127.0.0.1:1/v1", "app-model", "sk-user")
    assert model_for_card("aoi", base_url=None, model=None, api_key_env=None, default=default) is shared
    assert "sk-user" not in repr(default)


async def test_a_card_model_on_the_app_endpoint_reuses_the_user_key(server: OpenAITestServer) -> None:
    default = DefaultEndpoint(ScriptedModel(), server.base_url, "app-model", "sk-user")
    model = model_for_card("aoi", base_url=None, model="card-model", api_key_env=None, default=default)
    assert isinstance(model, OpenAIChatModel)
    server.script(text_reply("from the card model"))
    assert (await complete(model, HELLO)).message.text == "from the card model"
    await model.aclose()
    request = server.chat_requests()[0]
    assert request.body["model"] == "card-model"
    assert request.headers["authorization"] == "Bearer sk-user"


async def test_another_server_never_gets_the_user_key(server: OpenAITestServer) -> None:
    default = DefaultEndpoint(ScriptedModel(), "https://api.openai.com/v1", "gpt-4o-mini", "sk-user")
    model = model_for_card("ben", base_url=server.base_url, model="card-model", api_key_env=None, default=default)
    server.script(text_reply("ok"))
    await complete(model, HELLO)
    assert isinstance(model, OpenAIChatModel)
    await model.aclose()
    assert "sk-user" not in server.chat_requests()[0].headers["authorization"]


async def test_a_card_key_comes_from_the_named_environment_variable(server: OpenAITestServer) -> None:
    model = model_for_card(
        "chika", base_url=server.base_url, model="card-model", api_key_env="CHIKA_KEY", default=None,
        environ={"CHIKA_KEY": "sk-chika"},
    )  # fmt: skip
    server.script(text_reply("ok"))
    await complete(model, HELLO)
    assert isinstance(model, OpenAIChatModel)
    await model.aclose()
    assert server.chat_requests()[0].headers["authorization"] == "Bearer sk-chika"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": None, "model": None, "api_key_env": None}, "aoi: no LLM configured"),
        ({"base_url": None, "model": "m", "api_key_env": None}, "aoi: the card names no base_url"),
        ({"base_url": "http://127.0.0.1:1/v1", "model": None, "api_key_env": None}, "aoi: the card names no model"),
        ({"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": "NOPE_KEY"}, "NOPE_KEY .* is not set"),
        ({"base_url": "ftp://x", "model": "m", "api_key_env": None}, "aoi: LLM base URL 'ftp://x' must start"),
    ],
)
def test_an_unusable_card_choice_is_a_clear_error(kwargs: dict[str, str | None], message: str) -> None:
    with pytest.raises(LLMError, match=message):
        model_for_card("aoi", default=None, environ={}, **kwargs)  # type: ignore[arg-type]


async def test_default_endpoint_from_a_resolution(server: OpenAITestServer) -> None:
    resolution = await resolve_chat_model(server.base_url, "app-model", "sk-user", autodetect=False)
    endpoint = default_endpoint(resolution, "sk-user", timeout_s=5)
    assert endpoint is not None
    assert endpoint.model is resolution.model
    assert (endpoint.base_url, endpoint.model_name, endpoint.api_key) == (server.base_url, "app-model", "sk-user")
    none = await resolve_chat_model(None, None, None, autodetect=False)
    assert default_endpoint(none, None) is None
    assert isinstance(resolution.model, OpenAIChatModel)
    await resolution.model.aclose()
