"""Service-wide reference data of the sandbox: metro areas, document schemas, template definitions."""

from __future__ import annotations

from typing import Any

from shipsync_sandbox.resources import stable_id

# (UN/LOCODE, name, state (US only), country, IANA time zone, latitude, longitude)
METRO_AREAS: tuple[tuple[str, str, str | None, str, str, float, float], ...] = (
    ("USLAX", "Los Angeles", "CA", "US", "America/Los_Angeles", 34.0522, -118.2437),
    ("USLGB", "Long Beach", "CA", "US", "America/Los_Angeles", 33.7701, -118.1937),
    ("USNYC", "New York", "NY", "US", "America/New_York", 40.7128, -74.0060),
    ("USSAV", "Savannah", "GA", "US", "America/New_York", 32.0809, -81.0912),
    ("USHOU", "Houston", "TX", "US", "America/Chicago", 29.7604, -95.3698),
    ("USSEA", "Seattle", "WA", "US", "America/Los_Angeles", 47.6062, -122.3321),
    ("USOAK", "Oakland", "CA", "US", "America/Los_Angeles", 37.8044, -122.2712),
    ("USCHS", "Charleston", "SC", "US", "America/New_York", 32.7765, -79.9311),
    ("USORF", "Norfolk", "VA", "US", "America/New_York", 36.8508, -76.2859),
    ("USCHI", "Chicago", "IL", "US", "America/Chicago", 41.8781, -87.6298),
    ("USMEM", "Memphis", "TN", "US", "America/Chicago", 35.1495, -90.0490),
    ("USDAL", "Dallas", "TX", "US", "America/Chicago", 32.7767, -96.7970),
    ("CAVAN", "Vancouver", None, "CA", "America/Vancouver", 49.2827, -123.1207),
    ("MXZLO", "Manzanillo", None, "MX", "America/Mexico_City", 19.0522, -104.3158),
    ("NLRTM", "Rotterdam", None, "NL", "Europe/Amsterdam", 51.9244, 4.4777),
    ("DEHAM", "Hamburg", None, "DE", "Europe/Berlin", 53.5511, 9.9937),
    ("BEANR", "Antwerp", None, "BE", "Europe/Brussels", 51.2194, 4.4025),
    ("GBFXT", "Felixstowe", None, "GB", "Europe/London", 51.9617, 1.3513),
    ("CNSHA", "Shanghai", None, "CN", "Asia/Shanghai", 31.2304, 121.4737),
    ("CNNGB", "Ningbo", None, "CN", "Asia/Shanghai", 29.8683, 121.5440),
    ("CNYTN", "Yantian", None, "CN", "Asia/Shanghai", 22.5769, 114.2716),
    ("HKHKG", "Hong Kong", None, "HK", "Asia/Hong_Kong", 22.3193, 114.1694),
    ("SGSIN", "Singapore", None, "SG", "Asia/Singapore", 1.3521, 103.8198),
    ("KRPUS", "Busan", None, "KR", "Asia/Seoul", 35.1796, 129.0756),
    ("JPTYO", "Tokyo", None, "JP", "Asia/Tokyo", 35.6762, 139.6503),
    ("VNSGN", "Ho Chi Minh City", None, "VN", "Asia/Ho_Chi_Minh", 10.8231, 106.6297),
    ("INNSA", "Nhava Sheva", None, "IN", "Asia/Kolkata", 18.9490, 72.9512),
    ("AEJEA", "Jebel Ali", None, "AE", "Asia/Dubai", 25.0112, 55.0617),
)
ORIGIN_LOCODES = (
    "CNSHA",
    "CNNGB",
    "CNYTN",
    "HKHKG",
    "SGSIN",
    "KRPUS",
    "JPTYO",
    "VNSGN",
    "INNSA",
    "AEJEA",
    "NLRTM",
    "DEHAM",
    "BEANR",
    "GBFXT",
)
US_PORT_LOCODES = ("USLAX", "USLGB", "USNYC", "USSAV", "USHOU", "USSEA", "USOAK", "USCHS", "USORF", "CAVAN", "MXZLO")
INLAND_LOCODES = ("USCHI", "USMEM", "USDAL")


