"""``llm.model_file``: the companions talk to the model Madoi runs itself, found after the start, and nothing is left
running when the app stops. The runner's child is the stub (a real process that loads no model)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from app.llm.connection import ModelConnection
from app.llm.embedded import EmbeddedModel
from app.llm.pending import PendingModel
from app.runtime.runtime import Runtime
from app.settings.model import Settings, load_settings
from companions.cards.card import CompanionCard, load_card, sample_cards_dir
from companions.companion.companion import Companion
from companions.llm.openai_backend import OpenAIChatModel
from companions.llm.types import ChatModel
from companions.llm.unavailable import UnavailableModel
from tests.app.llm.gguf import write_gguf
from tests.app.llm.processes import gone

STUB = Path(__file__).with_name("stub_model_child.py")


@dataclass
class Listener:
    """Stands in for a companion: its card, and the model it was handed last."""

    card: CompanionCard
    model: ChatModel | None = None
    handed: list[ChatModel] = field(default_factory=list)

    def use_model(self, model: ChatModel) -> None:
        self.model = model
        self.handed.append(model)


def akari() -> Listener:
    card = load_card(sample_cards_dir() / "akari.yaml")
    assert isinstance(card, CompanionCard)
    return Listener(card)


def with_llm(**fields: object) -> Settings:
    settings = Settings()
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=fields)})


def embedded(tmp_path: Path, *args: str) -> EmbeddedModel:
    return EmbeddedModel(tmp_path / "logs", command=lambda: [sys.executable, str(STUB), *args])


async def test_the_companions_wait_for_the_model_file_then_talk_to_the_runner_and_the_stop_ends_it(
        tmp_path: Path) -> None:
    model_file = write_gguf(tmp_path / "tiny.gguf")
    runner = embedded(tmp_path, "--delay", "1.0")
    connection = ModelConnection.pending(embedded=runner)
    companion = akari()
    resolving = connection.begin(with_llm(model_file=model_file), lambda: [cast(Companion, companion)])
    assert isinstance(companion.model, PendingModel)  # at once: nothing waited for the model
    pending: ChatModel | None = companion.model
    assert isinstance(pending, PendingModel)
    waiting = asyncio.ensure_future(pending.model())
    await asyncio.sleep(0.3)
    assert not waiting.done()  # the model is loading: a request waits for it
    assert "tiny.gguf is loading" in connection.waiting()
    assert await resolving == []
    model = await asyncio.wait_for(waiting, 10)
    assert isinstance(model, OpenAIChatModel)
    status = runner.status
    assert status is not None
    assert status.endpoint is not None
    assert model.base_url == status.endpoint.base_url  # the runner's loopback address, with its own key
    assert companion.handed[-1] is model  # handed over: its next requests go straight to it
    assert connection.resolution.message.startswith("using tiny from ")
    pid = runner.runner.pid if runner.runner is not None else None
    assert pid is not None
    await connection.aclose()
    assert await gone(pid, 2.0)


async def test_a_model_file_that_is_missing_is_said_plainly_and_the_companion_says_why(tmp_path: Path) -> None:
    connection = ModelConnection.pending(embedded=embedded(tmp_path))
    companion = akari()
    await connection.begin(with_llm(model_file=tmp_path / "gone.gguf"), lambda: [cast(Companion, companion)])
    assert connection.resolution.model is None
    assert connection.resolution.message == f"The model file cannot be used: {tmp_path / 'gone.gguf'} is not a file"
    assert isinstance(companion.model, UnavailableModel)
    assert ModelConnection.problem([cast(Companion, companion)]) == connection.resolution.message
    await connection.aclose()


async def test_an_endpoint_in_the_settings_wins_over_the_model_file(tmp_path: Path) -> None:
    runner = embedded(tmp_path)
    connection = ModelConnection.pending(embedded=runner)
    await connection.begin(with_llm(model_file=write_gguf(tmp_path / "tiny.gguf"), base_url="http://127.0.0.1:9/v1",
                                    model="m"), list)
    assert connection.resolution.message == "using m at http://127.0.0.1:9/v1"
    assert runner.runner is None  # never started
    await connection.aclose()


async def test_a_pending_request_says_plainly_when_no_model_comes_in_time() -> None:
    never: asyncio.Event = asyncio.Event()

    async def resolved() -> ChatModel:
        await never.wait()
        raise AssertionError

    pending = PendingModel(resolved, lambda: "model.gguf is loading", wait_s=0.2)
    with pytest.raises(Exception, match=r"no language model is available yet: model\.gguf is loading"):
        await pending.model()


async def test_the_runtime_starts_at_once_and_finds_the_bad_model_file_after(madoi_home: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_LLM_MODEL_FILE", str(madoi_home / "no-such-model.gguf"))
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        problem = await runtime.models_resolved()
        assert problem is not None
        assert "no-such-model.gguf is not a file" in problem
    finally:
        await runtime.stop()
