"""Tools: plain Python functions (sync or async, functions or methods) offered to the model.

The :func:`tool` decorator reads a function: its name, the description of its (Google-style) docstring, and a
pydantic model of its parameters, from which the JSON Schema comes. The docstring is parsed by griffe, when the
tool is first described (so importing a module full of tools stays cheap); per-argument descriptions come from its
``Args:`` section, from ``Annotated[str, "description"]`` or from a pydantic ``Field``.

Every kind of tool (:class:`Tool` here, tools described by a JSON Schema such as an MCP server's, in
``companions/tools/schema_tools.py``) runs through :meth:`BaseTool.run`, which never raises into the turn loop (only
cancellation travels): invalid JSON, arguments that fail validation, an exception in the tool and a timeout all
become a :class:`ToolResult` with ``is_error`` set, worded so that the model can read it and try again. Sync tools
run in an executor thread, because they may block.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, get_args, get_origin, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from companions.common.untrusted_data import Unreadable, parse_json
from companions.llm.types import ToolSpec
from companions.trust.policy import Capability

BUILT_IN: Final = "built-in"


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced, as the text the model will read."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    said_by: tuple[str, ...] = ()  # whose words it holds (:class:`Said`): they are in the turn from then on


@dataclass(frozen=True)
class Said:
    """What a tool returns when its text holds words others said (a memory tool's recalled lines): ``by`` are the
    ids of their speakers (``from``), so the turn answers to each as to their line in the prompt (companions/trust:
    a recalled peer's line is the peer's words; ``imported`` for a line of an imported conversation)."""

    text: str
    by: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Docstring:
    summary: str
    args: dict[str, str] = field(default_factory=dict)


def _parse_docstring(doc: str | None) -> _Docstring:
    """The description (the text before the first section) and the ``Args:`` texts of a Google-style docstring."""
    if not doc or not doc.strip():
        return _Docstring("")
    from griffe import Docstring, DocstringSectionKind  # ~60 ms to import: only once a tool is first described

    sections = Docstring(inspect.cleandoc(doc), parser="google").parse(warnings=False)
    summary = ""
    if sections and sections[0].kind is DocstringSectionKind.text:
        summary = str(sections[0].value).strip()
    args: dict[str, str] = {}
    for section in sections:
        if section.kind is DocstringSectionKind.parameters:
            for parameter in section.value:
                args[parameter.name] = " ".join(parameter.description.split())
    return _Docstring(summary, args)


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


def render(value: Any) -> str:
    """A tool's return value as the text the model reads."""
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


class BaseTool:
    """What every tool shares: a name, a description, a JSON Schema of its arguments, a timeout, where it comes
    from (``origin``: built-in, ``mcp:<server>``, ``plugin:<name>``), what of the user's it reaches (``needs``:
    the camera, the user's files, past conversations; see :attr:`capabilities`), and :meth:`run`.

    Subclasses say how arguments are validated (:meth:`_validate`) and how the tool is called (:meth:`_invoke`).
    """

    name: str
    timeout: float | None
    origin: str = BUILT_IN
    needs: frozenset[Capability] = frozenset()

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What a turn started from outside the window must be allowed before this tool runs (the worker's gate):
        what it ``needs``, and for a tool from elsewhere (an MCP server, a plugin), tools from elsewhere."""
        return self.needs if self.origin == BUILT_IN else self.needs | {Capability.TOOLS}

    @property
    def description(self) -> str:
        raise NotImplementedError

    @property
    def parameters(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def _validate(self, data: dict[str, Any]) -> dict[str, Any] | str:
        """The arguments to call with, or why ``data`` does not fit the schema."""
        raise NotImplementedError

    async def _invoke(self, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _unavailable(self) -> str | None:
        """Why the tool cannot run now (None when it can)."""
        return None

    async def run(self, arguments: str | dict[str, Any], call_id: str = "") -> ToolResult:
        """Validates ``arguments`` (raw JSON text or a dict) and runs the tool. Never raises but for cancellation."""
        unavailable = self._unavailable()
        if unavailable is not None:
            return self._error(call_id, unavailable)
        if isinstance(arguments, str):
            try:  # a model's text, which what it read may steer: any depth is an answer here, never an error
                data = parse_json(arguments) if arguments.strip() else {}
            except Unreadable as err:
                return self._error(call_id, f"the arguments are not valid JSON ({err}); "
                                            f"send a JSON object matching the schema")
        else:
            data = arguments
        if not isinstance(data, dict):
            return self._error(call_id, "the arguments must be a JSON object")
        validated = self._validate(data)
        if isinstance(validated, str):
            return self._error(call_id, f"invalid arguments: {validated}")
        try:
            async with asyncio.timeout(self.timeout):
                value = await self._invoke(validated)
        except TimeoutError:
            # A sync tool's thread cannot be stopped; it finishes in the background and its result is dropped.
            return self._error(call_id, f"timed out after {self.timeout:g} s")
        except ToolFailed as err:  # the tool's own words, e.g. an MCP server's error result
            return self._error(call_id, str(err))
        except Exception as err:  # a failing tool is a result the model reads, never a crash
            return self._error(call_id, f"{type(err).__name__}: {err}")
        if isinstance(value, Said):
            return ToolResult(call_id=call_id, name=self.name, content=value.text, said_by=tuple(value.by))
        return ToolResult(call_id=call_id, name=self.name, content=render(value))

    def _error(self, call_id: str, reason: str) -> ToolResult:
        return ToolResult(call_id=call_id, name=self.name, content=f"Error in {self.name}: {reason}", is_error=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ToolFailed(Exception):
    """Raised by a tool whose failure is already worded for the model (shown as is, without the exception type)."""


class Tool(BaseTool):
    """One tool made from a Python callable: the pydantic model of its arguments and the callable behind it.

    A tool made from a method is a descriptor: ``instance.method`` is a :class:`Tool` bound to that instance.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        origin: str = BUILT_IN,
        needs: Iterable[Capability] = (),
        _bound: bool = False,
        _unbound: Tool | None = None,
        _method: bool | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.timeout = timeout
        self.origin = origin
        self.needs = frozenset(needs)
        self._description = description
        self._params = list(inspect.signature(fn).parameters.values())
        first = self._params[0].name if self._params else ""
        self._method = _method if _method is not None else first in ("self", "cls")
        self._bound = _bound
        self._unbound = _unbound  # a bound method's tool shares the description and model of its unbound one
        self._is_async = inspect.iscoroutinefunction(fn)
        functools.update_wrapper(self, fn)

    @functools.cached_property
    def _doc(self) -> _Docstring:
        return _parse_docstring(self.fn.__doc__)

    @property
    def description(self) -> str:
        if self._unbound is not None:
            return self._unbound.description
        return self._description if self._description is not None else self._doc.summary

    @functools.cached_property
    def args_model(self) -> type[BaseModel]:
        if self._unbound is not None:
            return self._unbound.args_model
        return self._build_model(self._params[1:] if self._method and not self._bound else self._params)

    @functools.cached_property
    def parameters(self) -> dict[str, Any]:
        schema: dict[str, Any] = _strip_titles(self.args_model.model_json_schema())
        return schema

    def _build_model(self, params: list[inspect.Parameter]) -> type[BaseModel]:
        try:
            hints = get_type_hints(self.fn, include_extras=True)
        except (NameError, TypeError):
            hints = {}
        fields: dict[str, Any] = {}
        for param in params:
            if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(f"tool {self.name}: *args/**kwargs cannot be described to a model")
            annotation = hints.get(param.name, param.annotation)
            if annotation is inspect.Parameter.empty:
                annotation = str
            fields[param.name] = _field_for(param, annotation, self._doc.args.get(param.name))
        model_name = "".join(part.capitalize() for part in self.name.split("_")) + "Args"
        return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)

    def __get__(self, instance: object, owner: type | None = None) -> Tool:
        if instance is None or not self._method or self._bound:
            return self
        bound = Tool(
            self.fn.__get__(instance, owner),
            name=self.name,
            timeout=self.timeout,
            origin=self.origin,
            needs=self.needs,
            _bound=True,
            _unbound=self,
            _method=True,
        )
        # Cache per instance so that registries and identity checks see one object (not possible with __slots__).
        with contextlib.suppress(AttributeError):
            instance.__dict__[self.fn.__name__] = bound
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def _unavailable(self) -> str | None:
        if self._method and not self._bound:
            return f"tool {self.name} is a method that was not bound to an object"
        return None

    def _validate(self, data: dict[str, Any]) -> dict[str, Any] | str:
        try:
            validated = self.args_model.model_validate(data)
        except ValidationError as err:
            return "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '<arguments>'}: {e['msg']}"
                for e in err.errors(include_url=False)
            )
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    async def _invoke(self, arguments: dict[str, Any]) -> Any:
        if self._is_async:
            return await self.fn(**arguments)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(self.fn, **arguments))


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, timeout: float | None = None,
    needs: Iterable[Capability] = (),
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    needs: Iterable[Capability] = (),
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turns a function or method into a :class:`Tool`. Usable bare (``@tool``) or with options.

    Args:
        fn: The function (given when used bare).
        name: The tool's name for the model; the function's name by default.
        description: Overrides the docstring summary.
        timeout: Seconds after which the call gives up and reports a timeout to the model.
        needs: What of the user's the tool reaches (the camera, the user's files, past conversations): a turn
            started from outside the window must be allowed it (companions/trust/policy.py).
    """
    if fn is not None:
        return Tool(fn, name=name, description=description, timeout=timeout, needs=needs)

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, description=description, timeout=timeout, needs=needs)

    return wrap


class ToolRegistry:
    """The tools one companion may use, by name."""

    def __init__(self, tools: Iterable[BaseTool] = ()) -> None:
        self._tools: dict[str, BaseTool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: BaseTool) -> None:
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)

    def add_object(self, obj: object, names: Iterable[str] | None = None) -> None:
        """Registers the tool methods of ``obj`` (only those in ``names`` when given)."""
        wanted = set(names) if names is not None else None
        for attr in dir(type(obj)):
            candidate = inspect.getattr_static(type(obj), attr, None)
            if isinstance(candidate, Tool) and (wanted is None or candidate.name in wanted):
                self.add(getattr(obj, attr))

    def get(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[BaseTool]:
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
