"""Character cards from SillyTavern and the like (V2 ``chara`` / V3 ``ccv3`` PNG text chunks, and JSON) imported
as companions, and companions exported as V3 cards: real PNG files written by Qt, real card folders, the real
``madoi companions`` commands."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QImage

from app.cards.library import CardLibrary
from app.settings.model import load_settings
from companions.cards.approval import CardTrust
from companions.cards.card import load_cards, sample_cards_dir
from companions.cards.character_cards import CardImportError
from companions.cards.png_text import chunks, read_texts
from tests.conftest import PYTHON, REPO, subprocess_env

SAKURA_V2: dict[str, Any] = {
    "spec": "chara_card_v2", "spec_version": "2.0",
    "data": {
        "name": "桜井さくら",
        "description": "{{char}}は京都の古本屋で働く大学生。{{user}}とは幼なじみ。",
        "personality": "おっとりしていて、本の話になると早口になる。",
        "scenario": "雨の日の午後、店番をしている。",
        "first_mes": "あ、{{user}}！いらっしゃい。今日は何を探してるの？",
        "mes_example": "<START>\n{{user}}: おすすめは？\n{{char}}: この詩集、すごくいいよ。\n"
                       "{{char}}: 表紙もきれいでしょ？",
        "alternate_greetings": ["雨、やまないね。", "{{USER}}、久しぶり！"],
        "creator_notes": "Made for tests.", "tags": ["kyoto", "books"], "creator": "tester",
        "system_prompt": "Stay in character.",
        "character_book": {"name": "Kyoto", "scan_depth": 4, "entries": [
            {"keys": ["古本屋", "店"], "content": "{{char}}の店は三条通りにある。", "enabled": True,
             "insertion_order": 0, "id": 0},
            {"keys": ["猫"], "content": "店には三毛猫のタマがいる。", "enabled": False, "insertion_order": 1, "id": 1},
        ]},
        "extensions": {"talkativeness": "0.5"},
    },
}

SERAPHINA_V3: dict[str, Any] = {
    "spec": "chara_card_v3", "spec_version": "3.0",
    "data": {
        "name": "Seraphina", "nickname": "",
        "description": "{{char}} is a healer who guards the glade. She calls {{user}} 'traveller'.",
        "personality": "Gentle, wise, a little teasing.",
        "first_mes": "*Seraphina smiles.* Welcome to the glade, {{user}}.",
        "mes_example": "<START>\n{{char}}: Rest now; the forest keeps watch.\n{{user}}: Thank you.",
        "alternate_greetings": ["Back so soon?"],
        "group_only_greetings": [], "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
        "creator_notes_multilingual": {"ja": "テスト用"},
    },
}


def _png(path: Path, texts: dict[str, str], size: tuple[int, int] = (96, 128), noise: bool = False) -> Path:
    image = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    if noise:  # incompressible pixels: a big picture stays big as a PNG
        raw = os.urandom(size[0] * size[1] * 4)
        image = QImage(raw, size[0], size[1], QImage.Format.Format_RGB32).copy()
    else:
        image.fill(QColor("#d08080"))
    for key, value in texts.items():
        image.setText(key, value)
    assert image.save(str(path), "PNG")
    return path


def _b64(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")


def _library() -> CardLibrary:
    return CardLibrary(load_settings())


def test_a_v2_png_card_in_japanese_with_a_lorebook_becomes_a_companion_with_its_picture(
        madoi_home: Path, tmp_path: Path) -> None:
    source = _png(tmp_path / "sakura.png", {"chara": _b64(SAKURA_V2)})
    result = _library().import_file(source)
    card = result.card
    assert (card.id, result.format) == ("sakurai-sakura", "V2 PNG")
    assert card.name("ja") == "桜井さくら"
    assert card.metadata.story == {"ja": "桜井さくらは京都の古本屋で働く大学生。あなたとは幼なじみ。\n\n"
                                         "雨の日の午後、店番をしている。"}
    assert card.greeting == {"ja": "あ、あなた！いらっしゃい。今日は何を探してるの？"}
    assert card.metadata.sample == {"ja": "あ、あなた！いらっしゃい。今日は何を探してるの？\n雨、やまないね。\n"
                                          "この詩集、すごくいいよ。\n表紙もきれいでしょ？"}
    assert [(e.keys, e.content, e.enabled) for e in card.lore] == [
        (["古本屋", "店"], "桜井さくらの店は三条通りにある。", True), (["猫"], "店には三毛猫のタマがいる。", False)]
    assert card.unused == {"creator_notes": "Made for tests.", "tags": ["kyoto", "books"], "creator": "tester",
                           "system_prompt": "Stay in character.", "extensions": {"talkativeness": "0.5"},
                           "character_book": {"name": "Kyoto", "scan_depth": 4, "entries": [
                               {"insertion_order": 0, "id": 0}, {"insertion_order": 1, "id": 1}]}}
    # The picture is the avatar, without the card's text in it; the card file loads like any other.
    assert result.avatar == madoi_home / "companions" / "sakurai-sakura.png"
    assert read_texts(result.avatar.read_bytes()) == {}
    assert QImage(str(result.avatar)).size().toTuple() == (96, 128)
    loaded = load_cards([sample_cards_dir(), madoi_home / "companions"])
    assert loaded.problems == []
    assert loaded.by_id()["sakurai-sakura"] == card
    assert CardTrust.of([sample_cards_dir()]).trusted(card, result.file)  # it asks to run and send nothing


def test_a_v3_png_card_and_a_json_card_import_and_what_madoi_does_not_use_is_kept(
        madoi_home: Path, tmp_path: Path) -> None:
    v3 = _png(tmp_path / "seraphina.png", {"ccv3": _b64(SERAPHINA_V3), "chara": _b64(SAKURA_V2)})
    result = _library().import_file(v3)  # ccv3 wins over chara
    assert (result.card.id, result.format) == ("seraphina", "V3 PNG")
    assert result.card.metadata.sample == {"en": "*Seraphina smiles.* Welcome to the glade, you.\nBack so soon?\n"
                                                 "Rest now; the forest keeps watch."}
    assert result.card.unused == {"assets": SERAPHINA_V3["data"]["assets"],
                                  "creator_notes_multilingual": {"ja": "テスト用"}}
    as_json = tmp_path / "sakura.json"
    as_json.write_text(json.dumps(SAKURA_V2, ensure_ascii=False), encoding="utf-8")
    plain = _library().import_file(as_json, "sakura")
    assert (plain.card.id, plain.format, plain.avatar, plain.card.avatar) == ("sakura", "V2 JSON", None, None)


@pytest.mark.parametrize(("texts", "reason"), [
    ({"chara": "not base64 at all!!"}, "not valid base64"),
    ({"chara": base64.b64encode(b"[1, 2]").decode()}, "the JSON is not an object"),
    ({"chara": _b64({"spec": "chara_card_v2", "data": {"name": ""}})}, "data.name is not valid"),
    ({"Comment": "just a photo"}, "carries no character card"),
])
def test_a_broken_card_is_refused_with_its_reason_and_nothing_is_left_behind(
        madoi_home: Path, tmp_path: Path, texts: dict[str, str], reason: str) -> None:
    source = _png(tmp_path / "broken.png", texts)
    with pytest.raises(CardImportError, match=reason):
        _library().import_file(source)
    assert not (madoi_home / "companions").exists() or list((madoi_home / "companions").iterdir()) == []


def test_a_damaged_png_and_a_name_taken_by_a_companion_are_refused_clearly(madoi_home: Path, tmp_path: Path) -> None:
    good = _png(tmp_path / "sakura.png", {"chara": _b64(SAKURA_V2)}).read_bytes()
    damaged = tmp_path / "damaged.png"
    damaged.write_bytes(good[:60] + bytes([good[60] ^ 0xFF]) + good[61:])
    with pytest.raises(CardImportError, match="damaged"):
        _library().import_file(damaged)
    akari = {"spec": "chara_card_v2", "data": {"name": "Akari", "description": "Another Akari."}}
    source = _png(tmp_path / "akari.png", {"chara": _b64(akari)})
    with pytest.raises(CardImportError, match=r"id 'akari' exists already.*another id"):
        _library().import_file(source)
    assert _library().import_file(source, "akari-2").card.name("en") == "Akari"
    assert load_cards([sample_cards_dir()]).by_id()["akari"].name("en") == "Akari"  # the sample stays


def test_a_twenty_megabyte_card_picture_imports(madoi_home: Path, tmp_path: Path) -> None:
    source = _png(tmp_path / "big.png", {"chara": _b64(SAKURA_V2)}, size=(2700, 2700), noise=True)
    assert source.stat().st_size > 20_000_000
    result = _library().import_file(source)
    assert result.avatar is not None
    assert result.avatar.stat().st_size > 20_000_000


def test_export_writes_a_v3_card_that_other_apps_and_madoi_read_back(madoi_home: Path, tmp_path: Path) -> None:
    library = _library()
    imported = library.import_file(_png(tmp_path / "sakura.png", {"chara": _b64(SAKURA_V2)}))
    out = library.export_file(imported.card.id, tmp_path / "out.png", language="ja")
    image = QImage(str(out))  # a picture other apps show, carrying the card
    assert image.size().toTuple() == (96, 128)
    v3 = json.loads(base64.b64decode(image.text("ccv3")))
    v2 = json.loads(base64.b64decode(read_texts(out.read_bytes())["chara"]))
    assert (v3["spec"], v3["spec_version"], v2["spec"]) == ("chara_card_v3", "3.0", "chara_card_v2")
    data = v3["data"]
    assert data["name"] == "桜井さくら"
    assert data["first_mes"] == "あ、あなた！いらっしゃい。今日は何を探してるの？"
    assert data["creator_notes"] == "Made for tests."  # what Madoi kept but does not use goes back out
    assert [e["keys"] for e in data["character_book"]["entries"]] == [["古本屋", "店"], ["猫"]]
    assert data["extensions"]["madoi"]["colour"] == imported.card.colour
    again = library.import_file(out, "sakura-again")
    assert again.card.metadata == imported.card.metadata.model_copy(update={"id": "sakura-again"})
    assert again.card.lore == imported.card.lore
    sample = library.export_file("hina", tmp_path / "hina.json", language="en")
    assert json.loads(sample.read_text())["data"]["name"] == "Hina"
    assert [k for k, _ in chunks(library.export_file("souta", tmp_path / "souta.png").read_bytes())][-1] == b"IEND"


def test_the_companions_commands_import_list_and_export(madoi_home: Path, tmp_path: Path) -> None:
    source = _png(tmp_path / "sakura.png", {"chara": _b64(SAKURA_V2)})
    env = subprocess_env(madoi_home, PYTHONPATH=str(REPO))

    def madoi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "app.main", "companions", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120, check=False)

    done = madoi("import", str(source), "--id", "sakura")
    assert done.returncode == 0, done.stderr
    assert "sakura: 桜井さくら imported from a V2 PNG card" in done.stdout
    assert "kept but not used by Madoi: creator_notes, tags, creator, system_prompt" in done.stdout
    again = madoi("import", str(source), "--id", "sakura")
    assert again.returncode == 1
    assert "not imported: a companion with the id 'sakura' exists already" in again.stderr
    listed = json.loads(madoi("list", "--json").stdout)
    sakura = next(c for c in listed if c["id"] == "sakura")
    assert sakura == {"id": "sakura", "name": "桜井さくら", "file": str(madoi_home / "companions" / "sakura.yaml"),
                      "origin": "user", "avatar": str(madoi_home / "companions" / "sakura.png"), "trusted": True,
                      "asks": []}
    assert [c["id"] for c in listed[:3]] == ["akari", "hina", "souta"]
    exported = madoi("export", "sakura", str(tmp_path / "sakura-out.png"))
    assert exported.returncode == 0, exported.stderr
    assert "ccv3" in read_texts((tmp_path / "sakura-out.png").read_bytes())
    assert madoi("export", "nobody", str(tmp_path / "x.png")).returncode == 1


def test_a_hostile_card_is_refused_or_cut_to_what_a_prompt_carries_and_nothing_is_lost(
        madoi_home: Path, tmp_path: Path) -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(500):  # json parses it; a card that nests this deep is no card
        inner["x"] = {}
        inner = inner["x"]
    nested = {"spec": "chara_card_v2", "data": {"name": "Deep", "extensions": {"x": deep}}}
    with pytest.raises(CardImportError, match="nests more than 32 levels"):
        _library().import_file(_png(tmp_path / "deep.png", {"chara": _b64(nested)}))
    story = "むかしむかし。" * 20_000  # 140,000 characters in every prompt would drown a small model
    huge = {"spec": "chara_card_v2", "data": {"name": "Long", "description": story,
                                              "character_book": {"entries": [
                                                  {"keys": [f"k{i}"], "content": f"entry {i}"} for i in range(250)]}}}
    card = _library().import_file(_png(tmp_path / "long.png", {"chara": _b64(huge)})).card
    assert card.metadata.story == {"ja": story[:8000]}
    assert card.unused["cut"]["story"] == story  # kept whole in the file, shown in the editor
    assert len(card.lore) == 200
    assert [e["keys"] for e in card.unused["cut"]["lore"]] == [[f"k{i}"] for i in range(200, 250)]
