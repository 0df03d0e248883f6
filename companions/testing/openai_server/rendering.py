"""A profile applied to one request: what the server refuses, what the model sees, and how its reply comes out.

The reply generator (a script or a fallback such as the demo director) decides WHAT the model says; the profile
decides how a real server delivers it: a tool call written as text, a reply cut at ``max_tokens``, token-sized
stream pieces. So scripted tests and the demo both meet each server's habits.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from companions.testing.openai_server.profiles import Refusal, ServerProfile, estimate_tokens, token_pieces
from companions.testing.openai_server.replies import ErrorReply, Reply, TextReply, ToolCallReply, ToolCallSpec


def refusal(profile: ServerProfile, body: dict[str, Any]) -> ErrorReply | None:
    """The server's error answer to ``body`` before any model runs, if it refuses it."""
    response_format = body.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    found: Refusal | None = None
    if kind in ("json_schema", "json_object"):
        found = profile.refuses.get(kind)
    if found is None and profile.refuses_auto_tools is not None and body.get("tools") and named_tool(body) is None:
        found = profile.refuses_auto_tools
    if found is None:
        return None
    return ErrorReply(found.status, str(found.body), body=found.body)


def named_tool(body: dict[str, Any]) -> str | None:
    """The function ``tool_choice`` names, if it names one."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
    return None


def visible_body(profile: ServerProfile, body: dict[str, Any]) -> dict[str, Any]:
    """The request as the model sees it: without the later system messages a template drops."""
    if not profile.drops_later_system:
        return body
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    first_system = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    kept = [m for i, m in enumerate(messages) if m.get("role") != "system" or i == first_system]
    return {**body, "messages": kept}


def rendered(profile: ServerProfile, reply: Reply, body: dict[str, Any]) -> Reply:
    """``reply`` as this server delivers it to ``body``'s client."""
    as_call = named_tool(body) is not None and profile.named_tool_native
    if isinstance(reply, ToolCallReply) and profile.tools != "native" and not as_call:
        reply = _as_text(profile, reply, body)
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if isinstance(reply, TextReply):
        return _text_reply(profile, reply, limit if isinstance(limit, int) else None)
    if isinstance(reply, ToolCallReply):
        return _tool_reply(profile, reply, limit if isinstance(limit, int) else None)
    return reply


def _as_text(profile: ServerProfile, reply: ToolCallReply, body: dict[str, Any]) -> TextReply:
    """The tool calls written the way the model writes them as content."""
    texts: list[str] = [reply.text] if reply.text else []
    for call in reply.calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except json.JSONDecodeError:
            arguments = call.arguments
        match profile.tools:
            case "text":
                texts.append(f"<tool_call>\n{_dumps({'name': call.name, 'arguments': arguments})}\n</tool_call>")
            case "echo_schema":
                spec = next((t for t in body.get("tools") or [] if _tool_name(t) == call.name),
                            {"type": "function", "function": {"name": call.name}})
                texts.append(f"<tools>\n{_dumps(spec)}\n</tools>")
            case "functions_text":
                texts.append(f"functions.{call.name}:")  # the arguments never come (real-servers.md)
            case "plain":
                said = next((v for v in arguments.values() if isinstance(v, str)), "") if isinstance(
                    arguments, dict) else str(arguments)
                texts.append(said)
            case "native":  # not reached: native calls stay calls
                pass
    return TextReply("\n".join(texts))


def _tool_name(tool: object) -> object:
    function = tool.get("function") if isinstance(tool, dict) else None
    return function.get("name") if isinstance(function, dict) else None


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text_reply(profile: ServerProfile, reply: TextReply, limit: int | None) -> TextReply:
    if limit is not None and estimate_tokens(reply.text) > limit:
        pieces = token_pieces(reply.text)[:limit]
        return TextReply("".join(pieces), tuple(pieces), "length")
    if profile.paced:
        return TextReply(reply.text, tuple(token_pieces(reply.text)), reply.finish_reason)
    return reply


def _tool_reply(profile: ServerProfile, reply: ToolCallReply, limit: int | None) -> ToolCallReply:
    left = limit if limit is not None else -1
    calls: list[ToolCallSpec] = []
    fragments: list[tuple[str, ...]] = []
    cut = False
    for call in reply.calls:
        pieces = token_pieces(call.arguments)
        if left >= 0 and len(pieces) > left:
            pieces, cut = pieces[:left], True
        if left >= 0:
            left -= len(pieces)
        calls.append(dataclasses.replace(call, arguments="".join(pieces)))
        fragments.append(tuple(pieces))
        if cut:
            break
    if not cut and not profile.paced:
        return reply
    return dataclasses.replace(reply, calls=tuple(calls), fragments=tuple(fragments) if profile.paced else None,
                               finish_reason="length" if cut else reply.finish_reason)