PLACES = {row[0]: row for row in METRO_AREAS}
# Metro areas the service publishes with the UN/LOCODE of another (the reference does not make a
# code unique; two metro areas with different ids may share one): inland journeys to USDAL end in
# one or the other (`places.destination_metro`).
SHARED_CODE_METRO_AREAS: tuple[tuple[str, str, str | None, str, str, float, float], ...] = (
    ("USDAL", "Fort Worth", "TX", "US", "America/Chicago", 32.7555, -97.3308),
)


def place_name(locode: str) -> str:
    return PLACES[locode][1] if locode in PLACES else locode


def place_time_zone(locode: str) -> str | None:
    return PLACES[locode][4] if locode in PLACES else None


def metro_area_key(code: str, name: str | None = None) -> tuple[str, ...]:
    """What a metro area's id is made from: its code, and its name where it shares the code."""
    return (code,) if name is None else (code, name)


def metro_area_resources() -> list[dict[str, Any]]:
    """The published metro areas: one per code, then those that share a code with another."""
    rows = [(row, metro_area_key(row[0])) for row in METRO_AREAS] + [
        (row, metro_area_key(row[0], row[1])) for row in SHARED_CODE_METRO_AREAS
    ]
    return [
        {
            "id": stable_id("metro_area", *key),
            "type": "metro_area",
            "attributes": {
                "name": name,
                "code": code,
                "state_abbr": state,
                "country_code": country,
                "time_zone": tz,
                "latitude": lat,
                "longitude": lon,
            },
            # The spec: the response carries one extra string member with an empty name.
            "": code,
        }
        for (code, name, state, country, tz, lat, lon), key in rows
    ]


def _fields_schema(title: str, fields: dict[str, str], required: list[str]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in fields.items()},
        "required": required,
    }


# (document_type, label, date, current, draft, extra field): several versions per type.
SCHEMA_VERSIONS: tuple[tuple[str, str, str, bool, bool, str | None], ...] = (
    ("commercial_invoice", "Commercial Invoice", "2025-11-04", False, False, None),
    ("commercial_invoice", "Commercial Invoice", "2026-03-23", True, False, "incoterms"),
    ("commercial_invoice", "Commercial Invoice", "2026-09-01", False, True, "hs_codes"),
    ("packing_list", "Packing List", "2025-08-01", False, False, None),
    ("packing_list", "Packing List", "2026-01-15", True, False, "gross_weight_kg"),
    ("bill_of_lading", "Bill of Lading", "2026-02-10", True, False, "vessel_name"),
    ("arrival_notice", "Arrival Notice", "2026-04-01", True, False, "last_free_day"),
    ("arrival_notice", "Arrival Notice", "2026-10-01", False, True, "pickup_number"),
)
BASE_FIELDS = {
    "commercial_invoice": {
        "invoice_number": "string",
        "invoice_date": "string",
        "total_amount": "number",
        "currency": "string",
    },
    "packing_list": {"packing_list_number": "string", "package_count": "integer"},
    "bill_of_lading": {"bill_of_lading_number": "string", "shipper": "string", "consignee": "string"},
    "arrival_notice": {"bill_of_lading_number": "string", "eta": "string", "port_of_discharge": "string"},
}


def public_schema_version(date: str) -> str:
    """The public `schema_version` of the version dated `date` (what extractions name)."""
    return date.replace("-", ".")


def current_schema(document_type: str) -> tuple[str, dict[str, str]]:
    """(public schema_version, fields) of the current schema of a document type."""
    doc_type, _, date, _, _, extra = next(v for v in SCHEMA_VERSIONS if v[0] == document_type and v[3])
    fields = dict(BASE_FIELDS[doc_type])
    if extra:
        fields[extra] = "string"
    return public_schema_version(date), fields


