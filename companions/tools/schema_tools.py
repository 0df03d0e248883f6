"""Tools described by a JSON Schema rather than a Python signature (an MCP server's tools, for one).

Arguments are checked against the schema with ``jsonschema`` before the call, and everything else (timeouts, error
results, hooks) is :class:`~companions.tools.functions.BaseTool`'s, so such a tool behaves for the model exactly like a
built-in one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from companions.tools.functions import BaseTool

ToolCallable = Callable[[dict[str, Any]], Awaitable[Any]]
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


class SchemaTool(BaseTool):
    """A tool from its name, description, JSON Schema (an ``object``) and an async callable taking the arguments.

    Args:
        call: Awaited with the validated arguments; its return value is rendered for the model, and a
            :class:`~companions.tools.functions.ToolFailed` it raises is shown with its own words.
        unavailable: Says why the tool cannot run right now (its server died, say), or None when it can.
    """

    def __init__(self, name: str, description: str, parameters: dict[str, Any] | None, call: ToolCallable, *,
                 timeout: float | None = None, origin: str = "", unavailable: Callable[[], str | None] | None = None,
                 ) -> None:
        import jsonschema  # ~60 ms to import: only once a companion has such tools
        from jsonschema.exceptions import SchemaError

        schema = dict(parameters) if parameters else dict(EMPTY_OBJECT)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            validator_class.check_schema(schema)
        except SchemaError as err:
            raise ValueError(f"tool {name}: its input schema is not valid JSON Schema ({err.message})") from None
        self.name = name
        self.timeout = timeout
        self.origin = origin or self.origin
        self._description = description
        self._parameters = schema
        self._validator = validator_class(schema)
        self._call = call
        self._why_unavailable = unavailable

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    def _unavailable(self) -> str | None:
        return self._why_unavailable() if self._why_unavailable is not None else None

    def _validate(self, data: dict[str, Any]) -> dict[str, Any] | str:
        problems = [
            f"{'.'.join(str(p) for p in error.absolute_path) or '<arguments>'}: {error.message}"
            for error in sorted(self._validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
        ]
        return "; ".join(problems) if problems else data

    async def _invoke(self, arguments: dict[str, Any]) -> Any:
        return await self._call(arguments)
