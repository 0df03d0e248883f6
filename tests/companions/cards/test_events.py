"""Card events: CEL conditions pick instructions; the model fills the params; failures are reported, never fatal."""

from __future__ import annotations

from companions.cards.card import Condition, Events, Execute
from companions.cards.card_events import decide, default_params, evaluate_conditions, params_model
from companions.llm.scripted import ScriptedModel, asks_json, reply_json, say
from companions.llm.structured import StructuredStats
from companions.llm.types import ChatMessage

EVENTS = Events(
    params={
        "type": "object",
        "properties": {"need_response": {"type": "boolean"}, "mood": {"type": "string", "enum": ["ok", "sad"]}},
        "required": ["need_response", "mood"],
    },
    conditions=[
        Condition(expression="need_response == true", execute=[Execute(instruction="Reply.", tool="speak")]),
        Condition(expression='mood == "sad"', execute=[Execute(instruction={"ja": "寄り添う。", "en": "Comfort."})]),
        Condition(expression="missing_var > 3", execute=[Execute(instruction="Never.")]),
        Condition(expression="mood + 1 == 2", execute=[Execute(instruction="Never either.")]),
        Condition(expression="mood", execute=[Execute(instruction="Not a boolean.")]),
    ],
)
CONTEXT = [ChatMessage.system("sys"), ChatMessage.user("I feel down")]


def test_true_false_and_failing_conditions() -> None:
    chosen, problems = evaluate_conditions(EVENTS.conditions, {"need_response": True, "mood": "ok"}, "en")
    assert [(i.text, i.tool) for i in chosen] == [("Reply.", "speak")]
    assert [p.expression for p in problems] == ["missing_var > 3", "mood + 1 == 2", "mood"]
    assert "missing_var" in problems[0].reason
    assert "not a boolean" in problems[2].reason
    chosen, _ = evaluate_conditions(EVENTS.conditions, {"need_response": False, "mood": "sad"}, "ja")
    assert [i.text for i in chosen] == ["寄り添う。"]


def test_cel_is_not_python_eval() -> None:
    attack = [Condition(expression='__import__("os").system("true") == 0', execute=[Execute(instruction="x")])]
    chosen, problems = evaluate_conditions(attack, {}, "en")
    assert chosen == []
    assert len(problems) == 1


async def test_the_model_fills_the_params_and_the_instructions_follow() -> None:
    model = ScriptedModel("m")
    model.lane("event_params").add(reply_json({"need_response": True, "mood": "sad"}))
    guidance = await decide(model, CONTEXT, EVENTS, "en", "Fill the JSON.")
    assert guidance.params == {"need_response": True, "mood": "sad"}
    assert not guidance.params_fell_back
    assert guidance.texts == ["Reply.", "Comfort."]
    assert len(guidance.problems) == 3
    assert asks_json("event_params")(model.requests[0])
    model.assert_used_up()


async def test_one_repair_then_a_safe_default() -> None:
    repaired = ScriptedModel("m")
    repaired.lane("event_params").add(say("sure! {not json"), reply_json({"need_response": True, "mood": "ok"}))
    guidance = await decide(repaired, CONTEXT, EVENTS, "en", "Fill the JSON.")
    assert guidance.texts == ["Reply."]
    assert not guidance.params_fell_back
    repaired.assert_used_up()

    hopeless = ScriptedModel("m")
    hopeless.lane("event_params").add(reply_json({"need_response": "yes"}), say("no idea"))
    guidance = await decide(hopeless, CONTEXT, EVENTS, "en", "Fill the JSON.")
    assert guidance.params_fell_back
    assert guidance.params == {"need_response": False, "mood": "ok"}
    assert guidance.texts == []
    hopeless.assert_used_up()


def test_default_params_cover_every_type() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"},
                                               "c": {"type": "array"}}}
    assert default_params(schema) == {"a": 0, "b": "x", "c": []}


def test_the_params_model_follows_the_card_schema() -> None:
    shape = params_model(EVENTS.params)
    schema = shape.model_json_schema()
    assert schema["properties"]["mood"]["enum"] == ["ok", "sad"]
    assert set(schema["required"]) == {"need_response", "mood"}
    assert shape.model_validate({"need_response": True, "mood": "ok"}).model_dump() == {
        "need_response": True, "mood": "ok"}


async def test_fallbacks_are_counted() -> None:
    stats = StructuredStats()
    model = ScriptedModel("m")
    model.lane("event_params").add(say("nope"), say("still nope"))
    guidance = await decide(model, CONTEXT, EVENTS, "en", "Fill the JSON.", counter=stats)
    assert guidance.params_fell_back
    assert stats.fallbacks == 1
    assert stats.repairs == 1
    model.assert_used_up()
