"""Structured output that survives weak models: ask for JSON, validate, repair once, else a safe default.

Small local models ignore ``response_format``, wrap JSON in code fences or prose, or get the fields wrong.
:func:`generate_structured` takes the first JSON object out of whatever came back, validates it with pydantic,
sends the validation error back once for a corrected answer, and otherwise returns the caller's default. It never
raises for bad output or a failed call (ScriptError from a scripted model still propagates: that is a test bug).
Every outcome is counted in a :class:`StructuredStats`.

How the JSON is asked for depends on the server (json_schema, json_object, a tool call or plain text): the backend
negotiates that (:mod:`companions.llm.negotiation`), so this module asks the same way of every model.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from companions.llm.types import ChatMessage, ChatModel, ChatRequest, JsonSchemaFormat, LLMError, complete

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
# Enough for a vote or a card's parameters; a small model that loops inside a field is cut off here.
STRUCTURED_MAX_TOKENS = 160

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
REPAIR_PROMPT = (
    "Your previous reply was not valid for the required JSON schema.\n"
    "Problem: {problem}\n"
    "Reply again with only the corrected JSON object, no prose and no code fences."
)


@dataclass
class StructuredStats:
    """Counts of structured-output outcomes (share one per app or per purpose)."""

    requests: int = 0
    first_try: int = 0  # valid on the first answer
    repairs: int = 0  # repair attempts sent
    repaired: int = 0  # repair attempts that produced a valid value
    fallbacks: int = 0  # the default was returned
    llm_errors: int = 0  # calls that failed (network, server), counted within fallbacks too

    @property
    def fallback_rate(self) -> float:
        return self.fallbacks / self.requests if self.requests else 0.0


def extract_json_object(text: str) -> Any:
    """The first JSON object in ``text`` (inside code fences or after prose). Raises ValueError if there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
                continue
            return value
    raise ValueError("no JSON object found in the reply")


def parse_structured(text: str, schema: type[T]) -> T:
    """Validates the first JSON object of ``text`` against ``schema``. Raises ValueError/ValidationError."""
    return schema.model_validate(extract_json_object(text))


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors())[:800]
    return str(exc)[:800]


async def generate_structured(
    model: ChatModel,
    messages: list[ChatMessage] | tuple[ChatMessage, ...],
    schema: type[T],
    *,
    default: T,
    counter: StructuredStats | None = None,
    name: str | None = None,
    temperature: float | None = None,
    max_tokens: int = STRUCTURED_MAX_TOKENS,
    repair: bool = True,
) -> T:
    """Asks ``model`` for a ``schema`` value. Returns ``default`` when the model cannot give a valid one.

    ``name`` is the response_format name (default: the schema's class name, lower-case); the scripted model routes
    on it, so pass e.g. ``"vote"`` to let tests script votes separately from turns. ``max_tokens`` bounds each
    answer (and the repair). ``repair=False``: an invalid answer gives ``default`` at once (no second request).
    """
    stats = counter if counter is not None else StructuredStats()
    stats.requests += 1
    format_name = name or schema.__name__.lower()
    # The schema's title is the format name in every mode (a contract the test server's demo director reads).
    fmt = JsonSchemaFormat(name=format_name, schema_={**schema.model_json_schema(), "title": format_name})
    conversation = list(messages)
    for attempt in range(2 if repair else 1):
        request = ChatRequest(messages=tuple(conversation), response_format=fmt, temperature=temperature,
                              max_tokens=max_tokens)
        try:
            completion = await complete(model, request)
        except LLMError as exc:
            stats.llm_errors += 1
            stats.fallbacks += 1
            log.warning("%s: structured %s failed (%s); using the default", model.name, fmt.name, exc)
            return default
        text = completion.message.text
        try:
            value = parse_structured(text, schema)
        except (ValueError, ValidationError) as exc:
            if attempt == 0 and repair:
                stats.repairs += 1
                log.info("%s: invalid %s output, asking once for a repair: %s", model.name, fmt.name, _problem(exc))
                conversation += [
                    ChatMessage.assistant(text),
                    ChatMessage.user(REPAIR_PROMPT.format(problem=_problem(exc))),
                ]
                continue
            log.warning("%s: %s output %s; using the default", model.name, fmt.name,
                        "still invalid after a repair" if repair else "invalid (no repair asked)")
            break
        if attempt == 0:
            stats.first_try += 1
        else:
            stats.repaired += 1
        return value
    stats.fallbacks += 1
    return default
