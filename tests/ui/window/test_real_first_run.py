"""The first run as a newcomer meets it, on the real small model (a Qt test: it runs in the qasync loop of
tests/ui/conftest.py): the window opens on the first-run card with no model
server anywhere, the model file LM Studio keeps is listed under "Talk now", one click on "Use" starts it in Madoi's
own runner, the sample cast's greeting opens the conversation, and the user's answer gets a companion's line from the
real model. A screenshot of the window is saved beside the test's files (MADOI_SCREENSHOTS names a folder to keep
it)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.realmodel.conftest import real_model
from tests.ui.conftest import started_runtime
from tests.ui.open_window import open_window
from tests.waiting import wait_until

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

AKARI_GREETING = "やっほー、あかりだよ！ 今日はどんな一日だった？"
KEEP_SCREENSHOTS = os.environ.get("MADOI_SCREENSHOTS")  # read before madoi_home clears every MADOI_ variable


@pytest.fixture
def user_home(tmp_path: Path, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home whose only model is the real one, linked where LM Studio keeps its models."""
    model = Path(real_model.paths().model)
    if not model.exists():
        pytest.skip(f"the real model file is not prepared ({model}); run scripts/real_model.py")
    user = tmp_path / "user"
    folder = user / ".lmstudio" / "models" / "Qwen" / "Qwen2.5-0.5B-Instruct-GGUF"
    folder.mkdir(parents=True)
    (folder / model.name).symlink_to(model)
    monkeypatch.setenv("HOME", str(user))
    for name in ("HF_HOME", "HF_HUB_CACHE", "XDG_DATA_HOME", "OLLAMA_MODELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MADOI_LLM_AUTODETECT_LOCAL", "false")  # no server of the user's: only the file
    return user


async def test_one_click_on_talk_now_and_the_companions_greet_and_talk(
        qtbot: QtBot, user_home: Path, tmp_path: Path) -> None:
    async with started_runtime() as runtime:
        window = await open_window(qtbot, runtime)
        first_run = window.extras.first_run
        stack = window.extras.chat_stack
        assert stack is not None
        await wait_until(lambda: stack.currentWidget() is first_run, timeout=30)
        card = first_run.model_setup
        await wait_until(lambda: card.files.count() == 1, timeout=30)
        assert card.files.item(0).text().startswith(Path(real_model.paths().model).stem)
        card.files.setCurrentRow(0)
        qtbot.mouseClick(card.use_button, Qt.MouseButton.LeftButton)  # the one click

        chat = window.chat
        await wait_until(lambda: AKARI_GREETING in chat.view.toPlainText(), timeout=240)
        assert stack.currentWidget() is not first_run  # the conversation, not the card
        conversation = runtime.parts.conversations.active_id
        assert conversation is not None
        [greeting] = [s.message for s in await runtime.store.messages(conversation)]
        assert (greeting.params.from_, greeting.params.message) == ("akari", AKARI_GREETING)

        runtime.parts.conversations.send("ただいま！今日は星がきれいだったよ。")
        said = [greeting]
        async with asyncio.timeout(300):  # a companion answers the user, with a line of the real model
            while len(said) < 3:
                await asyncio.sleep(0.5)
                said = [s.message for s in await runtime.store.messages(conversation)]
        answer = said[2]
        await wait_until(lambda: answer.params.message[:8] in chat.view.toPlainText(), timeout=10)
        assert answer.params.from_ in {"akari", "hina", "souta"}
        assert len(answer.params.message.strip()) >= 2
        shot = tmp_path / "first-run-talking.png"
        assert window.grab().save(str(shot))
        if KEEP_SCREENSHOTS:
            shutil.copy(shot, Path(KEEP_SCREENSHOTS) / shot.name)
        window.close()
