"""The local secrets store: webhook secrets in a 0600 file beside the warehouse (or from the
environment), readable by the receiver and never written to logs, artifacts or the warehouse."""

from __future__ import annotations

import json
import os
from pathlib import Path

from shipsync.config import Settings
from shipsync.errors import ConfigError
from shipsync.redaction import register_secret


def store_path(settings: Settings) -> Path:
    return settings.warehouse.parent / "secrets.json"


def _read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise ConfigError(f"{path}: the webhook secrets store is unreadable") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the webhook secrets store is not a JSON object")
    return {str(k): str(v) for k, v in data.items()}


def _write(path: Path, secrets: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(secrets, out)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def save_secret(settings: Settings, webhook_id: str, secret: str) -> None:
    register_secret(secret)
    path = store_path(settings)
    secrets = _read(path)
    secrets[webhook_id] = secret
    _write(path, secrets)


def forget_secret(settings: Settings, webhook_id: str) -> None:
    path = store_path(settings)
    secrets = _read(path)
    if secrets.pop(webhook_id, None) is not None:
        _write(path, secrets)


def load_secrets(settings: Settings, extra: list[str] | None = None) -> list[str]:
    """Every secret the receiver should accept: given ones, SHIPSYNC_WEBHOOK_SECRETS, then the store."""
    secrets = list(extra or [])
    if settings.webhook_secrets is not None:
        secrets += [s.strip() for s in settings.webhook_secrets.get_secret_value().split(",") if s.strip()]
    secrets += list(_read(store_path(settings)).values())
    for secret in secrets:
        register_secret(secret)
    return list(dict.fromkeys(secrets))
