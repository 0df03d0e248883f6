"""A scripted language model behind the OpenAI-compatible test server that plays a short group conversation.

:class:`DemoDirector` is a ``fallback`` for :class:`~companions.testing.openai_server.OpenAITestServer`: it reads
each chat-completions request the way a model would (which companion asks, in which language, for what) and answers
with what that companion would say, so that ``madoi --headless`` with the sample companions, pointed at it, holds
a whole conversation over real HTTP that closes by itself::

    python -m companions.testing.openai_server --demo --port 8765
    MADOI_LLM_BASE_URL=http://127.0.0.1:8765/v1 madoi --headless

Requests it understands (everything Madoi asks a model):
- structured output, named by its schema's ``title`` (the contract of companions/llm/negotiation.py), found in
  ``response_format.json_schema.name`` (json_schema mode), else ``response_format.schema.title`` (json_object
  mode), else the function of the only tool that ``tool_choice`` names (tool mode), else a JSON schema with a
  ``title`` written in the last user message (plain-text mode). It answers in the same mode: a JSON text, or a
  call of that function. ``vote``: everyone wants the floor, the one who spoke least most (with the card's event
  parameters filled when the schema asks for them); ``event_params``: each field filled so the companion replies;
  anything else: its fields filled with empty values.
- a turn: with tools offered, a ``speak`` call with the companion's next line (the server's profile renders it
  the way that server would); without tools, the line as plain text. After a tool result, an empty answer. A
  request from no companion (Madoi learning what the server does) gets "Hello!" and counts as no line.

Each new message from the user starts a new little conversation: the closing stage advances with the lines said
since, none -> pre-closing -> closing -> terminal, and it ends with a goodbye.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from companions.testing.openai_server.replies import Reply, TextReply, text_reply, tool_call_reply

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
# how a companion's memory shows what the user said (a user on another machine is ``user@<peer>``: a user too)
_USER_LINE = re.compile(r"\(id: user(?:@\w+)?\): (.+)")
_HEARD_LINE = re.compile(r"\(id: [\w@-]+\): (.+)")
_KANA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@dataclass
class DemoDirector:
    """Plays every companion of one conversation; call it with a request body, get the reply."""

    said: list[tuple[str, str]] = field(default_factory=list)  # (companion, line) in order, over all conversations
    requests: dict[str, int] = field(default_factory=dict)  # kind -> count
    started: int = 0  # index in ``said`` where the current conversation began
    _user_lines: int = 0  # the most lines from the user any request showed
    _last_user_line: str | None = None
    _seen_user_lines: set[str] = field(default_factory=set)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        self._notice_user(messages)
        companion = _companion(messages)
        name, schema, mode = _structured(body, messages)
        kind = name or ("after-tool" if _last_role(messages) == "tool" else "turn")
        self.requests[kind] = self.requests.get(kind, 0) + 1
        if name is not None:
            value = (self._vote(companion, schema) if name == "vote" else self._joint_vote(schema)
                     if name == "joint_vote" else _fill(schema, schema))
            if mode == "tool":
                return tool_call_reply((name, value))
            return text_reply(json.dumps(value, ensure_ascii=False))
        if kind == "after-tool":
            return TextReply("")
        if companion == "?":  # no companion asks: a client learning what the server does (companions/llm/learning.py)
            return tool_call_reply(("speak", {"message": "Hello!"})) if _offers(body, "speak") else text_reply("Hello!")
        line = self._line(companion, _language(messages))
        if _offers(body, "speak"):
            return tool_call_reply(("speak", {"message": line, "emotion": "happy"}))
        return text_reply(line)

    @property
    def stage(self) -> str:
        return STAGES[min(len(self.said) - self.started, len(STAGES) - 1)]

    def _notice_user(self, messages: list[dict[str, Any]]) -> None:
        """A user line not seen before (more of them than ever, or a new last one) starts a new conversation."""
        lines = [m for msg in messages if msg.get("role") == "user" for m in _USER_LINE.findall(_text(msg))]
        if not lines:
            return
        if len(lines) > self._user_lines or lines[-1] not in self._seen_user_lines:
            if self._last_user_line is not None:
                self.started = len(self.said)
            self._user_lines = max(self._user_lines, len(lines))
            self._last_user_line = lines[-1]
            self._seen_user_lines.add(lines[-1])

    def _vote(self, companion: str, schema: dict[str, Any]) -> dict[str, Any]:
        spoken = sum(1 for who, _ in self.said[self.started :] if who == companion)
        vote = _fill(schema, schema)
        vote.update({"state": "speak", "importance": max(1, 8 - 2 * spoken), "closing": self.stage,
                     "reason": "I have something to add" if self.stage == "none" else "we are wrapping up"})
        return vote

    def _joint_vote(self, schema: dict[str, Any]) -> dict[str, Any]:
        """One request's votes of several companions (companions/companion/joint_vote.py): the stage once, and each
        member's entry as its own vote would be."""
        entries = ((schema.get("properties") or {}).get("votes") or {}).get("properties") or {}
        votes = {voter: {k: v for k, v in self._vote(voter, entry).items() if k in entry.get("properties", {})}
                 for voter, entry in entries.items()}
        return {"closing": self.stage, "votes": votes}

    def _line(self, companion: str, language: str) -> str:
        lines = LINES[language]
        line = GOODBYE[language] if self.stage == "terminal" else lines[(len(self.said) - self.started) % len(lines)]
        self.said.append((companion, line))
        return line


