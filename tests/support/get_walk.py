"""A walk over every GET operation a seeded sandbox serves, as a client would make them: each
listing paged and with each of its filters and includes, each record by id (with its includes),
and the requests the service refuses (a record that does not exist, a sort the documents do not
take, a key that is not one). The sandbox records the exchanges (`record_exchanges`); the walk
says which of them asked for a refusal. The contract test validates every answer against the
service's reference, operation by operation.

The walk finds what to ask for through the API itself (listings, then the ids they name); only
what the service offers no listing for (metro areas, document schemas) comes from the sandbox's
reference data.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from shipsync_sandbox import SandboxApp
from shipsync_sandbox.exchange_log import Exchange
from shipsync_sandbox.places import metro_area_id
from shipsync_sandbox.reference import METRO_AREAS, SHARED_CODE_METRO_AREAS, document_schema_resources

BASE = "http://sandbox.test/v2"


@dataclass(frozen=True)
class Walked:
    """The walk's exchanges, and those of them that asked for what the service refuses."""

    exchanges: list[Exchange]
    refused: list[Exchange]


@dataclass(frozen=True)
class Ask:
    operation: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    refused: bool = False


def _ids(body: Any, type_: str | None = None) -> list[str]:
    data = body.get("data") if isinstance(body, dict) else None
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
    return [str(r["id"]) for r in items if type_ is None or r.get("type") == type_]


def _named(body: Any, type_: str) -> list[str]:
    """Ids of `type_` that the answer's resources name in their relationships, or include."""
    found: dict[str, None] = {}
    data = body.get("data") if isinstance(body, dict) else None
    resources = [*(data if isinstance(data, list) else [data] if data else []), *(body.get("included") or [])]
    for resource in resources:
        for relationship in (resource.get("relationships") or {}).values():
            linked = relationship.get("data") if isinstance(relationship, dict) else None
            for ref in linked if isinstance(linked, list) else [linked] if isinstance(linked, dict) else []:
                if ref.get("type") == type_:
                    found[str(ref["id"])] = None
        if resource.get("type") == type_:
            found[str(resource["id"])] = None
    return list(found)


def listing_asks(operation: str, path: str, variants: list[dict[str, str]], pages: int = 3, size: int = 10) -> Iterator[Ask]:
    """Each variant's first pages, and the default page of the plain listing."""
    yield Ask(operation, path)
    for variant in variants:
        for number in range(1, pages + 1):
            yield Ask(operation, path, (*variant.items(), ("page[number]", str(number)), ("page[size]", str(size))))


