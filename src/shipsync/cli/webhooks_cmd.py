"""`shipsync webhooks register|delete|activate|test|ips|serve`, `shipsync events load|catch-up`."""

from __future__ import annotations

from pathlib import Path

import typer

from shipsync.cli.common import console, line, one_line_errors, settings_from_env, styled
from shipsync.webhooks.limits import ReceiverLimits

webhooks_app = typer.Typer(help="Register webhooks and receive their signed deliveries durably.", no_args_is_help=True)
events_app = typer.Typer(help="The webhook event log in the warehouse.", no_args_is_help=True)


@webhooks_app.command("register")
@one_line_errors
def register(
    url: str = typer.Option(..., "--url", help="Where the service should POST notifications."),
    event: list[str] = typer.Option([], "--event", help="An event kind to receive; repeatable."),
    all_events: bool = typer.Option(
        False, "--all-events", help="Every kind the account may subscribe to (GET /webhooks/events; else the 43 known)."
    ),
    inactive: bool = typer.Option(False, "--inactive", help="Register without activating."),
    header: list[str] = typer.Option([], "--header", help="NAME=VALUE sent with each delivery; repeatable."),
) -> None:
    """Register a webhook; its secret goes to the local secrets store (never printed or stored elsewhere)."""
    from shipsync.webhooks.registration import parse_headers, register_webhook

    webhook = register_webhook(settings_from_env(), url, event, all_events=all_events, active=not inactive, headers=parse_headers(header))
    stored = (
        line("secret stored locally")
        if webhook.secret
        else line(styled("the service sent no secret", "red"), ": delete it and register again")
    )
    console.print(line(f"registered webhook {webhook.id} for {len(webhook.events)} event kind(s) -> {webhook.url}; ", stored))


@webhooks_app.command("delete")
@one_line_errors
def delete(webhook_id: str) -> None:
    """Delete a webhook at the service and forget its secret."""
    from shipsync.webhooks.registration import delete_webhook

    delete_webhook(settings_from_env(), webhook_id)
    console.print(line(f"deleted webhook {webhook_id}"))


@webhooks_app.command("activate")
@one_line_errors
def activate(webhook_id: str) -> None:
    """Turn a webhook on again, e.g. after the service deactivated it for failing deliveries."""
    from shipsync.api import run_with_client

    settings = settings_from_env()
    settings.require_api_key()
    webhook = run_with_client(settings.client_options(), lambda client: client.webhooks.activate(webhook_id))
    state = "active" if webhook.active else styled("still inactive", "red")
    console.print(line(f"webhook {webhook.id} is {state} -> {webhook.url}"))


@webhooks_app.command("test")
@one_line_errors
def test_delivery(
    url: str = typer.Option(..., "--url", help="Where the service should send one test delivery (HTTPS)."),
    event: str = typer.Option(..., "--event", help="The event kind whose example the delivery carries."),
    secret_env: str | None = typer.Option(
        None, "--secret-env", help="Name of an environment variable holding the secret to sign the delivery with."
    ),
) -> None:
    """Ask the service for one test delivery (no webhook is created); print how it went."""
    import os

    from shipsync.api import run_with_client

    settings = settings_from_env()
    settings.require_api_key()
    secret = None
    if secret_env:
        secret = os.environ.get(secret_env)
        if not secret:
            raise typer.BadParameter(f"the environment variable {secret_env} is not set", param_hint="--secret-env")
    done = run_with_client(settings.client_options(), lambda client: client.webhooks.trigger(url, event, secret=secret))
    status = f"status {done.status_code}" if done.status_code is not None else "no answer"
    if done.succeeded:
        console.print(line(f"test delivery of {event} to {done.url}: delivered ({status})"))
        return
    console.print(
        line(f"test delivery of {event} to {done.url}: ", styled("failed", "red"), f" ({status}; {done.error or 'no error given'})")
    )
    raise typer.Exit(1)


@webhooks_app.command("ips")
@one_line_errors
def ips() -> None:
    """The addresses the service delivers from, one a line, for a firewall's allow list."""
    from shipsync.api import run_with_client

    settings = settings_from_env()
    settings.require_api_key()
    found = run_with_client(settings.client_options(), lambda client: client.webhooks.delivery_addresses())
    for address in found.addresses:
        console.print(address)
    console.print(
        line(f"{len(found.addresses)} address(es); the service last changed them {found.last_updated or 'at a time it did not say'}")
    )


_LIMITS = ReceiverLimits()


