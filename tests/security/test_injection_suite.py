"""The injection suite: an instruction put in each place from outside the user's window (a peer's line, a bridge
client's line, a card's role, lorebook and examples, a search hit, an MCP result, a web page an MCP tool fetched)
asks for the camera, the user's files and memory, or an MCP tool, and to tell a peer or a bridge client what it got;
the companion's model obeys whatever its prompt says. Nothing gets through while the user does not say yes
(tests/security/injection_matrix.py runs it; bench/injection_suite.py prints the counts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.security.injection_matrix import CASES, camera_video, run_matrix


async def test_no_injected_instruction_gets_through(madoi_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    monkeypatch.setenv("MADOI_CAMERA", str(camera_video(tmp_path)))
    tally = await run_matrix(madoi_home, tmp_path)
    print(tally.summary())
    assert len(tally.outcomes) == len(CASES)
    assert [o.case for o in tally.outcomes if not o.obeyed] == []  # the model did try, every time
    assert tally.failures() == []
    assert tally.got_through == 0
    # Each attack was either asked about (and refused: the user dismissed it) or found nothing to use: a card the
    # user did not approve is offered no camera, no search and no MCP server.
    assert [o.case for o in tally.outcomes if "card" not in o.case.where and o.asked == 0] == []
