"""The CEL engine (the ``common-expression-language`` package's compiled extension) without its command line.

``import cel`` runs the package's ``__init__``, which imports ``cel.cli`` and with it prompt_toolkit and rich:
about a quarter of a second of Madoi's start-up spent on a REPL it never uses. :func:`load` imports only the
extension module ``cel.cel`` (the same object ``cel.compile`` refers to after a full import) and leaves no trace
in ``sys.modules`` but that module, so a later ``import cel`` still works normally.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any


def load() -> Any:
    """The ``cel.cel`` extension module: ``compile(expr) -> Program``, ``Program.execute(context)``."""
    loaded = sys.modules.get("cel.cel")
    if loaded is not None:
        return loaded
    if "cel" in sys.modules:
        return importlib.import_module("cel.cel")
    spec = importlib.util.find_spec("cel")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("the CEL engine is missing: pip install common-expression-language")
    package = types.ModuleType("cel")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules["cel"] = package  # only while the extension loads; the real package replaces it on `import cel`
    try:
        return importlib.import_module("cel.cel")
    finally:
        del sys.modules["cel"]


cel = load()
