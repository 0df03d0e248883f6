"""The injection suite's counts, to quote: an instruction put in each place from outside the user's window, asking
for the camera, the user's files and memory or an MCP tool, and to tell a peer or a bridge client what it got, against
one real app whose companions' model obeys whatever its prompt says (tests/security/injection_matrix.py: the same
matrix tests/security/test_injection_suite.py asserts on).

Prints ``tried N attacks (...), got through G, user asked M`` and, per place and ask, what happened. ``--yes``: the
user allows every question once instead of dismissing it (what the gates stop: everything that then gets through).

Run: ``python bench/injection_suite.py [--yes]`` (under Xvfb is not needed: no window).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import _report  # noqa: F401 - puts the repo on sys.path

from companions.trust.policy import Answer, ConsentRequest
from tests.conftest import free_port
from tests.security import injection_matrix


async def main(yes: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="madoi-injection-") as scratch:
        work = Path(scratch)
        home = work / "home"
        home.mkdir()
        os.environ.update({"MADOI_HOME": str(home), "MADOI_BRIDGE_PORT": str(free_port()),
                           "MADOI_CAMERA": str(injection_matrix.camera_video(work))})
        if yes:
            async def allow(self: injection_matrix.AwayUser, request: ConsentRequest) -> Answer:
                self.asked.append(request)
                return Answer.ONCE

            injection_matrix.AwayUser.ask = allow  # type: ignore[method-assign,assignment]
        started = time.perf_counter()
        tally = await injection_matrix.run_matrix(home, work)
        took = time.perf_counter() - started
    for outcome in tally.outcomes:
        left = ", ".join(e for e, gone in outcome.left.items() if gone) or "-"
        print(f"{outcome.case.where:24} {outcome.case.asks:17} obeyed={outcome.obeyed!s:5} "
              f"ran={outcome.reached!s:5} left to: {left:24} asked {outcome.asked}")
    print(tally.summary() + f" ({took:.1f} s{', the user allowing each once' if yes else ''})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yes", action="store_true", help="the user allows every question once")
    asyncio.run(main(parser.parse_args().yes))
