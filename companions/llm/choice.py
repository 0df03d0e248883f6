"""Which model a companion talks to: its card's own endpoint/model, else the app's default model.

A card may name a ``base_url``, a ``model`` and ``api_key_env`` (the environment variable holding its key; keys
are never written in cards). Unset fields fall back to the app's LLM settings. The settings' API key is only sent
to the settings' own endpoint: a card pointing at another server gets its key from ``api_key_env`` or none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from companions.llm.detect import ModelResolution
from companions.llm.openai_backend import build_chat_model
from companions.llm.types import ChatModel, LLMError


@dataclass(frozen=True)
class DefaultEndpoint:
    """The app-wide model (from Settings or detection) and how it was reached."""

    model: ChatModel
    base_url: str | None = None
    model_name: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0

    def __repr__(self) -> str:  # the key stays out of logs
        return f"DefaultEndpoint(base_url={self.base_url!r}, model_name={self.model_name!r})"


def default_endpoint(
    resolution: ModelResolution, api_key: str | None, timeout_s: float = 60.0
) -> DefaultEndpoint | None:
    """The DefaultEndpoint of a :func:`~companions.llm.detect.resolve_chat_model` result (None if it found none)."""
    if resolution.model is None:
        return None
    key = api_key if resolution.source == "settings" else None
    return DefaultEndpoint(resolution.model, resolution.model.base_url, resolution.model.name, key, timeout_s)


def model_for_card(
    companion: str,
    *,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    default: DefaultEndpoint | None,
    environ: Mapping[str, str] = os.environ,
) -> ChatModel:
    """The ChatModel for one companion. Shares ``default.model`` when the card names nothing of its own.

    Raises LLMError with a message naming the companion when the card's choice cannot work (no endpoint at all,
    no model name, a named key variable that is unset); the caller reports it and the other companions still load.
    """
    if base_url is None and model is None and api_key_env is None:
        if default is None:
            raise LLMError(f"{companion}: no LLM configured (set one in Settings > LLM or in the card's llm section)")
        return default.model
    target = base_url or (default.base_url if default is not None else None)
    if target is None:
        raise LLMError(f"{companion}: the card names no base_url and the app has no LLM endpoint")
    name = model or (default.model_name if default is not None else None)
    if not name:
        raise LLMError(f"{companion}: the card names no model for {target}")
    key: str | None = None
    if api_key_env is not None:
        key = environ.get(api_key_env)
        if not key:
            raise LLMError(f"{companion}: the environment variable {api_key_env} (its API key) is not set")
    elif default is not None and target.rstrip("/") == (default.base_url or "").rstrip("/"):
        key = default.api_key
    timeout_s = default.timeout_s if default is not None else 60.0
    try:
        return build_chat_model(target, name, key, timeout_s=timeout_s)
    except LLMError as exc:
        raise LLMError(f"{companion}: {exc}") from None
