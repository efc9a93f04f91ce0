"""`shipsync report` on a warehouse filled from the sandbox, on an empty one and on none at all:
every chart drawn from rows its own SQL gives, that SQL runnable as the page shows it, and a page
that says what to run when there is nothing to draw."""

from __future__ import annotations

import html
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.config import Settings
from shipsync.report import build_report
from shipsync.report.sections import SECTIONS
from support.fleet import build_fleet
from support.lake import analyst, location, sql_now

CHARTS = [chart for section in SECTIONS for chart in section.charts]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return build_fleet(tmp_path_factory.mktemp("fleet"))


def dead_letters_kept(warehouse: Settings) -> bool:
    """Whether this version's `events load` keeps dead letters (the delivery-health chart reads them)."""
    con = analyst(warehouse)
    try:
        return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'webhook_dead_letters'").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def at_risk(warehouse: Settings) -> int:
    con = analyst(warehouse)
    try:
        return int(con.execute("SELECT count(*) FROM pickup_risk").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def shown_sql(page: str) -> dict[str, str]:
    """Each figure's SQL as the page shows it, unescaped, by the figure's id."""
    found = re.findall(r'<figure id="([^"]+)">.*?<pre><code>(.*?)</code></pre>', page, flags=re.S)
    return {key: html.unescape(sql) for key, sql in found}


@pytest.mark.slow
def test_every_chart_is_drawn_from_its_own_sql(fleet: Settings, tmp_path: Path) -> None:
    # The sandbox world starts now, its journeys departing over the 200 days before: a year up to now covers them and the runs.
    result = build_report(fleet.lake, tmp_path / "report.html", days=365, spool=fleet.spool_dir)
    page = result.path.read_text()
    not_drawn = {o.chart.key for o in result.outcomes if o.state != "drawn"}
    expected = (set() if dead_letters_kept(fleet) else {"delivery_health"}) | (set() if at_risk(fleet) else {"pickup_risk"})
    assert not_drawn == expected
    sql = shown_sql(page)
    assert set(sql) == {c.key for c in CHARTS}
    con = analyst(fleet)
    try:
        for outcome in result.outcomes:
            if outcome.chart.key in not_drawn:
                continue
            rows = con.execute(sql[outcome.chart.key]).fetchall()  # copied from the page, run as is
            assert len(rows) == outcome.rows > 0, outcome.chart.key
    finally:
        con.close()
    tables = {"headline", "pickup_risk", "upcoming_arrivals", "sync_status"}
    svgs = [o.chart.key for o in result.outcomes if '<svg role="img"' in o.html]
    assert page.count('<svg role="img"') == len(svgs) and set(svgs) == {c.key for c in CHARTS} - tables - not_drawn
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page


@pytest.mark.slow
def test_charts_count_what_the_warehouse_holds(fleet: Settings, tmp_path: Path) -> None:
    result = build_report(fleet.lake, tmp_path / "report.html", days=365, spool=fleet.spool_dir)
    page = result.path.read_text()
    con = analyst(fleet)
    try:
        flows = con.execute("SELECT count(DISTINCT flow) + 1 FROM sync_runs").fetchone()  # and the webhook events' line
        conflicts = con.execute("SELECT count(*) FROM webhook_event_conflicts").fetchone()
        statuses = con.execute("SELECT count(DISTINCT coalesce(current_status, '')) FROM containers").fetchone()
        ports = con.execute(
            "SELECT count(DISTINCT s.port_of_discharge_locode) FROM containers c JOIN shipments s ON s.id = c.shipment_id"
        ).fetchone()
    finally:
        con.close()
    by_key = {o.chart.key: o for o in result.outcomes}
    assert flows and by_key["sync_status"].rows == flows[0]
    assert "_" not in re.sub(r"<[^>]+>", "", by_key["sync_status"].html)  # words, no flow's snake_case name
    assert "Documents pull: last ran " in by_key["sync_status"].html
    assert statuses and by_key["containers_by_status"].rows == statuses[0]
    assert ports and by_key["containers_by_port"].rows == min(25, ports[0])
    assert re.search(r">[A-Z][a-z][^<]* \([A-Z]{5}\)<", by_key["containers_by_port"].html)  # a metro area's name, its UN/LOCODE
    # Boxes back empty are counted under the charts, never drawn in their bars.
    assert ">empty returned<" not in by_key["containers_by_status"].html and "returned empty" in by_key["containers_by_status"].html
    assert conflicts == (1,)
    # Each figure has its title, the unit of its numbers, and its SQL folded away.
    for chart in CHARTS:
        assert f'<figcaption id="{chart.key}-caption">{html.escape(chart.title)}<span class="unit">{html.escape(chart.unit)}' in page
    if dead_letters_kept(fleet):
        assert "conflicts (same id, other body)" in by_key["delivery_health"].html
        assert "quarantined (signed, not a notification)" in by_key["delivery_health"].html


def newest(warehouse: Settings, sql: str) -> datetime:
    con = analyst(warehouse)
    try:
        found = con.execute(sql).fetchone()
    finally:
        con.close()
    assert found is not None and isinstance(found[0], datetime)
    return found[0]


SYNC_CHARTS = {"events_per_day", "delivery_health", "sync_status", "requests_per_day", "trouble_per_day"}


@pytest.mark.slow
def test_an_old_warehouse_is_shown_as_of_its_own_newest_moments(fleet: Settings, tmp_path: Path) -> None:
    """Read months after its data, a warehouse's report shows its last days (the fleet's up to its
    newest transport event, the sync's up to its newest run) and says so, instead of empty charts."""
    event = newest(fleet, "SELECT max(timestamp) FROM transport_events")
    run = newest(
        fleet,
        "SELECT max(moment) FROM (SELECT max(started_at) AS moment FROM sync_runs UNION ALL SELECT max(received_at) FROM webhook_events)",
    )
    later = max(event, run) + timedelta(days=400)
    result = build_report(fleet.lake, tmp_path / "later.html", days=30, now=later, spool=fleet.spool_dir)
    assert (result.windows["fleet"].as_of, result.windows["sync"].as_of) == (event, run)
    assert "the newest transport event in the warehouse" in result.windows["fleet"].why
    assert "the newest run or webhook delivery in the warehouse" in result.windows["sync"].why
    not_drawn = {o.chart.key: o.message for o in result.outcomes if o.state != "drawn"}
    assert set(not_drawn) <= {"pickup_risk", "upcoming_arrivals", "dwell", "eta_slippage", "delivery_health"}, not_drawn
    assert {"events_per_day", "sync_status", "requests_per_day", "headline"}.isdisjoint(not_drawn)
    page = result.path.read_text()
    assert f"as of <strong>{event:%Y-%m-%d %H:%M} UTC</strong> (the newest transport event in the warehouse" in page
    assert f"<title>shipsync report, {event:%Y-%m-%d}</title>" in page
    assert f"its last runs are timed to {later:%Y-%m-%d %H:%M} UTC" in page
    fresh = build_report(
        fleet.lake, tmp_path / "fresh.html", days=30, now=event + timedelta(days=1), spool=fleet.spool_dir
    )  # the day after
    assert fresh.windows["fleet"].why == "now" and fresh.windows["fleet"].as_of == event + timedelta(days=1)


@pytest.mark.slow
def test_as_of_moves_the_fleet_and_an_empty_chart_says_where_its_data_is(fleet: Settings, tmp_path: Path) -> None:
    """`--as-of` is the fleet's moment; the sync's charts stay on the machine's clock (they went
    empty when the fleet's as-of was months before the runs)."""
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    result = build_report(fleet.lake, tmp_path / "old.html", days=7, as_of=long_ago, spool=fleet.spool_dir)
    by_key = {o.chart.key: o for o in result.outcomes}
    # The chart's newest full out is the newest by the machine's clock (a simulated world can run ahead).
    full_out = newest(fleet, "SELECT max(pod_full_out_at) FROM containers WHERE pod_discharged_at IS NOT NULL AND pod_full_out_at <= now()")
    assert by_key["dwell"].state == "empty"
    assert by_key["dwell"].message == (
        "No container left a terminal full in the 7 days to 2020-01-01 00:00 UTC. "
        f"The newest is from {full_out:%Y-%m-%d %H:%M} UTC: `--as-of {full_out:%Y-%m-%d}` shows it."
    )
    assert by_key["dwell"].state == by_key["eta_slippage"].state == "empty"
    assert all(by_key[key].state == "drawn" for key in SYNC_CHARTS - {"delivery_health"})
    page = result.path.read_text()
    assert "as of <strong>2020-01-01 00:00 UTC</strong> (given with <code>--as-of</code>)" in page
    assert html.escape(f"`--as-of {full_out:%Y-%m-%d}`").replace("`--as-of", "<code>--as-of").replace("`", "</code>") in page
    # A window that ends after the data: `--days` reaches back to it.
    moment = full_out + timedelta(days=2, hours=1)
    short = build_report(fleet.lake, tmp_path / "short.html", days=1, as_of=moment, spool=fleet.spool_dir)
    dwell = next(o for o in short.outcomes if o.chart.key == "dwell")
    assert dwell.state == "empty" and dwell.message.endswith(f"`--as-of {full_out:%Y-%m-%d}` or `--days 3` shows it.")
    days3 = build_report(fleet.lake, tmp_path / "days3.html", days=3, as_of=moment, spool=fleet.spool_dir)
    assert next(o for o in days3.outcomes if o.chart.key == "dwell").state == "drawn"


@pytest.mark.slow
def test_values_from_data_are_plain_text_on_the_page(fleet: Settings, tmp_path: Path) -> None:
    """A status `$\\foo$` is a dollar sign, a backslash and a word (matplotlib parsed it as maths
    and raised, so no report was written), and NUL, BEL and a right-to-left override in a container
    number are shown escaped in the table, never as the characters themselves."""
    warehouse = tmp_path / "copy"
    shutil.copytree(fleet.warehouse, warehouse)
    number = "MSCU\x00\u202e\x071234565"
    sql_now(warehouse, "UPDATE containers SET current_status = '$\\foo$' WHERE id = (SELECT max(id) FROM containers)")
    # Discharged, not out, its last free day long passed: at risk whatever the report's date.
    sql_now(
        warehouse,
        "UPDATE containers SET number = ?, current_status = 'available', pod_discharged_at = TIMESTAMPTZ '2019-12-20 00:00:00+00', "
        "pod_full_out_at = NULL, final_destination_full_out_at = NULL, pod_rail_departed_at = NULL, delivered_at = NULL, "
        "empty_terminated_at = NULL, pickup_lfd = TIMESTAMPTZ '2020-01-01 00:00:00+00' WHERE id = (SELECT min(id) FROM containers)",
        [number],
    )
    result = build_report(location(warehouse), tmp_path / "report.html", days=365, spool=tmp_path / "spool")
    page = result.path.read_text(encoding="utf-8")
    by_key = {o.chart.key: o for o in result.outcomes}
    assert by_key["containers_by_status"].state == "drawn" and ">$\\foo$<" in by_key["containers_by_status"].html
    assert by_key["pickup_risk"].state == "drawn" and ">MSCU\\x00\\u202e\\x071234565</td>" in page
    assert not [c for c in ("\x00", "\x07", "\u202e") if c in page]


def test_no_warehouse_gives_a_page_that_says_what_to_run_first(tmp_path: Path) -> None:
    result = build_report(location(tmp_path / "nothing"), tmp_path / "report.html", spool=tmp_path / "spool")
    page = result.path.read_text()
    assert result.drawn == 0 and "<svg" not in page
    assert "shipsync pull all" in result.first_steps and html.escape("shipsync pull all") in page
    assert not (tmp_path / "nothing").exists()  # the report never creates a warehouse


def test_an_empty_warehouse_names_the_command_that_fills_each_chart(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    sql_now(warehouse, "SELECT 1")  # the schema, no rows
    result = build_report(location(warehouse), tmp_path / "report.html", spool=tmp_path / "spool")
    assert result.drawn == 0 and result.first_steps
    page = result.path.read_text()
    for outcome in result.outcomes:
        assert outcome.state == "missing"
        assert f"`{outcome.chart.query.filled_by}`" in outcome.message
        assert f"<code>{outcome.chart.query.filled_by}</code>" in page


@pytest.mark.slow
def test_the_page_replaces_the_previous_one_whole(fleet: Settings, tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("an older report")
    build_report(fleet.lake, target, spool=fleet.spool_dir)
    assert target.read_text().startswith("<!DOCTYPE html>") and target.read_text().rstrip().endswith("</html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


@pytest.mark.slow
def test_cli_report(fleet: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", fleet.warehouse)
    runner = CliRunner()
    done = runner.invoke(app, ["report", "--output", str(tmp_path / "r.html"), "--days", "10"])
    assert done.exit_code == 0, done.output
    assert f"report written to {tmp_path / 'r.html'}" in done.output and "charts drawn" in done.output
    assert "its time series cover the 10 days up to it" in (tmp_path / "r.html").read_text()
    assert "fleet as of " in done.output and "sync as of " in done.output
    bad = runner.invoke(app, ["report", "--as-of", "yesterday"])
    assert bad.exit_code == 1 and "--as-of 'yesterday' is not a date" in bad.output and "Traceback" not in bad.output
    assert runner.invoke(app, ["report", "--days", "0"]).exit_code == 2
    priced = runner.invoke(app, ["report", "--output", str(tmp_path / "p.html"), "--demurrage-per-day", "175", "--currency", "eur"])
    assert priced.exit_code == 0, priced.output
    assert (
        "CAST(175.0 AS DOUBLE)" in (tmp_path / "p.html").read_text()
        and "&#x27;EUR&#x27; AS tariff_currency" in (tmp_path / "p.html").read_text()
    )
    wrong = runner.invoke(app, ["report", "--demurrage-per-day", "175", "--currency", "dollars"])
    assert (
        wrong.exit_code == 1
        and "--currency 'DOLLARS': give a three-letter ISO 4217 code" in wrong.output
        and "Traceback" not in wrong.output
    )


@pytest.mark.slow
def test_report_flow_leaves_a_link_and_a_summary(prefect_harness: None, fleet: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from flows.report import report
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.objects import Artifact

    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", fleet.warehouse)
    written = Path(asyncio.run(report(days=365)))
    assert written == Path(fleet.warehouse) / "report.html" and written.read_text().startswith("<!DOCTYPE html>")

    async def artifacts(key: str) -> list[Artifact]:
        async with get_client() as client:
            return await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])), limit=5)

    link = asyncio.run(artifacts("report"))
    summary = asyncio.run(artifacts("report-summary"))
    # Prefect keeps a link artifact as markdown: [text](link).
    assert link and f"]({written.resolve().as_uri()})" in str(link[0].data)
    assert summary and "| Containers by current status |" in str(summary[0].data) and "drawn" in str(summary[0].data)
    assert "| The fleet today |" in str(summary[0].data)
