"""Tools: plain Python functions (sync or async, functions or methods) offered to the model.

The :func:`tool` decorator reads a function once: its name, the summary of its (Google-style) docstring, and a
pydantic model of its parameters, from which the JSON Schema comes. Per-argument descriptions come from the
docstring's ``Args:`` section, from ``Annotated[str, "description"]`` or from a pydantic ``Field``.

Running a tool never raises into the turn loop (only cancellation travels): invalid JSON, arguments that fail
validation, an exception in the tool and a timeout all become a :class:`ToolResult` with ``is_error`` set, worded
so that the model can read it and try again. Sync tools run in an executor thread, because they may block.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Final, get_args, get_origin, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from companions.llm.types import ToolSpec

_SECTION: Final = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?)\s*:\s*$")
_ARG_LINE: Final = re.compile(r"^(\s*)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced, as the text the model will read."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class _Docstring:
    summary: str
    args: dict[str, str]


def _parse_docstring(doc: str | None) -> _Docstring:
    """Splits a Google-style docstring into its description and the per-argument texts of ``Args:``."""
    if not doc:
        return _Docstring("", {})
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent = -1
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            current = None
            arg_indent = -1
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _ARG_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if match and (arg_indent < 0 or indent <= arg_indent):
                arg_indent = indent
                current = match.group(2)
                args[current] = match.group(3).strip()
            elif current is not None and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return _Docstring("\n".join(summary).strip(), args)


def _field_for(param: inspect.Parameter, annotation: Any, doc_description: str | None) -> tuple[Any, Any]:
    """The ``(annotation, FieldInfo)`` pair for one parameter, merging every source of a description."""
    description = doc_description
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        kept = []
        for extra in extras:
            if isinstance(extra, str):
                description = extra
            else:
                kept.append(extra)
        annotation = Annotated[tuple([base, *kept])] if kept else base
    default = param.default
    if isinstance(default, FieldInfo):
        if description and not default.description:
            default.description = description
        return annotation, default
    if default is inspect.Parameter.empty:
        return annotation, Field(description=description)
    return annotation, Field(default=default, description=description)


def _strip_titles(schema: Any) -> Any:
    """Pydantic titles repeat the field names; models read better schemas without them."""
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "ok"
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class Tool:
    """One tool: its metadata, the pydantic model of its arguments and the callable behind it.

    A tool made from a method is a descriptor: ``instance.method`` is a :class:`Tool` bound to that instance.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        _bound: bool = False,
        _args_model: type[BaseModel] | None = None,
        _method: bool | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.timeout = timeout
        doc = _parse_docstring(fn.__doc__)
        self.description = description if description is not None else doc.summary
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        self._method = _method if _method is not None else bool(params and params[0].name in ("self", "cls"))
        self._bound = _bound
        if _args_model is None:
            _args_model = self._build_model(fn, params[1:] if self._method and not _bound else params, doc)
        self.args_model = _args_model
        self.parameters: dict[str, Any] = _strip_titles(_args_model.model_json_schema())
        self._is_async = inspect.iscoroutinefunction(fn)
        functools.update_wrapper(self, fn)

    def _build_model(self, fn: Callable[..., Any], params: list[inspect.Parameter], doc: _Docstring) -> type[BaseModel]:
        try:
            hints = get_type_hints(fn, include_extras=True)
        except (NameError, TypeError):
            hints = {}
        fields: dict[str, Any] = {}
        for param in params:
            if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(f"tool {self.name}: *args/**kwargs cannot be described to a model")
            annotation = hints.get(param.name, param.annotation)
            if annotation is inspect.Parameter.empty:
                annotation = str
            fields[param.name] = _field_for(param, annotation, doc.args.get(param.name))
        model_name = "".join(part.capitalize() for part in self.name.split("_")) + "Args"
        return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)

    def __get__(self, instance: object, owner: type | None = None) -> Tool:
        if instance is None or not self._method or self._bound:
            return self
        bound = Tool(
            self.fn.__get__(instance, owner),
            name=self.name,
            description=self.description,
            timeout=self.timeout,
            _bound=True,
            _args_model=self.args_model,
            _method=True,
        )
        # Cache per instance so that registries and identity checks see one object (not possible with __slots__).
        with contextlib.suppress(AttributeError):
            instance.__dict__[self.fn.__name__] = bound
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    async def run(self, arguments: str | dict[str, Any], call_id: str = "") -> ToolResult:
        """Validates ``arguments`` (raw JSON text or a dict) and runs the tool. Never raises but for cancellation."""
        if self._method and not self._bound:
            return self._error(call_id, f"tool {self.name} is a method that was not bound to an object")
        if isinstance(arguments, str):
            try:
                data = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as err:
                return self._error(call_id, f"the arguments are not valid JSON ({err.msg} at {err.pos}); "
                                            f"send a JSON object matching the schema")
        else:
            data = arguments
        if not isinstance(data, dict):
            return self._error(call_id, "the arguments must be a JSON object")
        try:
            validated = self.args_model.model_validate(data)
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '<arguments>'}: {e['msg']}"
                for e in err.errors(include_url=False)
            )
            return self._error(call_id, f"invalid arguments: {problems}")
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        try:
            async with asyncio.timeout(self.timeout):
                if self._is_async:
                    value = await self.fn(**kwargs)
                else:
                    loop = asyncio.get_running_loop()
                    value = await loop.run_in_executor(None, functools.partial(self.fn, **kwargs))
        except TimeoutError:
            # A sync tool's thread cannot be stopped; it finishes in the background and its result is dropped.
            return self._error(call_id, f"timed out after {self.timeout:g} s")
        except Exception as err:  # a failing tool is a result the model reads, never a crash
            return self._error(call_id, f"{type(err).__name__}: {err}")
        return ToolResult(call_id=call_id, name=self.name, content=_render(value))

    def _error(self, call_id: str, reason: str) -> ToolResult:
        return ToolResult(call_id=call_id, name=self.name, content=f"Error in {self.name}: {reason}", is_error=True)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, timeout: float | None = None
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turns a function or method into a :class:`Tool`. Usable bare (``@tool``) or with options.

    Args:
        fn: The function (given when used bare).
        name: The tool's name for the model; the function's name by default.
        description: Overrides the docstring summary.
        timeout: Seconds after which the call gives up and reports a timeout to the model.
    """
    if fn is not None:
        return Tool(fn, name=name, description=description, timeout=timeout)

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, description=description, timeout=timeout)

    return wrap


class ToolRegistry:
    """The tools one companion may use, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t

    def add_object(self, obj: object, names: Iterable[str] | None = None) -> None:
        """Registers the tool methods of ``obj`` (only those in ``names`` when given)."""
        wanted = set(names) if names is not None else None
        for attr in dir(type(obj)):
            candidate = inspect.getattr_static(type(obj), attr, None)
            if isinstance(candidate, Tool) and (wanted is None or candidate.name in wanted):
                self.add(getattr(obj, attr))

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    async def run(self, name: str, arguments: str | dict[str, Any], call_id: str = "") -> ToolResult:
        """Runs tool ``name``; an unknown name is an error result listing the tools that exist."""
        t = self._tools.get(name)
        if t is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(call_id, name, f"Error: there is no tool named {name!r} (tools: {known})", True)
        return await t.run(arguments, call_id)
