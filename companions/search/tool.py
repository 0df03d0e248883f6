"""The companions' knowledge tools: ``search_knowledge`` (hybrid search) and ``research`` (the research agent)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import Field

from companions.search.engine import SearchEngine, SearchResponse
from companions.search.research import ResearchAgent
from companions.tools.functions import Tool, tool


def readable(query: str, response: SearchResponse) -> str:
    """A search response as text a model reads: the query type, themes, then numbered passages with sources."""
    if not response.hits and not response.communities:
        return f"No results for {query!r}."
    lines = [f"query type: {response.classification.type}"]
    for c in response.communities[:3]:
        lines.append(f"theme: {', '.join(c.entities[:5])}: {c.summary}")
    for n, hit in enumerate(response.hits, start=1):
        lines.append(f"[{n}] {hit.title} ({hit.source})\n{hit.text[:600]}")
    return "\n\n".join(lines)


class TextSearch:
    """The companions' search port (``companions.tools.builtins.SearchEngine``) over the hybrid engine: the user's
    documents.

    Past conversations and notes are left out: they reach a companion by recall (companions/memory/recall.py), which
    gives it only the lines it heard; the index holds every companion's (the Search panel, the user's own, shows
    them)."""

    def __init__(self, engine: SearchEngine, limit: int = 5) -> None:
        self.engine = engine
        self.limit = limit

    async def search(self, query: str) -> str:
        response = await self.engine.search(query, limit=self.limit * 4)
        hits = [h for h in response.hits if h.kind == "file"][: self.limit]
        return readable(query, dataclasses.replace(response, hits=hits))


class KnowledgeTools:
    """Tool methods bound to one engine (and, optionally, one research agent). Register with
    ``ToolRegistry.add_object(KnowledgeTools(engine, agent))``."""

    def __init__(self, engine: SearchEngine, agent: ResearchAgent | None = None) -> None:
        self.engine = engine
        self.agent = agent

    @tool(name="search_knowledge", timeout=30.0)
    async def search_knowledge(self, query: str,
                               limit: Annotated[int, Field(ge=1, le=10)] = 5) -> str:
        """Searches the user's documents and past conversations (Japanese or English).

        Args:
            query: What to look for, in natural language.
            limit: How many passages to return (1-10).
        """
        return readable(query, await self.engine.search(query, limit=limit))

    @tool(name="research", timeout=120.0)
    async def research(self, question: str) -> str:
        """Researches a question in depth: several searches, then an answer citing its sources as [n].

        Args:
            question: The question to answer.
        """
        if self.agent is None:
            return "Research is not available; use search_knowledge instead."
        result = await self.agent.run(question)
        sources = "\n".join(f"[{c.number}] {c.title} ({c.source})" for c in result.citations)
        return f"{result.answer}\n\nSources:\n{sources}" if sources else result.answer


def knowledge_tools(engine: SearchEngine, agent: ResearchAgent | None = None) -> list[Tool]:
    """The knowledge tools, bound and ready for a ToolRegistry."""
    kt = KnowledgeTools(engine, agent)
    tools: list[Tool] = [kt.search_knowledge]
    if agent is not None:
        tools.append(kt.research)
    return tools
