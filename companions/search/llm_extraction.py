"""Entity and relation extraction by a chat model (structured output), falling back to the heuristics."""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field, ValidationError

from companions.common.untrusted_data import parse_json
from companions.llm.types import ChatMessage, ChatModel, ChatRequest, JsonSchemaFormat, LLMError, complete
from companions.search.graph import Extraction, extract_heuristic

log = logging.getLogger(__name__)

PROMPT = (
    "Extract the named entities (people, places, organisations, works, products, concepts) and the relations "
    "between them from the text. Answer with JSON only: "
    '{"entities": ["name", ...], "relations": [{"source": "name", "target": "name", "label": "short verb"}]}. '
    "Keep names as written in the text (Japanese stays Japanese).\n\nText:\n"
)


class _Relation(BaseModel):
    source: str
    target: str
    label: str = "related"


class _Answer(BaseModel):
    entities: list[str] = Field(default_factory=list)
    relations: list[_Relation] = Field(default_factory=list)


_FORMAT = JsonSchemaFormat(name="entity_extraction", schema_=_Answer.model_json_schema())


async def extract_with_model(model: ChatModel, text: str) -> Extraction:
    """What ``model`` finds in ``text``; the heuristic extraction when the call fails or the answer is unusable."""
    request = ChatRequest(messages=(ChatMessage.user(PROMPT + text),), response_format=_FORMAT, temperature=0.0)
    try:
        completion = await complete(model, request)
        raw = completion.message.text
        start, end = raw.find("{"), raw.rfind("}")
        answer = _Answer.model_validate(parse_json(raw[start : end + 1]))
    except (LLMError, ValueError, ValidationError) as exc:
        log.info("entity extraction by %s failed (%s); using heuristics", getattr(model, "name", "model"), exc)
        return extract_heuristic(text)
    entities = [e.strip() for e in answer.entities if e.strip()]
    relations = [(r.source.strip(), r.target.strip(), r.label.strip() or "related") for r in answer.relations
                 if r.source.strip() and r.target.strip()]
    names = list(dict.fromkeys(entities + [n for s, t, _ in relations for n in (s, t)]))
    if not names:
        return extract_heuristic(text)
    return Extraction(entities=tuple(names), relations=tuple(relations))
