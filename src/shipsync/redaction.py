"""Keeps secrets out of text: a registry of secret strings, a function that masks them, and the
log record factory that masks them in every log record, whichever logger or handler it goes to."""

from __future__ import annotations

import logging
import threading
from typing import Any

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first; replaced whole on each change, read without the lock
_installed = False
MASK = "***"


def register_secret(value: str | None) -> None:
    """Remember a secret so that `redact` and every log record mask it wherever it appears.

    Any non-empty value counts, however short: a short secret masked in a log line costs some
    readability, an unmasked one is a leak (the receiver refuses webhook secrets under 16
    characters anyway, see `shipsync.webhooks.secrets_store.MIN_SECRET_LENGTH`)."""
    global _secrets
    if value and value not in _secrets:
        with _lock:
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def redact(text: str) -> str:
    """Return text with every registered secret replaced by a mask."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_record(record: logging.LogRecord) -> None:
    """Mask secrets in a record's message, arguments, traceback and stack, in place. The message
    is formatted here once (handlers then use it as is), so masking costs no second formatting."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: the handler would print msg and args raw
        message = f"{record.msg!s} {record.args!r}"
    cleaned = redact(message)
    if record.args or cleaned != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        if redact(text) != text:
            record.exc_text = redact(text)  # formatters use exc_text when it is set
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def install_log_redaction() -> None:
    """Mask registered secrets in every log record from now on (idempotent).

    Done where records are made, not by a filter on some handlers: Prefect, uvicorn and the
    sandbox attach handlers of their own to their own loggers, which a filter on the root
    logger's handlers never sees."""
    global _installed
    with _lock:
        if _installed:
            return
        make = logging.getLogRecordFactory()

        def make_redacted(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make(*args, **kwargs)
            if _secrets:
                redact_record(record)
            return record

        logging.setLogRecordFactory(make_redacted)
        _installed = True
