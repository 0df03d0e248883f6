"""The user's files are readable by the user only, the settings file is written whole or not at
all, a secret saved without a keyring survives a restart, and no log line holds a token or a key."""

from __future__ import annotations

import asyncio
import base64
import errno
import json
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import keyring.backends.fail
import pytest
from websockets.asyncio.client import connect

from app.main import fill_secrets
from app.settings.model import load_settings
from app.settings.secrets import BRIDGE_TOKEN, LLM_API_KEY, SecretStore
from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from companions.wire.protocol import Message, frame_of
from tests.app.headless import line_containing
from tests.conftest import PYTHON, REPO, free_port, subprocess_env

API_KEY = "sk-test-never-in-a-log-4f9a2c7e1b"
BRIDGE_SECRET = "bridge-secret-7d3e9a1c5b2f"


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _umask_022() -> None:  # the usual desktop umask: without explicit modes every file would be world-readable
    os.umask(0o022)


async def _headless(home: Path, *args: str, **env: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "app.main", "--headless", *args, cwd=REPO, env=subprocess_env(home, PYTHONPATH=str(REPO), **env),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=_umask_022)
    assert proc.stdout is not None
    ready = (await asyncio.wait_for(proc.stdout.readline(), 90)).decode()
    assert ready.startswith("madoi: ready"), ready
    return proc


async def _stop(proc: asyncio.subprocess.Process) -> bytes:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode(errors="replace")
    return err


