"""Keeps secrets out of text: a registry of secret strings and a function that masks them."""

from __future__ import annotations

import logging
import threading

_lock = threading.Lock()
_secrets: set[str] = set()
MASK = "***"


def register_secret(value: str | None) -> None:
    """Remember a secret so that `redact` and the log filter mask it wherever it appears."""
    if value and len(value) >= 4:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """Return text with every registered secret replaced by a mask."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that masks registered secrets in every record's message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


def install_log_redaction() -> None:
    """Attach the redacting filter to the root logger's handlers (idempotent)."""
    root = logging.getLogger()
    for handler in root.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
