"""The shipping lines the sandbox's service supports (`GET /shipping_lines`), as the service
describes a `shipping_line` (docs/tracking-model.md), and the rail carriers of inland legs."""

from __future__ import annotations

from shipsync_sandbox.resources import Resource, stable_id

# (scac, name, short name, alternative scacs, bill of lading, booking number, container number tracking)
Line = tuple[str, str, str, tuple[str, ...], bool, bool, bool]
SHIPPING_LINES: tuple[Line, ...] = (
    ("MAEU", "Maersk", "Maersk", ("MAEI", "SEAU"), True, True, True),
    ("MSCU", "Mediterranean Shipping Company", "MSC", ("MEDU",), True, True, True),
    ("CMDU", "CMA CGM", "CMA CGM", ("CMAU",), True, True, True),
    ("COSU", "COSCO", "COSCO", ("CCLU",), True, True, False),
    ("HLCU", "Hapag-Lloyd", "Hapag", ("HLXU",), True, True, True),
    ("ONEY", "Ocean Network Express", "ONE", (), True, True, True),
    ("EGLV", "Evergreen", "Evergreen", ("EISU",), True, False, True),
    ("ZIMU", "ZIM", "ZIM", (), True, True, False),
    ("YMLU", "Yang Ming", "Yang Ming", ("YMJA",), True, False, True),
    ("HDMU", "HMM", "HMM", (), True, True, True),
)
# The carriers seeded shipments are drawn from (order fixed: the seeded draws depend on it).
CARRIERS = ("MAEU", "MSCU", "CMDU", "COSU", "HLCU", "ONEY", "EGLV", "ZIMU")
CARRIER_NAMES = {scac: name for scac, name, *_ in SHIPPING_LINES}
SHORT_NAMES = {scac: short for scac, _, short, *_ in SHIPPING_LINES}
RAIL_CARRIERS = ("BNSF", "UPRR", "CSXT", "NSRR", "CN", "CPRS")
# Where a line says whether it tracks each kind of number a tracking request names.
_TRACKS = {"bill_of_lading": 4, "booking_number": 5, "container": 6}


def line_of(scac: str) -> Line | None:
    """The line a SCAC, or one of its alternative SCACs, names."""
    return next((line for line in SHIPPING_LINES if scac in (line[0], *line[3])), None)


def tracks(line: Line, request_type: str) -> bool:
    """Whether the line tracks this kind of number (`bill_of_lading`, `booking_number`, `container`)."""
    return bool(line[_TRACKS[request_type]])


def shipping_line_resource(scac: str) -> Resource:
    scac, name, short, alternatives, bl, booking, container = next(line for line in SHIPPING_LINES if line[0] == scac)
    line_id = stable_id("shipping_line", scac)
    return {
        "id": line_id,
        "type": "shipping_line",
        "attributes": {
            "scac": scac,
            "name": name,
            "short_name": short,
            "alternative_scacs": list(alternatives),
            "bill_of_lading_tracking_support": bl,
            "booking_number_tracking_support": booking,
            "container_number_tracking_support": container,
            # What the line reports of a container, as the real service says (`_notes` beside each).
            "provided_data": {"seal_number": bl, "seal_number_notes": "", "weight_in_lbs": booking, "weight_in_lbs_notes": ""},
            # The line's own pages (made-up addresses): tracking with the number in place of `${BLNUM}`
            # where the line tracks bills of lading, and how to reach it.
            "tracking_url": f"https://{scac.lower()}.line.test/track/${{BLNUM}}" if bl else None,
            "contact_url": f"https://{scac.lower()}.line.test/contact",
        },
        "links": {"self": f"/v2/shipping_lines/{line_id}"},
    }


def shipping_line_resources() -> list[Resource]:
    return [shipping_line_resource(line[0]) for line in SHIPPING_LINES]
