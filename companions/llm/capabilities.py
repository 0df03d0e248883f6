"""What one model endpoint (base URL + model) can do and how fast it is, learned from its answers, per process.

Every :class:`~companions.llm.openai_backend.OpenAIChatModel` of one endpoint shares one
:class:`EndpointCapabilities` (a module-level registry), so what one companion's model learned - the structured
output mode that works, how many requests the server runs at once, its speed - every other companion's model on
the same server knows too. Values are read and written under a lock: safe from any thread or event loop.

Speed is kept as exponentially weighted moving averages of time to first token, prompt tokens/s and generated
tokens/s; :meth:`EndpointCapabilities.estimate_s` turns them into the expected duration of one request. A server
with a prompt cache reads only the part of a prompt it has not seen, so prompt tokens/s over whole prompts is
mostly the cache's speed (measured on the 0.5B model: 114 tokens/s on the first request, 960 after seven); the
speed of reading new tokens is kept beside it (:attr:`EndpointCapabilities.cold_prompt_tps`, the part a prompt
shares with the request before on the endpoint taken as cached), and :meth:`EndpointCapabilities.bound_s` turns it
into how long a request may take when nothing of its prompt is cached: the conversation's vote deadline.
:func:`capabilities_of` finds the capabilities of any ChatModel (None for models without an endpoint, e.g. the
scripted model).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import threading
from typing import TYPE_CHECKING, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from companions.llm.gate import ConcurrencyGate
from companions.llm.types import ChatModel

if TYPE_CHECKING:
    from companions.llm.server_probe import ServerIdentity

log = logging.getLogger(__name__)

StructuredMode: TypeAlias = Literal["json_schema", "json_object", "tool", "text"]
# The order in which structured output is tried: the first that an endpoint accepts is kept.
MODES: Final[tuple[StructuredMode, ...]] = ("json_schema", "json_object", "tool", "text")
EWMA_WEIGHT: Final = 0.3  # of the newest sample
# A prompt's new part long enough to time how fast the server reads (a shorter one's time is mostly the request's
# fixed cost: its reading speed would come out too low).
COLD_MIN_NEW_TOKENS: Final = 64
# A Japanese character is about one token in the tokenizers of small models; other text about four characters.
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """A rough token count of ``text`` (one per CJK character, one per four other characters), at least 1."""
    cjk = len(_CJK.findall(text))
    return max(1, cjk + (len(text) - cjk + 3) // 4)


def is_local_url(base_url: str) -> bool:
    """Whether ``base_url`` points at this machine or a private network (a user's own model server)."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith((".local", ".localhost", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _ewma(old: float | None, new: float) -> float:
    return new if old is None else old + EWMA_WEIGHT * (new - old)


class EndpointCapabilities:
    """What one endpoint can do; see the module docstring. Create through :func:`endpoint_capabilities`.

    ``slots`` is how many requests run at once (None: unlimited). A local server starts at 1 until its own answer
    says more (llama.cpp's ``/props``), because most local servers queue parallel requests anyway and
    llama-cpp-python's cuts off the one in flight; a hosted API starts unlimited.
    """

    def __init__(self, base_url: str, model: str, *, local: bool) -> None:
        self.base_url = base_url
        self.model = model
        self.local = local
        self.gate = ConcurrencyGate(1 if local else None)
        self.server_kind: str | None = None  # e.g. "llama-cpp-python", "llama.cpp", from the probe
        # The model writes tool calls as text instead of calling tools: offering tools only lengthens the prompt
        # and invites tool syntax. Known for llama-cpp-python (docs/real-servers.md), learned for others.
        self.tools_as_text = False
        self.include_usage = True  # stream_options={"include_usage": true} is accepted (until an error says not)
        self.token_limit_parameter: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
        self.sends_finish_reason = False  # set by the first stream that carried one; then a stream without is cut
        self.identity: ServerIdentity | None = None  # what the GETs of the probe told (server_probe.py)
        self.tools_known = not local  # whether tools_as_text is a fact (known or learned), not a default
        self._lock = threading.Lock()
        self._mode_index = 0
        self._mode_confirmed = False
        self._probe_claimed = not local  # hosted APIs are never probed
        self._ttft_s: float | None = None
        self._prompt_tps: float | None = None
        self._gen_tps: float | None = None
        self._cold_prompt_tps: float | None = None
        self._last_prompt = ""  # the text of the request before (what a server's prompt cache holds, most likely)
        self._samples = 0

    def __repr__(self) -> str:
        return (
            f"EndpointCapabilities({self.base_url!r}, {self.model!r}, mode={self.structured_mode}, slots={self.slots},"
            f" ttft={self.ttft_s}, gen_tps={self.gen_tps})"
        )

    # -- structured output ---------------------------------------------------------------------------------------

    @property
    def structured_mode(self) -> StructuredMode:
        """The best structured-output mode not yet refused by this endpoint."""
        return MODES[self._mode_index]

    @property
    def mode_confirmed(self) -> bool:
        """Whether the current mode has been accepted once (then its errors are ordinary errors, not facts)."""
        return self._mode_confirmed

    def confirm_mode(self, mode: StructuredMode) -> None:
        with self._lock:
            if MODES[self._mode_index] == mode:
                self._mode_confirmed = True

    def use_mode(self, mode: StructuredMode, *, confirmed: bool) -> None:
        """Takes ``mode`` as this endpoint's structured-output mode: known for its server, or learned before (then
        ``confirmed``: its errors are ordinary errors), so no request is spent finding it."""
        with self._lock:
            self._mode_index = MODES.index(mode)
            self._mode_confirmed = confirmed

    def refuse_mode(self, mode: StructuredMode, why: str) -> StructuredMode | None:
        """Records that an HTTP error on a request sent in ``mode`` refused that mode; returns the mode to try
        next, or None when the error is not a capability fact (``mode`` is "text", or the mode this endpoint
        already accepted once: then it is an ordinary error). Logs a move once per endpoint."""
        with self._lock:
            index = MODES.index(mode)
            if mode == "text" or (index == self._mode_index and self._mode_confirmed):
                return None
            moved = index == self._mode_index
            if moved:
                self._mode_index = index + 1
            current = MODES[self._mode_index]
        if moved:
            log.info("%s %s: structured output %s refused (%s); using %s from now on",
                     self.base_url, self.model, mode, why[:200], current)
        return current

    # -- concurrency ---------------------------------------------------------------------------------------------

    @property
    def slots(self) -> int | None:
        """How many requests the endpoint is sent at once (None: unlimited)."""
        return self.gate.limit

    def claim_probe(self) -> bool:
        """True exactly once per local endpoint: the caller then probes the server (see server_probe)."""
        with self._lock:
            claimed, self._probe_claimed = self._probe_claimed, True
        return not claimed

    def learn_server(self, identity: ServerIdentity, *, mode: StructuredMode | None = None,
                     tools_as_text: bool | None = None) -> None:
        """Applies what a probe found: the server's kind, version and slots, and what is known of that server
        (known_servers.py: its structured-output ``mode``, whether its model's tool calls come back as text; None:
        not known). A server that is not the one identified before (another kind, version, slots or model list)
        is learned afresh."""
        if self.identity is not None and not identity.same_server(self.identity.fingerprint):
            log.info("%s: the server changed (%s -> %s); learning it again", self.base_url,
                     self.identity.describe(), identity.describe())
            self.forget_facts()
        self.identity = identity
        self.server_kind = identity.kind
        if mode is not None and not self._mode_confirmed:
            self.use_mode(mode, confirmed=True)
        if tools_as_text is not None:
            self.tools_as_text, self.tools_known = tools_as_text, True
        self.gate.set_limit(identity.slots)
        log.info("%s: %s", self.base_url, identity.describe())

    def forget_facts(self) -> None:
        """Forgets what was learned of the server (it changed): modes, tools, speed."""
        with self._lock:
            self._mode_index, self._mode_confirmed = 0, False
            self._ttft_s = self._prompt_tps = self._gen_tps = self._cold_prompt_tps = None
            self._last_prompt = ""
            self._samples = 0
        self.tools_as_text, self.tools_known = False, not self.local
        self.sends_finish_reason = False

    @property
    def facts_known(self) -> bool:
        """Whether nothing is left to learn: the structured mode is confirmed and tools are a known fact."""
        return self._mode_confirmed and self.tools_known

    def restore(self, *, mode: StructuredMode, tools_as_text: bool, ttft_s: float | None,
                prompt_tps: float | None, gen_tps: float | None, samples: int,
                cold_prompt_tps: float | None = None) -> None:
        """Takes what was learned of this endpoint at an earlier start (the same server: companions/llm/learning.py)."""
        self.use_mode(mode, confirmed=True)
        self.tools_as_text, self.tools_known = tools_as_text, True
        with self._lock:
            if self._samples == 0:
                self._ttft_s, self._prompt_tps, self._gen_tps, self._samples = ttft_s, prompt_tps, gen_tps, samples
                self._cold_prompt_tps = cold_prompt_tps

    def stream_cut_off(self) -> None:
        """A stream ended without a finish reason: the server cut it off for another request. One at a time now."""
        if self.gate.limit != 1:
            log.warning("%s: the server cut off a request in flight; sending one request at a time from now on",
                        self.base_url)
            self.gate.set_limit(1)

    # -- speed ---------------------------------------------------------------------------------------------------

    def record(self, *, prompt_tokens: int, ttft_s: float, completion_tokens: int, generation_s: float,
               prompt_text: str = "") -> None:
        """Adds one finished request: time to its first token, and its generated tokens after that. ``prompt_text``
        (its messages as text, in order): what it shares from the start with the request before is taken as
        cached by the server, its new tokens' reading timed (:attr:`cold_prompt_tps`)."""
        with self._lock:
            self._samples += 1
            self._ttft_s = _ewma(self._ttft_s, ttft_s)
            if ttft_s > 0 and prompt_tokens > 0:
                self._prompt_tps = _ewma(self._prompt_tps, prompt_tokens / ttft_s)
            if prompt_text:
                shared = common_prefix(self._last_prompt, prompt_text)
                self._last_prompt = prompt_text
                new_tokens = prompt_tokens * (1 - shared / len(prompt_text))
                if ttft_s > 0 and new_tokens >= COLD_MIN_NEW_TOKENS:
                    self._cold_prompt_tps = _ewma(self._cold_prompt_tps, new_tokens / ttft_s)
            if generation_s > 0 and completion_tokens > 1:
                # The first token arrived at ttft; the rest were generated over generation_s.
                self._gen_tps = _ewma(self._gen_tps, (completion_tokens - 1) / generation_s)

    @property
    def samples(self) -> int:
        return self._samples

    @property
    def ttft_s(self) -> float | None:
        return self._ttft_s

    @property
    def prompt_tps(self) -> float | None:
        return self._prompt_tps

    @property
    def gen_tps(self) -> float | None:
        return self._gen_tps

    @property
    def cold_prompt_tps(self) -> float | None:
        """How fast the endpoint reads prompt tokens it has not cached (None: not measured yet)."""
        return self._cold_prompt_tps

    def estimate_s(self, prompt_tokens: int, max_tokens: int) -> float | None:
        """The expected seconds of one request of ``prompt_tokens`` that generates up to ``max_tokens``, as
        measured so far on this endpoint (not counting waiting for a slot); None before the first measurement."""
        with self._lock:
            ttft, prompt_tps, gen_tps = self._ttft_s, self._prompt_tps, self._gen_tps
        if ttft is None:
            return None
        first = prompt_tokens / prompt_tps if prompt_tps else ttft
        return first + (max_tokens / gen_tps if gen_tps else 0.0)

    def bound_s(self, prompt_tokens: int, max_tokens: int) -> float | None:
        """How long one request of ``prompt_tokens`` that generates up to ``max_tokens`` may take on this endpoint
        when the server has cached none of its prompt (a deadline's measure; :meth:`estimate_s` until the reading
        of new tokens was measured); None before the first measurement."""
        with self._lock:
            cold, gen_tps = self._cold_prompt_tps, self._gen_tps
        if cold is None:
            return self.estimate_s(prompt_tokens, max_tokens)
        return prompt_tokens / cold + (max_tokens / gen_tps if gen_tps else 0.0)


_registry: dict[tuple[str, str], EndpointCapabilities] = {}
_registry_lock = threading.Lock()


def endpoint_capabilities(base_url: str, model: str) -> EndpointCapabilities:
    """The one EndpointCapabilities of ``base_url`` + ``model`` in this process (created on first use)."""
    key = (base_url.rstrip("/"), model)
    with _registry_lock:
        found = _registry.get(key)
        if found is None:
            found = _registry[key] = EndpointCapabilities(key[0], model, local=is_local_url(key[0]))
        return found


def forget_endpoints() -> None:
    """Forgets everything learned (for tests, and after the user changed the LLM settings)."""
    with _registry_lock:
        _registry.clear()


def capabilities_of(model: ChatModel) -> EndpointCapabilities | None:
    """The endpoint capabilities behind ``model``; None for a model without an endpoint (e.g. the scripted one)."""
    found = getattr(model, "capabilities", None)
    return found if isinstance(found, EndpointCapabilities) else None
