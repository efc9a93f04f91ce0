"""Every typed column the service fills is filled (issue 29, item 2), from what the pull and the
deliveries carry.

Over the sandbox's world: a seeded account pulled whole (`pull all`), one of its shipments stopped
by its user first, a webhook registered, and a few containers' journeys delivered by webhook and
loaded. Each member column of each table that world writes must hold a value (not NULL, not an
empty list) in some row of the lake or of the records the deliveries carried (a hold shows only
while the box is held, so the lake's last state may have none), unless `NOT_IN_THE_WORLD` says
why the service leaves it empty. Over the service's published examples
(`support/reference_examples.py`): each member an example carries lands in its column, typed, and
not in `leftovers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from shipsync.api.declared import Declared
from shipsync.pull.everything import pull_all
from shipsync.pull.resources import PULLED_BY_NAME
from shipsync.pull.steps import no_progress, run_direct
from shipsync.warehouse.declared_rows import declared_columns, declared_row
from shipsync.warehouse.declared_tables import DECLARED, DECLARED_BY_TYPE
from shipsync.warehouse.members import members_of, secret_members
from shipsync.webhooks.registration import register_webhook
from shipsync_sandbox.deliver import envelope
from shipsync_sandbox.journeys import simulate
from support.lake import analyst
from support.reference_examples import REFERENCE_EXAMPLES
from support.sandboxes import K1, SandboxFactory, settings_for
from support.warehouse_rows import load_deliveries

# The account's own records a bulk apply writes (tests/bulk checks those); every other table is
# written by the world below.
WRITTEN_ELSEWHERE = {"custom_field_definitions", "custom_field_options", "custom_fields"}
# Columns the service itself leaves empty in this world, and why.
NOT_IN_THE_WORLD = {
    "transport_events.invalidated_at": "no milestone of the journeys is withdrawn (nor in the published examples)",
    "transport_events.previous_version_id": "no milestone replaces another (nor in the published examples)",
    **{
        f"raw_events.{column}": "deprecated by the reference: the date only when no time is known; the journeys know every time"
        for column in ("actual_on", "estimated_on")
    },
    **{
        f"email_submissions.{column}": "a document includes its email as the reference's document_email_submission, without it"
        for column in ("body", "references", "in_reply_to", "content_type", "documents_count", "account_id", "user_id", "document_ids")
    },
}
WORLD_TABLES = [d for d in DECLARED if d.table_name not in WRITTEN_ELSEWHERE]


def typed_columns(declaration: type[Declared]) -> list[str]:
    """The columns a declaration's members and derived values fill (not the bookkeeping ones)."""
    columns = [m.column for m in members_of(declaration) if m.link_table is None]
    return [*columns, *(f"{m.name}_type" for m in members_of(declaration) if m.polymorphic), *declaration.derived]


def holds_a_value(value: Any) -> bool:
    """Not NULL and not empty: an empty list or object (as a value or as JSON text) says nothing."""
    if isinstance(value, str) and value in ("[]", "{}", ""):
        return False
    return value is not None and value != [] and value != {}


def filled_in_lake(warehouse: Path) -> set[str]:
    con = analyst(warehouse)
    try:
        found = set()
        for declaration in WORLD_TABLES:
            table = declaration.table_name
            for column in typed_columns(declaration):
                listed = con.execute(
                    "SELECT data_type FROM information_schema.columns "
                    "WHERE table_name = ? AND column_name = ? AND table_catalog = current_database()",
                    [table, column],
                ).fetchone()
                assert listed is not None, f"{table}.{column} is not in the lake"
                empty_list = f' AND len("{column}") > 0' if str(listed[0]).endswith("[]") else ""
                if con.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" IS NOT NULL{empty_list}').fetchone() != (0,):
                    found.add(f"{table}.{column}")
        return found
    finally:
        con.close()


