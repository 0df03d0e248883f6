"""Votes through voting.py on the ChatModel port (scripted models): prompt, repair, fallback, and a simulation."""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from companions.bus import InProcessBus
from companions.conversation import (
    ConversationConfig,
    ConversationManager,
    ConversationReadModel,
    InvalidVote,
    TurnContext,
    Utterance,
    Vote,
)
from companions.conversation.voting import ModelVoter, vote_messages
from companions.llm.scripted import ScriptedCast, ScriptedModel, asks_json, fail, mentions, reply_json, stall
from companions.protocol import Closing, Message, State


def turn_of(text: str, *, to: list[str] | None = None, history: tuple[Message, ...] = (),
            hint: Closing = "none", direct: bool = False) -> TurnContext:
    message = Message.create(from_="user", message=text, to=to or [])
    return TurnContext(turn_id=message.params.id, message=message, history=(*history, message),
                       present=("aoi", "ben"), user_id="user", addressed_directly=direct, closing_hint=hint)


def test_the_prompt_carries_persona_conversation_and_the_closing_push_in_both_languages() -> None:
    earlier = Message.create(from_="ben", message="I baked bread today.")
    turn = turn_of("What did you all do?", history=(earlier,), hint="closing")
    ja = vote_messages(turn, companion_id="aoi", name="葵", persona="明るい高校生。", language="ja",
                       names={"ben": "ベン"})
    assert "葵" in ja[0].text
    assert "明るい高校生。" in ja[0].text
    assert "JSON" in ja[0].text
    assert "ベン: I baked bread today." in ja[1].text
    assert "What did you all do?" in ja[1].text
    assert "closing" in ja[1].text
    assert "繰り返し" in ja[1].text
    en = vote_messages(turn, companion_id="aoi", name="Aoi", persona="A cheerful student.", language="en")
    assert "You are the companion \"Aoi\"" in en[0].text
    assert "ben: I baked bread today." in en[1].text
    assert "repeating" in en[1].text


async def test_a_valid_vote_is_read_and_framework_facts_win() -> None:
    model = ScriptedModel("aoi")
    model.lane("vote").add(reply_json({"state": "speak", "importance": 7, "selected": False,
                                       "closing": "none", "reason": "I know this one"}, expect=asks_json("vote")))
    voter = ModelVoter(model, "aoi", "Aoi", "A cheerful student.", language="en")
    vote = await voter(turn_of("Aoi, what do you think?", to=["aoi"], direct=True, hint="pre-closing"))
    assert vote == Vote(state="speak", importance=7, selected=True, closing="pre-closing", reason="I know this one")
    model.assert_used_up()


async def test_garbage_json_is_repaired_once_then_falls_back_to_listen() -> None:
    model = ScriptedModel("ben")
    model.lane("vote").add(
        reply_json("sure! I'd love to speak {state: speak"),
        reply_json('```json\n{"state": "speak", "importance": 4}\n```'),  # the repair succeeds
        reply_json("I think I should speak, importance high"),
        reply_json('{"state": "shout", "importance": 99}'),  # still invalid after the repair
    )
    voter = ModelVoter(model, "ben", "Ben", language="en")
    repaired = await voter(turn_of("Hello"))
    assert (repaired.state, repaired.importance) == ("speak", 4)
    with pytest.raises(InvalidVote, match="no valid vote"):
        await voter(turn_of("Hello again"))
    assert voter.stats.repaired == 1
    assert voter.stats.fallbacks == 1
    model.assert_used_up()


async def test_a_failing_model_gives_an_invalid_vote() -> None:
    model = ScriptedModel("chika")
    model.lane("vote").add(fail("HTTP 500", status=500))
    with pytest.raises(InvalidVote):
        await ModelVoter(model, "chika", "Chika")(turn_of("Hi"))
    assert model.requests_in("vote")
    model.assert_used_up()


@dataclass(eq=False)
class ModelParticipant:
    """A participant that votes through voting.py with its own model and says its scripted lines."""

    id: str
    voter: ModelVoter
    lines: collections.deque[str]
    spoken: list[str] = field(default_factory=list)

    async def vote(self, turn: TurnContext) -> Vote:
        return await self.voter(turn)

    async def compose(self, turn: TurnContext, closing: Closing) -> Utterance | None:
        return Utterance(text=self.lines.popleft(), emotion="happy")

    async def speak(self, message: Message) -> None:
        self.spoken.append(message.params.message)

    async def interrupt(self) -> None:
        return None


