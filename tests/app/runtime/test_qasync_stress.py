"""Guards the PySide6 pin: 6.12.0 dies with "Fatal Python error: none_dealloc" after ~20,000 qasync iterations.

Runs in a child process so that a fatal error fails this test instead of killing the test session.
"""

from __future__ import annotations

import subprocess
import textwrap

from tests.conftest import PYTHON

STRESS = textwrap.dedent(
    """
    import asyncio, sys
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv)

    async def main():
        for _ in range(20_000):
            await asyncio.sleep(0)
        timer_rounds = 0
        for _ in range(2_000):  # timers too: the crash sat on QObject.killTimer
            await asyncio.sleep(0.0001)
            timer_rounds += 1
        print("survived", timer_rounds)

    qasync.run(main())
    """
)


def test_twenty_thousand_loop_iterations_under_qasync() -> None:
    result = subprocess.run([PYTHON, "-c", STRESS], capture_output=True, text=True, timeout=180,
                            env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}, check=False)
    assert "none_dealloc" not in result.stderr
    assert result.returncode == 0, result.stderr[-2000:]
    assert "survived 2000" in result.stdout
