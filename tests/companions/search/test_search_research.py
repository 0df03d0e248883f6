"""The research agent over a real index of the sample documents: rules without a model, a scripted model with."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from companions.llm.capabilities import endpoint_capabilities, forget_endpoints
from companions.llm.scripted import ScriptedModel, fail, reply_json, say, stall
from companions.search import research
from companions.search.classify.query_classifier import EmptyQueryError, QueryClassification
from companions.search.engine import SearchEngine, SearchResponse
from companions.search.research import ResearchAgent, ResearchProgress, decompose, says_something, step_bound_s
from tests.companions.search_doubles import HashingEmbedder

KNOWLEDGE = Path(__file__).resolve().parents[3] / "resources" / "knowledge"


class CountingEngine(SearchEngine):
    """The real engine, counting how many searches are in flight at once."""

    in_flight = 0
    peak = 0
    queries: list[str]

    async def search(self, text: str, *, limit: int = 10, classification: QueryClassification | None = None,
                     method: object = None) -> SearchResponse:
        self.queries.append(text)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0)  # let siblings start: this is what the limit must bound
            return await super().search(text, limit=limit, classification=classification)
        finally:
            self.in_flight -= 1


@pytest.fixture
async def engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    shutil.copytree(KNOWLEDGE, tmp_path / "docs")
    eng = CountingEngine(tmp_path / "search.sqlite3", embedder=HashingEmbedder())
    eng.queries = []
    await eng.index_paths([tmp_path / "docs"])
    yield eng
    await eng.aclose()


async def test_without_a_model_the_answer_is_extractive_and_cited(engine: CountingEngine) -> None:
    events: list[ResearchProgress] = []
    agent = ResearchAgent(engine, progress=events.append, concurrency=2)
    result = await agent.run("金閣寺と銀閣寺の違いは？")
    assert not result.used_model
    assert len(result.queries) >= 3  # the question plus one query per temple
    assert any(q == "銀閣寺" or q.startswith("銀閣寺") for q in result.queries)
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    assert cited, result.answer
    assert cited <= {c.number for c in result.citations}
    assert result.citations[min(cited) - 1].source.endswith("kyoto-temples.ja.md")
    assert "金閣寺" in result.answer
    stages = [e.stage for e in events]
    assert stages[0] == "planning"
    assert stages[-1] == "done"
    assert "searching" in stages
    assert "synthesizing" in stages
    assert engine.peak <= 2


async def test_english_decomposition_and_concurrency_limit(engine: CountingEngine) -> None:
    agent = ResearchAgent(engine, concurrency=1)
    result = await agent.run("Compare Ada Lovelace and Alan Turing")
    assert engine.peak == 1
    assert set(result.queries) >= {"Ada Lovelace", "Alan Turing"}
    assert result.citations[0].source.endswith("computing-pioneers.en.md")
    assert "[1]" in result.answer


async def test_a_model_plans_reflects_and_writes_the_answer(engine: CountingEngine) -> None:
    model = ScriptedModel("researcher")
    model.lane("plan").add(reply_json({"queries": ["千利休", "豊臣秀吉"]}))
    model.lane("reflection").add(reply_json({"done": False, "queries": ["利休の切腹"]}))
    model.lane("chat").add(say("千利休は豊臣秀吉に茶頭として仕え、のちに秀吉の命で切腹した [1]。"))
    agent = ResearchAgent(engine, model, max_rounds=2)
    result = await agent.run("千利休と豊臣秀吉はどんな関係だった？")
    model.assert_used_up()
    assert result.used_model
    assert result.rounds == 2
    assert result.queries == ["千利休", "豊臣秀吉", "利休の切腹"]
    assert result.answer.endswith("[1]。")
    assert result.citations[0].source.endswith("tea-ceremony.ja.md")
    synthesis_prompt = model.requests_in("chat")[0].messages[-1].text
    assert "[1]" in synthesis_prompt
    assert "千利休と豊臣秀吉" in synthesis_prompt


async def test_model_failures_fall_back_to_rules(engine: CountingEngine) -> None:
    model = ScriptedModel("broken")
    model.lane("plan").add(fail("server down", status=500))
    model.lane("reflection").add(reply_json("not json at all"))
    model.lane("chat").add(fail("server down", status=500))
    agent = ResearchAgent(engine, model, max_rounds=2)
    result = await agent.run("Who designed the Analytical Engine?")
    model.assert_used_up()
    assert not result.used_model
    assert len(result.notes) == 3
    assert result.citations
    assert "Analytical Engine" in result.answer


async def test_cancelling_a_run_stops_it_and_reports_it(engine: CountingEngine) -> None:
    model = ScriptedModel("slow")
    model.lane("plan").add(stall())
    events: list[ResearchProgress] = []
    task = asyncio.create_task(ResearchAgent(engine, model, progress=events.append).run("茶の湯の歴史"))
    await model.wait_for_calls(1)  # the planning call is under way (and hangs)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events[-1].stage == "cancelled"
    assert engine.queries == []


async def test_blank_question_and_no_sources(engine: CountingEngine) -> None:
    agent = ResearchAgent(engine)
    with pytest.raises(EmptyQueryError):
        await agent.run("  ")
    assert decompose("A", None) == ["A"]


async def test_knowledge_tools_answer_a_companion(engine: CountingEngine) -> None:
    from companions.search.tool import knowledge_tools

    search, research = knowledge_tools(engine, ResearchAgent(engine))
    assert search.spec.name == "search_knowledge"
    found = await search.run({"query": "千利休は誰に仕えた？", "limit": 2}, "call-1")
    assert not found.is_error
    assert "tea-ceremony.ja.md" in found.content
    bad = await search.run({"query": "x", "limit": 99}, "call-2")
    assert bad.is_error
    answer = await research.run('{"question": "Who broke the Enigma cipher?"}', "call-3")
    assert not answer.is_error
    assert "[1]" in answer.content
    assert "computing-pioneers.en.md" in answer.content


@pytest.mark.parametrize("said", ["[2]", "[1][2]。", " [1, 3] "])
async def test_an_answer_of_citations_alone_is_no_answer(engine: CountingEngine, said: str) -> None:
    """Before: "[2]" was taken as the whole answer (its source was right, but it says nothing)."""
    model = ScriptedModel("terse")
    model.lane("plan").add(reply_json({"queries": ["千利休"]}))
    model.lane("chat").add(say(said))
    result = await ResearchAgent(engine, model, max_rounds=1).run("千利休はどんな人？")
    model.assert_used_up()
    assert not result.used_model  # the sources' own sentences, cited, instead
    assert "利休" in result.answer
    assert re.search(r"\[\d+\]", result.answer)
    assert any("no words in the answer" in note for note in result.notes)


async def test_a_model_slower_than_its_bound_gives_the_extractive_answer_and_is_asked_nothing_more(
        engine: CountingEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planning request that never answers: the run waits only its bound, then answers from the sources alone,
    and neither reflection nor synthesis waits on the same model again (3 min 20 s became "[2] ...": never again)."""
    monkeypatch.setattr(research, "UNMEASURED_STEP_S", 0.3)
    model = ScriptedModel("hanging")
    model.lane("plan").add(stall())
    started = asyncio.get_running_loop().time()
    result = await ResearchAgent(engine, model, max_rounds=2).run("Who designed the Analytical Engine?")
    model.assert_used_up()  # one request: the plan's
    assert asyncio.get_running_loop().time() - started < 5
    assert not result.used_model
    assert "Analytical Engine" in result.answer
    assert re.search(r"\[\d+\]", result.answer)
    assert result.notes == ["plan: the language model took longer than 0.3 s"]


