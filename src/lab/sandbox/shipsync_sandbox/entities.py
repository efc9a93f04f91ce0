"""The records custom fields hang on, in the service's three spellings: a definition's
`entity_type` (`Shipment`, `Container`, `TrackingRequest`), a value's entity relationship type
(`shipment`, `container`, `tracking_request`), and the per-entity routes (`/shipments/{id}/...`)."""

from __future__ import annotations

VALUE_TYPE_OF_DEFINITION = {"Shipment": "shipment", "Container": "container", "TrackingRequest": "tracking_request"}
# api-facts: a create takes `Shipment` or `Container` (the spec's `Cargo` is out of date); the
# service's own tracking-request definitions come from its app, not the API.
CREATABLE_ENTITY_TYPES = ("Shipment", "Container")
# api-facts: `POST /custom_fields` takes these two; a tracking request's value is created on its own route.
GENERIC_ROUTE_ENTITIES = ("shipment", "container")
ENTITY_OF_ROUTE = {"shipments": "shipment", "containers": "container", "tracking_requests": "tracking_request"}
# How a listing's `filter[entity_type]` may name them.
_FILTER_NAMES = {"shipment": "Shipment", "container": "Container", "cargo": "Container", "trackingrequest": "TrackingRequest"}


def definition_type_named(text: str) -> str | None:
    """`Shipment`, `container`, `tracking_request`, `Cargo`... as a definition's entity_type; None if none."""
    return _FILTER_NAMES.get(text.replace("_", "").strip().lower())


def value_type_of(definition_entity_type: str) -> str | None:
    """The relationship type a definition's values hang on."""
    return VALUE_TYPE_OF_DEFINITION.get(definition_entity_type)
