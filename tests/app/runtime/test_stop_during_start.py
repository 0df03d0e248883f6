"""A SIGTERM during the start ends Madoi with "madoi: stopped", whatever error the stop came out as (the stop is
raised by the signal handler wherever the start is, C code included)."""

from __future__ import annotations

import os
import signal
import time

import pytest

import app.main as app_main


def test_a_stop_that_comes_out_as_another_error_still_ends_the_start_cleanly(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Measured in CI under load: SIGTERM 0.6 s into the start, inside more_itertools' `from math import sumprod`,
    ended it with "TypeError: expected a message argument" and return code 1."""

    def starting(argv: list[str]) -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        except app_main.Stopped:
            raise TypeError("expected a message argument") from None  # what CPython's import machinery made of it
        return 1

    monkeypatch.setattr(app_main, "_main", starting)
    assert app_main.main([]) == 0
    assert app_main.STOPPED_LINE in capsys.readouterr().out
    assert signal.getsignal(signal.SIGTERM) is not app_main._interrupted  # the handler is put back


def test_an_error_of_the_start_without_a_stop_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:

    def broken(argv: list[str]) -> int:
        raise TypeError("a real fault")

    monkeypatch.setattr(app_main, "_main", broken)
    with pytest.raises(TypeError, match="a real fault"):
        app_main.main([])
