"""A script of this folder loaded as a module, for the tests and benchmarks that use its paths and helpers
(``scripts/real_model.py``'s server, ``kokoro_model.py``'s and ``whisper_model.py``'s files): once per process, under
the name ``<script>_script``, registered in ``sys.modules`` (its dataclasses look their module up there)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent


def load_script(name: str) -> ModuleType:
    module_name = f"{name}_script"
    if (loaded := sys.modules.get(module_name)) is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(module_name, SCRIPTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
