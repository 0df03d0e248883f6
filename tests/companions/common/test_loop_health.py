from __future__ import annotations

import asyncio
import time

from companions.common.loop_health import LagProbe, percentile


def test_percentile_nearest_rank() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile(list(map(float, range(1, 101))), 0.99) == 99.0


async def test_probe_sees_a_blocked_loop() -> None:
    probe = LagProbe(interval=0.002)
    probe.start()
    await asyncio.sleep(0.05)
    quiet = probe.stats()
    time.sleep(0.08)  # noqa: ASYNC251 - blocking the loop is what this test measures
    await asyncio.sleep(0.02)
    await probe.stop()
    loud = probe.stats()
    assert quiet.samples > 5
    assert loud.max_ms >= 60
    assert quiet.p50_ms < 20
    assert not probe.running
