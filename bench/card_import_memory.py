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
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from _report import REPO, report

from companions.cards.png_text import solid_png

ADDRESS_SPACE = 3 * 1024**3
_MEASURED = """
import pathlib, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from app.main import main
try:
    code = main(sys.argv[1:])
finally:
    status = pathlib.Path("/proc/self/status").read_text().splitlines()
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print(f"peak-rss-kib {{peak}}", file=sys.stderr)
sys.exit(code)
"""
CARD = {"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Hotaru", "description": "A firefly who likes summer nights.", "first_mes": "Hello!"}}


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def bomb_png(chunks: int = 400) -> bytes:
    """A picture with a real V3 card (``ccv3``), then ``chunks`` zTXt chunks of 16 MB of zeros each."""
    bomb = zlib.compress(b"\0" * (16 * 1024 * 1024), 9)
    picture = solid_png("#203040", 64)
    card = base64.b64encode(json.dumps(CARD).encode()).decode("ascii")
    texts = _chunk(b"tEXt", b"ccv3\0" + card.encode())
    bombs = b"".join(_chunk(b"zTXt", f"comment{i}".encode() + b"\0\0" + bomb) for i in range(chunks))
    return picture[:-12] + texts + bombs + picture[-12:]


def import_peak(home: Path, source: Path) -> tuple[float, float, int]:
    """(peak resident MB, seconds, exit code) of ``madoi companions import SOURCE`` in a child."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MADOI_")}
    env.update({"MADOI_HOME": str(home), "PYTHONPATH": str(REPO)})
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURED.format(limit=ADDRESS_SPACE), "companions", "import",
                           str(source)], cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak-rss-kib ")]
    if not peak:
        raise SystemExit(f"the import of {source} printed no peak:\n{done.stderr[-2000:]}")
    return int(peak[-1].split()[1]) / 1024, seconds, done.returncode


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
        bomb.write_bytes(bomb_png())
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
