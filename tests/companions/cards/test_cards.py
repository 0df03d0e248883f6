"""Companion Cards: the samples load in both languages; broken cards are reported and the others still load."""

from __future__ import annotations

from pathlib import Path

from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.companion.prompts import system_prompt

GOOD = """
metadata: {id: mika, name: Mika}
role: Tell jokes.
events:
  params: {type: object, properties: {funny: {type: boolean}}}
  conditions:
    - expression: funny == true
      execute: [{instruction: Laugh., tool: speak}]
"""


def test_the_three_samples_load_and_are_distinct() -> None:
    loaded = load_cards([sample_cards_dir()])
    assert loaded.problems == []
    cards = loaded.by_id()
    assert set(cards) == {"akari", "souta", "hina"}
    assert {c.name("en") for c in cards.values()} == {"Akari", "Souta", "Hina"}
    for card in cards.values():
        ja, en = system_prompt(card, "ja"), system_prompt(card, "en")
        assert card.name("ja") in ja
        assert card.name("en") in en
        assert ja != en
        assert "speak" in ja
        assert "speak" in en
        assert card.events.conditions, "each sample decides through events"
    assert cards["akari"].voice.for_language("en") == "en-us;rate=185;half_tone=2.5;all_pass=0.52"
    assert cards["akari"].voice.name_for("en") == "en-us"
    assert cards["souta"].knowledge == ["companions_network", "search"]


def test_broken_cards_are_reported_with_file_field_and_reason(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad_cel.yaml").write_text(GOOD.replace("funny == true", "funny ==").replace("mika", "bad1"))
    (tmp_path / "no_role.toml").write_text('[metadata]\nid = "x"\nname = "X"\n', encoding="utf-8")
    (tmp_path / "garbage.yaml").write_text("metadata: [unclosed", encoding="utf-8")
    (tmp_path / "bad_action.yaml").write_text(GOOD.replace("role:", "actions: [fly]\nrole:").replace("mika", "b2"))
    (tmp_path / "notes.txt").write_text("not a card", encoding="utf-8")
    loaded = load_cards([tmp_path])
    assert [c.id for c in loaded.cards] == ["mika"]
    by_file = {p.file.name: p for p in loaded.problems}
    assert set(by_file) == {"bad_cel.yaml", "no_role.toml", "garbage.yaml", "bad_action.yaml"}
    assert by_file["bad_cel.yaml"].field == "events.conditions.0.expression"
    assert "invalid CEL" in by_file["bad_cel.yaml"].reason
    assert by_file["no_role.toml"].field == "role"
    assert "required" in by_file["no_role.toml"].reason
    assert by_file["garbage.yaml"].field == ""
    assert "cannot read" in by_file["garbage.yaml"].reason
    assert by_file["bad_action.yaml"].field == "actions.0"
    assert "bad_cel.yaml: events.conditions.0.expression: invalid CEL" in str(by_file["bad_cel.yaml"])


def test_user_cards_override_samples_by_id(tmp_path: Path) -> None:
    (tmp_path / "akari.yaml").write_text(GOOD.replace("mika", "akari"), encoding="utf-8")
    loaded = load_cards([sample_cards_dir(), tmp_path, tmp_path / "missing"])
    assert loaded.by_id()["akari"].name("en") == "Mika"
    assert len(loaded.cards) == 3


def test_wire_metadata_is_localized() -> None:
    card = load_cards([sample_cards_dir()]).by_id()["hina"]
    assert card.wire_metadata("ja").name == "ひな"
    assert card.wire_metadata("en").name == "Hina"
    assert isinstance(card, CompanionCard)


def test_a_cards_mcp_servers_are_checked_when_it_loads(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(GOOD + "mcp:\n  - {name: files, command: mcp-files, args: [/notes]}\n"
                                             "  - {name: web, url: 'http://127.0.0.1:8000/mcp', tools: [fetch]}\n",
                                      encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(GOOD.replace("mika", "b3") + "mcp:\n  - {name: web}\n"
                                       "  - {name: both, command: x, url: 'http://h/mcp'}\n", encoding="utf-8")
    loaded = load_cards([tmp_path])
    servers = loaded.by_id()["mika"].mcp
    assert [(s.name, s.where, s.tools) for s in servers] == [("files", "mcp-files /notes", None),
                                                              ("web", "http://127.0.0.1:8000/mcp", ["fetch"])]
    assert [(p.field, p.reason) for p in loaded.problems] == [
        ("mcp.0", "an MCP server needs 'command' (stdio) or 'url' (streamable HTTP)"),
        ("mcp.1", "an MCP server has 'command' (stdio) or 'url' (streamable HTTP), not both"),
    ]
