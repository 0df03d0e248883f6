"""The house has no import circles: every module of app/, ui/ and companions/ can be read without the ones that
import it. TYPE_CHECKING and function-level imports count too: a circle there still ties two modules
into one concept."""

from __future__ import annotations

import graphlib

import grimp


def _circle(graph: grimp.ImportGraph) -> list[str] | None:
    """One circle of imports (``[a, b, ..., a]``), or None when the modules can be ordered (graphlib's topological
    sort of grimp's import graph)."""
    order = graphlib.TopologicalSorter({module: graph.find_modules_directly_imported_by(module)
                                        for module in sorted(graph.modules)})
    try:
        order.prepare()
    except graphlib.CycleError as err:
        return list(err.args[1])
    return None


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("app", "ui", "companions", include_external_packages=False)
    assert _circle(graph) is None


def test_a_circle_is_found() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.y", imported="a.z")
    circle = _circle(graph)
    assert circle is not None
    assert circle[0] == circle[-1]
    assert set(circle) == {"a.x", "a.y"}
