"""Logging: to stderr and to a rotating file in the data dir, readable by the user only. Secrets never reach either.

With ``--verbose`` the libraries log at debug level what they send and receive: websockets logs every handshake
header (``Authorization: Bearer ...``) and the request line with its ``?token=``, the openai client logs request
options, httpx logs URLs. :class:`SecretFilter` sits on every handler this module installs and rewrites each
record before it is written: Authorization headers, bearer and basic credentials, ``api_key``/``token``/``secret``
/``password`` values, ``token=`` and ``key=`` in URLs, OpenAI-style ``sk-`` keys, and every secret value the app
registered with :func:`hide` (the API key and the bridge token, whatever form they turn up in).
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import threading
from pathlib import Path
from typing import Final

from app.storage.private_files import private_dir, private_file, tighten

MASK: Final = "***"
_PATTERNS: Final = (
    # A header or key=value form: Authorization: Bearer x, "api_key": "x", token=x, x-api-key: x ...
    (re.compile(r"((?:proxy-)?authorization|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|token|secret"
                r"|password)([\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic)\s+)?[^\s\"',;}&)\]]+", re.IGNORECASE),
     rf"\1\2{MASK}"),
    # A credential after its scheme wherever it stands: (b'authorization', b'Bearer x'), "Bearer x" ...
    (re.compile(r"\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{4,}", re.IGNORECASE), rf"\1 {MASK}"),
    # A secret in a URL's query: ws://127.0.0.1:8737/?token=x&dialect=legacy, ?key=x, ?access_token=x
    (re.compile(r"([?&](?:token|access_token|api_key|apikey|key|auth)=)[^&\s\"'#]+", re.IGNORECASE), rf"\1{MASK}"),
    # OpenAI-style keys keep a recognisable prefix.
    (re.compile(r"\b(sk-[A-Za-z0-9_\-]{3})[A-Za-z0-9_\-]{8,}"), rf"\1{MASK}"),
)
_MIN_HIDDEN: Final = 6  # shorter values would mask ordinary words
_hidden: set[str] = set()
_hidden_lock = threading.Lock()


def hide(*values: str | None) -> None:
    """Masks these exact values in every log line from now on (secrets the app holds: keys, tokens)."""
    with _hidden_lock:
        _hidden.update(v for v in values if v and len(v) >= _MIN_HIDDEN)


def redact(text: str) -> str:
    """``text`` with API keys, tokens and credentials masked."""
    for value in sorted(_hidden, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class SecretFilter(logging.Filter):
    """Rewrites each record's message with its secrets masked (every handler then writes the masked text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: the formatter reports it
            return True
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class _RedactingFormatter(logging.Formatter):
    """Masks what the filter cannot see: the text of a traceback and of ``stack_info``."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose files (the current one and each new one after a rotation) are 0600."""

    def _open(self):  # type: ignore[no-untyped-def]  # (typeshed types it as returning TextIOWrapper)
        private_file(Path(self.baseFilename))
        return super()._open()


def setup_logging(log_file: Path | None, *, level: int = logging.INFO, stderr: bool = True) -> None:
    root = logging.getLogger()
    root.setLevel(level)
    for handler in list(root.handlers):
        if getattr(handler, "_madoi", False):
            root.removeHandler(handler)
    fmt = _RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    if stderr:
        handlers.append(logging.StreamHandler())
    if log_file is not None:
        private_dir(log_file.parent)
        tighten([log_file.parent])  # rotated logs an older Madoi left readable by others
        handlers.append(PrivateRotatingFileHandler(log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(fmt)
        handler.addFilter(SecretFilter())
        handler._madoi = True  # type: ignore[attr-defined]
        root.addHandler(handler)
