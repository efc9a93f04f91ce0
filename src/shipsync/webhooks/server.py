"""Running the receiver: settings to secrets and spool, then uvicorn (uvloop + httptools, under the
connection guard of `http_limits`) until SIGTERM or Ctrl-C, then a clean close.

Secrets come from SHIPSYNC_WEBHOOK_SECRETS and the secrets store; ones given on the command line
are accepted with a warning, since other users of the machine can read a command line.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

from shipsync.config import Settings
from shipsync.errors import ConfigError
from shipsync.logsetup import setup_logging
from shipsync.webhooks.http_limits import ConnectionGuard
from shipsync.webhooks.limits import ReceiverLimits
from shipsync.webhooks.receiver import EveryLineFormatter, Receiver
from shipsync.webhooks.secrets_store import check_secrets, load_secrets
from shipsync.webhooks.writer import SpoolWriter

log = logging.getLogger("shipsync.webhooks")


def build_receiver(
    settings: Settings, *, spool: Path | None = None, secrets: list[str] | None = None, limits: ReceiverLimits | None = None
) -> Receiver:
    """The receiver with every accepted secret (refusing empty and short ones) and its spool."""
    accepted = load_secrets(settings, secrets)
    if not accepted:
        raise ConfigError(
            "no webhook secrets: register a webhook (shipsync webhooks register) or set SHIPSYNC_WEBHOOK_SECRETS (comma-separated)"
        )
    if secrets:
        log.warning("a webhook secret was given on the command line, where other users can read it: use SHIPSYNC_WEBHOOK_SECRETS")
    check_secrets(accepted)  # before the spool is touched
    return Receiver(SpoolWriter(spool or settings.spool_dir), accepted, limits)


def configure_delivery_log() -> None:
    """Delivery lines on standard error, whatever the level of the rest."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EveryLineFormatter("%(message)s"))
    logger = logging.getLogger("shipsync.webhooks")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def run_receiver(receiver: Receiver, *, host: str, port: int) -> None:
    """Serve until SIGTERM or Ctrl-C, then finish the disk work under way and close the segment."""
    import uvicorn

    setup_logging()
    configure_delivery_log()
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it under the handler found before
    # it started: make that an exit that runs the `finally` below, not an instant kill.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run(
            **ConnectionGuard(receiver.limits).uvicorn_settings(receiver),
            host=host,
            port=port,
            loop="uvloop",
            ws="none",
            lifespan="off",
            access_log=False,
            log_level="warning",
        )
    finally:
        receiver.delivery_log.flush()
        receiver.writer.close()


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
