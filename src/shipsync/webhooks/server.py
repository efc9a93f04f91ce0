"""Running the receiver: settings to secrets and spool, then uvicorn (uvloop + httptools)."""

from __future__ import annotations

import logging
from pathlib import Path

from shipsync.config import Settings
from shipsync.errors import ConfigError
from shipsync.webhooks.receiver import Receiver
from shipsync.webhooks.secrets_store import load_secrets
from shipsync.webhooks.spool import SpoolWriter


def build_receiver(settings: Settings, *, spool: Path | None = None, secrets: list[str] | None = None) -> Receiver:
    accepted = load_secrets(settings, secrets)
    if not accepted:
        raise ConfigError(
            "no webhook secrets: register a webhook (shipsync webhooks register), set SHIPSYNC_WEBHOOK_SECRETS, or pass --secret"
        )
    return Receiver(SpoolWriter(spool or settings.spool_dir), accepted)


def configure_delivery_log() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger = logging.getLogger("shipsync.webhooks")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
