"""Service-wide places of the sandbox: ports, terminals (rail terminals too) and vessels, with every
member `docs/tracking-model.md` lists. Derived from the metro area table, so they are the same for
every seed; ids are stable (`GET /ports/{id}` also takes a UN/LOCODE)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from shipsync_sandbox.reference import (
    INLAND_LOCODES,
    PLACES,
    SHARED_CODE_METRO_AREAS,
    US_PORT_LOCODES,
    metro_area_key,
    metro_area_resources,
)
from shipsync_sandbox.resources import Resource, stable_id

# Terminal names at ports of discharge (two each), in the order the journeys draw them.
TERMINAL_NAMES = ("Container Terminal", "Marine Terminal")
# (name, IMO, MMSI): the vessels journeys sail on.
VESSELS: tuple[tuple[str, str, str], ...] = (
    ("MAERSK EMDEN", "9456771", "219018271"),
    ("MSC GULSUN", "9839430", "636019384"),
    ("CMA CGM JACQUES SAADE", "9839179", "228386800"),
    ("EVER ACE", "9893890", "353136000"),
    ("HMM ALGECIRAS", "9863297", "440326000"),
    ("ONE INNOVATION", "9865612", "373652000"),
    ("COSCO SHIPPING UNIVERSE", "9795610", "477246500"),
    ("HAPAG BERLIN EXPRESS", "9229831", "211433000"),
)
HUBS = ("SGSIN", "KRPUS", "CNYTN")


def port_id(locode: str) -> str:
    return stable_id("port", locode)


def terminal_id(locode: str, n: int) -> str:
    return stable_id("terminal", locode, n)


def rail_terminal_id(locode: str, metro: str | None = None) -> str:
    """The intermodal ramp of an inland place (of the metro area `metro` where the place's code
    names more than one)."""
    return stable_id("rail_terminal", *metro_area_key(locode, metro))


def vessel_id(name: str) -> str:
    return stable_id("vessel", name)


def metro_area_id(locode: str, metro: str | None = None) -> str:
    return stable_id("metro_area", *metro_area_key(locode, metro))


def destination_metro(shipment_id: str, locode: str) -> str | None:
    """Which metro area an inland journey ends in when its code names more than one: the first
    published (None), or, for some shipments (by their id), one that shares its code."""
    choices = [None, *(row[1] for row in SHARED_CODE_METRO_AREAS if row[0] == locode)]
    return choices[int(shipment_id[-4:], 16) % len(choices)]


def port_resource(locode: str) -> Resource:
    """A port as the service describes it, from the metro area table (any other code: a bare port)."""
    code, name, state, country, tz, lat, lon = PLACES.get(locode, (locode, locode, None, locode[:2], "UTC", None, None))
    return {
        "id": port_id(locode),
        "type": "port",
        "attributes": {
            "name": name,
            "code": code,
            "city": name,
            "state_abbr": state,
            "country_code": country,
            "time_zone": tz,
            "latitude": lat,
            "longitude": lon,
        },
        "relationships": {"terminals": {"data": [{"type": "terminal", "id": terminal_id(locode, n)} for n in _terminal_numbers(locode)]}},
        "links": {"self": f"/v2/ports/{port_id(locode)}"},
    }


def _terminal_numbers(locode: str) -> range:
    return range(len(TERMINAL_NAMES) if locode in US_PORT_LOCODES else 0)


def terminal_resource(locode: str, n: int) -> Resource:
    code, city, state, country, *_ = PLACES[locode]
    state = state or PROVINCES.get(locode, country)  # a terminal's address always has its state (the reference: a string)
    name = f"{city} {TERMINAL_NAMES[n]}"
    letters = "".join(w[0] for w in name.split()).upper()
    serial = sum(map(ord, locode)) % 900 + 100 + n
    return {
        "id": terminal_id(locode, n),
        "type": "terminal",
        "attributes": {
            "name": name,
            "nickname": letters,
            "firms_code": f"{'WY'[n]}{serial}",
            "smdg_code": f"{letters[:3]}{n}",
            "bic_facility_code": f"{code}{letters[:3]}",
            "street": f"{100 + serial} Terminal Way",
            "city": city,
            "state": STATE_NAMES.get(state, state),
            "state_abbr": state,
            "zip": f"{serial:03d}{n + 10}",
            "country": country,
            "facility_type": "ocean_terminal",
            # What the terminal reports of a container: the second terminal of a port reports no fees.
            "provided_data": {"pickup_lfd": True, "holds_at_pod_terminal": True, "fees_at_pod_terminal": n == 0, "pickup_lfd_notes": ""},
        },
        "relationships": {"port": {"data": {"type": "port", "id": port_id(locode)}}},
        "links": {"self": f"/v2/terminals/{terminal_id(locode, n)}"},
    }


def rail_terminal_resource(locode: str, metro: str | None = None) -> Resource:
    city = metro or PLACES[locode][1]
    return {
        "id": rail_terminal_id(locode, metro),
        "type": "rail_terminal",
        "attributes": {
            "name": f"{city} Intermodal Ramp",
            "nickname": f"{city[:3].upper()} RAMP",
            "firms_code": f"R{sum(map(ord, locode)) % 900 + 100}",
        },
        "relationships": {
            "port": {"data": None},
            "metro_area": {"data": {"type": "metro_area", "id": metro_area_id(locode, metro)}},
        },
        "links": {"self": f"/v2/terminals/{rail_terminal_id(locode, metro)}"},
    }


def vessel_resource(name: str) -> Resource:
    n = [v[0] for v in VESSELS].index(name)
    _, imo, mmsi = VESSELS[n]
    return {
        "id": vessel_id(name),
        "type": "vessel",
        "attributes": {
            "name": name,
            "imo": imo,
            "mmsi": mmsi,
            "latitude": round(10.0 + n * 3.7, 4),
            "longitude": round(-150.0 + n * 21.3, 4),
            "nautical_speed_knots": 14 + n,
            "navigational_heading_degrees": (n * 47) % 360,
            "position_timestamp": "2026-05-15T11:00:00Z",
        },
        "links": {"self": f"/v2/vessels/{vessel_id(name)}"},
    }


# The provinces and states of the ports of discharge outside the US.
PROVINCES = {"CAVAN": "BC", "MXZLO": "COL"}
STATE_NAMES = {
    "BC": "British Columbia",
    "COL": "Colima",
    "CA": "California",
    "NY": "New York",
    "GA": "Georgia",
    "TX": "Texas",
    "WA": "Washington",
    "SC": "South Carolina",
    "VA": "Virginia",
    "IL": "Illinois",
    "TN": "Tennessee",
}


@dataclass
class Places:
    """Every place the service knows, by id; ports also by UN/LOCODE."""

    ports: dict[str, Resource] = field(default_factory=dict)
    ports_by_code: dict[str, Resource] = field(default_factory=dict)
    terminals: dict[str, Resource] = field(default_factory=dict)  # terminals and rail terminals
    vessels: dict[str, Resource] = field(default_factory=dict)
    metro_areas: dict[str, Resource] = field(default_factory=dict)

    def port(self, locode: str) -> Resource:
        return self.ports_by_code.get(locode) or port_resource(locode)

    def get(self, type_: str, id_: str) -> Resource | None:
        """A place a relationship names, by its type and id."""
        source = {
            "port": self.ports,
            "terminal": self.terminals,
            "rail_terminal": self.terminals,
            "vessel": self.vessels,
            "metro_area": self.metro_areas,
        }.get(type_, {})
        found = source.get(id_)
        return found if found is not None and found["type"] == type_ else None


@cache
def catalog() -> Places:
    """The one catalog of places (the same for every sandbox: it depends on no option)."""
    return build_places()


def build_places() -> Places:
    places = Places(metro_areas={m["id"]: m for m in metro_area_resources()})
    for locode in PLACES:
        port = port_resource(locode)
        places.ports[port["id"]] = port
        places.ports_by_code[locode] = port
    for locode in US_PORT_LOCODES:
        for n in _terminal_numbers(locode):
            terminal = terminal_resource(locode, n)
            places.terminals[terminal["id"]] = terminal
    for locode, metro in [*((code, None) for code in INLAND_LOCODES), *((row[0], row[1]) for row in SHARED_CODE_METRO_AREAS)]:
        rail = rail_terminal_resource(locode, metro)
        places.terminals[rail["id"]] = rail
    for name, *_ in VESSELS:
        vessel = vessel_resource(name)
        places.vessels[vessel["id"]] = vessel
    return places
