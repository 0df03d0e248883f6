"""Structured output in the best mode an endpoint supports: json_schema -> json_object -> a tool call -> plain text.

Why here: only the backend sees HTTP answers, and a refused ``response_format`` is a fact about the endpoint, not
a failure of one request. So the ChatRequest port keeps one way to ask (``response_format: JsonSchemaFormat``)
and :class:`~companions.llm.openai_backend.OpenAIChatModel` translates each such request into the endpoint's
current mode with :func:`apply_mode`, turns the answer back into the JSON text of an ordinary Completion with
:func:`structured_completion`, and on a refusal (:func:`is_refusal`) moves to the next mode at once and remembers it
in :class:`~companions.llm.capabilities.EndpointCapabilities`. Callers (generate_structured, the scripted model,
votes, card events) see no difference between servers.

The modes, as sent (a contract: the test server's demo director reads it):
- ``json_schema``: ``response_format={"type": "json_schema", "json_schema": {"name", "schema", "strict": false}}``.
- ``json_object``: ``response_format={"type": "json_object", "schema": SCHEMA}`` (llama-cpp-python builds a grammar
  from "schema"; other servers ignore it), and the instruction + schema JSON appended to the LAST user message.
- ``tool``: one function tool named after the format whose parameters are the schema, ``tool_choice`` naming it;
  the call's arguments are the value.
- ``text``: no response_format; the instruction + schema JSON appended to the last user message; the reply is
  parsed tolerantly by the caller.
In every mode the schema's ``title`` is the format name (e.g. "vote"), and every string field without a
``maxLength`` gets :data:`STRING_BOUND`, so a grammar-constrained small model cannot loop inside free text.
"""

from __future__ import annotations

import json
from typing import Any, Final

from companions.llm.capabilities import StructuredMode
from companions.llm.types import ChatMessage, ChatRequest, Completion, JsonSchemaFormat, TextPart, ToolSpec

STRING_BOUND: Final = 200  # characters, for string fields of structured output that name no maxLength
SCHEMA_INSTRUCTION: Final = (
    "Answer with one JSON object only (no prose, no code fences) that follows this JSON schema:\n{schema}"
)
KEYS_INSTRUCTION: Final = "Answer with one JSON object only, with these keys:\n{keys}"
TOOL_DESCRIPTION: Final = "Give your answer as the arguments of this function."
# HTTP statuses that, on a request asking for structured output in some mode, mean "not in this mode".
_REFUSALS: Final = frozenset({400, 422, 500, 501})
_MODE_WORDS: Final = ("response_format", "json", "schema", "tool")
# Errors that are about the request's size, whatever the mode: never a reason to give a mode up.
_NOT_ABOUT_MODE: Final = ("context length", "context window", "maximum context", "too many tokens", "too long")


def is_refusal(status: int | None, message: str) -> bool:
    """Whether an HTTP error on a request that used a structured mode says the endpoint cannot do that mode
    (a 404 counts only when it names response_format, JSON, a schema or tools: else it is a wrong model or URL;
    an error about the prompt's length never counts)."""
    lowered = message.lower()
    if any(words in lowered for words in _NOT_ABOUT_MODE):
        return False
    if status in _REFUSALS:
        return True
    return status == 404 and any(word in lowered for word in _MODE_WORDS)


def bounded_schema(fmt: JsonSchemaFormat) -> dict[str, Any]:
    """A copy of the format's schema titled with the format name, every unbounded string field bounded."""
    schema = _bounded(fmt.schema_)
    assert isinstance(schema, dict)
    schema["title"] = fmt.name
    return schema


