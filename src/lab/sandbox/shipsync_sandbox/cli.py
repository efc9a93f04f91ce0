"""`shipsync sandbox ...`: run the local stand-in of the service, and deliver what its journeys sent (`simulate`).

Installed as the `sandbox` group of the `shipsync` command (entry point `shipsync.commands`)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from datetime import datetime

import typer

from shipsync.cli.common import console, err_console, one_line_errors

sandbox_app = typer.Typer(help="The local sandbox: a faithful stand-in of the service for demos and tests.", no_args_is_help=True)


@sandbox_app.command("serve")
@one_line_errors
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8700, help="Port to listen on."),
    api_key: list[str] = typer.Option(
        [], "--api-key", help="An API key; repeat for more. Each key is its own isolated account (default: the demo keys)."
    ),
    seed: int = typer.Option(7, help="Seed of the generated data (same seed, same data)."),
    documents: int = typer.Option(200, min=0, help="Documents per account (with shipments, containers and the rest)."),
    shipments: int | None = typer.Option(None, min=1, help="Shipments per account (default: one per two documents)."),
    containers: int | None = typer.Option(None, min=0, help="Containers per account, spread over the shipments (default: 1-3 each)."),
    custom_field_values: int = typer.Option(0, min=0, help="Custom field values per account, on containers then shipments."),
    rate_limit: str = typer.Option(
        "0",
        help="Opt-in: REQUESTS/SECONDS on every request of a key, rolling window (e.g. 100/60, for tests of a client's "
        "request budget; the reference states no such limit); 0, the default, for none.",
    ),
    create_limit: str = typer.Option(
        "100/60", help="REQUESTS/SECONDS on creating tracking requests per key, as the reference limits them; 0 for none."
    ),
    listing_order: str = typer.Option(
        "reference",
        help="The order of every listing: reference (what the reference states, newest first where it states none), newest, oldest or id.",
    ),
    fault_rate: float = typer.Option(0.0, min=0.0, max=1.0, help="Share of requests answered 500/502/503 or cut (connection reset)."),
    latency_ms: float = typer.Option(0.0, min=0.0, help="Added latency per request (jittered 0.5x to 1.5x)."),
    tracking_delay: float = typer.Option(
        2.0, min=0.0, help="Seconds a new tracking request stays pending before it settles (carrier detection, the line's answer)."
    ),
    start: datetime | None = typer.Option(
        None,
        envvar="SHIPSYNC_SANDBOX_START",
        formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"],
        help="The world's start (UTC unless an offset is given): its journeys, last free days and ETAs are placed "
        "relative to it. Default: the current hour, so the data is about today; fix it for the same data any day.",
    ),
) -> None:
    """Serve the sandbox API at http://HOST:PORT/v2, one log line per request on standard output.

    Set SHIPSYNC_API_URL=http://HOST:PORT/v2 and SHIPSYNC_API_KEY to one of the keys to point
    shipsync at it. Admin endpoints: GET /_admin/health; GET /_admin/stats, GET /_admin/deliveries and
    POST /_admin/simulate take an account's `Authorization: Token KEY` and show only that account;
    POST /_admin/advance?hours=H&documents=N&changed_documents=N&containers=N&custom_field_values=N
    moves that account's clock on and changes N records of each kind (for incremental syncs).
    """
    # Imported here, not at the top: every `shipsync` command would otherwise pay for the sandbox.
    import uvicorn

    from shipsync_sandbox import DEFAULT_API_KEYS, SandboxOptions, create_app
    from shipsync_sandbox.limits import parse_rate_limit
    from shipsync_sandbox.listing_order import LISTING_ORDERS

    limits = {}
    for name, text in (("--rate-limit", rate_limit), ("--create-limit", create_limit)):
        try:
            limits[name] = parse_rate_limit(text)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint=name) from None
    if listing_order not in LISTING_ORDERS:
        raise typer.BadParameter(f"one of {', '.join(LISTING_ORDERS)} (not {listing_order!r})", param_hint="--listing-order")
    options = SandboxOptions(
        api_keys=tuple(api_key or DEFAULT_API_KEYS),
        seed=seed,
        documents=documents,
        shipments=shipments,
        containers=containers,
        custom_field_values=custom_field_values,
        rate_limit=limits["--rate-limit"],
        create_limit=limits["--create-limit"],
        listing_order=listing_order,
        fault_rate=fault_rate,
        latency_ms=latency_ms,
        tracking_delay_s=tracking_delay,
        start=start,
    )
    listening = _bound(host, port)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    access = logging.getLogger("shipsync_sandbox")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False
    app = create_app(options)
    keys = ", ".join(options.api_keys)
    started = app.state.world.start.strftime("%Y-%m-%dT%H:%M:%SZ")
    print(
        f"sandbox: http://{host}:{port}/v2  keys: {keys}  documents/account: {documents}  rate limit: {rate_limit}  "
        f"creates: {create_limit}  order: {listing_order}  start: {started}",
        flush=True,
    )
    config = uvicorn.Config(app, loop="uvloop", http="httptools", lifespan="off", access_log=False, log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


def _bound(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, before anything is printed: a port in use is one line and
    exit status 1, with no banner for a sandbox that is not there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        err_console.print(f"error: sandbox: cannot listen on {host}:{port}: {exc.strerror or exc}", markup=False)
        raise typer.Exit(1) from None
    listening.listen(2048)
    return listening


@sandbox_app.command("simulate")
@one_line_errors
def simulate(
    url: str | None = typer.Option(
        None, "--url", help="The sandbox (without /v2). Default: the one SHIPSYNC_API_URL names, else http://127.0.0.1:8700."
    ),
    api_key: str = typer.Option(
        "sandbox-key-1", "--api-key", envvar="SHIPSYNC_API_KEY", help="Whose containers move (their webhooks receive it)."
    ),
    containers: int = typer.Option(10, "--containers", min=1, help="How many containers travel."),
    seed: int = typer.Option(0, "--seed", min=0, help="Which containers: 0 the first in id order, else a seeded sample."),
) -> None:
    """Deliver what seeded containers' journeys have sent up to now; registered webhooks receive the events."""
    import httpx

    response = httpx.post(
        f"{sandbox_url(url)}/_admin/simulate",
        params={"containers": containers, "seed": seed},
        headers={"Authorization": f"Token {api_key}"},
        timeout=60,
    )
    if response.status_code != 200:
        console.print(f"sandbox answered {response.status_code}: {response.text[:200]}", markup=False)
        raise typer.Exit(1)
    body = response.json()
    console.print(f"simulated {body['events']} events; {body['notifications']} notifications queued for delivery")


def sandbox_url(given: str | None) -> str:
    """Where the sandbox is: `--url`, else the service SHIPSYNC_API_URL names (its `/v2` left off),
    else the default port on this machine."""
    api_url = os.environ.get("SHIPSYNC_API_URL", "").strip()
    chosen = given or (api_url.rstrip("/").removesuffix("/v2") if api_url else "http://127.0.0.1:8700")
    return chosen.rstrip("/")
