"""The benchmark convention: one script per figure, each line ``name: value unit (ratio vs baseline)``.

Absolute times do not hold on a shared, noisy machine, so every figure is reported next to a named baseline
measured in the same run, and the ratio is what to compare across runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def report(name: str, value: float, unit: str, baseline_name: str | None = None,
           baseline_value: float | None = None) -> str:
    """Prints and returns one benchmark line."""
    line = f"{name}: {value:.4g} {unit}"
    if baseline_name is not None and baseline_value is not None:
        ratio = value / baseline_value if baseline_value else float("inf")
        line += f" ({ratio:.2f}x vs {baseline_name} {baseline_value:.4g} {unit})"
    print(line, flush=True)
    return line


def real_model_script() -> ModuleType:
    """scripts/real_model.py (stdlib only, outside any package): the real llama-cpp-python server and 0.5B model."""
    from scripts.script_modules import load_script

    return load_script("real_model")
