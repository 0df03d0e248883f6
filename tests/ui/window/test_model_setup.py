"""The first-run card's "Talk now": the models found on this computer, a file chosen, the recommended model downloaded
from a host behaving like Hugging Face (consent, progress, cancel, continuing), and the choice saved through the
settings store; the model runner's state in the status bar and a restart after a crash in a notification."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from app.downloads import DownloadableModel
from app.llm.embedded import EmbeddedModel
from app.llm.recommended_model import RECOMMENDED_MODEL
from app.llm.runner import RunnerStatus
from app.runtime.panels import RuntimeModelSetup
from app.settings.model import Settings
from tests.app.llm.gguf import write_gguf
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host
from tests.ui.conftest import signal_fired, started_runtime
from tests.waiting import wait_until
from ui.window.i18n import use_language
from ui.window.main_window import MainWindow
from ui.window.model_setup import ModelSetupCard, ModelStatusNotice
from ui.window.notifications import NotificationArea

STUB = Path(__file__).parents[2] / "app" / "llm" / "stub_model_child.py"


@pytest.fixture
def home(tmp_path: Path, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home with one model of LM Studio's, and no other model folder."""
    user = tmp_path / "user"
    write_gguf(user / ".lmstudio" / "models" / "lmstudio-community" / "Qwen2.5-GGUF" / "qwen2.5-3b-q4.gguf", 4096)
    monkeypatch.setenv("HOME", str(user))
    for name in ("HF_HOME", "HF_HUB_CACHE", "XDG_DATA_HOME", "OLLAMA_MODELS"):
        monkeypatch.delenv(name, raising=False)
    return user


def hosted(host: HuggingFaceLikeHost, path: Path, *, rate: int) -> DownloadableModel:
    served = host.host(path, rate=rate)
    return DownloadableModel(name="Tiny Test Model (Q4_K_M)", repo="test/tiny-GGUF", file=path.name, revision="abc1",
                             size=served.size, sha256=served.sha256, licence="Apache-2.0",
                             licence_url="https://example.invalid/LICENSE", host=host.url)


def saved_model_file(madoi_home: Path) -> str | None:
    data = tomllib.loads((madoi_home / "settings.toml").read_text())
    value = data.get("llm", {}).get("model_file")
    return str(value) if value is not None else None


async def test_a_model_found_on_this_computer_is_listed_and_chosen_with_one_click(
        qtbot: QtBot, home: Path, madoi_home: Path) -> None:
    use_language("en")
    async with started_runtime() as runtime:
        card = ModelSetupCard()
        qtbot.addWidget(card)
        offline = dataclasses.replace(RECOMMENDED_MODEL, host="http://127.0.0.1:9")  # the offer says why not
        card.attach(RuntimeModelSetup(runtime, model=offline))
        await asyncio.sleep(0.2)
        assert card.files.count() == 0  # not shown: nothing looked for
        card.show()
        await wait_until(lambda: card.files.count() == 1, timeout=10)
        item = card.files.item(0).text()
        assert item.startswith("qwen2.5-3b-q4 · 4 MB · LM Studio: ") or item.startswith("qwen2.5-3b-q4 · 0 MB")
        assert str(home / ".lmstudio" / "models") in item
        await wait_until(lambda: "cannot be downloaded now" in card.offer_label.text(), timeout=10)
        assert card.use_button.isEnabled()
        chosen: list[Settings] = []
        card.model_chosen.connect(chosen.append)
        async with signal_fired(card.model_chosen):
            card.use_button.click()
        settings = chosen[0]
        assert isinstance(settings, Settings)
        path = home / ".lmstudio" / "models" / "lmstudio-community" / "Qwen2.5-GGUF" / "qwen2.5-3b-q4.gguf"
        assert settings.llm.model_file == path
        assert saved_model_file(madoi_home) == str(path)  # through the settings store, in the file
        assert "Starting qwen2.5-3b-q4" in card.result.text()
        card.detach()


async def test_a_file_that_is_no_model_is_refused_in_plain_words(qtbot: QtBot, home: Path, tmp_path: Path) -> None:
    use_language("en")
    async with started_runtime() as runtime:
        card = ModelSetupCard()
        qtbot.addWidget(card)
        card.attach(RuntimeModelSetup(runtime))
        notes = tmp_path / "notes.gguf"
        notes.write_text("not a model")
        await card.use(notes)
        assert card.result.text() == ("This file cannot be used: notes.gguf is not a GGUF model (it does not start "
                                      "with the GGUF header)")
        assert card.result.property("result") == "error"
        card.detach()


