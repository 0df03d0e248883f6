"""The ChatModel port and the OpenAI-shaped values it speaks: messages (text and images), tools, streaming.

A backend streams :class:`TextDelta` events as text arrives (and :class:`ToolCallDelta` events as tool calls
arrive, where it can) and ends every stream with exactly one
:class:`Completion` holding the whole assistant message (text and every tool call, arguments as raw JSON text).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Value):
    type: Literal["text"] = "text"
    text: str


class ImagePart(_Value):
    """An image for multimodal models, as a data URL (``data:image/jpeg;base64,...``) or an http(s) URL."""

    type: Literal["image"] = "image"
    url: str


ContentPart: TypeAlias = TextPart | ImagePart


class ToolCall(_Value):
    id: str
    name: str
    arguments: str = "{}"  # raw JSON text, exactly as the model produced it (may be invalid)


class ChatMessage(_Value):
    role: Role
    content: str | list[ContentPart] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role="tool"
    name: str | None = None  # speaker name for multi-party user messages, or the tool's name

    @property
    def text(self) -> str:
        """The text of the content (image parts left out)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @classmethod
    def system(cls, text: str) -> ChatMessage:
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str, name: str | None = None) -> ChatMessage:
        return cls(role="user", content=text, name=name)

    @classmethod
    def assistant(cls, text: str | None, tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
        return cls(role="assistant", content=text, tool_calls=tool_calls)

    @classmethod
    def tool(cls, call_id: str, name: str, result: str) -> ChatMessage:
        return cls(role="tool", content=result, tool_call_id=call_id, name=name)


class ToolSpec(_Value):
    """A tool offered to the model: name, description, JSON Schema of the arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class JsonSchemaFormat(_Value):
    """Ask for JSON matching ``schema`` (OpenAI ``response_format={"type": "json_schema", ...}``)."""

    name: str
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool = False

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ChatRequest(_Value):
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: Literal["auto", "none", "required"] = "auto"
    response_format: JsonSchemaFormat | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    # On an endpoint that runs few requests at once, a waiting request of higher priority goes first (the chosen
    # speaker's reply before votes on a later line).
    priority: int = 0


class Usage(_Value):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class TextDelta(_Value):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallDelta(_Value):
    """A fragment of a tool call as it streams: ``index`` says which call; ``name`` and ``arguments`` are the new
    characters of this fragment (either may be empty), so a consumer can follow e.g. ``speak``'s text as it is
    written. The whole call still arrives in the :class:`Completion`."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    name: str = ""
    arguments: str = ""


class Completion(_Value):
    type: Literal["completion"] = "completion"
    message: ChatMessage  # role="assistant"
    finish_reason: str = "stop"
    usage: Usage | None = None


StreamEvent: TypeAlias = TextDelta | ToolCallDelta | Completion


LLMErrorKind: TypeAlias = Literal["unreachable", "crashed", "timed-out", "refused", "other"]
"""What went wrong with a model call, for the person: the server could not be reached (connection refused, an
unknown host, no connection within the connect timeout); it went away or failed in the middle of a request (the
connection dropped, HTTP 5xx); it gave no answer in time; it refused the request (HTTP 4xx: the key, the model
name, a limit); or something else (an answer that is not a chat stream, a model that could not be set up)."""

MODEL_DOWN_KINDS: frozenset[LLMErrorKind] = frozenset({"unreachable", "crashed", "timed-out"})
"""The kinds that say the model is not answering at all: no request can succeed until it is back."""

ConnectionCause: TypeAlias = Literal["connection-refused", "unknown-host", "connect-timeout", "connection-lost", ""]
"""Why a server could not be reached or went away, when that is known ("" otherwise)."""


class LLMError(Exception):
    """A model call failed. ``retryable`` says whether trying again later may help (429, 5xx, timeouts); ``kind``
    what went wrong in the person's terms (:data:`LLMErrorKind`), ``cause`` why a connection failed, and ``endpoint``
    the base URL of the server asked, when a backend knows them."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None,
                 kind: LLMErrorKind = "other", cause: ConnectionCause = "", endpoint: str | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.kind: LLMErrorKind = kind
        self.cause: ConnectionCause = cause
        self.endpoint = endpoint

    @property
    def model_down(self) -> bool:
        """Whether the model is not answering at all (unreachable, crashed, timed out)."""
        return self.kind in MODEL_DOWN_KINDS


class ChatModel(Protocol):
    """The LLM port. Implementations: OpenAI-compatible endpoints, the scripted model, local models."""

    @property
    def name(self) -> str:
        """A human-readable model name (for the UI and logs)."""
        ...

    @property
    def supports_images(self) -> bool:
        """Whether ImagePart content is understood."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the answer: TextDelta events, then exactly one Completion. Raises LLMError on failure."""
        ...


async def complete(model: ChatModel, request: ChatRequest) -> Completion:
    """Runs ``request`` to the end and returns its Completion."""
    completion: Completion | None = None
    async for event in model.stream(request):
        if isinstance(event, Completion):
            completion = event
    if completion is None:
        raise LLMError(f"{model.name}: the stream ended without a completion")
    return completion
