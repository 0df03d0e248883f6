"""Plugin actions and knowledge: tools that installed Python packages offer through entry points.

A package names its tools in the ``madoi.actions`` or ``madoi.knowledge`` entry point group (``pyproject.toml``)::

    [project.entry-points."madoi.actions"]
    lanterns = "madoi_lanterns:tools"

and a card lists the entry point's name beside the built-in ones (``actions: [speak, lanterns]``). The object the
entry point names is a tool (``@tool``), a list of tools, or a callable that takes a :class:`PluginContext` and
returns either (for tools that keep state per companion). A plugin that is missing, fails to import or returns
something else is reported with its name, and the companion gets its other tools.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Final, Literal, TypeAlias

from companions.tools.functions import BaseTool, ToolRegistry

log = logging.getLogger(__name__)

PluginKind: TypeAlias = Literal["actions", "knowledge"]
GROUPS: Final[dict[PluginKind, str]] = {"actions": "madoi.actions", "knowledge": "madoi.knowledge"}


@dataclass(frozen=True)
class PluginContext:
    """What a plugin's factory learns about the companion it makes tools for."""

    companion_id: str
    language: str


class PluginError(Exception):
    """A plugin that could not give tools, worded for the user (it names the plugin)."""


def _entry_point(kind: PluginKind, name: str) -> EntryPoint:
    found = entry_points(group=GROUPS[kind], name=name)
    for point in found:
        return point
    raise PluginError(f"no installed package offers the {kind[:-1] if kind == 'actions' else kind} plugin {name!r} "
                      f"(entry point group {GROUPS[kind]})")


def _as_tools(value: object) -> list[BaseTool] | None:
    if isinstance(value, BaseTool):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
        if all(isinstance(item, BaseTool) for item in items):
            return [item for item in items if isinstance(item, BaseTool)]
    return None


def plugin_tools(kind: PluginKind, name: str, context: PluginContext) -> list[BaseTool]:
    """The tools of plugin ``name``.

    Raises:
        PluginError: it is not installed, fails to load, or gives something that is not tools.
    """
    point = _entry_point(kind, name)
    where = f"{kind} plugin {name!r} ({point.value})"
    try:
        value = point.load()
        tools = _as_tools(value)
        if tools is None and callable(value):
            tools = _as_tools(value(context))
    except Exception as err:  # a broken plugin is reported, never fatal
        raise PluginError(f"{where} failed to load: {type(err).__name__}: {err}") from err
    if not tools:
        raise PluginError(f"{where} gave no tools (it must name a tool, a list of tools, or a factory of them)")
    for t in tools:
        t.origin = f"plugin:{name}"
    return tools


def add_plugins(registry: ToolRegistry, kind: PluginKind, names: Sequence[str], context: PluginContext,
                report: Callable[[str], None]) -> list[BaseTool]:
    """Adds the tools of the plugins ``names`` to ``registry``; each problem goes to ``report``."""
    added: list[BaseTool] = []
    for name in names:
        try:
            tools = plugin_tools(kind, name, context)
        except PluginError as err:
            log.warning("%s: %s", context.companion_id, err)
            report(str(err))
            continue
        for t in tools:
            if t.name in registry:
                report(f"{kind} plugin {name!r}: its tool {t.name!r} clashes with another tool; left out")
                continue
            registry.add(t)
            added.append(t)
    return added