def _bounded(node: Any) -> Any:
    if isinstance(node, list):
        return [_bounded(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _bounded(value) for key, value in node.items()}
    kind = node.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if is_string and not any(k in node for k in ("maxLength", "enum", "const", "format", "pattern")):
        out["maxLength"] = STRING_BOUND
    return out


def apply_mode(request: ChatRequest, mode: StructuredMode) -> tuple[ChatRequest, dict[str, Any]]:
    """The request as sent in ``mode`` (schema in the prompt, or the format's tool added) and the extra
    chat-completions parameters of that mode (``response_format``, ``tool_choice``)."""
    fmt = request.response_format
    assert fmt is not None
    schema = bounded_schema(fmt)
    if mode == "json_schema":
        body = {"name": fmt.name, "schema": schema, "strict": fmt.strict}
        return request, {"response_format": {"type": "json_schema", "json_schema": body}}
    if mode == "tool":
        tool = ToolSpec(name=fmt.name, description=TOOL_DESCRIPTION, parameters=schema)
        choice = {"type": "function", "function": {"name": fmt.name}}
        return request.model_copy(update={"tools": (*request.tools, tool)}), {"tool_choice": choice}
    if mode == "json_object":
        # The server is given the schema (llama-cpp-python turns it into a grammar that enforces it), so the model
        # only needs the keys and what they mean: ~100 prompt tokens less than the JSON schema, on a server that
        # reads ~170 prompt tokens a second.
        instruction = KEYS_INSTRUCTION.format(keys=describe_keys(schema))
        shaped = request.model_copy(update={"messages": with_instruction(request.messages, instruction)})
        return shaped, {"response_format": {"type": "json_object", "schema": schema}}
    instruction = SCHEMA_INSTRUCTION.format(schema=json.dumps(_for_prompt(schema), ensure_ascii=False,
                                                              separators=(",", ":")))
    return request.model_copy(update={"messages": with_instruction(request.messages, instruction)}), {}


def describe_keys(schema: dict[str, Any], indent: str = "") -> str:
    """The keys of an object schema, one per line: ``name (type): description``; nested objects indented, and
    described once when every key of an object holds the same object (a joint vote's one entry per companion: six
    companions' entries written out were 722 characters, ~180 tokens by the endpoint's estimate; named once, 225
    characters, ~57 tokens)."""
    defs = schema.get("$defs", {})
    properties = schema.get("properties", {})
    alike = _same_nested(properties, defs)
    if alike is not None and len(properties) > 1:
        return (f"{indent}- {', '.join(properties)} (each an object):\n"
                + describe_keys({**alike, "$defs": defs}, indent + "  "))
    lines = []
    for name, raw in properties.items():
        nested = _nested(_resolve(raw, defs), defs)
        if nested is not None:
            lines.append(f"{indent}- {name} (object):")
            lines.append(describe_keys({**nested, "$defs": defs}, indent + "  "))
            continue
        prop = _resolve(raw, defs)
        kind = " or ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"]) if "enum" in prop else (
            f"integer {prop['minimum']}-{prop['maximum']}" if "minimum" in prop and "maximum" in prop
            else str(prop.get("type", "any")))
        description = f": {prop['description']}" if prop.get("description") else ""
        lines.append(f"{indent}- {name} ({kind}){description}")
    return "\n".join(lines)


def _nested(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema a property holds (itself, or the object among its ``anyOf``), or None."""
    return next((_resolve(p, defs) for p in prop.get("anyOf", ()) if _resolve(p, defs).get("properties")),
                prop if prop.get("properties") else None)


def _same_nested(properties: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema every one of ``properties`` holds, when they all hold the same one."""
    found = [_nested(_resolve(raw, defs), defs) for raw in properties.values()]
    first = found[0] if found else None
    return first if first is not None and all(f == first for f in found) else None


def _resolve(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        return target if isinstance(target, dict) else {}
    return node if isinstance(node, dict) else {}


def _for_prompt(node: Any, *, top: bool = True) -> Any:
    """The schema as the model reads it in the prompt: compact, without pydantic's per-field titles (the prompt is
    processed at ~170 tokens/s on a small local server: every token counts); the top-level title stays."""
    if isinstance(node, list):
        return [_for_prompt(item, top=False) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: _for_prompt(value, top=False) for key, value in node.items() if top or key != "title"
            or not isinstance(value, str)}


def with_instruction(messages: tuple[ChatMessage, ...], instruction: str) -> tuple[ChatMessage, ...]:
    """``messages`` with ``instruction`` appended to the last user message (a new user message if none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            return (*messages[:index], append_text(message, instruction), *messages[index + 1 :])
    return (*messages, ChatMessage.user(instruction))


def append_text(message: ChatMessage, text: str, *, before: bool = False) -> ChatMessage:
    """``message`` with ``text`` added after (or ``before``) its text, as a separate paragraph."""
    content = message.content
    if isinstance(content, list):
        part = TextPart(text=text)
        return message.model_copy(update={"content": [part, *content] if before else [*content, part]})
    current = content or ""
    joined = (f"{text}\n\n{current}" if before else f"{current}\n\n{text}") if current else text
    return message.model_copy(update={"content": joined})


def structured_completion(completion: Completion, fmt: JsonSchemaFormat, mode: StructuredMode) -> Completion:
    """The answer of a structured request as a Completion whose text is the value's JSON (tool calls removed
    in tool mode; a tool call the model wrote as text, ``{"name": <format>, "arguments": {...}}``, unwrapped)."""
    message = completion.message
    text = message.text
    if mode == "tool":
        for call in message.tool_calls:
            if call.name == fmt.name:
                text = call.arguments
                break
    unwrapped = _unwrap_call_text(text, fmt.name)
    if unwrapped is None and mode != "tool":
        return completion
    finish = "stop" if completion.finish_reason == "tool_calls" else completion.finish_reason
    value = ChatMessage.assistant(unwrapped if unwrapped is not None else text)
    return completion.model_copy(update={"message": value, "finish_reason": finish})


def _unwrap_call_text(text: str, name: str) -> str | None:
    if f'"{name}"' not in text or ("arguments" not in text and "parameters" not in text):
        return None
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("name") != name:
        return None
    arguments = value.get("arguments", value.get("parameters"))
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    return arguments if isinstance(arguments, str) else None
