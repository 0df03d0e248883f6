"""The @tool decorator: schema from signature and docstring, validation, errors, timeouts, sync tools, methods."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Annotated, Literal

import pytest
from pydantic import Field

from companions.tools.functions import Tool, ToolRegistry, tool


@tool
def weather(city: Annotated[str, "The city name"], days: int = 1, unit: Literal["c", "f"] = "c") -> dict[str, object]:
    """Tells the weather forecast.

    Args:
        city: overridden by the Annotated description.
        days (int): How many days ahead,
            counted from today.
        unit: Celsius or Fahrenheit.

    Returns:
        The forecast.
    """
    return {"city": city, "days": days, "unit": unit}


def test_schema_and_descriptions_come_from_signature_and_docstring() -> None:
    spec = weather.spec
    assert spec.name == "weather"
    assert spec.description == "Tells the weather forecast."
    props = spec.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "The city name"}
    assert props["days"]["description"] == "How many days ahead, counted from today."
    assert props["days"]["default"] == 1
    assert props["unit"]["enum"] == ["c", "f"]
    assert spec.parameters["required"] == ["city"]


def test_pydantic_field_descriptions_and_options() -> None:
    @tool(name="find", description="Finds things.", timeout=1.5)
    async def _find(query: str = Field(description="what to find", min_length=1)) -> str:
        return query

    assert isinstance(_find, Tool)
    assert _find.name == "find"
    assert _find.timeout == 1.5
    assert _find.spec.parameters["properties"]["query"]["description"] == "what to find"


async def test_arguments_are_validated_before_the_call() -> None:
    calls: list[str] = []

    @tool
    async def record(n: int) -> str:
        """Records."""
        calls.append("called")
        return "ok"

    bad = await record.run('{"n": "many"}', "c1")
    assert bad.is_error
    assert "n:" in bad.content
    assert calls == []
    extra = await record.run({"n": 1, "m": 2})
    assert extra.is_error
    assert "m:" in extra.content
    good = await record.run('{"n": "3"}')
    assert not good.is_error
    assert calls == ["called"]


async def test_exceptions_and_timeouts_become_results() -> None:
    @tool
    async def boom() -> str:
        """Fails."""
        raise ValueError("the disk is on fire")

    @tool(timeout=0.05)
    async def sleepy() -> str:
        """Sleeps forever."""
        await asyncio.Event().wait()
        return "never"

    failed = await boom.run("{}")
    assert failed.is_error
    assert "ValueError: the disk is on fire" in failed.content
    timed_out = await sleepy.run("")
    assert timed_out.is_error
    assert "timed out after 0.05 s" in timed_out.content


async def test_sync_tools_run_in_a_thread_and_do_not_block_the_loop() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool
    def blocking(seconds: float) -> str:
        """Blocks."""
        seen.append(threading.get_ident())
        time.sleep(seconds)
        return "done"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    result = await blocking.run({"seconds": 0.2})
    ticking.cancel()
    assert result.content == "done"
    assert seen[0] != loop_thread
    assert ticks >= 5, "the loop was blocked while the sync tool ran"


class Counter:
    def __init__(self, start: int) -> None:
        self.value = start

    @tool
    async def add(self, amount: Annotated[int, "How much to add"]) -> int:
        """Adds to the counter."""
        self.value += amount
        return self.value

    @tool
    def reset(self) -> str:
        """Resets the counter."""
        self.value = 0
        return "reset"


async def test_methods_become_tools_bound_to_their_instance() -> None:
    a, b = Counter(1), Counter(10)
    assert "self" not in a.add.spec.parameters["properties"]
    assert a.add is a.add
    assert (await a.add.run({"amount": 2})).content == "3"
    assert (await b.add.run({"amount": 2})).content == "12"
    registry = ToolRegistry()
    registry.add_object(a, ["add"])
    assert registry.names == ["add"]
    assert (await registry.run("add", '{"amount": 1}')).content == "4"
    missing = await registry.run("reset", "{}")
    assert missing.is_error
    assert "tools: add" in missing.content


def test_registry_rejects_duplicate_names() -> None:
    registry = ToolRegistry([weather])
    with pytest.raises(ValueError, match="already registered"):
        registry.add(weather)
    assert [s.name for s in registry.specs()] == ["weather"]


def test_docstrings_are_read_as_google_style_by_a_parser() -> None:
    """griffe reads what a hand-made parser missed: the ``Params:`` header, a type with parentheses, and text
    sections after the arguments that are not part of the description."""

    @tool
    def lookup(term: str, fields: tuple[str, ...] = ()) -> str:
        """Looks a term up in the glossary.

        Params:
            term (str): The word to look up,
                in any language.
            fields (tuple(str)): Which fields to return.

        Note:
            Slow on the first call.
        """
        return term

    assert lookup.description == "Looks a term up in the glossary."
    props = lookup.spec.parameters["properties"]
    assert props["term"]["description"] == "The word to look up, in any language."
    assert props["fields"]["description"] == "Which fields to return."
