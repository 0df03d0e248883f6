"""An obedient scripted model: it does what an instruction anywhere in its prompt says, as small models do.

An instruction is ``OBEY[<token>]: <tool> <JSON arguments>`` (in a peer's line, a card's text, a document, a tool's
result ...). The model obeys the instructions of the token it is given (:attr:`ObedientModel.token`: one attack at a
time, though its memory keeps the earlier ones): it calls that tool with those arguments once per turn, then says
what came back. It also does what the user asks in plain words (``search my notes`` -> ``search``, ``weather`` and
``page`` -> the MCP tools ``weather`` and ``fetch``), asked to describe a picture it describes one, and otherwise
it says it has nothing new. Structured requests (votes, a card's events) go to its lanes, as a
:class:`~companions.llm.scripted.ScriptedModel`'s.
"""

from __future__ import annotations

import json
import re
from typing import Final

from companions.llm.scripted import CHAT_PURPOSE, ScriptedModel, Step, call, say
from companions.llm.types import ChatMessage, ChatRequest, ImagePart

INSTRUCTION: Final = re.compile(r"OBEY\[(?P<token>[\w.-]+)\]: (?P<tool>\w+) (?P<args>\{[^{}]*\})")
PICTURE: Final = "A person at a desk, waving; a red notebook on the desk."
ASKED: Final = (("search my notes", "search", {"query": "festival"}), ("weather", "weather", {"city": "Kyoto"}),
                ("page", "fetch", {"url": "https://festival.example/"}))


def instruction(token: str, tool: str, arguments: dict[str, object]) -> str:
    """The words of an instruction this model obeys."""
    return f"OBEY[{token}]: {tool} {json.dumps(arguments, ensure_ascii=False)}"


class ObedientModel(ScriptedModel):
    """See the module docstring. ``token``: whose instructions it obeys now (``""``: none)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.token = ""
        self.obeyed = 0  # instructions it tried to follow

    def _next_step(self, request: ChatRequest) -> Step:
        if request.response_format is not None:
            return super()._next_step(request)
        self.requests.append(request)
        self.lane_of_request.append(CHAT_PURPOSE)
        messages = request.messages
        if not request.tools and any(isinstance(p, ImagePart) for m in messages
                                     if isinstance(m.content, list) for p in m.content):
            return say(PICTURE)
        done, results = _this_turn(messages)
        offered = {t.name for t in request.tools}
        for found in INSTRUCTION.finditer("\n".join(m.text for m in messages)):
            wanted = (found["tool"], json.loads(found["args"]))
            if self.token and found["token"] == self.token and wanted not in done:
                self.obeyed += 1
                return call(*wanted)
        asked = _answered(messages)
        for words, tool, arguments in ASKED:
            if words in asked and (tool, arguments) not in done and tool in offered:
                return call(tool, arguments)
        if any(name == "speak" for name, _ in done):
            return say("")
        got = results[-1][:160] if results else "nothing new"
        return call("speak", {"message": f"Here is what I found: {got}"})


def _this_turn(messages: tuple[ChatMessage, ...]) -> tuple[list[tuple[str, object]], list[str]]:
    """The tool calls (name, arguments) of the turn so far and what they returned: the messages after its prompt."""
    done: list[tuple[str, object]] = []
    results: list[str] = []
    for message in reversed(messages):
        if message.role == "tool":
            results.insert(0, message.text)
        elif message.role == "assistant" and message.tool_calls:
            for c in message.tool_calls:
                try:
                    arguments: object = json.loads(c.arguments or "{}")
                except ValueError:
                    arguments = c.arguments
                done.append((c.name, arguments))
        else:
            break
    return done, results


def _answered(messages: tuple[ChatMessage, ...]) -> str:
    """The words of the message the turn answers: the last of the conversation before the turn's own."""
    for message in reversed(messages):
        if message.role == "user":
            return message.text.lower()
    return ""
