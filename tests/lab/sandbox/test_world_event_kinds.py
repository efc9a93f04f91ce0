"""A run of simulated journeys sends every event kind a journey has, each reference object shaped as
the facts give it, and loading those deliveries fills the typed tables with exactly what each kind
carried."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from shipsync.warehouse.declared_tables import DECLARED_BY_TYPE
from shipsync.webhooks.event_kinds import EVENT_KINDS
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.event_objects import ALERTED_ON
from shipsync_sandbox.journeys import simulate
from shipsync_sandbox.seed import AccountSize, build_world
from shipsync_sandbox.timeline import REFERENCE_START
from support.warehouse_rows import assert_rows_hold, load_deliveries, rows

# Kinds no journey has: a failed request is never tracked, and documents are not journeys.
NOT_OF_A_JOURNEY = {"tracking_request.failed", "document.extracted", "document.extraction_failed"}
JOURNEYS = 80
Delivery = tuple[str, dict[str, Any], list[dict[str, Any]], str]  # kind, reference, included, created_at


@pytest.fixture(scope="module")
def deliveries() -> list[Delivery]:
    account = build_world(["k"], start=REFERENCE_START, size=AccountSize(documents=200)).accounts["k"]
    sent: list[Delivery] = []
    simulate(account, lambda acct, kind, reference, included, at: sent.append((kind, reference, included, at)), containers=JOURNEYS)
    return sent


def test_a_run_of_journeys_sends_every_kind_a_journey_has(deliveries: list[Delivery]) -> None:
    counts = Counter(kind for kind, *_ in deliveries)
    assert set(counts) == set(EVENT_KINDS) - NOT_OF_A_JOURNEY, (set(EVENT_KINDS) - NOT_OF_A_JOURNEY) ^ set(counts)
    assert len(set(EVENT_KINDS) - NOT_OF_A_JOURNEY) == 40
    # Container-scoped kinds fire once per container (that had begun by now); the shipment's own ones once per shipment.
    assert counts["container.created"] <= JOURNEYS and counts["container.created"] > JOURNEYS // 2
    assert counts["tracking_request.succeeded"] >= counts["tracking_request.tracking_stopped"] > 0
    assert [at for *_, at in deliveries] == sorted(at for *_, at in deliveries)


def test_journeys_are_played_up_to_now_and_no_further(deliveries: list[Delivery]) -> None:
    """Nothing a journey sends happened after the world's now; only what an estimate expects may be later."""
    now = REFERENCE_START.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert max(at for *_, at in deliveries) <= now
    for kind, reference, _, at in deliveries:
        attributes = reference["attributes"]
        assert attributes.get("created_at", at) <= now, kind
        if ".estimated." not in kind and reference["type"] == "transport_event":
            assert attributes["timestamp"] <= now, kind
    expected = [r["attributes"]["timestamp"] for k, r, _, _ in deliveries if k.startswith("container.transport.estimated.")]
    assert any(t > now for t in expected)  # an estimate may be about the future


def test_reference_objects_have_the_types_and_relationships_the_facts_give(deliveries: list[Delivery]) -> None:
    expected_type = {
        "container.updated": "container_updated_event",
        "container.created": "container_created_event",
        "container.pod_terminal_changed": "container_pod_terminal_changed_event",
        "shipment.estimated.arrival": "estimated_event",
    }
    for kind, reference, included, _ in deliveries:
        if kind.startswith("tracking_request."):
            want = "tracking_request"
        elif kind.startswith(("container.transport.", "container.pickup_lfd", "container.pickup_appointment")):
            want = "transport_event"  # the estimated ones and the appointment too (the reference's enum and example)
        else:
            want = expected_type[kind]
        assert reference["type"] == want, kind
        if want == "estimated_event":
            assert set(reference["relationships"]) == {"shipment", "port", "vessel"}, kind  # never a container
            assert reference["attributes"]["event"] == kind
        if want == "transport_event":
            assert reference["attributes"]["event"] == kind
            assert reference["relationships"]["container"]["data"]["id"] == next(r["id"] for r in included if r["type"] == "container")
        if kind == "container.pickup_appointment.changed":
            box = next(r for r in included if r["type"] == "container")
            assert reference["attributes"]["value"] == box["attributes"]["pickup_appointment_at"] is not None
        if want == "container_updated_event":
            assert set(reference["attributes"]["changeset"]) <= set(ALERTED_ON) and reference["attributes"]["changeset"]
            assert reference["relationships"]["terminal"]["data"]["type"] == "terminal"
        assert {r["type"] for r in included} <= {"container", "shipment", "port", "terminal"}, kind  # as the examples carry


