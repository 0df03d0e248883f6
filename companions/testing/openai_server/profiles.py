"""Server profiles: how a real OpenAI-compatible server behaves, so the test server can behave the same.

A :class:`ServerProfile` says how many requests run at once (the rest wait in a FIFO queue), whether a new
request cuts off the one in flight, how fast prompts and replies go (tokens per second, a prompt cache per slot),
which ``response_format`` kinds are refused (with that server's HTTP status and error body), whether later system
messages reach the model, and how the model's tool calls come out (real ``tool_calls``, or written as text).

Sources: ``../shared/research/local-models.md`` (llama-cpp-python 0.3.36 with Qwen2.5-Coder-0.5B-Instruct Q4_K_M,
measured on a 2-core machine) and ``docs/real-servers.md`` (the same server, request by request); the others from
their documentation, as noted on each profile in :data:`PROFILES`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

ToolMode: TypeAlias = Literal["native", "text", "echo_schema", "functions_text", "plain"]
FormatKind: TypeAlias = Literal["json_schema", "json_object"]

_CJK: Final = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
CHARS_PER_TOKEN: Final = 4  # outside CJK text


@dataclass(frozen=True)
class Refusal:
    """An HTTP error a server answers with: ``status`` and the exact JSON ``body``."""

    status: int
    body: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class ServerProfile:
    """How a server behaves. The default is the plain test server: unlimited parallel requests, no delays,
    every ``response_format`` accepted, every system message kept, tool calls as real ``tool_calls``.

    Attributes:
        name: the profile's name in :data:`PROFILES`.
        slots: requests served at once (``None``: unlimited); the rest wait in arrival order.
        interrupt_on_new: a request that has to wait cuts off the streamed reply in flight after its next chunk
            (llama-cpp-python's default ``interrupt_requests=True``): that client sees ``data: [DONE]`` with no
            ``finish_reason``. A non-streamed reply is never cut.
        prompt_tps: prompt tokens per second (``None``: instant); paid before the first chunk.
        gen_tps: generated tokens per second (``None``: instant); replies then stream in token-sized pieces.
        prompt_cache: a slot keeps its last prompt; the longest common prefix with it costs nothing.
        time_scale: multiplies every delay (0.05 runs a profile 20x faster than the real server).
        refuses: ``response_format`` kinds refused, with the server's answer.
        refuses_auto_tools: the answer to a request with tools but no ``tool_choice`` naming a function.
        drops_later_system: the chat template keeps only the FIRST system message: the model never sees the rest.
        tools: how the model's tool call comes out when ``tool_choice`` names none: ``native`` (``tool_calls``),
            ``text`` (``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`` as content), ``echo_schema``
            (the offered tool's schema written back as content), ``functions_text`` (the content ``functions.NAME:``
            and nothing else), ``plain`` (the model just says its line as text).
        named_tool_native: a ``tool_choice`` naming a function still gets a real tool call (llama-cpp-python
            constrains the reply to that function's parameters and converts it), whatever ``tools`` says.
        seconds_per_request: a fixed cost per request (network and scheduling of a hosted API), before the prompt.
        owned_by: what ``GET /v1/models`` says owns the models (each server says its own: llama-cpp-python "me",
            Ollama "library", LM Studio "organization_owner", vLLM "vllm", llama-server "llamacpp").
        identity: what the server answers at the addresses where servers tell what they are and their version
            (GET path -> JSON body: llama-cpp-python's ``/openapi.json``, llama-server's ``/props``, Ollama's
            ``/api/version``, vLLM's ``/version``); every other GET outside the API is a 404 with ``not_found``.
        not_found: the server's own 404 body (llama-cpp-python and vLLM are FastAPI: ``{"detail": "Not Found"}``).
        models_wait_for_slot: ``GET /v1/models`` waits for a slot like a request (llama-cpp-python takes its model
            lock for it: it answers once the request it runs ends, and with ``interrupt_on_new`` it cuts a streamed
            reply off as a waiting request does).
    """

    name: str = "default"
    slots: int | None = None
    interrupt_on_new: bool = False
    prompt_tps: float | None = None
    gen_tps: float | None = None
    prompt_cache: bool = False
    time_scale: float = 1.0
    refuses: Mapping[FormatKind, Refusal] = field(default_factory=dict, hash=False)
    refuses_auto_tools: Refusal | None = None
    drops_later_system: bool = False
    tools: ToolMode = "native"
    named_tool_native: bool = True
    seconds_per_request: float = 0.0
    owned_by: str = "madoi-test"
    identity: Mapping[str, Any] = field(default_factory=dict, hash=False)
    not_found: Mapping[str, Any] | None = field(default=None, hash=False)
    models_wait_for_slot: bool = False

    def scaled(self, time_scale: float) -> ServerProfile:
        """The same profile with every delay multiplied by ``time_scale``."""
        return dataclasses.replace(self, time_scale=time_scale)

    def prompt_seconds(self, tokens: int) -> float:
        own = tokens / self.prompt_tps if self.prompt_tps else 0.0
        return (self.seconds_per_request + own) * self.time_scale

    def token_seconds(self, tokens: int = 1) -> float:
        return tokens / self.gen_tps * self.time_scale if self.gen_tps else 0.0

    @property
    def paced(self) -> bool:
        """Whether replies are streamed token by token at a rate."""
        return self.gen_tps is not None


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``: one per CJK character, one per :data:`CHARS_PER_TOKEN` characters of anything else."""
    return len(token_pieces(text))


def token_pieces(text: str) -> list[str]:
    """``text`` cut into token-sized pieces (see :func:`estimate_tokens`); they add up to ``text``."""
    pieces: list[str] = []
    run = ""
    for char in text:
        if _CJK.match(char):
            if run:
                pieces.append(run)
                run = ""
            pieces.append(char)
            continue
        run += char
        if len(run) == CHARS_PER_TOKEN:
            pieces.append(run)
            run = ""
    if run:
        pieces.append(run)
    return pieces


def prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt a chatml-like template renders from a request (tools in the system block, as Qwen's does)."""
    tools = body.get("tools") or []
    parts: list[str] = []
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = str(content or "")
        if message.get("tool_calls"):
            text += repr(message["tool_calls"])
        if index == 0 and tools:
            text += f"\n<tools>{tools}</tools>"
        parts.append(f"<|im_start|>{message.get('role')}\n{text}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def _llama_cpp_python_500(message: str) -> Refusal:
    return Refusal(500, {"error": {"message": message, "type": "internal_server_error", "param": None,
                                   "code": None}})


# llama-cpp-python validates response_format against its own type (text | json_object); its route handler turns
# every exception, the validation error included, into HTTP 500 (local-models.md: "HTTP 500 on this server").
LLAMA_CPP_PYTHON_JSON_SCHEMA: Final = _llama_cpp_python_500(  # docs/real-servers.md, "Structured output"
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema'}\n\n  File \"llama_cpp/server/app.py\", line 376, "
    "in create_chat_completion\n    POST /v1/chat/completions"
)
CPU_PROMPT_TPS: Final = 170.0  # local-models.md: ~170 prompt tokens/s on a 2-core machine
CPU_GEN_TPS: Final = 50.0  # local-models.md: 52-63; real-servers.md: 38-49 generated tokens/s
_LOCAL_CPU: Final = ServerProfile(slots=1, prompt_cache=True, prompt_tps=CPU_PROMPT_TPS, gen_tps=CPU_GEN_TPS)
FASTAPI_NOT_FOUND: Final = {"detail": "Not Found"}
# docs/real-servers.md, "Identification": GET /openapi.json (FastAPI's schema, its info shown here; the paths left out)
LLAMA_CPP_PYTHON_OPENAPI: Final = {"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API",
                                                                "version": "0.3.36"}, "paths": {}}
_LLAMA_CPP_PYTHON: Final = dataclasses.replace(_LOCAL_CPU, interrupt_on_new=True, owned_by="me",
                                               models_wait_for_slot=True,
                                               refuses={"json_schema": LLAMA_CPP_PYTHON_JSON_SCHEMA},
                                               identity={"/openapi.json": LLAMA_CPP_PYTHON_OPENAPI},
                                               not_found=FASTAPI_NOT_FOUND)

PROFILES: Final[dict[str, ServerProfile]] = {
    # Hosted APIs (OpenAI and the like): parallel, native tools and both structured kinds; a fixed round trip.
    "openai": ServerProfile("openai", prompt_tps=5000.0, gen_tps=80.0, seconds_per_request=0.3, owned_by="system"),
    # Ollama (its documentation): OLLAMA_NUM_PARALLEL=1 queues requests (no interrupt); same llama.cpp engine as
    # llama-cpp-python on the same CPU, with a prompt cache; tools native; json_schema (recent) and json_object.
    "ollama": dataclasses.replace(_LOCAL_CPU, name="ollama", owned_by="library",
                                  identity={"/api/version": {"version": "0.6.2"}}),
    # llama.cpp llama-server (its documentation): parallel slots (-np 4) each with its own prompt cache
    # (cache_prompt), grammar-constrained json_schema and json_object, tools with --jinja. The slots share the CPU,
    # which this profile does not model.
    "llama-server": dataclasses.replace(
        _LOCAL_CPU, name="llama-server", slots=4, owned_by="llamacpp",
        identity={"/props": {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4,
                             "model_path": "model.gguf", "build_info": "b5298-5b8fa4f7"}},
        not_found={"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}),
    # llama-cpp-python's server, default chat format (the model's own template): one request at a time, a new
    # streamed one cuts off the one in flight, the prompt cache holds only the last prompt, json_schema refused with
    # 500, json_object grammar-constrained; with tool_choice "auto" the model answers in plain text, a named
    # tool_choice gives a real call (docs/real-servers.md, "Tools"). local-models.md also saw the model write the
    # call or the tool schema as text: tools="text" / "echo_schema" play that.
    "llama-cpp-python": dataclasses.replace(_LLAMA_CPP_PYTHON, name="llama-cpp-python", tools="plain"),
    # --chat_format chatml: only the first system message reaches the model (local-models.md), and the template
    # renders no tools, so with tools offered the model just says its line.
    "llama-cpp-python-chatml": dataclasses.replace(
        _LLAMA_CPP_PYTHON, name="llama-cpp-python-chatml", drops_later_system=True, tools="plain"),
    # --chat_format chatml-function-calling: a named tool_choice gives a real tool call; with "auto" the reply is
    # the text `functions.speak:` and nothing else, streamed or not (docs/real-servers.md, "Tools").
    "llama-cpp-python-functions": dataclasses.replace(
        _LLAMA_CPP_PYTHON, name="llama-cpp-python-functions", tools="functions_text"),
    # LM Studio (its documentation): json_schema and tools; response_format json_object refused with 400;
    # requests queue on one model instance.
    "lmstudio": dataclasses.replace(
        _LOCAL_CPU, name="lmstudio", owned_by="organization_owner",
        refuses={"json_object": Refusal(400, {"error": "'response_format.type' must be 'json_schema' or 'text'"})}),
    # vLLM (its documentation): many parallel requests on a GPU, guided decoding for both structured kinds; tools
    # with "auto" choice need --enable-auto-tool-choice and a parser, else 400 (a named tool_choice works).
    "vllm": ServerProfile(
        "vllm", prompt_tps=4000.0, gen_tps=90.0, prompt_cache=True, owned_by="vllm",
        identity={"/version": {"version": "0.6.3"}}, not_found=FASTAPI_NOT_FOUND,
        refuses_auto_tools=Refusal(400, {"object": "error", "message": '"auto" tool choice requires '
                                         "--enable-auto-tool-choice and --tool-call-parser to be set",
                                         "type": "BadRequestError", "param": None, "code": 400})),
}
