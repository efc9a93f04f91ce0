"""Shapes the real service sends that the reference pages did not show: each lands in its typed
column (not in `leftovers`), in the warehouse and in the client model.

The resources are made up; only their shapes follow the real answers (numbers as text, a day sent as
an instant, members and relationships beyond the reference's list, a `rail` data source).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.api.place_models import Port, Terminal
from shipsync.api.tracking_models import Container, Shipment, TransportEvent
from shipsync.warehouse.declared_rows import declared_batch
from shipsync.warehouse.members import MISFIT, members_of
from shipsync_sandbox import SandboxOptions, create_app
from shipsync_sandbox.journeys import simulate
from support.lake import write_now
from support.sandboxes import K1
from support.warehouse_rows import rows


def resource(type_: str, id_: str, attributes: dict[str, Any], relationships: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": type_, "id": id_, "attributes": attributes, "relationships": relationships or {}}


def one(type_: str, id_: str) -> dict[str, Any]:
    return {"data": {"type": type_, "id": id_}}


def load(warehouse: Path, *resources: dict[str, Any]) -> None:
    write_now(warehouse, declared_batch(resources, observed_at="2026-03-01T00:00:00Z"))


def leftovers(row: dict[str, Any]) -> Any:
    return orjson.loads(row["leftovers"]) if row["leftovers"] else None


@pytest.mark.slow
def test_a_port_sends_its_position_as_text(warehouse: Path) -> None:
    port = resource(
        "port",
        "p-1",
        {"id": "p-1", "name": "Somewhere", "code": "XXSOM", "latitude": "-12.25", "longitude": "101"},
        {"terminals": {"data": [{"type": "terminal", "id": "t-1"}, {"type": "terminal", "id": "t-2"}]}},
    )
    load(warehouse, port)
    (row,) = rows(warehouse, "SELECT latitude, longitude, terminal_ids, leftovers FROM ports")
    assert (row["latitude"], row["longitude"], row["terminal_ids"]) == (-12.25, 101.0, ["t-1", "t-2"])
    assert leftovers(row) is None
    model = Port.from_resource(port)
    assert (model.latitude, [t.id for t in model.terminals]) == (-12.25, ["t-1", "t-2"])


@pytest.mark.parametrize("text", ["12,5", "nan", "inf", "1e999", " 1", "0x10", "", "1_000", "9" * 70])
def test_text_that_is_not_a_plain_number_stays_a_misfit(text: str) -> None:
    latitude = next(m for m in members_of(Port) if m.name == "latitude")
    assert latitude.coerce(text) is MISFIT


def test_a_day_sent_as_an_instant_is_that_day(warehouse: Path) -> None:
    box = resource("container", "c-1", {"number": "ZZZU0000001", "ind_facility_lfd_on": "2026-04-03T04:00:00Z"})
    load(warehouse, box)
    (row,) = rows(warehouse, "SELECT ind_facility_lfd_on, leftovers FROM containers")
    assert row["ind_facility_lfd_on"] == date(2026, 4, 3) and leftovers(row) is None
    assert Container.from_resource(box).ind_facility_lfd_on == date(2026, 4, 3)
    # A plain date still reads, and a value that is no day stays out of the model (kept in `raw`).
    day_of = lambda sent: Container.from_resource(resource("container", "c-2", {"ind_facility_lfd_on": sent})).ind_facility_lfd_on  # noqa: E731
    assert (day_of("2026-04-05"), day_of("soon")) == (date(2026, 4, 5), None)


def test_the_members_beyond_the_reference_have_columns(warehouse: Path) -> None:
    box = resource(
        "container",
        "c-1",
        {
            "number": "ZZZU0000001",
            "pol_vessel_departed_at": "2026-01-02T03:04:05Z",
            "rail_last_tracking_request_at": "2026-02-01T00:00:00+01:00",
            "delivered_at": None,
            "ind_facility_holds": [{"name": "customs", "status": "hold", "description": None}],
            "ind_facility_fees": [{"type": "demurrage", "amount": 75, "currency_code": "USD"}],
        },
    )
    shipment = resource("shipment", "s-1", {"pol_original_etd_at": "2025-12-30T10:00:00Z", "destination_original_eta_at": None})
    terminal = resource("terminal", "t-1", {"id": "t-1", "name": "Pier 0", "provided_data": {"pickup_lfd": True, "pickup_lfd_notes": ""}})
    load(warehouse, box, shipment, terminal)
    (row,) = rows(warehouse, "SELECT * FROM containers")
    assert row["pol_vessel_departed_at"] == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert row["rail_last_tracking_request_at"] == datetime(2026, 1, 31, 23, tzinfo=UTC)
    assert row["ind_facility_holds"] == [{"name": "customs", "status": "hold", "description": None}]
    assert row["ind_facility_fees"] == [{"type": "demurrage", "amount": 75.0, "currency_code": "USD"}]
    assert leftovers(row) is None
    (ship,) = rows(warehouse, "SELECT pol_original_etd_at, leftovers FROM shipments")
    assert ship["pol_original_etd_at"] == datetime(2025, 12, 30, 10, tzinfo=UTC) and leftovers(ship) is None
    (term,) = rows(warehouse, "SELECT provided_data, leftovers FROM terminals")
    assert orjson.loads(term["provided_data"]) == {"pickup_lfd": True, "pickup_lfd_notes": ""} and leftovers(term) is None
    assert Shipment.from_resource(shipment).pol_original_etd_at == datetime(2025, 12, 30, 10, tzinfo=UTC)
    assert Terminal.from_resource(terminal).provided_data == {"pickup_lfd": True, "pickup_lfd_notes": ""}


def test_a_changed_event_from_rail_keeps_its_value_and_sources(warehouse: Path) -> None:
    event = resource(
        "transport_event",
        "e-1",
        {"event": "container.pickup_lfd.changed", "data_source": "rail", "value": "2026-04-03T04:00:00Z", "invalidated_at": None},
        {
            "container": one("container", "c-1"),
            "source_event": one("raw_event", "r-1"),
            "previous_version": {"data": None},
            "location": {"data": None},
        },
    )
    load(warehouse, event)
    (row,) = rows(warehouse, "SELECT data_source, value, source_event_id, previous_version_id, leftovers FROM transport_events")
    expected = {"data_source": "rail", "value": "2026-04-03T04:00:00Z", "source_event_id": "r-1", "previous_version_id": None}
    assert row.pop("leftovers") is None
    assert row == expected
    model = TransportEvent.from_resource(event)
    assert (model.data_source, model.value) == ("rail", "2026-04-03T04:00:00Z")
    assert model.source_event is not None and model.source_event.id == "r-1" and model.previous_version is None


def test_the_sandbox_reports_a_changed_day_as_the_events_value() -> None:
    app = create_app(SandboxOptions(api_keys=(K1,), documents=40, rate_limit=None))
    deliveries: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = []
    simulate(app.state.world.accounts[K1], lambda acct, kind, ref, included, at: deliveries.append((kind, ref, included)), containers=6)
    changes = [d for d in deliveries if d[0].endswith(".changed") and d[1]["type"] == "transport_event"]
    assert {"container.pickup_lfd.changed", "container.pickup_lfd_line.changed"} <= {kind for kind, *_ in changes}
    for kind, reference, included in changes:
        container_id = reference["relationships"]["container"]["data"]["id"]
        box = next(r["attributes"] for r in included if r["type"] == "container" and r["id"] == container_id)
        member = (
            "pickup_appointment_at"
            if kind == "container.pickup_appointment.changed"
            else kind.removeprefix("container.").removesuffix(".changed")
        )
        assert reference["attributes"]["value"] == box.get(member, box["import_deadlines"].get(member)), kind
    assert any(reference["attributes"]["value"] for _, reference, _ in changes)


def test_a_shipping_line_keeps_what_it_reports_and_its_pages(warehouse: Path) -> None:
    line = resource(
        "shipping_line",
        "l-1",
        {
            "scac": "ZZZZ",
            "provided_data": {"ssl_lfd": True, "ssl_lfd_notes": "x"},
            "tracking_url": "https://line.test/${BLNUM}",
            "contact_url": None,
        },
    )
    load(warehouse, line)
    (row,) = rows(warehouse, "SELECT provided_data, tracking_url, contact_url, leftovers FROM shipping_lines")
    assert orjson.loads(row["provided_data"]) == {"ssl_lfd": True, "ssl_lfd_notes": "x"}
    assert (row["tracking_url"], row["contact_url"], row["leftovers"]) == ("https://line.test/${BLNUM}", None, None)
