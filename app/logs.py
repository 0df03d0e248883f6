"""Logging: to stderr and to a rotating file in the data dir. Secrets never reach either (see ``redact``)."""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_\-]{6})[A-Za-z0-9_\-]+"  # OpenAI-style keys keep a recognisable prefix
    r"|((?:api[_-]?key|token|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+",  # key=value forms
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """Masks API keys and tokens in ``text``."""
    return _SECRET.sub(lambda m: (m.group(1) + "…") if m.group(1) else (m.group(2) + "***"), text)


class _RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


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
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(log_file, maxBytes=2_000_000, backupCount=3,
                                                             encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(fmt)
        handler._madoi = True  # type: ignore[attr-defined]
        root.addHandler(handler)
