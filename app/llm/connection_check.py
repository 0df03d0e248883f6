"""The settings dialog's "Test connection": lists the models of an OpenAI-compatible endpoint.

The request goes through the real ``openai`` client (the same one the companions use), synchronously in an
executor thread so the Qt/asyncio loop never waits on the network. Every failure comes back as a value that
says what went wrong in words a user can act on; the API key never appears in it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from app.runtime.logs import redact
from app.settings.model import Settings

DEFAULT_TIMEOUT_S = 5.0
# Local servers (Ollama, LM Studio, llama.cpp) ignore the key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"
UPGRADE_REQUIRED = 426


@dataclass(frozen=True)
class ConnectionResult:
    ok: bool
    models: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def model_count(self) -> int:
        return len(self.models)

    @property
    def summary(self) -> str:
        if self.ok:
            return f"OK: {self.model_count} model{'s' if self.model_count != 1 else ''}"
        return f"Failed: {self.error}"


ConnectionTester = Callable[[str, str | None], Awaitable[ConnectionResult]]
"""``(base_url, api_key) -> result``: what the settings dialog calls; tests and the lead may inject another."""


def _list_models(base_url: str, api_key: str | None, timeout_s: float) -> ConnectionResult:
    import openai  # here, not at the top: the window imports this module and openai costs ~0.5 s

    client = openai.OpenAI(base_url=base_url, api_key=api_key or _PLACEHOLDER_KEY, timeout=timeout_s,
                           max_retries=0)
    try:
        page = client.models.list()
        return ConnectionResult(ok=True, models=sorted(m.id for m in page.data))
    except openai.AuthenticationError as err:
        return ConnectionResult(ok=False, error=f"the server refused the API key (HTTP {err.status_code})")
    except openai.NotFoundError:
        return ConnectionResult(ok=False, error=f"no /models at {base_url} (HTTP 404): is the URL missing /v1?")
    except openai.APIStatusError as err:
        if err.status_code == UPGRADE_REQUIRED:  # what a WebSocket server answers plain HTTP (Madoi's bridge too)
            return ConnectionResult(ok=False, error=f"{base_url} is a WebSocket server (a bridge such as Madoi's), "
                                                    "not a model server: check the port")
        return ConnectionResult(ok=False, error=f"the server answered HTTP {err.status_code}")
    except openai.APITimeoutError:
        return ConnectionResult(ok=False, error=f"no answer within {timeout_s:g} s")
    except openai.APIConnectionError as err:
        cause = err.__cause__ or err
        return ConnectionResult(ok=False, error=f"cannot connect to {base_url} ({type(cause).__name__})")
    except (openai.OpenAIError, ValueError) as err:
        return ConnectionResult(ok=False, error=str(err))
    finally:
        client.close()


async def check_connection(base_url: str, api_key: str | None,
                           timeout_s: float = DEFAULT_TIMEOUT_S) -> ConnectionResult:
    """``GET {base_url}/models``; never raises for network or server trouble."""
    if not base_url.startswith(("http://", "https://")):
        return ConnectionResult(ok=False, error="the URL must start with http:// or https://")
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(None, functools.partial(_list_models, base_url, api_key, timeout_s))
    if result.error is not None:
        error = redact(result.error)
        if api_key:
            error = error.replace(api_key, "***")
        result = ConnectionResult(ok=False, error=error)
    return result


def llm_configured(settings: Settings) -> bool:
    """Whether the user has named an endpoint or a model file at all (the first-run panel shows until they have)."""
    return bool(settings.llm.base_url or settings.llm.model_file)