async def test_the_recommended_model_downloads_after_consent_pauses_on_cancel_and_continues(
        qtbot: QtBot, home: Path, madoi_home: Path, tmp_path: Path) -> None:
    use_language("ja")
    model_bytes = write_gguf(tmp_path / "hosted" / "tiny-q4_k_m.gguf", 600_000, seed=3)
    with hugging_face_like_host() as host:
        model = hosted(host, model_bytes, rate=400_000)  # 1.5 s for the whole file: time to cancel half-way
        async with started_runtime() as runtime:
            card = ModelSetupCard()
            qtbot.addWidget(card)
            card.attach(RuntimeModelSetup(runtime, model=model))
            card.show()
            await wait_until(lambda: "Tiny Test Model" in card.offer_label.text(), timeout=10)
            offer = card.offer_label.text()
            assert "1 MB" in offer  # its size, its licence, the memory it needs
            assert "Apache-2.0" in offer
            assert "1.50 GB" in offer
            assert not host.gets(model.file)  # nothing downloaded before the user agreed
            card.download_button.click()  # the consent: the facts above, then the button
            await wait_until(lambda: card.progress.value() > 100, timeout=10)
            card.cancel_button.click()
            await wait_until(lambda: "一時停止" in card.result.text() or "paused" in card.result.text(), timeout=10)
            assert card.download_button.text().startswith(("ダウンロードを続ける", "Continue the download"))
            kept = (madoi_home / "models" / (model.file + ".part")).stat().st_size
            assert 0 < kept < 600_000
            chosen: list[Settings] = []
            card.model_chosen.connect(chosen.append)
            async with signal_fired(card.model_chosen, timeout=20):
                card.download_button.click()
            ranges = [h.get("range") for h in host.gets(model.file)]
            assert ranges[-1] == f"bytes={kept}-"  # it went on from where it stopped
            downloaded = madoi_home / "models" / model.file
            assert chosen[0].llm.model_file == downloaded
            assert downloaded.read_bytes() == model_bytes.read_bytes()
            assert saved_model_file(madoi_home) == str(downloaded)
            card.detach()


class _RunnerPort:
    """The part of the ModelSetup port the status notice uses, over a real embedded runner."""

    def __init__(self, embedded: EmbeddedModel) -> None:
        self.embedded = embedded

    def status(self) -> RunnerStatus | None:
        return self.embedded.status

    def follow_status(self, listener: Callable[[RunnerStatus], None]) -> Callable[[], None]:
        return self.embedded.subscribe(listener)


async def test_a_crash_of_the_model_is_said_in_plain_words_once_it_runs_again(qtbot: QtBot, tmp_path: Path) -> None:
    use_language("en")
    window = QMainWindow()
    qtbot.addWidget(window)
    notifications = NotificationArea(window)
    notice = ModelStatusNotice(window.statusBar(), notifications)
    embedded = EmbeddedModel(tmp_path / "logs", command=lambda: [sys.executable, str(STUB), "--segv-later",
                                                                 "extra_buffers"])
    notice.attach(_RunnerPort(embedded))  # type: ignore[arg-type]
    try:
        await embedded.run(write_gguf(tmp_path / "tiny.gguf"))
        assert window.statusBar().currentMessage() == "The model tiny is ready"
        await wait_until(lambda: any(n.title == "The model stopped unexpectedly and was restarted"
                                     for n in notifications.history), timeout=15)
        said = next(n for n in notifications.history if n.title.startswith("The model stopped"))
        assert "SIGSEGV" in said.details
    finally:
        notice.detach()
        await embedded.stop()
        await asyncio.sleep(0)


async def test_a_model_file_that_cannot_be_used_is_said_on_the_first_run_card(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_LLM_MODEL_FILE", str(madoi_home / "gone.gguf"))
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        first_run = window.extras.first_run
        await runtime.models_resolved()
        await wait_until(lambda: first_run.problem_text() != "", timeout=5)
        assert window.extras.chat_stack is not None
        assert window.extras.chat_stack.currentWidget() is first_run
        missing = madoi_home / "gone.gguf"  # the window speaks the settings' language: Japanese here
        assert first_run.problem_text() == f"前回の接続: The model file cannot be used: {missing} is not a file"
        window.close()
