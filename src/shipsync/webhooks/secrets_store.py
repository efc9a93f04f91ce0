"""The local secrets store: webhook secrets by webhook id, in a private file of the user's
configuration (`~/.config/shipsync/secrets.json`, mode 0600 in a 0700 folder; SHIPSYNC_SECRETS_FILE
to choose another), readable by the receiver and never written to logs, artifacts or the warehouse.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from shipsync.config import Settings
from shipsync.errors import ConfigError
from shipsync.redaction import register_secret
from shipsync.safe_files import check_own_folder, private_folder, write_file

log = logging.getLogger("shipsync.webhooks")
# Shorter secrets are refused by the receiver: a key that short could be guessed, and a secret
# left empty by an unset variable would make every body "signed" by anyone.
MIN_SECRET_LENGTH = 16


def store_path(settings: Settings) -> Path:
    return settings.secrets_file_path


def _parse(path: Path, text: bytes) -> dict[str, str]:
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(f"{path}: the webhook secrets store is unreadable") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the webhook secrets store is not a JSON object")
    return {str(k): str(v) for k, v in data.items()}


def _read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    check_own_folder(path.parent)  # nobody else could have put the file (or a link) there
    try:
        return _parse(path, path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{path}: the webhook secrets store is unreadable ({exc.strerror})") from None


def _write(path: Path, secrets: dict[str, str]) -> None:
    private_folder(path.parent)
    write_file(path, json.dumps(secrets).encode())


def _store(settings: Settings) -> Path:
    return store_path(settings)


def save_secret(settings: Settings, webhook_id: str, secret: str) -> None:
    register_secret(secret)
    path = _store(settings)
    secrets = _read(path)
    secrets[webhook_id] = secret
    _write(path, secrets)


def forget_secret(settings: Settings, webhook_id: str) -> None:
    path = _store(settings)
    secrets = _read(path)
    if secrets.pop(webhook_id, None) is not None:
        _write(path, secrets)


def load_secrets(settings: Settings, extra: list[str] | None = None) -> list[str]:
    """Every secret the receiver should accept: given ones, SHIPSYNC_WEBHOOK_SECRETS, then the store."""
    secrets = list(extra or [])
    if settings.webhook_secrets is not None:
        secrets += [s.strip() for s in settings.webhook_secrets.get_secret_value().split(",") if s.strip()]
    secrets += list(_read(_store(settings)).values())
    for secret in secrets:
        register_secret(secret)
    return list(dict.fromkeys(secrets))


def check_secrets(secrets: list[str]) -> None:
    """Refuse empty and short secrets (ConfigError naming the position, never the value)."""
    for position, secret in enumerate(secrets, 1):
        if len(secret) < MIN_SECRET_LENGTH:
            raise ConfigError(
                f"webhook secret #{position} is {len(secret)} characters long; the receiver needs at least "
                f"{MIN_SECRET_LENGTH} (an unset variable gives an empty one)"
            )
