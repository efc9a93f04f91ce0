"""`POST /tracking_requests/infer_number` and the carrier detection of `auto_detect_vocc_scac`: the
service's guess of what a number is (a container, a bill of lading, a booking) and whose it is.

The sandbox guesses as its reference describes the answer (`infer_number_results`: the number type,
its validation, and the shipping line with a `decision` of `auto_select`, `needs_confirmation` or
`no_prediction`), from what a number shows: an ISO 6346 container number names its owner in its
first four letters; a bill of lading usually starts with its carrier's SCAC; a booking number is
digits only and names no carrier, so every line that tracks bookings is a candidate. Anything
else is not a number it can place (422).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from shipsync_sandbox.carriers import SHIPPING_LINES, line_of, tracks
from shipsync_sandbox.container_numbers import check_digit_passes, looks_like_container
from shipsync_sandbox.resources import stable_id

BILL = re.compile(r"^[A-Z]{4}[A-Z0-9]{5,16}$")
BOOKING = re.compile(r"^\d{6,14}$")


class NotANumber(ValueError):
    """The service cannot read the text as a tracking number."""


@dataclass(frozen=True)
class Guess:
    number_type: str  # container, bill_of_lading or booking
    request_type: str  # what a tracking request of this number names it
    valid: bool | None
    check_digit_passed: bool | None
    decision: str
    candidates: tuple[tuple[str, str, float], ...]  # (scac, name, confidence), best first

    @property
    def scac(self) -> str | None:
        """The carrier the service would pick on its own (auto-detection), if any."""
        return self.candidates[0][0] if self.decision == "auto_select" else None


def _owner_of(prefix: str) -> tuple[str, str] | None:
    line = line_of(prefix)
    return (line[0], line[1]) if line else None


def guess(text: str) -> Guess:
    number = re.sub(r"[\s-]", "", text).upper()
    if looks_like_container(number):
        owner = _owner_of(number[:4])
        passed = check_digit_passes(number)
        candidates = ((owner[0], owner[1], 1.0),) if owner else ()
        decision = "auto_select" if owner and passed else "needs_confirmation" if owner else "no_prediction"
        return Guess("container", "container", passed, passed, decision, candidates)
    if BOOKING.match(number):
        lines = tuple((line[0], line[1], 0.3) for line in SHIPPING_LINES if tracks(line, "booking_number"))
        return Guess("booking", "booking_number", None, None, "needs_confirmation", lines)
    if BILL.match(number):
        owner = _owner_of(number[:4])
        candidates = ((owner[0], owner[1], 0.9),) if owner else ()
        return Guess("bill_of_lading", "bill_of_lading", None, None, "auto_select" if owner else "no_prediction", candidates)
    raise NotANumber("This reference number is not valid.")


def infer_result(text: str) -> dict[str, Any]:
    """The `infer_number_results` resource for a number, or NotANumber."""
    found = guess(text)
    candidates = [{"scac": scac, "name": name, "confidence": confidence} for scac, name, confidence in found.candidates]
    return {
        "id": stable_id("infer_number", text),
        "type": "infer_number_results",
        "attributes": {
            "number_type": found.number_type,
            "validation": {
                "is_valid": found.valid,
                "type": "container" if found.number_type == "container" else "shipment",
                "check_digit_passed": found.check_digit_passed,
                "parsed_number": None,
                "reason": None if found.valid is not False else "the check digit does not match",
            },
            "shipping_line": {
                "decision": found.decision,
                "selected": candidates[0] if found.decision == "auto_select" else None,
                "candidates": candidates,
            },
        },
    }
