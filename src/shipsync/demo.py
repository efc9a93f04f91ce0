"""`shipsync demo`: the whole pipeline against a local sandbox, with a short printed summary."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.console import Console

from shipsync.api import AsyncShipsyncClient
from shipsync.config import load_settings
from shipsync.errors import NotFoundError, ValidationError
from shipsync.sandbox import DEFAULT_API_KEYS, SandboxOptions, create_app
from shipsync.serving import BackgroundServer

console = Console(highlight=False, soft_wrap=True)


async def tour_client(client: AsyncShipsyncClient) -> None:
    """Exercise every client operation once, printing what each did."""
    first = await anext(aiter(client.documents.list_pages(page_size=5)))
    document = await client.documents.get(first.data[0]["id"])
    console.print(
        f"  documents: {document.document.name!r} of {document.account_company_name}, "
        f"{len(document.document.shipments)} shipment(s), {len(document.document.cargos)} container(s), "
        f"{len(document.included)} related resources included"
    )
    metro = await client.metro_areas.get("NLRTM")
    console.print(f"  metro area NLRTM: {metro.name}, {metro.country_code}, {metro.time_zone}")
    schema = await client.document_schemas.get("commercial_invoice@2026-03-23")
    console.print(f"  document schema {schema.full_version}: current={schema.current}, {len(schema.schema_payload or {})} keys")
    try:
        await client.document_schemas.get("commercial_invoice@1999-01-01")
    except NotFoundError as exc:
        console.print(f"  404 as expected: {exc.errors[0].detail}")
    requests = await client.tracking_requests.list(status="pending")
    edited = await client.tracking_requests.update(requests[0].id, {"tags": sorted({*(requests[0].tags or []), "demo"})})
    console.print(f"  tracking request {edited.request_number}: tags now {edited.tags}")
    definitions = await client.custom_field_definitions.list()
    data_types = ", ".join(sorted({d.data_type or "" for d in definitions}))
    console.print(f"  custom field definitions visible: {len(definitions)} ({data_types})")
    container_id = document.document.cargos[0].id
    try:
        await client.custom_fields.create(entity_type="container", entity_id=container_id, api_slug="priority", value="rush")
    except ValidationError as exc:
        console.print(f"  422 as expected: {exc.errors[0].describe()}")
    webhook = await client.webhooks.create("http://127.0.0.1:9/webhook", ["container.transport.vessel_arrived"])
    await client.webhooks.delete(webhook.id)
    console.print(f"  webhook registered (secret received, not shown) and deleted: {webhook.id}")


def run_demo(*, workdir: str = "shipsync-demo", documents: int = 200) -> None:
    started = time.monotonic()
    Path(workdir).mkdir(parents=True, exist_ok=True)
    sandbox = create_app(SandboxOptions(documents=documents, rate_limit=None))
    with BackgroundServer(sandbox) as server:
        settings = load_settings(api_url=f"{server.url}/v2", api_key=DEFAULT_API_KEYS[0], rate_limit="0")
        console.print(f"[bold]sandbox[/bold] on {server.url}/v2 ({documents} documents per account)")

        async def tour() -> None:
            async with AsyncShipsyncClient.from_settings(settings) as client:
                await tour_client(client)

        asyncio.run(tour())
    console.print(f"[green]done[/green] in {time.monotonic() - started:.1f} s")
