"""A started runtime for the security tests: the bridge on a free port, a real camera on a generated video with a
face, the three sample companions on scripted models that listen once their scripted line is said, and a scripted
user at the window who answers the trust questions. On the way out the runtime stops, and both the user's and the
models' scripts must have been used up."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.cards.card import CompanionCard
from companions.llm.scripted import ScriptedCast, ScriptedModel, reply_json
from companions.testing.scripted_consent import ScriptedUser
from tests.app.media import write_test_video
from tests.conftest import free_port


@contextlib.asynccontextmanager
async def consenting_runtime(monkeypatch: pytest.MonkeyPatch,
                             tmp_path: Path) -> AsyncIterator[tuple[Runtime, ScriptedCast, ScriptedUser]]:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    monkeypatch.setenv("MADOI_CAMERA", str(write_test_video(tmp_path / "webcam.avi", frames=30, face=True)))
    cast = ScriptedCast("akari", "hina", "souta")
    for model in cast.values():  # after the line a test scripts, everyone listens: the conversation ends
        model.lane("vote").always(reply_json({"state": "listen", "importance": 0, "reason": ""}))

    def make_model(card: CompanionCard) -> ScriptedModel:
        return cast[card.id]

    runtime = Runtime(load_settings(), make_model=make_model)
    await runtime.start()
    user = ScriptedUser()
    runtime.asker.connect(user)  # the user at the window (the window's prompt connects here)
    try:
        yield runtime, cast, user
    finally:
        await runtime.stop()
    user.assert_used_up()
    cast.assert_used_up()