async def test_the_data_directory_database_log_and_settings_are_readable_only_by_the_user(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    for name in ("settings.toml", "madoi.log", "madoi.log.1"):  # left world-readable by an older Madoi
        (home / name).write_text("[general]\nuser_name = \"me\"\n" if name == "settings.toml" else "old log\n")
        os.chmod(home / name, 0o644)
    proc = await _headless(home)
    try:
        running = {p.name: _mode(p) for p in home.iterdir() if p.is_file()}  # -wal and -shm exist while it runs
    finally:
        await _stop(proc)
    assert _mode(home) == 0o700
    assert {"madoi.sqlite3", "madoi.sqlite3-wal", "madoi.sqlite3-shm", "madoi.log", "settings.toml"} <= set(running)
    for name in ("madoi.sqlite3", "madoi.sqlite3-wal", "madoi.sqlite3-shm", "madoi.log", "madoi.log.1",
                 "settings.toml"):
        assert running[name] == 0o600, (name, oct(running[name]))
    # Everything the run made, anywhere under the home (the search index and its vectors, speech ...), is private.
    made = {str(p.relative_to(home)): _mode(p) for p in home.rglob("*")}
    assert "search.sqlite3" in made
    assert {name: oct(mode) for name, mode in made.items() if mode not in (0o600, 0o700)} == {}


def test_a_new_database_and_its_wal_are_private_from_the_first_byte(tmp_path: Path) -> None:
    from app.storage.database import open_database

    old = os.umask(0o022)
    try:
        conn = open_database(tmp_path / "data" / "madoi.sqlite3")
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        modes = {p.name: _mode(p) for p in (tmp_path / "data").iterdir()}
        conn.close()
    finally:
        os.umask(old)
    assert modes == {"madoi.sqlite3": 0o600, "madoi.sqlite3-wal": 0o600, "madoi.sqlite3-shm": 0o600}


_CRASHING_SAVE = textwrap.dedent("""
    import os, signal, sys
    from app.settings.model import load_settings
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    def fsync(fd):
        real_fsync(fd)
        events.append("fsync")
    def replace(src, dst):
        events.append("replace")
        print(" ".join(events), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # the machine dies between the write and the rename
    os.fsync, os.replace = fsync, replace
    loaded = load_settings()
    loaded.settings.general.user_name = "changed-by-a-save-that-never-finished"
    loaded.settings.voice.rate = 222
    loaded.write()
""")


def test_a_crash_between_writing_and_renaming_the_settings_leaves_the_old_file_whole(madoi_home: Path) -> None:
    loaded = load_settings()
    loaded.settings.general.user_name = "before"
    loaded.write()
    before = loaded.paths.settings_file.read_bytes()
    env = subprocess_env(madoi_home, PYTHONPATH=str(REPO))
    crashed = subprocess.run([PYTHON, "-c", _CRASHING_SAVE], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=60, check=False)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert crashed.stdout.split() == ["fsync", "replace"]  # the new text was on disk before the rename was tried
    assert loaded.paths.settings_file.read_bytes() == before
    again = load_settings()
    assert again.problems == []
    assert again.settings.general.user_name == "before"
    again.settings.voice.rate = 190
    again.write()  # the next save finishes and clears what the crash left behind
    # (the writers' lock file stays, empty and private: removing a lock file others may wait on is a race)
    assert sorted(p.name for p in madoi_home.iterdir() if "settings" in p.name) == ["settings.toml",
                                                                                   "settings.toml.lock"]
    assert load_settings().settings.voice.rate == 190
    assert _mode(loaded.paths.settings_file) == 0o600
    assert _mode(loaded.paths.settings_file.with_name("settings.toml.lock")) == 0o600


def test_a_failing_write_keeps_the_old_settings_leaves_nothing_behind_and_raises(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings()
    loaded.settings.general.user_name = "kept"
    loaded.write()

    def disk_full(src: object, dst: object) -> None:  # fails between the write and the rename
        raise OSError(errno.ENOSPC, "No space left on device")

    loaded.settings.general.user_name = "lost"
    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", disk_full)
        with pytest.raises(OSError, match="No space left"):  # the dialog says so (its save_failed text)
            loaded.write()
    assert load_settings().settings.general.user_name == "kept"
    # (the writers' lock file stays, empty and private: removing a lock file others may wait on is a race)
    assert sorted(p.name for p in madoi_home.iterdir() if "settings" in p.name) == ["settings.toml",
                                                                                   "settings.toml.lock"]


def test_a_secret_saved_without_a_keyring_is_there_after_a_restart(madoi_home: Path) -> None:
    paths = load_settings().paths
    store = SecretStore.for_paths(paths, backend=keyring.backends.fail.Keyring())
    assert store.set(LLM_API_KEY, API_KEY) == "file"
    assert store.set(BRIDGE_TOKEN, BRIDGE_SECRET) == "file"
    secrets_file = paths.data_dir / "secrets.json"
    assert _mode(secrets_file) == 0o600
    assert json.loads(secrets_file.read_text()) == {LLM_API_KEY: API_KEY, BRIDGE_TOKEN: BRIDGE_SECRET}
    restarted = load_settings()  # what `madoi` does at start
    fill_secrets(restarted)
    assert restarted.settings.llm.api_key is not None
    assert restarted.settings.llm.api_key.get_secret_value() == API_KEY
    assert restarted.settings.bridge.token is not None
    assert restarted.settings.bridge.token.get_secret_value() == BRIDGE_SECRET


async def test_a_verbose_log_of_a_conversation_through_the_bridge_holds_no_token_or_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector()) as server:
        proc = await _headless(home, "--verbose", MADOI_LLM_BASE_URL=server.base_url, MADOI_LLM_API_KEY=API_KEY,
                               MADOI_BRIDGE_PORT=str(port), MADOI_BRIDGE_TOKEN=BRIDGE_SECRET)
        assert proc.stderr is not None
        try:
            headers = {"Authorization": f"Bearer {BRIDGE_SECRET}"}
            async with connect(f"ws://127.0.0.1:{port}/?token={BRIDGE_SECRET}&dialect=reference",
                               additional_headers=headers, proxy=None) as client:
                await client.send(frame_of(Message.create(from_="user", message="あかり、こんばんは！", to=["akari"])))
                await line_containing(proc.stderr, "conversation ended:", timeout=120)
        finally:
            stderr = await _stop(proc)
    chats = server.chat_requests()
    assert chats
    assert all(r.headers.get("authorization") == f"Bearer {API_KEY}" for r in chats)
    log = (home / "madoi.log").read_text(encoding="utf-8")
    # The debug log did see the traffic (so the test would catch a leak)...
    assert "websockets" in log
    assert "Authorization: ***" in log
    assert "token=***" in log
    assert "openai._base_client" in log
    assert "httpcore" in log
    # ...and holds neither secret, in any form.
    for text in (log, stderr.decode(errors="replace")):
        assert BRIDGE_SECRET not in text
        assert API_KEY not in text
        assert API_KEY[8:] not in text


def _madoi(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([PYTHON, "-m", "app.main", *args], cwd=REPO, env=subprocess_env(home, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=120, check=False, preexec_fn=_umask_022)
    assert done.returncode == 0, done.stderr
    return done


def test_a_card_imported_into_a_new_folder_is_readable_only_by_the_user(tmp_path: Path) -> None:
    from companions.cards.png_text import solid_png, with_texts

    card = {"spec": "chara_card_v2", "data": {"name": "Hotaru", "description": "A firefly."}}
    source = tmp_path / "hotaru.png"
    source.write_bytes(with_texts(solid_png("#203040", 32),
                                  {"chara": base64.b64encode(json.dumps(card).encode()).decode("ascii")}))
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    _madoi(home, "companions", "import", str(source))  # `companions` does not exist yet: the import makes it
    folder = home / "companions"
    assert _mode(folder) == 0o700
    assert {p.name: _mode(p) for p in folder.iterdir()} == {"hotaru.yaml": 0o600, "hotaru.png": 0o600}


def test_cards_an_older_madoi_left_readable_are_tightened_by_the_next_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / "companions"
    folder.mkdir(parents=True)
    (folder / "kumo.yaml").write_text("metadata: {id: kumo, name: Kumo}\nrole: A drifting cloud.\n")
    os.chmod(folder, 0o755)
    os.chmod(folder / "kumo.yaml", 0o644)
    _madoi(home, "companions", "list")
    assert _mode(folder) == 0o700
    assert _mode(folder / "kumo.yaml") == 0o600


def test_the_search_index_and_its_wal_are_private_from_the_first_byte(madoi_home: Path) -> None:
    from app.search.cli import index_path
    from companions.search.index import SearchIndex

    old = os.umask(0o022)
    try:
        index = SearchIndex(index_path(load_settings().paths))  # what `madoi search` and the window's search open
        try:
            modes = {p.name: _mode(p) for p in madoi_home.iterdir() if p.name.startswith("search.sqlite3")}
        finally:
            index.close()
    finally:
        os.umask(old)
    assert modes == {"search.sqlite3": 0o600, "search.sqlite3-wal": 0o600, "search.sqlite3-shm": 0o600}


async def test_what_a_companion_said_is_written_to_a_private_wav_in_a_private_new_folder(madoi_home: Path) -> None:
    from app.devices.speaker import Pyttsx3Speaker
    from companions.devices.ports import Utterance
    from companions.wire.bus import InProcessBus

    folder = madoi_home / "speech"  # MADOI_VOICE_OUTPUT_DIR: each line a WAV file instead of sound
    old = os.umask(0o022)
    bus = InProcessBus()
    speaker = Pyttsx3Speaker(bus, output_dir=folder)
    try:
        await speaker.start()
        result = await speaker.speak(Utterance("My cat is called Mochi.", speaker_id="akari"))
    finally:
        await speaker.stop()
        await bus.aclose()
        os.umask(old)
    assert result.success, result.reason
    assert result.wav_path is not None
    assert _mode(folder) == 0o700
    assert _mode(Path(result.wav_path)) == 0o600