async def test_an_answer_of_a_citation_and_its_sources_title_is_no_answer(engine: CountingEngine) -> None:
    top = (await engine.search("千利休", limit=1)).hits[0]
    model = ScriptedModel("terse")
    model.lane("plan").add(reply_json({"queries": ["千利休"]}))
    model.lane("chat").add(say(f"[1] {top.title}"))
    result = await ResearchAgent(engine, model, max_rounds=1).run("千利休はどんな人？")
    model.assert_used_up()
    assert not result.used_model
    assert "利休" in result.answer
    assert any("no words in the answer" in note for note in result.notes)


def test_a_model_step_waits_as_long_as_the_endpoint_is_measured_to_need() -> None:
    forget_endpoints()
    fast = endpoint_capabilities("http://127.0.0.1:1/v1", "fast")
    fast.record(prompt_tokens=1000, ttft_s=1.0, completion_tokens=100, generation_s=2.0)  # 1000 tok/s, 50 tok/s
    slow = endpoint_capabilities("http://127.0.0.1:1/v1", "slow")
    slow.record(prompt_tokens=100, ttft_s=10.0, completion_tokens=10, generation_s=10.0)  # 10 tok/s, 1 tok/s

    class Endpoint(ScriptedModel):
        def __init__(self, capabilities: object) -> None:
            super().__init__("endpoint")
            self.capabilities = capabilities

    prompt = "x " * 400
    assert step_bound_s(ScriptedModel("unmeasured"), prompt, 200) == research.UNMEASURED_STEP_S
    fast_bound = step_bound_s(Endpoint(fast), prompt, 200)
    assert research.STEP_SLACK_S < fast_bound < 20
    assert step_bound_s(Endpoint(slow), prompt, 200) == research.MAX_STEP_S
    forget_endpoints()


@pytest.mark.parametrize(("answer", "titles", "says"), [
    ("[2] conversation 1", ["conversation 1"], False),
    ("[2] Conversation 1。", ["conversation 1", "tea"], False),
    ("利休は茶人です [1]", ["conversation 1"], True),
    ("[1]", [], False),
])
def test_says_something_besides_citations_and_titles(answer: str, titles: list[str], says: bool) -> None:
    assert says_something(answer, titles=titles) is says
