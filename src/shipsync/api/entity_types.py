"""The entities custom fields apply to, in the three spellings the service uses.

A definition names its entity as `Shipment`, `Container` or `TrackingRequest` (the spec's `Cargo`
is an older name of `Container`: the service takes `Shipment` or `Container` on create today); a
value's entity relationship is typed `shipment`, `container` or `tracking_request`; per-entity
routes are `/shipments`, `/containers`, `/tracking_requests`. Unknown names are kept, never refused.
"""

from __future__ import annotations

import re
from typing import Final

# What a definition says -> the relationship type of its values.
VALUE_ENTITY: Final = {"Shipment": "shipment", "Container": "container", "TrackingRequest": "tracking_request"}
# What the service takes on create (the spec's `Shipment | Cargo` is out of date).
CREATABLE_DEFINITION_ENTITIES: Final = ("Shipment", "Container")
ROUTE_OF_ENTITY: Final = {"shipment": "shipments", "container": "containers", "tracking_request": "tracking_requests"}
# How people write them in spreadsheets and on the command line.
_USER_NAMES: Final = {
    "shipment": "Shipment",
    "container": "Container",
    "cargo": "Container",
    "trackingrequest": "TrackingRequest",
    "tracking_request": "TrackingRequest",
}


def definition_entity(text: str) -> str | None:
    """`Cargo`, `container`, `Tracking Request`... -> the service's name; None if not one of them."""
    key = re.sub(r"[\s\-]+", "_", text.strip().lower())
    return _USER_NAMES.get(key) or _USER_NAMES.get(key.replace("_", ""))


def value_entity(definition_entity_type: str | None) -> str:
    """The relationship type a definition's values hang on; an unknown name in snake case."""
    name = definition_entity_type or ""
    known = definition_entity(name)
    if known is not None:
        return VALUE_ENTITY[known]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
