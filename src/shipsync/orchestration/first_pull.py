"""Whether a warehouse is empty of pulled data: `shipsync up` then runs a first `pull-all`, so that a
new installation has data before the nightly schedule."""

from __future__ import annotations

import duckdb

from shipsync.errors import WarehouseError
from shipsync.pull.everything import EVERY_PULL
from shipsync.warehouse.ledger import last_success
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.warehouse_location import LakeLocation

PULLS = tuple(pull.flow for pull in EVERY_PULL)  # every pull a warehouse may have had


def never_pulled(location: LakeLocation) -> bool:
    """True when the lake (its account's schema) does not exist yet or records no successful pull."""
    if not location.exists():
        return True
    try:
        with open_warehouse(location, read_only=True) as warehouse:
            return last_success(warehouse.con, *PULLS) is None
    except (WarehouseError, duckdb.Error):  # no such lake or schema yet, or one a pull cannot read either (it says why)
        return True
