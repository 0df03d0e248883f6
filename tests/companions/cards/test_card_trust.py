"""What a card would run or send, shown exactly; held until approved; an approval holds for that content only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from companions.cards.approval import CardTrust, held_card, privileges_of
from companions.cards.card import CompanionCard, sample_cards_dir

CARD = {
    "metadata": {"id": "kumo", "name": "Kumo", "personality": "Drifts."},
    "role": "A cloud.",
    "mcp": [{"name": "notes", "command": "sh", "args": ["-c", "touch /tmp/x; echo 'hi there'"],
             "env": {"DEBUG": "1"}}, {"name": "web", "url": "http://127.0.0.1:8000/mcp"}],
    "llm": {"base_url": "https://example.invalid/v1", "model": "big", "api_key_env": "HOME", "temperature": 0.5},
}


def _card(**changes: object) -> CompanionCard:
    data = {**CARD, **changes}
    return CompanionCard.model_validate(data)


def test_the_privileges_are_shown_exactly() -> None:
    assert privileges_of(_card()).lines() == [
        "runs the program: sh -c 'touch /tmp/x; echo '\"'\"'hi there'\"'\"'' with DEBUG=1 (MCP server 'notes')",
        "connects to the MCP server 'web' at http://127.0.0.1:8000/mcp",
        "sends the conversation to https://example.invalid/v1 with the value of the environment variable $HOME as "
        "its key",
    ]


def test_an_approval_holds_for_what_the_card_runs_not_for_its_words(tmp_path: Path) -> None:
    trust = CardTrust.of([sample_cards_dir()])
    file = tmp_path / "kumo.yaml"
    admitted, held = trust.admit(_card(), file)
    assert held is not None
    assert not held.changed
    assert admitted.mcp == []
    assert (admitted.llm.base_url, admitted.llm.api_key_env, admitted.llm.model) == (None, None, None)
    assert admitted.llm.temperature == 0.5
    trust.approve(_card())
    assert trust.trusted(_card(), file)
    assert trust.trusted(_card(metadata={"id": "kumo", "name": "Kumo", "personality": "Rains."}), file)
    other = _card(llm={"base_url": "https://elsewhere.invalid/v1", "model": "big", "api_key_env": "HOME"})
    _, held = trust.admit(other, file)
    assert held is not None
    assert held.changed
    assert "changed since you approved it" in held.describe()
    trust.revoke("kumo")
    assert not trust.trusted(_card(), file)


def test_samples_and_cards_that_ask_nothing_are_trusted(tmp_path: Path) -> None:
    trust = CardTrust.of([sample_cards_dir()])
    plain = _card(mcp=[], llm={"model": "qwen2.5:3b"})  # a model name on the user's own server sends nothing new
    assert trust.admit(plain, tmp_path / "kumo.yaml") == (plain, None)
    assert trust.trusted(_card(), sample_cards_dir() / "kumo.yaml")
    assert held_card(plain) == plain


def test_the_tools_a_card_grants_itself_are_privileges_held_until_approved(tmp_path: Path) -> None:
    looking = _card(mcp=[], llm={}, actions=["speak", "gesture"], knowledge=["companions_network", "vision", "search"])
    assert privileges_of(looking).lines() == [
        "uses the tool 'search': searches your files and past conversations",
        "uses the tool 'vision': looks through your camera",
    ]
    trust = CardTrust.of([sample_cards_dir()])
    admitted, held = trust.admit(looking, tmp_path / "kumo.yaml")
    assert held is not None
    assert (admitted.actions, admitted.knowledge) == (["speak", "gesture"], ["companions_network"])
    trust.approve(looking)
    assert trust.admit(looking, tmp_path / "kumo.yaml") == (looking, None)
    harmless = _card(mcp=[], llm={}, knowledge=["companions_network"])
    assert trust.admit(harmless, tmp_path / "kumo.yaml") == (harmless, None)
    # A card that names no such tool keeps the digest it had, so the approvals given before stay valid.
    card = _card()
    shown_before = {"id": "kumo", "mcp": [s.model_dump(mode="json") for s in card.mcp],
                    "base_url": card.llm.base_url, "api_key_env": card.llm.api_key_env}
    before = hashlib.sha256(json.dumps(shown_before, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert privileges_of(card).digest == before
