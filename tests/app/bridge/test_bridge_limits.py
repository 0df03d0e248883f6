"""What one bridge address may have stored (app/bridge/limits.py), on a clock the test moves."""

from __future__ import annotations

from app.bridge.limits import AddressQuotas, StoreQuota


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_minutes_worth_at_once_then_the_quotas_rate() -> None:
    clock = Clock()
    quota = StoreQuota(30, 1000, clock=clock)
    assert [quota.take(10) for _ in range(31)].count(True) == 30  # 30 messages at once, not 31
    clock.now += 2.0  # 30 a minute: one more every 2 s
    assert quota.take(10)
    assert not quota.take(10)
    assert (quota.stored_messages, quota.stored_bytes) == (31, 310)


def test_the_bytes_are_bounded_too_and_a_refused_message_costs_nothing() -> None:
    clock = Clock()
    quota = StoreQuota(100, 1000, clock=clock)
    assert quota.take(600)
    assert not quota.take(600)  # 400 bytes left this minute
    assert quota.take(400)  # the refused one took nothing
    assert not quota.take(1)
    clock.now += 6.0  # 1000 bytes a minute: 100 bytes back
    assert quota.take(100)
    assert not quota.take(2000)  # more than a minute's bytes: never
    clock.now += 3600
    assert not quota.take(1001)
    assert quota.take(1000)


def test_an_addresses_quota_is_the_same_for_each_of_its_connections_and_forgotten_once_whole() -> None:
    clock = Clock()
    quotas = AddressQuotas(2, 1000, clock=clock)
    assert quotas.of("127.0.0.2").take(10)
    assert quotas.of("127.0.0.2").take(10)  # a reconnect: the same quota
    assert not quotas.of("127.0.0.2").take(10)
    assert quotas.of("127.0.0.3").take(10)  # another address has its own
    clock.now += 60  # a minute later both are whole again: a new address forgets them
    quotas.of("127.0.0.4")
    assert len(quotas) == 1
    assert quotas.of("127.0.0.2").take(10)