@webhooks_app.command("serve")
@one_line_errors
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8701, help="Port to listen on."),
    spool: Path | None = typer.Option(None, "--spool", help="Spool folder (default: SHIPSYNC_SPOOL, else spool/ beside the warehouse)."),
    secret: list[str] = typer.Option(
        [], "--secret", help="A webhook secret to accept; repeatable. Visible to other users in `ps`: prefer SHIPSYNC_WEBHOOK_SECRETS."
    ),
    max_body: int = typer.Option(_LIMITS.max_body, min=1, help="Largest body in bytes (413 beyond)."),
    body_timeout: float = typer.Option(_LIMITS.body_timeout_s, min=0.001, help="Seconds to receive a body once its headers are in (408)."),
    header_timeout: float = typer.Option(_LIMITS.header_timeout_s, min=0.001, help="Seconds to receive a request's headers (408)."),
    idle_timeout: float = typer.Option(_LIMITS.idle_timeout_s, min=0.001, help="Seconds a connection may stay open with no request."),
    max_header_bytes: int = typer.Option(_LIMITS.max_header_bytes, min=256, help="Largest request head in bytes (431 beyond)."),
    max_headers: int = typer.Option(_LIMITS.max_headers, min=1, help="Most header fields in a request (431 beyond)."),
    max_connections: int = typer.Option(
        _LIMITS.max_connections, min=1, help="Most open connections; past it a new one closes the one waiting longest for its request."
    ),
    max_connections_per_peer: int = typer.Option(
        _LIMITS.max_connections_per_peer, min=1, help="Most open connections from one address; past it, as for --max-connections."
    ),
) -> None:
    """Receive deliveries at POST /webhook (health: GET /healthz); answer 200 only once stored on disk.

    Secrets: every secret in SHIPSYNC_WEBHOOK_SECRETS (comma-separated) and in the secrets store
    (SHIPSYNC_SECRETS_FILE, default ~/.config/shipsync/secrets.json, filled by `webhooks register`)
    is accepted; each must be at least 16 characters. Stops cleanly on SIGTERM or Ctrl-C.
    """
    from shipsync.webhooks.server import build_receiver, run_receiver

    limits = ReceiverLimits(
        max_body=max_body,
        body_timeout_s=body_timeout,
        header_timeout_s=header_timeout,
        idle_timeout_s=idle_timeout,
        max_header_bytes=max_header_bytes,
        max_headers=max_headers,
        max_connections=max_connections,
        max_connections_per_peer=max_connections_per_peer,
    )
    receiver = build_receiver(settings_from_env(), spool=spool, secrets=secret, limits=limits)
    console.print(
        line(f"receiving at http://{host}:{port}/webhook, spooling to {receiver.writer.spool}, {len(receiver.secrets)} secret(s)")
    )
    run_receiver(receiver, host=host, port=port)


@events_app.command("load")
@one_line_errors
def load(spool: Path | None = typer.Option(None, "--spool", help="Spool folder (default as for webhooks serve).")) -> None:
    """Load new deliveries from the spool into webhook_events, exactly once; then archive the loaded
    segments and prune the archive (SHIPSYNC_SPOOL_ARCHIVE_DAYS, SHIPSYNC_SPOOL_ARCHIVE_MB)."""
    from shipsync.webhooks.load import load_events
    from shipsync.webhooks.spool import ArchiveRetention

    settings = settings_from_env()
    retention = ArchiveRetention(settings.spool_archive_days, settings.spool_archive_mb)
    report = load_events(settings.lake, spool or settings.spool_dir, retention=retention)
    console.print(
        line(
            f"events load: {report.loaded} loaded, {report.duplicates} duplicates, {report.conflicts} conflicts, "
            f"{report.dead_letters} dead-lettered (see webhook_dead_letters), "
            f"{report.entities_refreshed} entities refreshed, {report.stale_ignored} older events ignored, "
            f"{len(report.archived)} segment(s) archived, {len(report.pruned)} pruned from the archive"
        )
    )


@events_app.command("catch-up")
@one_line_errors
def catch_up(
    since: str | None = typer.Option(
        None, "--since", help="List from this time (ISO 8601, UTC unless it says; default: when the event log last had no gap, less 2 h)."
    ),
) -> None:
    """Put the notifications the event log lacks into it, as if delivered: those the service lists
    (GET /webhook_notifications) for the warehouse's webhooks, from --since or from when the event
    log last had no gap. One snapshot; a later delivery of one takes the listed copy's place."""
    from shipsync.errors import InputError
    from shipsync.webhooks.catch_up import catch_up as catch_up_events
    from shipsync.webhooks.catch_up import describe, parse_since

    try:
        start = parse_since(since) if since is not None else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    for text in describe(catch_up_events(settings_from_env(), since=start)):
        console.print(line(text))
