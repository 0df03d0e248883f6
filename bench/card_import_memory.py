"""The card importer's peak memory: ``madoi companions import`` on hostile and on many cards, each in a child process.

Cases, in one run: one card (the baseline: Python, pydantic and the app's modules), the zTXt bomb (a
6.5 MB picture with a V3 card and 400 zTXt chunks, each 16 MB of zeros squeezed into 16 KB, which once took 5.6 GB)
and a folder of ``--cards`` V2 JSON cards (10,000 by default, each with a 2,000-character description). The peak is
the child's own resident peak (``VmHWM`` in /proc/self/status, read as the command ends: ``ru_maxrss`` of a child
would count the parent's peak before exec), with the child's address space capped at 3 GB as the tests cap it.

Run: ``python bench/card_import_memory.py [--cards 10000]`` (note ``uptime`` with the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from _report import REPO, report

from tests.security.hostile_cards import bomb_png, measured_madoi


def import_peak(home: Path, source: Path) -> tuple[float, float, int]:
    """(peak resident MB, seconds, exit code) of ``madoi companions import SOURCE`` in a capped child."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MADOI_")}
    env.update({"MADOI_HOME": str(home), "PYTHONPATH": str(REPO)})
    started = time.perf_counter()
    done, peak_kib = measured_madoi(env, "companions", "import", str(source))
    return peak_kib / 1024, time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000, help="cards in the folder case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="madoi-card-import-") as work:
        root = Path(work)
        one = root / "one.json"
        one.write_text(json.dumps({"spec": "chara_card_v2", "data": {"name": "Firefly", "description": "x"}}),
                       encoding="utf-8")
        bomb = root / "hotaru.png"
        bomb.write_bytes(bomb_png("ccv3", [f"comment{i}" for i in range(400)]))
        folder = root / "cards"
        folder.mkdir()
        for i in range(args.cards):
            card = {"spec": "chara_card_v2", "data": {"name": f"Firefly {i}", "description": "x" * 2_000}}
            (folder / f"firefly-{i}.json").write_text(json.dumps(card), encoding="utf-8")
        base_mb, base_s, code = import_peak(root / "home-one", one)
        report("import of 1 card: peak RSS", base_mb, "MB")
        report("import of 1 card: time", base_s, "s")
        assert code == 0, code
        mb, seconds, code = import_peak(root / "home-bomb", bomb)
        report(f"import of the zTXt bomb ({bomb.stat().st_size / 1e6:.1f} MB, 400 zTXt chunks): peak RSS", mb, "MB",
               "1 card", base_mb)
        report("import of the zTXt bomb: time", seconds, "s", "1 card", base_s)
        assert code == 0, code
        mb, seconds, code = import_peak(root / "home-folder", folder)
        report(f"import of a folder of {args.cards:,} cards: peak RSS", mb, "MB", "1 card", base_mb)
        report(f"import of a folder of {args.cards:,} cards: time", seconds, "s", "1 card", base_s)
        imported = len(list((root / "home-folder" / "companions").glob("firefly-*.yaml")))
        print(f"cards imported: {imported} of {args.cards} (exit {code})")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