def request_kind(body: dict[str, Any]) -> str:
    """What a chat request asks for, as the director reads it: the structured format's name ("vote",
    "event_params", ...), "after-tool" (the answer after a tool result) or "turn" (a companion's line)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    name, _, _ = _structured(body, messages)
    return name or ("after-tool" if _last_role(messages) == "tool" else "turn")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _structured(body: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[str | None, dict[str, Any], str]:
    """The structured output asked for: (format name, schema, mode), or (None, {}, "") for none."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        info = response_format.get("json_schema")
        if isinstance(info, dict) and info.get("name"):
            return str(info["name"]), info.get("schema") or {}, "json_schema"
        schema = response_format.get("schema")
        if isinstance(schema, dict) and schema.get("title"):
            return str(schema["title"]), schema, "json_object"
    choice = body.get("tool_choice")
    chosen = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and chosen and function.get("name") == chosen:
            return str(chosen), function.get("parameters") or {}, "tool"
    users = [m for m in messages if m.get("role") == "user"]
    schema = _schema_in(_text(users[-1])) if users else None
    if schema is not None:
        return str(schema["title"]), schema, "text"
    return None, {}, ""


def _schema_in(text: str) -> dict[str, Any] | None:
    """The last JSON object with a "title" and "properties" written in ``text``."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    start = text.find("{")
    while start >= 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict) and value.get("title") and "properties" in value:
            found = value
        start = text.find("{", end)
    return found


def _offers(body: dict[str, Any], name: str) -> bool:
    return any(isinstance(t, dict) and (t.get("function") or {}).get("name") == name for t in body.get("tools") or [])


def _companion(messages: list[dict[str, Any]]) -> str:
    """The companion asking: its id as the system prompt introduces it ("…(id: akari)")."""
    for message in messages:
        if message.get("role") == "system":
            found = _ID.search(_text(message))
            if found:
                return found.group(1)
    return "?"


def _language(messages: list[dict[str, Any]]) -> str:
    """The language of the last line the companion heard (else of its system prompt)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            heard = _HEARD_LINE.findall(_text(message))
            if heard:
                return "ja" if _KANA.search(heard[-1]) else "en"
    system = " ".join(_text(m) for m in messages if m.get("role") == "system")
    return "ja" if _KANA.search(system) else "en"


def _last_role(messages: list[dict[str, Any]]) -> str | None:
    return messages[-1].get("role") if messages else None


def _fill(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Values for every property of ``schema`` (``$ref``s resolved in ``root``): the first of an enum, flags
    that make a companion reply ("need"/"response"/"replied") true, zeros and empty strings otherwise."""
    values: dict[str, Any] = {}
    for name, spec in (_resolved(schema, root).get("properties") or {}).items():
        values[name] = _value(name, _resolved(spec, root), root)
    return values


def _resolved(spec: Any, root: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(spec, dict):
        return {}
    ref = spec.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return _resolved(node, root)
    options = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(options, list):
        typed = [_resolved(o, root) for o in options]
        return next((o for o in typed if o.get("type") != "null"), spec)
    return spec


def _value(name: str, spec: dict[str, Any], root: dict[str, Any]) -> Any:
    kind = spec.get("type")
    if "enum" in spec:
        return spec["enum"][0]
    if kind == "boolean":
        return "need" in name or "response" in name or "replied" in name
    if kind in ("integer", "number"):
        return spec.get("minimum", 0)
    if kind == "array":
        return []
    if kind == "object" or "properties" in spec:
        return _fill(spec, root)
    return ""
