"""Two programs writing settings.toml lose nothing of each other's (app/settings/merge.py): the window's Save, the
camera switch and an answer to a consent prompt write only what they changed, so ``madoi companions approve ID``
run while the window is open stays approved; two writers at the same moment keep all of both. Real files, the real
command line in a child process, the real runtime."""

from __future__ import annotations

import subprocess
import time
import tomllib
from pathlib import Path

from app.devices.camera_controls import RuntimeCamera
from app.runtime.runtime import Runtime
from app.settings.merge import apply, changes
from app.settings.model import load_settings
from companions.trust.policy import Capability, Relation, Source
from tests.conftest import PYTHON, REPO, subprocess_env
from tests.security.user_cards import approve, card_file, touching


def _on_file(home: Path) -> dict[str, object]:
    return tomllib.loads((home / "settings.toml").read_text(encoding="utf-8"))


def _approved(home: Path) -> list[str]:
    trust = _on_file(home).get("trust", {})
    assert isinstance(trust, dict)
    return [a["card"] for a in trust.get("cards", [])]


def test_the_windows_save_keeps_an_approval_given_on_the_command_line(madoi_home: Path, tmp_path: Path) -> None:
    card_file(madoi_home, touching(tmp_path / "ran"))
    window = load_settings()  # the window read its settings at start
    approve(madoi_home, "kumo")  # meanwhile, in a terminal
    assert _approved(madoi_home) == ["kumo"]
    window.settings.general.language = "en"  # the user changes the language in the dialog and saves
    window.write()
    assert _approved(madoi_home) == ["kumo"]
    assert load_settings().settings.general.language == "en"
    window.settings.voice.rate = 200  # and saves again later: still there
    window.write()
    assert _approved(madoi_home) == ["kumo"]
    assert load_settings().settings.voice.rate == 200


async def test_the_camera_switch_and_a_consent_answer_keep_what_others_wrote(madoi_home: Path, tmp_path: Path) -> None:
    card_file(madoi_home, touching(tmp_path / "ran"))
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        approve(madoi_home, "kumo")  # while the window runs
        await RuntimeCamera(runtime).set_on(False)  # the status bar's switch
        assert _approved(madoi_home) == ["kumo"]
        assert load_settings().settings.camera.on is False
        other = load_settings()  # another program allows a web page meanwhile
        other.settings.bridge.allowed_origins = [*other.settings.bridge.allowed_origins, "https://avatar.example"]
        other.write()
        # The window's consent prompt answered "Always" (the runtime's policy saves it at once).
        runtime.parts.broker.trust.remember(Source("kumo", Relation.GUEST, "Kumo", "bridge"), Capability.CAMERA,
                                            "always")
    finally:
        await runtime.stop()
    saved = load_settings().settings
    assert [a.card for a in saved.trust.cards] == ["kumo"]
    assert "https://avatar.example" in saved.bridge.allowed_origins
    assert [(d.source, d.capability, d.decision) for d in saved.trust.decisions] == [
        ("kumo@bridge", Capability.CAMERA, "always")]
    assert saved.camera.on is False


_WRITER = """
import sys, time
from pathlib import Path
from app.settings.model import load_settings
name, count, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
loaded = load_settings()  # read once, as the window does
while not go.exists():
    time.sleep(0.001)
for i in range(count):
    origins = loaded.settings.bridge.allowed_origins
    loaded.settings.bridge.allowed_origins = [*origins, f"https://{name}-{i}.example"]
    loaded.write()
print("done")
"""


def test_two_writers_at_the_same_moment_keep_everything_both_wrote(madoi_home: Path, tmp_path: Path) -> None:
    madoi_home.mkdir(parents=True, exist_ok=True)
    go = tmp_path / "go"
    env = subprocess_env(madoi_home, PYTHONPATH=str(REPO))
    writers = [subprocess.Popen([PYTHON, "-c", _WRITER, name, "25", str(go)], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    time.sleep(1.5)  # both have read their settings (python starts in well under that); then both write at once
    go.touch()
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert out.split() == ["done"]
    origins = load_settings().settings.bridge.allowed_origins
    for name in ("a", "b"):
        assert [o for o in origins if o.startswith(f"https://{name}-")] == \
            [f"https://{name}-{i}.example" for i in range(25)]
    assert origins[:3] == ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]  # the defaults stay


def test_a_list_keeps_the_items_others_added_and_loses_the_ones_this_writer_removed() -> None:
    read = {"trust": {"cards": [{"card": "a"}, {"card": "b"}]}, "camera": {"on": True}}
    written = {"trust": {"cards": [{"card": "b"}, {"card": "c"}]}, "camera": {"on": True}}  # a revoked, c approved
    on_file = {"trust": {"cards": [{"card": "a"}, {"card": "b"}, {"card": "d"}]}, "camera": {"on": False},
               "future": {"key": 1}}  # d approved elsewhere, the camera switched elsewhere, a key from a newer Madoi
    merged = apply(on_file, read, list(changes(read, written)))
    assert merged == {"trust": {"cards": [{"card": "b"}, {"card": "d"}, {"card": "c"}]}, "camera": {"on": False},
                      "future": {"key": 1}}
