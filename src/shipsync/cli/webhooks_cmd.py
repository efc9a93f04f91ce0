"""`shipsync webhooks register|delete|serve`, `shipsync events load` and `shipsync sandbox simulate`."""

from __future__ import annotations

import signal
from pathlib import Path

import typer

from shipsync.cli.common import console, one_line_errors, settings_from_env

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
    stored = "secret stored locally" if webhook.secret else "[red]the service sent no secret[/red]: delete it and register again"
    console.print(f"registered webhook {webhook.id} for {len(webhook.events)} event kind(s) -> {webhook.url}; {stored}")


@webhooks_app.command("delete")
@one_line_errors
def delete(webhook_id: str) -> None:
    """Delete a webhook at the service and forget its secret."""
    from shipsync.webhooks.registration import delete_webhook

    delete_webhook(settings_from_env(), webhook_id)
    console.print(f"deleted webhook {webhook_id}")


@webhooks_app.command("serve")
@one_line_errors
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8701, help="Port to listen on."),
    spool: Path | None = typer.Option(None, "--spool", help="Spool folder (default: SHIPSYNC_SPOOL, else spool/ beside the warehouse)."),
    secret: list[str] = typer.Option([], "--secret", help="A webhook secret to accept; repeatable (default: the secrets store)."),
) -> None:
    """Receive deliveries at POST /webhook (health: GET /healthz); answer 200 only once stored on disk."""
    import uvicorn

    from shipsync.webhooks.server import build_receiver, configure_delivery_log

    configure_delivery_log()
    receiver = build_receiver(settings_from_env(), spool=spool, secrets=secret)
    console.print(f"receiving at http://{host}:{port}/webhook, spooling to {receiver.writer.spool}, {len(receiver.secrets)} secret(s)")
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it under the handler found before
    # it started: make that an exit that runs the `finally` below, not an instant kill.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run(receiver, host=host, port=port, loop="uvloop", http="httptools", lifespan="off", access_log=False, log_level="warning")
    finally:
        receiver.delivery_log.flush()
        receiver.writer.close()  # cut the segment to its last record and stop the fsync helper


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@events_app.command("load")
@one_line_errors
def load(spool: Path | None = typer.Option(None, "--spool", help="Spool folder (default as for webhooks serve).")) -> None:
    """Load new deliveries from the spool into webhook_events, exactly once."""
    from shipsync.webhooks.load import load_events

    settings = settings_from_env()
    report = load_events(settings.warehouse, spool or settings.spool_dir)
    console.print(
        f"events load: {report.loaded} loaded, {report.duplicates} duplicates, {report.conflicts} conflicts, "
        f"{report.entities_refreshed} entities refreshed, {report.stale_ignored} older events ignored, "
        f"{len(report.archived)} segment(s) archived"
    )


@one_line_errors
def simulate(
    url: str = typer.Option("http://127.0.0.1:8700", "--url", help="The sandbox (without /v2)."),
    api_key: str = typer.Option("sandbox-key-1", "--api-key", help="Whose containers move (their webhooks receive it)."),
    containers: int = typer.Option(10, "--containers", min=1, help="How many containers travel."),
    seed: int = typer.Option(1, "--seed"),
) -> None:
    """Move seeded containers through realistic journeys; registered webhooks receive the events."""
    import httpx

    response = httpx.post(
        f"{url.rstrip('/')}/_admin/simulate",
        params={"containers": containers, "seed": seed},
        headers={"Authorization": f"Token {api_key}"},
        timeout=60,
    )
    if response.status_code != 200:
        from shipsync.errors import ApiError

        raise ApiError(f"sandbox answered {response.status_code}: {response.text[:200]}")
    body = response.json()
    console.print(f"simulated {body['events']} events; {body['notifications']} notifications queued for delivery")
