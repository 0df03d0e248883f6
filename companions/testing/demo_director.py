"""A scripted language model behind the OpenAI-compatible test server that plays a short group conversation.

:class:`DemoDirector` is a ``fallback`` for :class:`~companions.testing.openai_server.OpenAITestServer`: it reads
each chat-completions request the way a model would (which companion asks, in which language, for what) and answers
with what that companion would say, so that ``madoi --headless`` with the sample companions, pointed at it, holds
a whole conversation over real HTTP that closes by itself::

    python -m companions.testing.openai_server --demo --port 8765
    MADOI_LLM_BASE_URL=http://127.0.0.1:8765/v1 madoi --headless

Requests it understands (everything Madoi asks a model): a vote (structured output named ``vote``), a card's event
parameters (``event_params``: each field of the schema filled so the companion replies), any other structured
output (an empty object), and a turn (a ``speak`` tool call with the companion's next line; after the tool result,
an empty answer). Everyone wants the floor, the one who spoke least most; the closing stage advances with the lines
said, so the talk goes none -> pre-closing -> closing -> terminal and ends with a goodbye.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from companions.testing.openai_server import Reply, TextReply, text_reply, tool_call_reply

LINES: Final[dict[str, tuple[str, ...]]] = {
    "ja": ("こんばんは！今日は星がよく見えそうだね。", "ほんとうに。空気が澄んでいて気持ちいいね。",
           "そういえば、来週は流星群が見られるらしいよ。", "いいね、みんなで屋上に集まろうか。",
           "温かい飲みものを持っていくね。"),
    "en": ("Good evening! The stars should be bright tonight.", "They really should. The air is so clear.",
           "By the way, there's a meteor shower next week.", "Nice, let's all meet on the roof.",
           "I'll bring something warm to drink."),
}
GOODBYE: Final = {"ja": "今日は楽しかった。またね、おやすみ！", "en": "This was fun. Good night, everyone!"}
STAGES: Final = ("none", "none", "pre-closing", "closing", "terminal")  # by the number of lines said so far
_ID = re.compile(r"[(（]id: ([\w-]+)[)）]")
_KANA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@dataclass
class DemoDirector:
    """Plays every companion of one conversation; call it with a request body, get the reply."""

    said: list[tuple[str, str]] = field(default_factory=list)  # (companion, line) in order
    requests: dict[str, int] = field(default_factory=dict)  # kind -> count

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        companion = _companion(messages)
        response_format = body.get("response_format") or {}
        schema_info = response_format.get("json_schema") or {}
        kind = schema_info.get("name") or ("after-tool" if _last_role(messages) == "tool" else "turn")
        self.requests[kind] = self.requests.get(kind, 0) + 1
        if kind == "vote":
            return text_reply(json.dumps(self._vote(companion)))
        if kind == "event_params":
            return text_reply(json.dumps(_fill(schema_info.get("schema") or {})))
        if response_format:
            return text_reply("{}")
        if kind == "after-tool":
            return TextReply("")
        return self._turn(companion, _language(messages))

    @property
    def stage(self) -> str:
        return STAGES[min(len(self.said), len(STAGES) - 1)]

    def _vote(self, companion: str) -> dict[str, Any]:
        spoken = sum(1 for who, _ in self.said if who == companion)
        return {"state": "speak", "importance": max(1, 8 - 2 * spoken), "closing": self.stage,
                "reason": "I have something to add" if self.stage == "none" else "we are wrapping up"}

    def _turn(self, companion: str, language: str) -> Reply:
        lines = LINES[language]
        line = GOODBYE[language] if self.stage == "terminal" else lines[len(self.said) % len(lines)]
        self.said.append((companion, line))
        return tool_call_reply(("speak", {"message": line, "emotion": "happy"}))


def _companion(messages: list[dict[str, Any]]) -> str:
    """The companion asking: its id as the system prompt introduces it ("…(id: akari)")."""
    for message in messages:
        if message.get("role") == "system":
            found = _ID.search(str(message.get("content") or ""))
            if found:
                return found.group(1)
    return "?"


def _language(messages: list[dict[str, Any]]) -> str:
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    return "ja" if _KANA.search(system) else "en"


def _last_role(messages: list[dict[str, Any]]) -> str | None:
    return messages[-1].get("role") if messages else None


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    """Values for a card's event parameters that make the companion reply: "need"/"response" flags true."""
    values: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type")
        if "enum" in spec:
            values[name] = spec["enum"][0]
        elif kind == "boolean":
            values[name] = "need" in name or "response" in name or "replied" in name
        elif kind in ("integer", "number"):
            values[name] = 0
        elif kind == "array":
            values[name] = []
        else:
            values[name] = ""
    return values
