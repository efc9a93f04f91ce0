"""The account's own records, declared once (see `api.declared`): tracking requests, custom field
definitions, their options, custom field values, webhooks and parties.

They reach the warehouse only through their own reads and writes (a pull, a bulk apply's refresh
and reflection, a registration), except tracking requests, which webhook deliveries also carry.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import Field

from shipsync.api.declared import Declared, Struct, also_sent_as, polymorphic, secret
from shipsync.api.models import Ref


class TrackingRequest(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("tracking_request",)
    table_name: ClassVar[str] = "tracking_requests"
    row_is: ClassVar[str] = "One row per tracking request (a shipment the account asked the service to track)."

    request_number: str | None = None
    status: str | None = None
    request_type: str | None = None
    scac: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # The reference numbers the request shows (its shipment's): a PATCH of `ref_number` (the one
    # attribute a caller changes) shows here; answers carry no `ref_number`.
    ref_numbers: list[str] | None = None
    # Deliveries and newer answers carry the tracked shipment's tags as `shipment_tags`.
    tags: list[str] | None = also_sent_as("shipment_tags")
    failed_reason: str | None = None
    is_retrying: bool | None = None
    retry_count: int | None = None
    tracked_object: Ref | None = polymorphic("shipment")
    customer: Ref | None = None
    # Who made the request (the reference's examples name one; null when the service does not say).
    user: Ref | None = None


class CustomFieldDefinition(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("custom_field_definition",)
    table_name: ClassVar[str] = "custom_field_definitions"
    row_is: ClassVar[str] = "One row per custom field definition of the account."
    from_included: ClassVar[bool] = False

    # `Shipment`, `Container` or `TrackingRequest` today (the spec's `Cargo` in older data); kept as sent.
    entity_type: str | None = None
    api_slug: str | None = None
    display_name: str | None = None
    data_type: str | None = None
    description: str | None = None
    reference_type: str | None = None
    validation: dict[str, Any] | None = None
    default_format: str | None = None
    default_value: Any = None
    options: list[Ref] = Field(default_factory=list)


class CustomFieldOption(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("custom_field_option",)
    table_name: ClassVar[str] = "custom_field_options"
    row_is: ClassVar[str] = "One row per option of an enum or enum-list definition."
    from_included: ClassVar[bool] = False

    label: str | None = None
    value: str | None = None
    position: int | None = None
    # Read from the definition's option listing when the option does not name it.
    definition: Ref | None = None


class CustomField(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("custom_field",)
    table_name: ClassVar[str] = "custom_fields"
    row_is: ClassVar[str] = "One row per custom field value set on a shipment, container or tracking request."
    from_included: ClassVar[bool] = False

    api_slug: str | None = None
    value: Any = None
    display_value: str | None = None
    entity: Ref | None = polymorphic("shipment", "container", "tracking_request")
    definition: Ref | None = None


class WebhookHeader(Struct):
    name: str | None = None
    value: str | None = secret()


class Webhook(Declared):
    """Never the secret (it goes to the local secrets store only), and of the headers sent with
    deliveries only their names."""

    resource_types: ClassVar[tuple[str, ...]] = ("webhook",)
    table_name: ClassVar[str] = "webhooks"
    row_is: ClassVar[str] = "One row per webhook registered for the account."
    from_included: ClassVar[bool] = False
    local_columns: ClassVar[dict[str, str]] = {"deleted_at": "TIMESTAMP WITH TIME ZONE"}
    keeps_leftovers: ClassVar[bool] = False

    url: str | None = None
    active: bool | None = None
    events: list[str] = Field(default_factory=list)
    secret: str | None = secret()
    # The service answers `headers: null` when none were set.
    headers: list[WebhookHeader] = Field(default_factory=list)
    created_at: datetime | None = None


class Party(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("party",)
    table_name: ClassVar[str] = "parties"
    row_is: ClassVar[str] = "One row per party of the account: a customer a tracking request may name."
    from_included: ClassVar[bool] = False

    company_name: str | None = None
