"""Which browser origins the bridge admits (app/bridge/origins.py): the default loopback pages, the patterns a user
adds, and everything that only looks like them."""

from __future__ import annotations

import pytest

from app.bridge.origins import OriginPolicy, rule_of
from app.settings.model import Settings

DEFAULT = Settings().bridge.allowed_origins


@pytest.mark.parametrize("origin", [
    None,  # not a browser
    "http://localhost:5173", "http://localhost", "http://LOCALHOST:8000", "http://127.0.0.1:3000",
    "http://127.0.0.1", "http://[::1]:8080",
])
def test_the_loopback_pages_are_admitted_by_default(origin: str | None) -> None:
    assert OriginPolicy(DEFAULT).allows(origin)


@pytest.mark.parametrize("origin", [
    "https://evil.example", "http://evil.localhost:5173", "http://localhost.evil.example", "https://localhost:5173",
    "http://127.0.0.2:80", "http://127.0.0.1.nip.io", "http://[::2]:80", "null", "", "file://", "localhost:5173",
    "http://localhost:5173/path", "http://user@localhost:5173", "ws://localhost:5173", "http://localhost:99999",
    "http://localhost:abc", "chrome-extension://abcdef",
])
def test_anything_else_is_refused_by_default(origin: str) -> None:
    assert not OriginPolicy(DEFAULT).allows(origin)


def test_a_pattern_the_user_adds_admits_that_origin_only() -> None:
    settings = Settings.model_validate({"bridge": {"allowed_origins": "https://Avatar.example, http://192.168.1.5:*,"
                                                                      " http://localhost:5173"}})
    policy = OriginPolicy(settings.bridge.allowed_origins)
    assert policy.allows("https://avatar.example")
    assert policy.allows("https://avatar.example:443")  # the scheme's default port, said or not
    assert not policy.allows("https://avatar.example:8443")
    assert not policy.allows("http://avatar.example")
    assert not policy.allows("https://www.avatar.example")
    assert policy.allows("http://192.168.1.5:1234")
    assert policy.allows("http://localhost:5173")
    assert not policy.allows("http://localhost:5174")  # the loopback defaults were replaced by this list
    assert not policy.allows("http://127.0.0.1:5173")


@pytest.mark.parametrize("pattern", ["null", "*", "http://*", "http://localhost/x", "ftp://localhost", "localhost",
                                     "http://localhost:0", "http://localhost:65536", "http://a b"])
def test_a_pattern_that_is_not_an_origin_is_refused_by_the_settings(pattern: str) -> None:
    with pytest.raises(ValueError, match="is not a web page's origin"):
        Settings.model_validate({"bridge": {"allowed_origins": [pattern]}})


def test_refusals_are_counted_and_told_once_per_origin() -> None:
    policy = OriginPolicy(DEFAULT)
    assert policy.refuse("https://evil.example")
    assert not policy.refuse("https://evil.example")
    assert policy.refuse("https://other.example")
    assert policy.refused == {"https://evil.example": 2, "https://other.example": 1}
    for i in range(1000):  # a program may send any Origin it likes: what is remembered stays bounded
        policy.refuse(f"https://x{i}.example")
    assert len(policy.refused) == 256


def test_the_bridge_reads_every_pattern_the_settings_take() -> None:
    assert [rule_of(p).host for p in DEFAULT] == ["localhost", "127.0.0.1", "::1"]
