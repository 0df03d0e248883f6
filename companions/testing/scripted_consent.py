"""A scripted user behind the :class:`~companions.trust.policy.ConsentAsker` port, for tests and benchmarks.

It answers each consent prompt with the next answer of its script, as the window's prompt would return it (an
:class:`~companions.trust.policy.Answer`, or ``None`` for a dismissed prompt); :data:`NO_ANSWER` leaves the prompt open
until the policy gives up (the user is away). Like a scripted model, it fails when it is asked more often than its
script says, and :meth:`ScriptedUser.assert_used_up` fails when an answer was never asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Final

from companions.trust.policy import Answer, ConsentRequest

NO_ANSWER: Final = "no answer"


class ScriptedUser:
    """Answers consent prompts from a script; ``asked`` keeps every request in order, ``open`` those on screen."""

    def __init__(self, answers: Iterable[Answer | str | None] = ()) -> None:
        self.script: list[Answer | str | None] = list(answers)
        self.asked: list[ConsentRequest] = []
        self.open: list[ConsentRequest] = []
        self.prompted = asyncio.Event()  # set at every prompt (a test clears it to wait for the next)

    async def ask(self, request: ConsentRequest) -> Answer | None:
        self.asked.append(request)
        self.prompted.set()
        if not self.script:
            raise AssertionError(f"the user was asked more than the script says: {request}")
        answer = self.script.pop(0)
        self.open.append(request)
        try:
            if answer == NO_ANSWER:
                await asyncio.Event().wait()  # until the policy's timeout cancels the prompt
            await asyncio.sleep(0)  # a prompt answers after a round of the loop, never inside the call
        finally:
            self.open.remove(request)
        assert answer is None or isinstance(answer, Answer)
        return answer

    def assert_used_up(self) -> None:
        assert not self.script, f"answers never asked for: {self.script}"
