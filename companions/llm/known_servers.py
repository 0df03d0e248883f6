"""What is already known about each model server (and version): so Madoi never asks a question whose answer is known.

Sources: ``docs/real-servers.md`` (llama-cpp-python 0.3.36, measured request by request) and the servers' own
documentation (``../shared/research/local-models.md``). A fact left ``None`` is not known for that server and is
learned by the smallest request that answers it (companions/llm/learning.py).

- **llama-cpp-python** (every chat format): ``response_format`` takes ``text`` or ``json_object`` only (json_schema:
  HTTP 500), ``json_object`` with a ``schema`` is grammar-constrained; ``tool_choice`` "auto" never gave a tool
  call from the model (plain prose, the call written as text, or ``functions.speak:``), so its lines are asked
  for as plain text; one request at a time, and a new streamed request cuts off the one in flight.
- **llama.cpp llama-server**: json_schema (grammar); tools only with ``--jinja`` (not known: learned).
- **Ollama**: structured outputs (json_schema) from 0.5.0, before that ``format: json`` only; tools native.
- **vLLM**: guided decoding (json_schema); "auto" tools only with ``--enable-auto-tool-choice`` (learned).
- **LM Studio**: json_schema (json_object refused with 400); tools native.
- **Madoi's test server** (companions/testing/openai_server; users run it for demos): tools native; its profile
  may refuse any structured mode, so that is learned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from companions.llm.capabilities import StructuredMode
from companions.llm.server_probe import (
    LLAMA_CPP,
    LLAMA_CPP_PYTHON,
    LM_STUDIO,
    MADOI_TEST,
    OLLAMA,
    VLLM,
    ServerIdentity,
)

OLLAMA_JSON_SCHEMA_FROM: Final = (0, 5, 0)


@dataclass(frozen=True)
class KnownFacts:
    """What is known of a server before asking it: its structured-output mode and whether the model's tool calls
    come back as text (``None``: not known, to be learned)."""

    structured_mode: StructuredMode | None = None
    tools_as_text: bool | None = None


UNKNOWN: Final = KnownFacts()


def _version_tuple(version: str | None) -> tuple[int, ...] | None:
    numbers = re.findall(r"\d+", version or "")
    return tuple(int(n) for n in numbers[:3]) if numbers else None


def known_facts(identity: ServerIdentity) -> KnownFacts:
    """The facts known for ``identity``'s server and version (:data:`UNKNOWN` for a server not recognised)."""
    kind = identity.kind
    if kind == LLAMA_CPP_PYTHON:
        return KnownFacts("json_object", True)
    if kind == LLAMA_CPP:
        return KnownFacts("json_schema", None)
    if kind == OLLAMA:
        version = _version_tuple(identity.version)
        if version is None:
            return KnownFacts(None, False)
        return KnownFacts("json_schema" if version >= OLLAMA_JSON_SCHEMA_FROM else "json_object", False)
    if kind == VLLM:
        return KnownFacts("json_schema", None)
    if kind == LM_STUDIO:
        return KnownFacts("json_schema", False)
    if kind == MADOI_TEST:
        return KnownFacts(None, False)
    return UNKNOWN