class Walk:
    """The walk's requests, made in process over the sandbox's ASGI app with one account's key."""

    def __init__(self, app: SandboxApp, key: str) -> None:
        if app.exchanges is None:
            raise ValueError("the walk reads the sandbox's exchanges: make it with record_exchanges=True")
        self.app, self.key, self.log = app, key, app.exchanges
        self.first = len(self.log.exchanges)
        self.refused: list[Exchange] = []

    async def _get(self, client: httpx.AsyncClient, ask: Ask) -> Any:
        response = await client.get(f"{BASE}/{ask.path}", params=list(ask.params))
        if ask.refused:
            self.refused.append(self.log.exchanges[-1])
        return response.json() if "json" in response.headers.get("content-type", "") else None

    async def _all(self, client: httpx.AsyncClient, asks: Iterator[Ask]) -> list[Any]:
        return [await self._get(client, ask) for ask in asks]

    async def run(self) -> Walked:
        transport = httpx.ASGITransport(app=self.app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, headers={"Authorization": f"Token {self.key}"}) as client:
            await self._walk(client)
        async with httpx.AsyncClient(transport=transport, headers={"Authorization": "Token not-a-key"}) as stranger:
            for path in ("metro_areas/USLAX", "shipments", "documents", "webhooks", "custom_fields"):
                await self._get(stranger, Ask(f"GET /{path}", path, refused=True))
        return Walked(self.log.exchanges[self.first :], self.refused)

    async def _walk(self, client: httpx.AsyncClient) -> None:
        get, every = self._get, self._all
        lines = await get(client, Ask("GET /shipping_lines", "shipping_lines"))
        del lines
        await every(client, listing_asks("GET /parties", "parties", [{}], pages=1, size=2))
        for code, *_ in METRO_AREAS:
            metro = await get(client, Ask("GET /metro_areas/{id}", f"metro_areas/{code}"))
            await get(client, Ask("GET /metro_areas/{id}", f"metro_areas/{_ids(metro)[0]}"))
        for code, name, *_ in SHARED_CODE_METRO_AREAS:  # a metro area that shares its code: by its id
            await get(client, Ask("GET /metro_areas/{id}", f"metro_areas/{metro_area_id(code, name)}"))
        await get(client, Ask("GET /metro_areas/{id}", "metro_areas/ZZZZZ", refused=True))
        for schema in document_schema_resources():
            await get(client, Ask("GET /document_schemas/{id}", f"document_schemas/{schema['id']}"))
        await get(client, Ask("GET /document_schemas/{id}", "document_schemas/commercial_invoice@1999-01-01", refused=True))

        includes = ["shipments", "cargos", "account", "user", "last_document_representation", "email_submission", "current_extraction"]
        documents = await every(
            client,
            listing_asks(
                "GET /documents",
                "documents",
                [
                    {"include": ",".join(includes)},
                    {"sort": "-created_at"},
                    {"sort": "added_by", "include": "shipments,cargos"},
                    {"sort": "document_type"},
                    {"filter[document_types]": "commercial_invoice,packing_list"},
                    {"filter[filename]": "invoice"},
                ],
            ),
        )
        await get(client, Ask("GET /documents", "documents", (("sort", "size"),), refused=True))
        await get(client, Ask("GET /documents", "documents", (("include", "bogus"),), refused=True))
        for document_id in [i for body in documents[:4] for i in _ids(body)][:30]:
            await get(client, Ask("GET /documents/{id}", f"documents/{document_id}"))
            await get(client, Ask("GET /documents/{id}", f"documents/{document_id}", (("include", ",".join(includes)),)))
        await get(client, Ask("GET /documents/{id}", "documents/no-such-document", refused=True))

        requests = await every(
            client,
            listing_asks(
                "GET /tracking_requests",
                "tracking_requests",
                [
                    {"include": "tracked_object"},
                    {"filter[status]": "created"},
                    {"filter[status]": "pending"},
                    {"filter[status]": "failed"},
                    {"filter[updated_at][start]": "2000-01-01T00:00:00Z"},
                    {"q": "U"},
                ],
            ),
        )
        await get(client, Ask("GET /tracking_requests", "tracking_requests", (("filter[status]", "exploded"),)))
        for request_id in [i for body in requests[:4] for i in _ids(body)][:30]:
            await get(client, Ask("GET /tracking_requests/{id}", f"tracking_requests/{request_id}"))
            await get(client, Ask("GET /tracking_requests/{id}", f"tracking_requests/{request_id}", (("include", "tracked_object"),)))
            own_fields = "GET /tracking_requests/{tracking_request_id}/custom_fields"
            await get(client, Ask(own_fields, f"tracking_requests/{request_id}/custom_fields"))
        await get(client, Ask("GET /tracking_requests/{id}", "tracking_requests/no-such-request", refused=True))

        shipment_includes = "containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal"
        shipments = await every(
            client,
            listing_asks(
                "GET /shipments",
                "shipments",
                [{"include": shipment_includes}, {"include": "containers"}, {"filter[tracking_stopped]": "false"}, {"q": "U"}],
            ),
        )
        shipment_ids = [i for body in shipments[:4] for i in _ids(body)][:30]
        for shipment_id in shipment_ids:
            await get(client, Ask("GET /shipments/{id}", f"shipments/{shipment_id}", (("include", shipment_includes),)))
            await get(client, Ask("GET /shipments/{shipment_id}/custom_fields", f"shipments/{shipment_id}/custom_fields"))
        await get(client, Ask("GET /shipments/{id}", "shipments/no-such-shipment", refused=True))

        container_includes = "shipment,pod_terminal,pickup_facility,transport_events"
        containers = await every(
            client,
            listing_asks("GET /containers", "containers", [{"include": "shipment"}, {"include": container_includes}, {}]),
        )
        container_ids = [i for body in containers[:4] for i in _ids(body)][:30]
        named = [*containers, *shipments]
        for container_id in container_ids:
            named.append(await get(client, Ask("GET /containers/{id}", f"containers/{container_id}", (("include", container_includes),))))
            named.append(
                await get(
                    client,
                    Ask(
                        "GET /containers/{id}/transport_events",
                        f"containers/{container_id}/transport_events",
                        (("include", "location,terminal,vessel"),),
                    ),
                )
            )
            await get(client, Ask("GET /containers/{container_id}/custom_fields", f"containers/{container_id}/custom_fields"))
            await get(client, Ask("GET /containers/{id}/raw_events", f"containers/{container_id}/raw_events"))
        await get(client, Ask("GET /containers/{id}", "containers/no-such-container", refused=True))
        await get(client, Ask("GET /containers/{id}/raw_events", "containers/no-such-container/raw_events", refused=True))

        for type_, route in (("port", "ports"), ("terminal", "terminals"), ("vessel", "vessels")):
            for place_id in list(dict.fromkeys(i for body in named for i in _named(body, type_)))[:30]:
                await get(client, Ask(f"GET /{route}/{{id}}", f"{route}/{place_id}"))
            await get(client, Ask(f"GET /{route}/{{id}}", f"{route}/no-such-place", refused=True))
        await get(client, Ask("GET /ports/{id}", "ports/USLAX"))

        definitions = await every(
            client,
            listing_asks(
                "GET /custom_field_definitions",
                "custom_field_definitions",
                [{"filter[entity_type]": "Container"}, {"filter[data_type]": "enum"}, {"filter[display_name]": "P"}],
                pages=1,
            ),
        )
        for definition_id in _ids(definitions[0]):
            await get(client, Ask("GET /custom_field_definitions/{id}", f"custom_field_definitions/{definition_id}"))
            options = await get(
                client, Ask("GET /custom_field_definitions/{definition_id}/options", f"custom_field_definitions/{definition_id}/options")
            )
            for option_id in _ids(options)[:3]:
                await get(
                    client,
                    Ask(
                        "GET /custom_field_definitions/{definition_id}/options/{option_id}",
                        f"custom_field_definitions/{definition_id}/options/{option_id}",
                    ),
                )
        values = await every(
            client,
            listing_asks(
                "GET /custom_fields",
                "custom_fields",
                [{"filter[entity_type]": "container"}, {"filter[entity_type]": "shipment"}],
                pages=2,
            ),
        )
        for value_id in [i for body in values for i in _ids(body)][:30]:
            await get(client, Ask("GET /custom_fields/{id}", f"custom_fields/{value_id}"))

        parties = await every(client, listing_asks("GET /parties", "parties", [{}], pages=2, size=2))
        for party_id in [i for body in parties for i in _ids(body)]:
            await get(client, Ask("GET /parties/{id}", f"parties/{party_id}"))
        await get(client, Ask("GET /parties/{id}", "parties/no-such-party", refused=True))
        webhooks = await get(client, Ask("GET /webhooks", "webhooks"))
        await get(client, Ask("GET /webhooks/ips", "webhooks/ips"))
        for webhook_id in _ids(webhooks):
            await get(client, Ask("GET /webhooks/{id}", f"webhooks/{webhook_id}"))
        await get(client, Ask("GET /webhooks/events", "webhooks/events"))
        await get(client, Ask("GET /webhooks/{id}", "webhooks/no-such-webhook", refused=True))
        await self._notifications(client)

    async def _notifications(self, client: httpx.AsyncClient) -> None:
        """The account's notifications, where the sandbox lists them (its answer to a route it
        lacks is a 404, which the walk counts as the operation's failure)."""
        listing = await self._all(
            client,
            listing_asks(
                "GET /webhook_notifications",
                "webhook_notifications",
                [{"include": "reference_object"}, {}],
                pages=3,
                size=20,
            ),
        )
        for notification_id in [i for body in listing for i in _ids(body)][:30]:
            await self._get(client, Ask("GET /webhook_notifications/{id}", f"webhook_notifications/{notification_id}"))


def walk(app: SandboxApp, key: str) -> Walked:
    return asyncio.run(Walk(app, key).run())
