"""The report's first screen answers a fleet manager's questions on boxes whose answers are known
(`support.analyst_world`, plus a consignee, references, a PO, fees and a vessel due next week):
the headline figures, what needs action and what it costs, and what arrives next, in that order;
and nothing on it says something false (no box long gone counted at the port, no epoch date)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from shipsync.report import build_report
from shipsync.report.model import ReportResult
from shipsync.report.tariff import NO_RATES, Tariff
from shipsync.warehouse.declared_rows import declared_batch
from support.analyst_world import TODAY, day, world
from support.lake import analyst, location, sql_now, write_now

PO_SLUG = "po_number"


def fleet_of_the_day(warehouse: Path) -> None:
    """The analyst world, with c-2 (2 days past its last free day, on hold) named by its consignee,
    references and PO and charged USD 350, and one box on EVER ACE voyage 853E due at Los Angeles in 8 days."""
    world(warehouse)
    on_the_way = [
        {
            "id": "s-2",
            "type": "shipment",
            "attributes": {
                "bill_of_lading_number": "EGLV2",
                "port_of_discharge_locode": "USLAX",
                "port_of_discharge_name": "Los Angeles",
                "pod_vessel_name": "EVER ACE",
                "pod_voyage_number": "853E",
                "pod_eta_at": day(8),
            },
        },
        {
            "id": "c-7",
            "type": "container",
            "attributes": {"number": "EGHU0000007", "current_status": "on_ship"},
            "relationships": {"shipment": {"data": {"type": "shipment", "id": "s-2"}}},
        },
    ]
    write_now(warehouse, declared_batch(on_the_way, observed_at=day(0)))
    sql_now(warehouse, "UPDATE shipments SET customer_name = 'Acme Imports', ref_numbers = ['REF-7'] WHERE id = 's-1'")
    sql_now(
        warehouse,
        "UPDATE containers SET ssl_lfd = ?, fee_total = 350, "
        "fees_at_pod_terminal = [{'type': 'demurrage', 'amount': 350, 'currency_code': 'USD'}] WHERE id = 'c-2'",
        [TODAY + timedelta(days=3)],
    )
    sql_now(
        warehouse,
        "INSERT INTO custom_fields (id, api_slug, value, display_value, entity_type, entity_id) "
        "VALUES ('cf-1', ?, '\"PO-9\"', 'PO-9', 'container', 'c-2')",
        [PO_SLUG],
    )


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp("fleet") / "warehouse"
    fleet_of_the_day(warehouse)
    return warehouse


def report(warehouse: Path, tmp_path: Path, tariff: Tariff = NO_RATES) -> tuple[ReportResult, str]:
    result = build_report(location(warehouse), tmp_path / "report.html", spool=tmp_path / "spool", tariff=tariff)
    return result, result.path.read_text(encoding="utf-8")


def table(html: str) -> list[dict[str, str]]:
    """A drawn table's rows, each by its column's heading (cells as the page escapes them)."""
    heads = re.findall(r'<th scope="col">(.*?)</th>', html)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]
    return [dict(zip(heads, row, strict=True)) for row in rows if row]


def test_the_first_screen_says_what_needs_action_what_it_costs_and_what_arrives(fleet: Path, tmp_path: Path) -> None:
    result, page = report(fleet, tmp_path, Tariff(demurrage_per_day=175, detention_per_day=150))
    by_key = {o.chart.key: o for o in result.outcomes}
    # In this order, first: the figures, the action list, the arrivals; the sync's health last.
    order = [
        page.index(f'<figure id="{key}">')
        for key in ("headline", "pickup_risk", "upcoming_arrivals", "containers_by_status", "sync_status")
    ]
    assert order == sorted(order)
    assert page.index('<figure id="sync_status">') > page.index('<figure id="delivery_health">')

    figures = re.findall(r'figure-value">([^<]*)</div><div class="figure-label">([^<]*)<', by_key["headline"].html)
    # c-1, c-2, c-3 are in the yard (c-5 went by rail and is back empty, c-6 waits at its inland
    # ramp); c-1, c-2 and c-6 are at risk; fees: c-2's USD 350 and c-6's 150 at its ramp.
    assert figures == [("1", "on the water"), ("3", "waiting at the port"), ("3", "at risk"), ("USD 500", "fees to date")]

    risk = table(by_key["pickup_risk"].html)
    assert [r["Container"] for r in risk] == ["MSKU0000002", "MSKU0000001", "MSKU0000006"]
    late = risk[0]
    assert late["Consignee"] == "Acme Imports"
    assert late["References"] == "B/L MAEU1 · REF-7 · PO PO-9"
    assert (late["Port"], late["Inland ramp"]) == ("USLAX · Pier 400", "")
    assert late["Last free day"].endswith(", 2 days late")
    assert late["Fees"] == "USD 350"
    assert late["D&amp;D to date"] == "USD 350"  # 2 days of demurrage at 175; the line's deadline is 3 days ahead
    assert late["D&amp;D at line LFD"] == "USD 875"  # 5 days of demurrage by the line's last free day
    assert late["Return empty by"] == (TODAY + timedelta(days=3)).strftime("%a %d %b")
    ramp = risk[2]
    assert (ramp["Port"], ramp["Inland ramp"], ramp["Fees"]) == ("USLAX · Pier 400", "Joliet Ramp", "USD 150")

    (due,) = table(by_key["upcoming_arrivals"].html)
    assert (due["Vessel"], due["Voyage"], due["Port"], due["Boxes"]) == ("EVER ACE", "853E", "Los Angeles · USLAX", "1")
    eta = TODAY + timedelta(days=8)
    assert due["When"] in ("next week", "week of " + (eta - timedelta(days=eta.weekday())).strftime("%d %b"))

    # The header names no warehouse location (it may carry credentials).
    assert str(fleet) not in page


def test_without_rates_the_costs_are_counted_in_days(fleet: Path, tmp_path: Path) -> None:
    result, _ = report(fleet, tmp_path)
    risk = next(o for o in result.outcomes if o.chart.key == "pickup_risk").html
    assert "2 d demurrage" in risk and "5 d demurrage" in risk and "no daily rates were given" in risk


def test_at_the_port_counts_only_boxes_in_the_yard(fleet: Path, tmp_path: Path) -> None:
    """The by-port chart counted boxes gone on by rail, or back empty, as at the port."""
    result, _ = report(fleet, tmp_path)
    by_port = next(o for o in result.outcomes if o.chart.key == "containers_by_port")
    with analyst(fleet) as con:
        found = con.execute(by_port.sql).fetchall()
        names = [d[0] for d in con.description]
    counted = {row[0]: dict(zip(names, row, strict=True)) for row in found}["USLAX"]
    assert counted["at the port terminal"] == 3  # c-1, c-2, c-3: not c-5 (back empty) nor c-6 (at its inland ramp)
    assert (counted["gone on by rail"], counted["picked up"], counted["returned empty"], counted["on the way"]) == (1, 1, 1, 1)


def test_an_empty_problems_chart_says_nothing_false(warehouse: Path, tmp_path: Path) -> None:
    """A lake whose problem tables never kept a row: DuckLake answered their newest moment from
    statistics as 1970-01-01, and the chart said "`--days 20786` shows it"."""
    sql_now(warehouse, "INSERT INTO webhook_events (notification_id, event, received_at) VALUES ('n-1', 'shipment.updated', now())")
    result, page = report(warehouse, tmp_path)
    problems = next(o for o in result.outcomes if o.chart.key == "delivery_health")
    assert problems.state == "empty"
    assert "1970" not in problems.message and "--days" not in problems.message
    assert "The warehouse holds none at all yet." in problems.message
    assert "1970-01-01" not in page
