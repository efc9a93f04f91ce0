"""Whether a warehouse is empty of pulled data: `shipsync up` then runs a first `pull-all`, so that a
new installation has data before the nightly schedule."""

from __future__ import annotations

from typing import get_args

import duckdb

from shipsync.errors import WarehouseError
from shipsync.warehouse.ledger import FlowName, last_success
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.warehouse_location import LakeLocation

PULLS = tuple(name for name in get_args(FlowName) if name.startswith("pull_"))


def never_pulled(location: LakeLocation) -> bool:
    """True when the lake (its account's schema) does not exist yet or records no successful pull."""
    if not location.exists():
        return True
    try:
        with open_warehouse(location, read_only=True) as warehouse:
            return last_success(warehouse.con, *PULLS) is None
    except (WarehouseError, duckdb.Error):  # no such lake or schema yet, or one a pull cannot read either (it says why)
        return True