def _hold_shaped(value: Any) -> bool:
    return isinstance(value, dict) and set(value) <= {"name", "status", "description"} and value.get("status") in ("pending", "hold")


def _fee_shaped(value: Any) -> bool:
    kinds = ("demurrage", "exam", "extended_dwell_time", "other", "total")
    return (
        isinstance(value, dict)
        and set(value) == {"type", "amount", "currency_code"}
        and value["type"] in kinds
        and isinstance(value["amount"], float)
    )


def test_changesets_carry_holds_and_fees_as_lists_of_objects(deliveries: list[Delivery]) -> None:
    seen: Counter[str] = Counter()
    for kind, reference, included, _ in deliveries:
        if kind != "container.updated":
            continue
        changeset = reference["attributes"]["changeset"]
        container = next(r for r in included if r["type"] == "container")
        for name, shaped in (("holds_at_pod_terminal", _hold_shaped), ("fees_at_pod_terminal", _fee_shaped)):
            if name in changeset:
                old, new = changeset[name]
                assert isinstance(old, list) and isinstance(new, list), (name, changeset[name])
                assert all(shaped(v) for v in [*old, *new]), (name, changeset[name])
                assert new == container["attributes"][name]
                seen[name] += 1
        if "import_deadlines" in changeset:
            assert all(isinstance(v, dict) for v in changeset["import_deadlines"])
    assert seen["holds_at_pod_terminal"] > 0 and seen["fees_at_pod_terminal"] > 0


@pytest.mark.slow  # loads 900 deliveries and reads every row back (~12 s here)
def test_every_kind_fills_typed_columns_with_what_it_carried(deliveries: list[Delivery], tmp_path: Path) -> None:
    bodies = [orjson.dumps(envelope("w", kind, reference, [reference, *included], at)) for kind, reference, included, at in deliveries]
    warehouse = tmp_path / "w"
    load_deliveries(warehouse, bodies)
    loaded = {r["event"]: r["n"] for r in rows(warehouse, "SELECT event, count(*) AS n FROM webhook_events GROUP BY event")}
    assert loaded == dict(Counter(kind for kind, *_ in deliveries))

    newest: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for _kind, reference, included, at in deliveries:
        for resource in [reference, *included]:
            key = (resource["type"], resource["id"])
            if key not in newest or newest[key][0] <= at:
                newest[key] = (at, resource)
    references: dict[str, list[dict[str, Any]]] = {}
    for kind, reference, _included, _at in deliveries:
        # An event is its own row: exactly what this delivery carried (a tracking request is sent
        # again by its later kinds, and is checked below as its newest copy).
        if reference["type"] in ("transport_event", "estimated_event"):
            assert newest[(reference["type"], reference["id"])][1] == reference, kind
            references.setdefault(kind, []).append(reference)
    checked_by_kind = {kind: assert_rows_hold(warehouse, sent) for kind, sent in references.items()}
    assert {k for k, n in checked_by_kind.items() if n > 0} == {
        k for k, reference, *_ in deliveries if reference["type"] in ("transport_event", "estimated_event")
    }
    # Every record the deliveries carried (containers with their changesets applied) is its newest copy.
    records = [r for (t, _), (_, r) in newest.items() if t in DECLARED_BY_TYPE and t not in ("transport_event", "estimated_event")]
    assert {r["type"] for r in records} >= {
        "container",
        "shipment",
        "port",
        "terminal",
        "tracking_request",
        "container_created_event",
        "container_pod_terminal_changed_event",
    }
    assert assert_rows_hold(warehouse, records) > 0
    # Tracking requests: the status and time of the newest event about each.
    for (type_, id_), (_, resource) in newest.items():
        if type_ == "tracking_request":
            (row,) = rows(warehouse, f"SELECT status, updated_at FROM tracking_requests WHERE id = '{id_}'")
            assert row["status"] == resource["attributes"]["status"]
            assert row["updated_at"] == datetime.fromisoformat(resource["attributes"]["updated_at"])