def filled_in_deliveries(bodies: list[bytes]) -> set[str]:
    """The typed columns the delivered records fill, every copy of every record (no newest-wins)."""
    by_declaration: dict[type[Declared], list[dict[str, Any]]] = {}
    for body in bodies:
        for resource in orjson.loads(body).get("included") or []:
            declaration = DECLARED_BY_TYPE.get(resource["type"])
            if declaration is not None:
                by_declaration.setdefault(declaration, []).append(resource)
    found = set()
    for declaration, resources in by_declaration.items():
        columns = declared_columns(declaration, resources, observed_at=None)
        found |= {f"{declaration.table_name}.{name}" for name, values in columns.items() if any(map(holds_a_value, values))}
    return found


@pytest.fixture(scope="module")
def world_filled(make_module_sandbox: SandboxFactory, module_env: Path) -> set[str]:
    sandbox, warehouse = make_module_sandbox(), module_env / "warehouse"
    settings = settings_for(sandbox, warehouse)
    account = sandbox.state.world.accounts[K1]
    stopped = account.of_type("shipment")[0]["id"]
    answer = httpx.patch(f"{sandbox.api_url}/shipments/{stopped}/stop_tracking", headers={"Authorization": f"Token {K1}"})
    assert answer.status_code == 200
    register_webhook(settings, "https://hooks.example.test/shipsync", ["container.transport.vessel_arrived"], headers=[("X-Team", "ops")])
    pull_all(settings)
    for left_out_of_pull_all in ("parties", "raw-events"):  # weekly pulls of their own
        PULLED_BY_NAME[left_out_of_pull_all].pull(settings, {}, runner=run_direct, progress=no_progress)
    bodies: list[bytes] = []

    def emit(acct: Any, event: str, reference: dict[str, Any], included: list[dict[str, Any]], created_at: str) -> None:
        bodies.append(orjson.dumps(envelope("w", event, reference, [reference, *included], created_at)))

    simulate(account, emit, containers=12)
    load_deliveries(warehouse, bodies)
    return filled_in_lake(warehouse) | filled_in_deliveries(bodies)


def world_columns() -> list[Any]:
    names = [f"{d.table_name}.{column}" for d in WORLD_TABLES for column in typed_columns(d)]
    return [pytest.param(n, marks=pytest.mark.skip(reason=NOT_IN_THE_WORLD[n]) if n in NOT_IN_THE_WORLD else (), id=n) for n in names]


@pytest.mark.slow  # a seeded account pulled whole and twelve journeys delivered: ~40 s for the module
@pytest.mark.parametrize("column", world_columns())
def test_the_sandboxs_world_fills_the_column(world_filled: set[str], column: str) -> None:
    assert column in world_filled, f"{column} is empty in every row the pull and the deliveries wrote"


def declaration_of(type_: str) -> type[Declared]:
    return next(d for d in DECLARED if type_ in d.resource_types)


def example_members() -> list[Any]:
    """(example, member) for each member a published example carries with a value (less the ones
    never stored: a webhook's secret; and `id`, which the attributes repeat)."""
    found = []
    for example in REFERENCE_EXAMPLES:
        never_stored = {"id", *secret_members(declaration_of(example["type"]))}
        carried = [n for n, v in (example.get("attributes") or {}).items() if holds_a_value(v) and n not in never_stored]
        carried += [n for n, r in (example.get("relationships") or {}).items() if holds_a_value(r.get("data"))]
        found += [pytest.param(example, name, id=f"{example['type']}.{name}") for name in carried]
    return found


@pytest.mark.parametrize(("example", "member"), example_members())
def test_a_member_the_published_examples_carry_has_its_column(example: dict[str, Any], member: str) -> None:
    declaration = declaration_of(example["type"])
    row = declared_row(declaration, example)
    leftovers = orjson.loads(row["leftovers"]) if row["leftovers"] else {}
    assert member not in {*leftovers.get("attributes", {}), *leftovers.get("relationships", {})}, f"{member} went to leftovers"
    declared = next((m for m in members_of(declaration) if m.name == member), None)
    assert declared is not None and holds_a_value(row[declared.column]), f"{declaration.table_name}: {member} has no value"