def _schema_notes(draft: bool, extra: str | None) -> str | None:
    """A version's notes: that a draft may change, and the field it adds (a first version has none)."""
    notes = "; ".join([*(["draft: fields may change"] if draft else []), *([f"adds {extra}"] if extra else [])])
    return notes[:1].upper() + notes[1:] or None


def document_schema_resources() -> list[dict[str, Any]]:
    resources = []
    for doc_type, label, date, current, draft, extra in SCHEMA_VERSIONS:
        full = f"{doc_type}@{date}"
        fields = dict(BASE_FIELDS[doc_type])
        if extra:
            fields[extra] = "string"
        resources.append(
            {
                "id": full,
                "type": "document_schema",
                "attributes": {
                    "document_type": doc_type,
                    "label": label,
                    "schema_version": public_schema_version(date),
                    "full_version": full,
                    "current": current,
                    "draft": draft,
                    "active_at": None if draft else f"{date}T00:00:00Z",
                    "schema_format": "json_schema",
                    "description": _schema_notes(draft, extra),
                    "schema_payload": _fields_schema(label, fields, list(BASE_FIELDS[doc_type])[:2]),
                    "created_at": f"{date}T00:00:00Z",
                    "updated_at": f"{date}T12:00:00Z",
                },
                "links": {"self": f"/v2/document_schemas/{full}"},
            }
        )
    return resources


# A definition every account owns on its tracking requests (the service creates definitions only for
# shipments and containers through the API; tracking-request ones come from the app).
ACCOUNT_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "entity_type": "TrackingRequest",
        "api_slug": "request_owner",
        "display_name": "Request owner",
        "data_type": "short_text",
        "description": "Who asked for this tracking",
        "validation": {"max_length": 40},
    },
)

# Template definitions the service provides to every account: one per data type, plus rules.
TEMPLATE_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "entity_type": "Container",
        "api_slug": "po_number",
        "display_name": "PO Number",
        "data_type": "short_text",
        "description": "Purchase order number",
        "validation": {"max_length": 20, "pattern": "^[A-Z0-9-]+$"},
    },
    {
        "entity_type": "Container",
        "api_slug": "priority",
        "display_name": "Priority",
        "data_type": "enum",
        "description": "Handling priority",
        "options": ["low", "normal", "high", "urgent"],
        "default_value": "normal",
    },
    {
        "entity_type": "Container",
        "api_slug": "handling_flags",
        "display_name": "Handling Flags",
        "data_type": "enum_multi",
        "description": "Special handling",
        "options": ["fragile", "refrigerated", "oversized", "hazmat"],
    },
    {
        "entity_type": "Container",
        "api_slug": "declared_value",
        "display_name": "Declared Value (USD)",
        "data_type": "number",
        "description": "Customs value",
        "default_format": "0,0.00",
    },
    {
        "entity_type": "Container",
        "api_slug": "customs_cleared_on",
        "display_name": "Customs Cleared On",
        "data_type": "date",
        "description": "Date customs released the cargo",
        "default_format": "MM/DD/YYYY",
    },
    {
        "entity_type": "Container",
        "api_slug": "delivery_appointment_at",
        "display_name": "Delivery Appointment",
        "data_type": "datetime",
        "description": "Warehouse appointment",
    },
    {
        "entity_type": "Container",
        "api_slug": "hazardous",
        "display_name": "Hazardous",
        "data_type": "boolean",
        "description": "Carries dangerous goods",
    },
    {
        "entity_type": "Container",
        "api_slug": "customs_broker",
        "display_name": "Customs Broker",
        "data_type": "reference",
        "description": "Broker party",
        "reference_type": "party",
    },
    {
        "entity_type": "Shipment",
        "api_slug": "consignee",
        "display_name": "Consignee",
        "data_type": "short_text",
        "description": "Consignee name",
        "validation": {"required": True, "max_length": 60},
    },
    {
        "entity_type": "Shipment",
        "api_slug": "shipment_priority",
        "display_name": "Shipment Priority",
        "data_type": "enum",
        "description": "Priority of the whole shipment",
        "options": ["standard", "expedited"],
    },
)
