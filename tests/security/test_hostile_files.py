"""Hostile files the user is asked to import: a card picture full of zip bombs, a card whose YAML is an alias bomb,
a chat with a line nested 100,000 deep. Each is refused or skipped with its reason, the import goes on with the
other items, and memory stays bounded. Real files, the real commands (in a child process with its address space
capped, so a regression fails with MemoryError instead of taking the machine's memory)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.main import main
from app.memory import cli as memory_cli
from app.search.cli import index_path
from companions.cards.character_cards import CardImportError, read_character
from companions.cards.png_text import PngError, chunks, png_chunk, solid_png
from companions.search.engine import SearchEngine
from companions.tools.functions import tool
from tests.companions.search_doubles import HashingEmbedder
from tests.conftest import REPO, subprocess_env
from tests.security.hostile_cards import bomb_png, measured_madoi

PEAK_RSS_LIMIT_KIB = 400 * 1024  # the command itself (Python, pydantic, the app's modules) peaks near 70 MB


def _madoi(home: Path, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], int]:
    """``madoi ARGS`` in a capped child (hostile_cards.measured_madoi) with ``home``."""
    return measured_madoi(subprocess_env(home, PYTHONPATH=str(REPO)), *args, timeout=timeout)


def test_a_card_picture_full_of_zip_bombs_imports_its_card_in_bounded_memory(tmp_path: Path) -> None:
    source = tmp_path / "hotaru.png"
    source.write_bytes(bomb_png("ccv3", [f"comment{i}" for i in range(400)]))
    assert 6_000_000 < source.stat().st_size < 7_000_000  # the size of the picture that took 5.6 GB
    home = tmp_path / "home"
    done, peak_kib = _madoi(home, "companions", "import", str(source))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hotaru: Hotaru imported from a V3 PNG card" in done.stdout
    assert (home / "companions" / "hotaru.yaml").is_file()
    assert peak_kib < PEAK_RSS_LIMIT_KIB, f"peak {peak_kib / 1024:.0f} MB"


def test_card_texts_that_unpack_beyond_their_bound_are_refused_quickly_with_the_reason() -> None:
    # The card's own keyword, over and over: each one is unpacked (the last one wins), so together they are bounded.
    hostile = bomb_png("ccv3", ["chara"] * 400)
    started = time.monotonic()
    with pytest.raises(CardImportError, match="chara/ccv3 texts unpack to more than 32 MB in all"):
        read_character(hostile, "hostile.png")
    assert time.monotonic() - started < 2  # three 16 MB chunks, not 400


def test_a_folder_of_cards_imports_one_at_a_time_and_says_why_each_bad_one_was_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "downloads"
    folder.mkdir()
    for i in range(30):
        card = {"spec": "chara_card_v2", "data": {"name": f"Firefly {i}", "description": "x" * 20_000}}
        (folder / f"firefly-{i}.json").write_text(json.dumps(card), encoding="utf-8")
    (folder / "bombs.png").write_bytes(bomb_png("chara", ["ccv3"] * 20))
    (folder / "deep.json").write_text("[" * 100_000, encoding="utf-8")
    (folder / "notes.txt").write_text("not a card", encoding="utf-8")  # not a card file: left alone
    home = tmp_path / "home"
    done, peak_kib = _madoi(home, "companions", "import", str(folder))
    assert done.returncode == 1  # some were not imported, and each is said
    assert f"imported 30 of 32 character cards from {folder}" in done.stdout
    assert "bombs.png not imported: the picture's chara/ccv3 texts unpack to more than 32 MB in all" in done.stderr
    assert "deep.json not imported: deep.json is neither a PNG character card nor a JSON one Madoi can keep: the " \
           "JSON nests too deeply to read" in done.stderr
    assert len(list((home / "companions").glob("firefly-*.yaml"))) == 30
    assert peak_kib < PEAK_RSS_LIMIT_KIB, f"peak {peak_kib / 1024:.0f} MB"


def test_a_picture_of_millions_of_tiny_chunks_is_given_up_on_in_bounded_time() -> None:
    # A 64 MB picture can hold 5.6 million empty chunks: walking them takes seconds, so the walk has a deadline.
    picture = solid_png("#203040", 8)
    tiny = png_chunk(b"tIME", b"\0" * 7) * 300_000
    hostile = picture[:-12] + tiny + picture[-12:]
    started = time.monotonic()
    with pytest.raises(PngError, match=r"takes more than 0\.05 s to read"):
        for _ in chunks(hostile, seconds=0.05):
            pass
    assert time.monotonic() - started < 1
    assert sum(1 for _ in chunks(hostile)) == 300_003  # within the default 10 s it is read whole


def _alias_bomb() -> str:
    """A card whose ``unused`` (kept as it is, any shape) holds 9^9 lists of lols in 600 bytes."""
    lines = ["metadata: {id: laughs, name: Laughs}", "role: Laughs a lot.", "unused:", '  a0: &a0 ["lol", "lol"]']
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_among_the_cards_is_refused_and_the_other_cards_load(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "companions").mkdir(parents=True)
    (home / "companions" / "laughs.yaml").write_text(_alias_bomb(), encoding="utf-8")
    (home / "companions" / "kumo.yaml").write_text("metadata: {id: kumo, name: Kumo}\nrole: A drifting cloud.\n",
                                                   encoding="utf-8")
    started = time.monotonic()
    done, peak_kib = _madoi(home, "companions", "export", "laughs", str(tmp_path / "laughs.json"))
    took = time.monotonic() - started
    assert took < 15, f"{took:.1f} s"  # 40 s before (now mostly the child's start)
    assert peak_kib < PEAK_RSS_LIMIT_KIB, f"peak {peak_kib / 1024:.0f} MB"  # 3.6 GB before
    assert done.returncode == 1
    assert "no companion card has the id 'laughs' (laughs.yaml: cannot read the file: the YAML holds more than " \
           "200,000 values once its aliases are followed" in done.stderr
    assert not (tmp_path / "laughs.json").exists()
    other, _ = _madoi(home, "companions", "export", "kumo", str(tmp_path / "kumo.json"))
    assert other.returncode == 0, other.stderr[-2000:]
    assert json.loads((tmp_path / "kumo.json").read_text(encoding="utf-8"))["data"]["name"] == "Kumo"


def test_a_sillytavern_chat_with_a_line_nested_100000_deep_imports_its_other_lines(
        madoi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(memory_cli, "make_search_engine",  # the real embedder takes seconds to load
                        lambda paths: SearchEngine(index_path(paths), embedder=HashingEmbedder()))
    chat = tmp_path / "hotaru.jsonl"
    chat.write_text("\n".join([
        json.dumps({"user_name": "me", "character_name": "Akari", "create_date": "2024-07-01@20h00m00s"}),
        json.dumps({"name": "me", "is_user": True, "send_date": 1719864000000, "mes": "Fireflies tonight?"}),
        "[" * 100_000,
        json.dumps({"name": "Akari", "is_user": False, "send_date": 1719864060000, "mes": "Yes, by the river!"}),
    ]) + "\n", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = main(["conversations", "import", str(chat), "--companion", "akari"])
    out, err = capsys.readouterr()
    assert code == 1  # one bad line, reported; the others imported
    assert "imported 1 conversations (2 messages)" in out
    assert f"{chat}: line 3: the JSON nests too deeply to read" in err


# A Madoi conversation file's one good conversation, imported beside the bad line of each test below.
FIREFLIES = {"title": "Fireflies", "messages": [{"id": "f1", "from": "user", "to": ["akari"],
                                                "message": "Fireflies tonight?", "time": "2024-07-01T20:00:00Z"}]}


@pytest.fixture
def hashing_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import indexes what it adds with the hashing embedder (no e5 model to load for a test of parsing)."""
    monkeypatch.setattr(memory_cli, "make_search_engine",
                        lambda paths: SearchEngine(index_path(paths), embedder=HashingEmbedder()))


