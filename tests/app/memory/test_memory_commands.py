"""``madoi conversations import/export`` and ``madoi memory recall`` on real files and the real stores (the
commands' own entry point, in this process; the search index with a test embedder through the app's engine seam)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from app.main import main
from app.memory import cli as memory_cli
from app.search.cli import index_path
from app.settings.model import load_settings
from companions.search.engine import SearchEngine
from tests.companions.search_doubles import HashingEmbedder

CONVERSATIONS = [
    {"title": "Cats", "messages": [
        {"id": "c1", "from": "user", "to": [], "message": "My cat is called Mochi", "time": "2023-05-08T13:56:00Z"},
        {"id": "c2", "from": "akari", "to": ["user"], "message": "Mochi, what a sweet name!",
         "time": "2023-05-08T13:57:00Z"},
        {"id": "c3", "from": "user", "to": ["hina"], "message": "Hina, keep a secret: I am afraid of cats",
         "time": "2023-05-08T13:58:00+00:00"}]},
    {"title": "Trip", "messages": [
        {"id": "t1", "from": "user", "to": ["akari"], "message": "In July I am going to Okinawa",
         "time": "2023-06-01T09:00:00Z"}]},
]


@pytest.fixture
def fast_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' search engine with a quick deterministic embedder (the real one embeds for seconds)."""
    monkeypatch.setattr(memory_cli, "make_search_engine",
                        lambda paths: SearchEngine(index_path(paths), embedder=HashingEmbedder()))


def run(argv: list[str], stdin: str = "", monkeypatch: pytest.MonkeyPatch | None = None,
        capsys: pytest.CaptureFixture[str] | None = None) -> tuple[int, str, str]:
    assert monkeypatch is not None
    assert capsys is not None
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_import_recall_export_round_trip(madoi_home: Path, tmp_path: Path, fast_index: None,
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chats.jsonl"
    source.write_text("".join(json.dumps(c) + "\n" for c in CONVERSATIONS) + "not json\n"
                      + json.dumps({"title": "bad", "messages": [{"id": "x", "from": "user"}]}) + "\n",
                      encoding="utf-8")
    code, out, err = run(["conversations", "import", str(source)], monkeypatch=monkeypatch, capsys=capsys)
    assert code == 1  # two bad lines, reported; the good ones imported
    assert "imported 2 conversations (4 messages)" in out
    assert f"{source}: line 3:" in err
    assert "line 4: messages.0.message: Field required" in err
    code, out, _ = run(["conversations", "import", str(source)], monkeypatch=monkeypatch, capsys=capsys)
    assert "imported 0 conversations (0 messages); 2 imported before" in out

    queries = "\n".join(json.dumps(q) for q in (
        {"id": "cat", "text": "What is the name of my cat?"},
        {"id": "before", "text": "What is the name of my cat?", "time": "2023-05-08T13:56:30Z"},
        {"id": "trip", "text": "Where am I going in July?"},
        {"text": 3})) + "\n"
    code, out, _ = run(["memory", "recall", "--companion", "akari", "--jsonl", "--limit", "5"], queries,
                       monkeypatch=monkeypatch, capsys=capsys)
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 1  # the last line is not a query
    by_id = {a["id"]: a for a in answers}
    cat = by_id["cat"]["recalled"]
    assert {r["message_id"] for r in cat} >= {"c1", "c2"}
    assert "c3" not in {r["message_id"] for r in cat}  # said to Hina alone
    assert next(r for r in cat if r["message_id"] == "c1") == {
        "message_id": "c1", "text": "My cat is called Mochi", "time": "2023-05-08T13:56:00Z",
        "score": next(r for r in cat if r["message_id"] == "c1")["score"]}
    assert cat == sorted(cat, key=lambda r: -r["score"])  # best first
    assert isinstance(by_id["cat"]["elapsed_ms"], float)
    assert [r["message_id"] for r in by_id["before"]["recalled"]] == ["c1"]  # only what was said before 13:56:30
    assert by_id["trip"]["recalled"][0]["message_id"] == "t1"
    assert "error" in answers[-1]

    exported = tmp_path / "out.jsonl"
    code, out, _ = run(["conversations", "export", str(exported)], monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [c["title"] for c in lines] == ["Cats", "Trip"]
    assert lines[0]["messages"][2] == {"id": "c3", "from": "user", "to": ["hina"],
                                       "message": "Hina, keep a secret: I am afraid of cats",
                                       "time": "2023-05-08T13:58:00Z"}


def test_a_sillytavern_chat_goes_into_one_companions_memory(madoi_home: Path, tmp_path: Path, fast_index: None,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    chat = tmp_path / "Sakura - 2024-03-01.jsonl"
    chat.write_text("\n".join(json.dumps(line) for line in (
        {"user_name": "Taro", "character_name": "Sakura", "create_date": "2024-03-01@10h00m00s", "chat_metadata": {}},
        {"name": "Sakura", "is_user": False, "send_date": "March 1, 2024 10:00am", "mes": "Welcome to the bookshop!"},
        {"name": "Taro", "is_user": True, "send_date": "March 1, 2024 10:01am",
         "mes": "I am looking for a book about lighthouses"},
        {"name": "System", "is_user": False, "is_system": True, "send_date": 1709287300000, "mes": "(note)"},
        {"name": "Sakura", "is_user": False, "send_date": 1709287320000, "mes": "Lighthouses! Second shelf."})) + "\n",
        encoding="utf-8")
    code, out, err = run(["conversations", "import", str(chat), "--companion", "souta"], monkeypatch=monkeypatch,
                         capsys=capsys)
    assert (code, err) == (0, "")
    assert "imported 1 conversations (3 messages)" in out
    query = json.dumps({"id": "q", "text": "Which book was I looking for?"}) + "\n"
    code, out, _ = run(["memory", "recall", "--companion", "souta", "--jsonl"], query, monkeypatch=monkeypatch,
                       capsys=capsys)
    recalled = json.loads(out)["recalled"]
    assert recalled[0]["text"] == "I am looking for a book about lighthouses"
    assert recalled[0]["time"].startswith("2024-03-01T")
    code, out, _ = run(["memory", "recall", "--companion", "akari", "--jsonl"], query, monkeypatch=monkeypatch,
                       capsys=capsys)
    assert json.loads(out)["recalled"] == []  # the chat is Souta's memory only
    assert load_settings().paths.database.exists()
