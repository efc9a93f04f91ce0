"""The suite's one hypothesis profile, loaded for every test by conftest.py: no per-example deadline
and no health check on slow data generation. Examples here start servers, write lakes and cross
processes; on a busy machine one example can take seconds, which says nothing about what a property
checks. A test that sets its own settings inherits the profile (so a deadline never comes back by
being forgotten); one that suppresses more health checks adds them with `suppressing`, since its
own list replaces the profile's."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROFILE = "shipsync"
SUPPRESSED = (HealthCheck.too_slow,)


def load() -> None:
    settings.register_profile(PROFILE, deadline=None, suppress_health_check=SUPPRESSED)
    settings.load_profile(PROFILE)


def suppressing(*checks: HealthCheck) -> list[HealthCheck]:
    """The profile's suppressed health checks and `checks`: for a test's own `suppress_health_check`."""
    return [*SUPPRESSED, *checks]
