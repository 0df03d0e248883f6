"""Cost of the OpenAI backend's wrapper: one streamed request (40 text chunks, then 2 tool calls in fragments)
through OpenAIChatModel.stream versus the raw openai client on the same local test server, interleaved in one run.

Target: p50 within 1.2x of the raw client (the wrapper adds message conversion, assembly and value objects only).
"""

from __future__ import annotations

import asyncio
import time

import _report  # noqa: F401 - puts the repo on sys.path
import openai
from _report import report

from companions.common.loop_health import percentile
from companions.llm.openai_backend import build_chat_model
from companions.llm.types import ChatMessage, ChatRequest, ToolSpec
from companions.testing.openai_server import OpenAITestServer, Reply, text_reply, tool_call_reply

ROUNDS = 150
CHUNKS = [f"word{i} " for i in range(40)]
TOOLS = (ToolSpec(name="speak"), ToolSpec(name="gesture"))


def replies() -> list[Reply]:
    return [
        text_reply("".join(CHUNKS), chunks=CHUNKS),
        tool_call_reply(("speak", {"text": "こんにちは、みなさん", "emotion": "happy"}), ("gesture", {"name": "wave"})),
    ]


async def main() -> None:
    async with OpenAITestServer() as server:
        model = build_chat_model(server.base_url, "test-model", "k")
        raw = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        request = ChatRequest(messages=(ChatMessage.system("s"), ChatMessage.user("hello")), tools=TOOLS)
        tools = [{"type": "function", "function": {"name": t.name, "parameters": t.parameters}} for t in TOOLS]
        ours: list[float] = []
        theirs: list[float] = []
        for round_ in range(ROUNDS + 10):  # the first 10 rounds warm up and are not counted
            text, tools_reply = replies()
            server.script(text, text, tools_reply, tools_reply)  # each reply once through each client
            for _ in range(2):
                started = time.perf_counter()
                async for _event in model.stream(request):
                    pass
                if round_ >= 10:
                    ours.append(time.perf_counter() - started)
                started = time.perf_counter()
                stream = await raw.chat.completions.create(
                    model="test-model",
                    messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}],
                    tools=tools,  # type: ignore[arg-type]
                    stream=True,
                )
                async for _chunk in stream:
                    pass
                if round_ >= 10:
                    theirs.append(time.perf_counter() - started)
        await model.aclose()
        await raw.close()
    for q in (0.5, 0.99):
        report(
            f"llm backend request p{q * 100:g}",
            percentile(ours, q) * 1000,
            "ms",
            f"raw openai client p{q * 100:g}",
            percentile(theirs, q) * 1000,
        )


if __name__ == "__main__":
    asyncio.run(main())
