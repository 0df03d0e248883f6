"""Hostile card pictures and a Madoi command measured in a capped child, shared by tests/security/test_hostile_files.py
and bench/card_import_memory.py.

* :func:`bomb_png`: a picture carrying a real V3 card, then zTXt chunks of 16 MB of zeros each, squeezed into 16 KB
  (400 of them made the 6.5 MB picture that once took the importer 5.6 GB).
* :func:`measured_madoi`: ``madoi ARGS`` in a child whose address space is capped (a regression fails with MemoryError
  instead of taking the machine's memory), with its own resident peak: ``VmHWM`` of its memory map, read as the
  command ends (``ru_maxrss`` of a child would count the parent's peak before exec).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zlib
from collections.abc import Mapping

from companions.cards.png_text import SIGNATURE, png_chunk, solid_png
from tests.conftest import REPO

ADDRESS_SPACE = 3 * 1024**3  # what the child may map: the zTXt bomb needed 5.6 GB before reads were bounded
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


def bomb_png(card_keyword: str, bomb_keywords: list[str]) -> bytes:
    """A picture carrying :data:`CARD` under ``card_keyword``, then one zTXt chunk per keyword in ``bomb_keywords``,
    each 16 MB of zeros squeezed into 16 KB."""
    bomb = zlib.compress(b"\0" * (16 * 1024 * 1024), 9)
    picture = solid_png("#203040", 64)
    card = base64.b64encode(json.dumps(CARD).encode()).decode("ascii")
    texts = png_chunk(b"tEXt", card_keyword.encode() + b"\0" + card.encode())
    bombs = b"".join(png_chunk(b"zTXt", k.encode() + b"\0\0" + bomb) for k in bomb_keywords)
    head, tail = picture[:-12], picture[-12:]  # IEND last
    assert head.startswith(SIGNATURE)
    assert tail[4:8] == b"IEND"
    return head + texts + bombs + tail


def measured_madoi(env: Mapping[str, str], *args: str,
                   timeout: float | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """``madoi ARGS`` in a capped child with ``env``: the result and its peak resident memory (KiB)."""
    done = subprocess.run([sys.executable, "-c", _MEASURED.format(limit=ADDRESS_SPACE), *args], cwd=REPO,
                          env=dict(env), capture_output=True, text=True, timeout=timeout, check=False)
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak-rss-kib ")]
    if not peak:
        raise RuntimeError(f"madoi {' '.join(args)} printed no peak:\n{done.stderr[-2000:]}")
    return done, int(peak[-1].split()[1])