@pytest.fixture
async def bus() -> AsyncIterator[InProcessBus]:
    bus = InProcessBus()
    yield bus
    await bus.aclose()


async def test_simulation_three_model_voters_close_by_themselves(bus: InProcessBus) -> None:
    cast = ScriptedCast("aoi", "ben", "chika", "dai")

    def vote(state: str, importance: int, closing: str = "none", **kw: object) -> dict[str, object]:
        return {"state": state, "importance": importance, "closing": closing, "reason": f"{state} {importance}", **kw}

    # turn 1 (the user's question, to everyone)
    cast["aoi"].lane("vote").add(reply_json(vote("speak", 8), expect=mentions("what should we eat")),
                                 reply_json(vote("listen", 2, "closing")))  # turn 3
    cast["ben"].lane("vote").add(reply_json(vote("speak", 5)),
                                 reply_json(vote("speak", 6, "pre-closing"), expect=mentions("ramen")))  # turn 2
    cast["chika"].lane("vote").add(
        reply_json("{{{ not json"), reply_json("still not json"),  # turn 1: garbage twice -> listen
        reply_json(vote("speak", 4)),  # turn 2
        reply_json(vote("speak", 5, "terminal"), expect=mentions("Ramen sounds good")),  # turn 3: goodbye
    )
    cast["dai"].lane("vote").add(stall(), stall(), stall())  # never answers: the deadline holds every turn
    lines = {"aoi": ["Let's have ramen!"], "ben": ["Ramen sounds good."], "chika": ["See you at dinner!"], "dai": []}
    people = [ModelParticipant(n, ModelVoter(cast[n], n, n.title(), f"{n}'s persona", language="en"),
                               collections.deque(lines[n])) for n in ("aoi", "ben", "chika", "dai")]
    states: list[State] = []
    messages: list[Message] = []
    bus.subscribe("states", states.append)
    bus.subscribe("messages", messages.append)
    read = ConversationReadModel()
    read.attach(bus)
    manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=0.5), participants=people)
    await manager.start()
    try:
        opening = Message.create(from_="user", message="Hi all, what should we eat tonight?")
        bus.publish(opening)
        view = await read.wait_for(lambda v: v.status == "ended", timeout=5.0)
    finally:
        await manager.stop()
    assert view.ended_reason == "closed"
    said = [(m.params.from_, m.params.message) for m in messages if m.params.from_ != "user"]
    assert said == [("aoi", "Let's have ramen!"), ("ben", "Ramen sounds good."), ("chika", "See you at dinner!")]
    assert [p.spoken for p in people[:3]] == [["Let's have ramen!"], ["Ramen sounds good."], ["See you at dinner!"]]
    first = read.turns()[0]
    assert first.vote_of("chika").status == "invalid"  # type: ignore[union-attr]
    assert first.vote_of("chika").state == "listen"  # type: ignore[union-attr]  # garbage -> listen
    assert first.vote_of("dai").status == "missing"  # type: ignore[union-attr]
    assert first.vote_of("aoi").reason == "speak 8"  # type: ignore[union-attr]
    opening_states = {s.params.from_: s for s in states if s.params.messageId == opening.params.id}
    assert opening_states["aoi"].params.importance == 8
    # chika's unreadable and dai's missing votes go out as what every node counts: listen (vote_round.py)
    assert {(s.params.state, s.params.importance) for w, s in opening_states.items() if w in ("chika", "dai")} == {
        ("listen", 0)}
    assert len([s for s in states if s.params.messageId == opening.params.id]) == 4  # one State per voter
    assert people[2].voter.stats.fallbacks == 1
    cast.assert_used_up()


async def test_a_vote_that_never_comes_is_missing_not_a_failure(caplog: pytest.LogCaptureFixture) -> None:
    # A companion elsewhere whose peer left (or that lets every vote pass) is expected: the round counts its vote as
    # missing; it is no task failure, logged with a traceback on every turn.
    from companions.conversation.participant import VoteNeverComes
    from companions.conversation.turns import collect_votes
    from companions.tasks import TaskSet

    async def gone() -> Vote:
        raise VoteNeverComes("its peer left")

    async def speaks() -> Vote:
        return Vote(state="speak", importance=7)

    owner = TaskSet("votes")
    outcomes = await collect_votes({"far": gone, "near": speaks}, deadline_s=1.0, owner=owner)
    assert outcomes["far"].status == "missing"
    assert outcomes["far"].vote.state == "listen"
    assert outcomes["near"].status == "voted"
    await owner.wait()
    assert owner.failures == 0
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
