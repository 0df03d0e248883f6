"""What the user sees of the web pages the bridge admits: the Bridge tab's list (``bridge.allowed_origins``), and a
notification in the window, once per origin, when a page was refused (a real bridge, a real `websockets` client
sending ``Origin`` as a browser does)."""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from app.bridge import BridgeServer
from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.wire.bus import InProcessBus
from tests.app.bridge_app import serving_bridge
from tests.app.bridge_client import admitted
from tests.conftest import free_port
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from tests.waiting import wait_until
from ui.settings.dialog import SettingsDialog
from ui.trust.refused_origins import SHOWN_CAP, RefusedOrigins
from ui.window.main_window import MainWindow
from ui.window.notifications import NotificationArea


def _dialog(qtbot: QtBot) -> SettingsDialog:
    loaded = load_settings()
    switch_language("en")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


async def test_the_bridge_tab_lists_the_allowed_web_pages_refuses_a_bad_one_and_saves_them(
        qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot)
    dialog.bridge_enabled.setChecked(True)
    origins = dialog.bridge.origins
    assert origins.isEnabled()
    assert origins.toPlainText().splitlines() == ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
    origins.setPlainText("http://localhost:*\nnull")  # any sandboxed frame of any site is "null"
    assert "is not a web page's origin" in dialog.field_error("bridge.allowed_origins")
    assert not dialog.save_button.isEnabled()
    origins.setPlainText("http://localhost:*\nhttps://Avatar.example\n\nhttp://127.0.0.1:5173")
    assert dialog.field_error("bridge.allowed_origins") == ""
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    data = tomllib.loads(load_settings().paths.settings_file.read_text(encoding="utf-8"))
    assert data["bridge"]["allowed_origins"] == ["http://localhost:*", "https://avatar.example",
                                                 "http://127.0.0.1:5173"]
    assert load_settings().settings.bridge.allowed_origins == data["bridge"]["allowed_origins"]


@pytest.fixture
async def bridge() -> AsyncIterator[tuple[InProcessBus, BridgeServer]]:
    async with serving_bridge() as serving:
        yield serving


async def _knock(port: int, origin: str) -> int:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"ws://127.0.0.1:{port}", origin=origin, proxy=None):  # type: ignore[arg-type]
            pass
    return refused.value.response.status_code


async def test_a_refused_web_page_is_said_in_the_window_once_per_origin(
        qtbot: QtBot, bridge: tuple[InProcessBus, BridgeServer]) -> None:
    bus, server = bridge
    window = QWidget()
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    notifications = NotificationArea(window)
    refused = RefusedOrigins(bus, notifications)
    refused.attach()
    try:
        assert await _knock(server.port, "https://evil.example") == 403
        assert await _knock(server.port, "https://evil.example") == 403
        assert await _knock(server.port, "http://evil.localhost:8000") == 403
        await bus.drain()  # the window's subscription has every event published so far
    finally:
        refused.detach()
    texts = [n.text for n in notifications.history]
    assert len(texts) == 2
    assert "https://evil.example" in texts[0]
    assert "http://evil.localhost:8000" in texts[1]
    assert "Web pages allowed" in texts[0]
    assert {n.level for n in notifications.history} == {"warning"}
    assert server.origins.refused == {"https://evil.example": 2, "http://evil.localhost:8000": 1}


async def test_a_program_knocking_with_many_origins_cannot_fill_the_window(
        qtbot: QtBot, bridge: tuple[InProcessBus, BridgeServer]) -> None:
    bus, server = bridge
    window = QWidget()
    qtbot.addWidget(window)
    notifications = NotificationArea(window)
    refused = RefusedOrigins(bus, notifications)
    refused.attach()
    try:
        for i in range(12):
            assert await _knock(server.port, f"https://site{i}.example") == 403
        await bus.drain()
    finally:
        refused.detach()
    texts = [n.text for n in notifications.history]
    assert len(texts) == SHOWN_CAP + 1
    assert texts[-1].startswith("More web pages were refused")
    assert len(server.origins.refused) == 12  # the bridge still counts each (and the log names them)


async def test_allow_on_the_notification_lets_the_refused_page_in_at_once(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path in the window: refused, said, allowed with one click, saved, applied to the running bridge."""
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        try:
            bridge = runtime.parts.bridge
            assert bridge is not None
            notifications = window.extras.notifications
            async with signal_fired(notifications.shown):
                assert await _knock(bridge.port, "https://avatar.example") == 403
            toast = notifications.visible_toasts[-1]
            assert "https://avatar.example" in toast.notification.text
            assert toast.action_button is not None
            assert toast.action_button.text() == "許可"  # the test home's language: Japanese
            async with signal_fired(window.extras.settings_saved):
                qtbot.mouseClick(toast.action_button, Qt.MouseButton.LeftButton)
            data = tomllib.loads(load_settings().paths.settings_file.read_text(encoding="utf-8"))
            assert data["bridge"]["allowed_origins"][-1] == "https://avatar.example"
            # the window applies the saved settings in a task of its own
            await wait_until(lambda: bridge.origins.allows("https://avatar.example"), timeout=2)
            async with connect(f"ws://127.0.0.1:{bridge.port}", origin="https://avatar.example",  # type: ignore[arg-type]
                               proxy=None):
                await admitted(bridge, 1)
            assert runtime.parts.bridge is bridge  # the same bridge: nobody else was disconnected
            assert [n.title for n in notifications.history][-1] == "ウェブページを許可しました"
        finally:
            window.detach()


