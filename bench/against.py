"""Runs one benchmark script of this checkout and of another (a git worktree of the baseline revision) in turns,
and prints each figure of this checkout with its ratio to the same figure of the other, all in one run.

    git worktree add /tmp/parent <rev>
    xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python bench/against.py /tmp/parent bench/ui_lag.py --rounds 3
    git worktree remove /tmp/parent

Each round runs both checkouts' script once, alternating which goes first (a load spike on this shared machine then
hits both sides alike more often); a figure is the median over the rounds. Arguments after ``--`` go to the script.
The other checkout's own script runs: its code, its API.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import _report
from _report import report

# A figure's name may have spaces and a note in parentheses ("turn overhead p50 (3 instant voters)").
FIGURE = re.compile(r"^(?P<name>[A-Za-z0-9_][^:#]*): (?P<value>[-+0-9.eE]+|inf|nan) (?P<unit>\S+)")


def run_script(checkout: Path, script: str, args: list[str]) -> dict[str, tuple[float, str]]:
    """The figures ``script`` of ``checkout`` printed (name -> value, unit); its other lines are passed through."""
    result = subprocess.run([sys.executable, str(checkout / script), *args], cwd=checkout, capture_output=True,
                            text=True, check=False, env=_env(checkout))
    figures: dict[str, tuple[float, str]] = {}
    for line in result.stdout.splitlines():
        match = FIGURE.match(line)
        if match:
            figures[match["name"]] = (float(match["value"]), match["unit"])
        elif line.startswith("#"):
            print(f"# [{checkout.name}] {line.lstrip('# ')}", flush=True)
    if result.returncode != 0:
        raise RuntimeError(f"{script} failed in {checkout}: {result.stderr[-2000:]}")
    return figures


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, help="the other checkout (e.g. a worktree of the parent commit)")
    parser.add_argument("script", help="the benchmark, relative to a checkout (bench/ui_lag.py)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("args", nargs="*", help="arguments for the script (after --)")
    options = parser.parse_args()
    here, there = _report.REPO, options.baseline.resolve()
    label = there.name
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    units: dict[str, str] = {}
    for round_ in range(options.rounds):
        order = [(here, ours), (there, theirs)]
        for checkout, into in order if round_ % 2 == 0 else reversed(order):
            for name, (value, unit) in run_script(checkout, options.script, options.args).items():
                into.setdefault(name, []).append(value)
                units[name] = unit
        print(f"# round {round_ + 1} of {options.rounds} done", flush=True)
    for name, values in ours.items():
        if name not in theirs:
            report(name, statistics.median(values), units[name])
            continue
        report(name, statistics.median(values), units[name], f"{label}", statistics.median(theirs[name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