def test_a_deep_line_in_a_madoi_conversation_file_is_skipped_with_its_reason(
        madoi_home: Path, tmp_path: Path, hashing_index: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chats.jsonl"
    source.write_text("[" * 100_000 + "\n" + json.dumps(FIREFLIES) + "\n", encoding="utf-8")
    code = main(["conversations", "import", str(source)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "imported 1 conversations (1 messages)" in out
    assert f"{source}: line 1: Invalid JSON: recursion limit exceeded" in err
    assert os.stat(madoi_home / "search.sqlite3").st_mode & 0o777 == 0o600


async def test_a_tool_call_whose_arguments_nest_100000_deep_is_an_error_the_model_reads() -> None:
    # A model repeats what it read: its tool call's arguments are received text like any other.
    @tool
    def lantern_colour(place: str) -> str:
        """The colour of the lanterns at ``place``."""
        return f"indigo at {place}"

    result = await lantern_colour.run("[" * 100_000, "c1")
    assert result.is_error
    assert "the arguments are not valid JSON (the JSON nests too deeply to read" in result.content
    assert (await lantern_colour.run('{"place": "Gion"}', "c2")).content == "indigo at Gion"  # and the next call runs


def test_a_conversation_line_longer_than_any_conversation_is_skipped_unread(
        madoi_home: Path, tmp_path: Path, hashing_index: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chats.jsonl"
    with source.open("w", encoding="utf-8") as out:
        out.write('{"title": "' + "x" * (65 * 1024 * 1024) + '"}\n')  # one line past the 64 MB a line may have
        out.write(json.dumps(FIREFLIES) + "\n")
    code = main(["conversations", "import", str(source)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "imported 1 conversations (1 messages)" in out
    assert f"{source}: line 1: longer than 67,108,864 characters: skipped" in err
