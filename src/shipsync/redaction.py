"""Keeps credentials out of text: the one redaction every output of shipsync goes through.

Two things are masked, wherever they appear:

- **Known secrets**, registered as the settings are read (the API key, webhook secrets, AWS keys,
  `PGPASSWORD`, and every credential found in a configured URI or connection string): exact
  strings, however short.
- **Credentials by their form**, whoever wrote them (`mask_credentials`): the password of a URI's
  user-info in any scheme (`postgresql://user:PASSWORD@host`, `s3://KEY:SECRET@bucket`,
  `https://user:PASSWORD@host`); a value given to a credential's name (`password=`, `pass=`,
  `secret=`, `token=`, `api_key=`, `PGPASSWORD=`, `AWS_SECRET_ACCESS_KEY=`, `AWS_SESSION_TOKEN=`,
  `X-Amz-Signature=`..., in a query, a libpq string or an environment line; `"password": "..."` in
  JSON; `PASSWORD '...'`, `SECRET '...'`, `KEY_ID '...'` in DuckDB's secrets); an
  `Authorization:` header's value; AWS access key ids (`AKIA...`, `ASIA...`).

`redact` does both. Logs get it through the log record factory (`install_log_redaction`: every
record, whichever logger or handler it goes to, Prefect's and uvicorn's included), tracebacks
nobody caught through the exception hooks (`install_exception_redaction`), and the CLI's one-line
errors, the report, the ledger and lake descriptions call it themselves.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import traceback
from types import TracebackType
from typing import Any
from urllib.parse import unquote

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first; replaced whole on each change, read without the lock
_installed = False
MASK = "***"

# Names whose value is a credential: one of these words, alone or after prefixes joined by `_`,
# `-` or `.` (`AWS_SECRET_ACCESS_KEY`, `X-Amz-Security-Token`, `client.secret`). A name that only
# ends in such a word without a joint (`bypass`, `compass`) is not one; `PGPASSWORD` is named.
_CREDENTIAL_NAME = re.compile(
    r"(?:[a-z0-9]+[_.-])*(?:password|passwd|pwd|pass|pgpassword|secrets?|secret[_-]access[_-]key|token|api[_-]?key"
    r"|access[_-]key(?:[_-]id)?|key[_-]id|credentials?|signature|sig|auth|authorization)",
    re.IGNORECASE,
)
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")
_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_FORMS = re.compile(
    # URI user-info: the password between `user:` and the last `@` before the host (a `/` in it
    # too: an AWS secret key in an `s3://` URI is seldom percent-encoded).
    r"(?P<uri>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"<>]*:)(?P<uri_secret>[^\s'\"<>]+)(?<!/)(?=@)"
    # An Authorization header's value, with its scheme word (Token, Bearer, Basic) kept.
    r"|(?P<header>\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:token|bearer|basic)\s+)?)(?P<header_secret>[^\s\"',;]+)"
    # NAME=value (a query, a libpq string, an environment line), the name quoted or not.
    rf"|(?P<assign>(?<![\w.-])[\"']?(?P<assign_name>[\w.-]+)[\"']?\s*=\s*)(?P<assign_secret>{_QUOTED}|[^\s&'\"<>]+)"
    # "NAME": "value" (JSON, a Python repr), never a bare `NAME:` (prose: "secret: not set").
    rf"|(?P<json>[\"'](?P<json_name>[\w.-]+)[\"']\s*:\s*)(?P<json_secret>{_QUOTED})"
    # NAME 'value': DuckDB's secrets (`SECRET '...'`, `KEY_ID '...'`), libpq-style options.
    r"|(?P<option>(?<![\w.-])(?P<option_name>[\w.-]+)\s+)(?P<option_secret>'(?:[^'\\]|\\.)*')"
    # AWS access key ids.
    rf"|(?P<aws_key>(?-i:{_KEY_ID.pattern}))",
    re.IGNORECASE,
)
_NAMED = ("assign", "json", "option")  # forms whose value is a credential only under a credential's name
# A text holds none of the forms unless it holds one of these (checked first: most log lines do not).
_CLUES = ("pass", "pwd", "secret", "token", "key", "credential", "sig", "auth", "://")
_KEY_ID_CLUES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")


def register_secret(value: str | None) -> None:
    """Remember a secret so that `redact` and every log record mask it wherever it appears.

    Any non-empty value counts, however short: a short secret masked in a log line costs some
    readability, an unmasked one is a leak (the receiver refuses webhook secrets under 16
    characters anyway, see `shipsync.webhooks.secrets_store.MIN_SECRET_LENGTH`)."""
    global _secrets
    if value and value not in _secrets:
        with _lock:
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _has_clue(text: str) -> bool:
    lowered = text.lower()
    return any(clue in lowered for clue in _CLUES) or any(clue in text for clue in _KEY_ID_CLUES)


def _credential(match: re.Match[str]) -> str | None:
    """The credential a match of `_FORMS` found, or None (a name that is not a credential's)."""
    kind = match.lastgroup or ""
    if kind == "aws_key":
        return match.group(kind)
    form = kind.removesuffix("_secret")
    if form in _NAMED and not _CREDENTIAL_NAME.fullmatch(match.group(f"{form}_name")):
        return None
    return match.group(kind)


def credentials_in(text: str | None) -> list[str]:
    """The credentials written in `text` in one of the forms `mask_credentials` masks (a URI's
    password, a `password=` value...), as they are written there, quotes taken off."""
    if not text or not _has_clue(text):
        return []
    found: list[str] = []
    for match in _FORMS.finditer(text):
        credential = _credential(match)
        if credential is None:
            found += credentials_in(match.group((match.lastgroup or "").removesuffix("_secret") + "_secret"))
        elif _unquoted(credential) not in ("", MASK):
            found.append(_unquoted(credential))
        if match.lastgroup == "uri_secret":
            found.append(unquote(match.group("uri_secret")))  # as a driver reads it: `p%40ss` is `p@ss`
            found += _KEY_ID.findall(match.group("uri"))  # an access key id as the user: `s3://KEY:SECRET@bucket`
    return list(dict.fromkeys(found))


def register_credentials_in(*texts: str | None) -> None:
    """Register as secrets the credentials written in these settings (a URI's password...), so that
    they are masked also where they appear without their form (a driver quoting the bare password)."""
    for text in texts:
        for credential in credentials_in(text):
            register_secret(credential)


def _mask(match: re.Match[str]) -> str:
    kind = match.lastgroup or ""
    if kind == "aws_key":
        return MASK
    form = kind.removesuffix("_secret")
    secret = match.group(kind)
    if _credential(match) is None:  # another name's value, which may hold a credential (a URI)
        return match.group(form) + mask_credentials(secret)
    quote = secret[0] if len(secret) >= 2 and secret[0] == secret[-1] and secret[0] in "'\"" else ""
    named = _KEY_ID.sub(MASK, match.group(form)) if form == "uri" else match.group(form)
    return f"{named}{quote}{MASK}{quote}"


def mask_credentials(text: str) -> str:
    """`text` with every credential written in a known form masked (see the module docstring)."""
    return _FORMS.sub(_mask, text) if _has_clue(text) else text


def redact(text: str) -> str:
    """`text` with every registered secret and every credential in a known form masked."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return mask_credentials(text)


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
    """Mask secrets and credentials in every log record from now on (idempotent).

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
            redact_record(record)
            return record

        logging.setLogRecordFactory(make_redacted)
        install_exception_redaction()
        _installed = True


def _print_redacted(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


def _print_redacted_in_thread(args: Any) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    sys.stderr.write(f"Exception in thread {name}:\n")
    _print_redacted(args.exc_type, args.exc_value, args.exc_traceback)


def install_exception_redaction() -> None:
    """Print a traceback nobody caught (the process's, or a thread's) with its secrets masked:
    a driver's error may quote a connection string whole."""
    sys.excepthook = _print_redacted
    threading.excepthook = _print_redacted_in_thread
