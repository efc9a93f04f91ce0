"""Every kind of spreadsheet `shipsync apply` takes, by the name the command line uses."""

from __future__ import annotations

from shipsync.bulk.custom_fields import CustomFieldValues
from shipsync.bulk.definitions import DefinitionEdits
from shipsync.bulk.kind import BulkKind
from shipsync.bulk.new_tracking import NewTracking
from shipsync.bulk.tracking_edits import TrackingRequestEdits
from shipsync.bulk.tracking_switch import resume_tracking, stop_tracking
from shipsync.errors import InputError

KINDS: dict[str, BulkKind] = {
    kind.name: kind
    for kind in (TrackingRequestEdits(), DefinitionEdits(), CustomFieldValues(), NewTracking(), stop_tracking(), resume_tracking())
}


def kind_for(name: str) -> BulkKind:
    if name not in KINDS:
        raise InputError(f"unknown kind {name!r}: use one of {', '.join(KINDS)}")
    return KINDS[name]
