"""What a planned journey is (`journey_plan.py` draws one): the steps of each container, the times
and places of the shipment's legs, and the changes on the way. Times only: `journey_state.py`
renders a record as of any instant from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from shipsync_sandbox.timeline import HOUR


@dataclass(frozen=True)
class Step:
    """One event of a container's journey: a `container.transport.*` milestone or a record change."""

    kind: str
    at: datetime
    locode: str
    terminal: tuple[str, str] | None = None  # (type, id) of a terminal or rail terminal
    vessel: str | None = None
    voyage: str | None = None
    data_source: str = "shipping_line"


@dataclass
class ContainerPlan:
    container_id: str
    steps: list[Step]
    seal_number: str
    holds: list[dict[str, str | None]]
    released_at: datetime | None  # when the holds are lifted
    discharged_at: datetime
    available_at: datetime
    full_out_at: datetime
    last_free_day: datetime  # the day itself (midnight UTC); at the POD terminal, or the rail ramp inland
    extended_lfd: tuple[datetime, datetime] | None  # (when it changed, the new day)
    appointment_at: datetime | None
    exam_fee: bool
    rail: tuple[str, str] | None  # (POD rail carrier, inland rail carrier) when the box goes inland by rail
    # The estimates the service sends about this box: (event kind, made at, the estimated time).
    estimates: list[tuple[str, datetime, datetime]] = field(default_factory=list)

    def at(self, kind: str) -> datetime | None:
        return next((s.at for s in self.steps if s.kind == kind), None)


@dataclass
class ShipmentPlan:
    shipment_id: str
    pol: str
    pod: str
    destination: str
    etd: datetime
    atd: datetime
    original_eta: datetime
    estimates: list[tuple[datetime, datetime]]  # (made at, estimated arrival), oldest first
    ata: datetime
    pod_vessel: str
    pod_voyage: str
    pod_terminal_id: str
    destination_terminal_id: str | None
    destination_eta: datetime | None
    containers: dict[str, ContainerPlan] = field(default_factory=dict)
    # Some shipments were first booked into the port's other terminal, changed while at sea.
    first_pod_terminal_id: str | None = None
    pod_terminal_changed_at: datetime | None = None
    # Some tracking requests wait for the carrier's manifest before they succeed.
    manifest_awaited: bool = False
    # The metro area an inland journey ends in, where the destination's code names more than one.
    destination_metro: str | None = None

    def metro_of(self, locode: str) -> str | None:
        """Which of the metro areas sharing `locode` this journey means (None: the first published)."""
        return self.destination_metro if locode == self.destination else None

    def pod_terminal_as_of(self, now: datetime) -> str:
        changed = self.pod_terminal_changed_at
        if self.first_pod_terminal_id is not None and changed is not None and now < changed:
            return self.first_pod_terminal_id
        return self.pod_terminal_id

    @property
    def tracked_from(self) -> datetime:
        """When the service began tracking: a little before the first milestone."""
        first = min((c.steps[0].at for c in self.containers.values()), default=self.etd)
        return first - 6 * HOUR

    @property
    def inland(self) -> bool:
        return self.destination != self.pod

    @property
    def finished_at(self) -> datetime:
        return max(c.steps[-1].at for c in self.containers.values()) if self.containers else self.ata
