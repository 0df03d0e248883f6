"""Companion Card events: the model fills the card's parameter schema, CEL conditions pick the turn's instructions.

Every condition is evaluated by the ``common-expression-language`` package (a compiled CEL program; never Python
``eval``). A condition that fails at runtime (an unknown variable, a type error, a non-boolean result) is reported
as an :class:`EventProblem` and skipped; the turn goes on with the other conditions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from companions.cards.card import Condition, Events, localized
from companions.cards.cel_runtime import cel
from companions.llm.structured import StructuredStats, generate_structured
from companions.llm.types import ChatMessage, ChatModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Instruction:
    text: str
    tool: str | None


@dataclass(frozen=True)
class EventProblem:
    expression: str
    reason: str


@dataclass
class Guidance:
    """What the events decided for one turn."""

    params: dict[str, Any]
    instructions: list[Instruction] = field(default_factory=list)
    problems: list[EventProblem] = field(default_factory=list)
    params_fell_back: bool = False

    @property
    def texts(self) -> list[str]:
        return [i.text for i in self.instructions]


def _program(expression: str) -> cel.Program:
    return cel.compile(expression)


def evaluate_conditions(
    conditions: Sequence[Condition], params: dict[str, Any], language: str
) -> tuple[list[Instruction], list[EventProblem]]:
    """Evaluates every condition against ``params``; returns the instructions of the true ones and the problems."""
    chosen: list[Instruction] = []
    problems: list[EventProblem] = []
    for condition in conditions:
        try:
            value = _program(condition.expression).execute(params)
        except Exception as err:  # CEL raises ValueError, RuntimeError, TypeError ...: all are a broken condition
            problems.append(EventProblem(condition.expression, f"{type(err).__name__}: {err}"))
            continue
        if not isinstance(value, bool):
            problems.append(EventProblem(condition.expression, f"not a boolean but {type(value).__name__} {value!r}"))
            continue
        if value:
            chosen.extend(Instruction(localized(e.instruction, language), e.tool) for e in condition.execute)
    for problem in problems:
        log.warning("event condition %r skipped: %s", problem.expression, problem.reason)
    return chosen, problems


def default_params(schema: dict[str, Any]) -> dict[str, Any]:
    """A safe filling of ``schema`` when the model gives none: false, zero, empty, or the first enum value."""
    values: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if not isinstance(prop, dict):
            continue
        if "default" in prop:
            values[name] = prop["default"]
        elif prop.get("enum"):
            values[name] = prop["enum"][0]
        else:
            values[name] = {"boolean": False, "integer": 0, "number": 0.0, "string": "", "array": [],
                            "object": {}}.get(str(prop.get("type")))
    return values


_TYPES: dict[str, Any] = {"boolean": bool, "integer": int, "number": float, "string": str,
                          "array": list[Any], "object": dict[str, Any]}


def params_model(schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model of a card's (flat) params schema, so that structured output validates it."""
    required = set(schema.get("required", []))
    defaults = default_params(schema)
    fields: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if not isinstance(prop, dict):
            continue
        kind: Any = _TYPES.get(str(prop.get("type")), Any)
        if prop.get("enum"):
            kind = Literal[tuple(prop["enum"])]
        description = prop.get("description")
        default = ... if name in required else defaults.get(name)
        fields[name] = (kind, Field(default, description=description))
    return create_model("EventParams", __config__=ConfigDict(extra="ignore"), **fields)


async def fill_params(
    model: ChatModel,
    context: Sequence[ChatMessage],
    schema: dict[str, Any],
    instruction: str,
    *,
    counter: StructuredStats | None = None,
    repair: bool = True,
) -> tuple[dict[str, Any], bool]:
    """Asks the model to fill ``schema`` from ``context`` (one repair unless ``repair`` is False, then a safe
    default).

    Returns ``(params, fell_back)``; never raises for a model's failure.
    """
    shape = params_model(schema)
    fallback = shape.model_validate(default_params(schema))
    # The schema itself reaches the model with the structured request (response_format, or written into the prompt
    # where the server cannot take it): written here too, it cost a small local server ~150 prompt tokens more.
    messages = (*context, ChatMessage.system(instruction))
    value = await generate_structured(model, messages, shape, default=fallback, counter=counter,
                                      name="event_params", repair=repair)
    return value.model_dump(), value is fallback


async def decide(
    model: ChatModel,
    context: Sequence[ChatMessage],
    events: Events,
    language: str,
    fill_instruction: str,
    *,
    counter: StructuredStats | None = None,
    repair: bool = True,
) -> Guidance:
    """Fills the parameters and evaluates every condition: the guidance for this turn."""
    if not events.conditions:
        return Guidance(params={})
    params, fell_back = await fill_params(model, context, events.params, fill_instruction, counter=counter,
                                          repair=repair)
    instructions, problems = evaluate_conditions(events.conditions, params, language)
    return Guidance(params, instructions, problems, fell_back)
