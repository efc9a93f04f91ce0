"""The daily rates a report projects demurrage and detention with: what a box costs for each day it
stays past its last free day at the terminal (demurrage) and past the line's last free day without
its empty returned (detention). The service reports fees charged, never a rate, so the rates are the
fleet manager's own; without them the report counts the days instead of the money."""

from __future__ import annotations

import re
from dataclasses import dataclass

from shipsync.errors import InputError

_CURRENCY = re.compile(r"[A-Z]{3}")


@dataclass(frozen=True)
class Tariff:
    """Per-day rates in `currency` (ISO 4217); a rate of None is not known and not projected."""

    demurrage_per_day: float | None = None
    detention_per_day: float | None = None
    currency: str = "USD"

    def __post_init__(self) -> None:
        for name in ("demurrage_per_day", "detention_per_day"):
            rate = getattr(self, name)
            if rate is not None and not (rate >= 0 and rate < float("inf")):
                raise InputError(f"--{name.replace('_', '-')} {rate}: give an amount per day of 0 or more")
        if not _CURRENCY.fullmatch(self.currency):
            raise InputError(f"--currency {self.currency!r}: give a three-letter ISO 4217 code, such as USD or EUR")

    @property
    def known(self) -> bool:
        return self.demurrage_per_day is not None or self.detention_per_day is not None

    def sql_values(self) -> dict[str, str]:
        """The rates as SQL literals, for `{demurrage_per_day}`, `{detention_per_day}` and `{currency}`."""

        def number(rate: float | None) -> str:
            return "CAST(NULL AS DOUBLE)" if rate is None else f"CAST({rate!r} AS DOUBLE)"

        return {
            "{demurrage_per_day}": number(self.demurrage_per_day),
            "{detention_per_day}": number(self.detention_per_day),
            "{currency}": f"'{self.currency}'",
        }

    def described(self) -> str:
        """`at USD 175 a day of demurrage and USD 150 of detention`, or what is counted instead."""

        def rate(value: float | None) -> str:
            return f"{self.currency} {value:,.2f}".removesuffix(".00") if value is not None else ""

        demurrage, detention = rate(self.demurrage_per_day), rate(self.detention_per_day)
        if demurrage and detention:
            return f"at {demurrage} a day of demurrage and {detention} of detention"
        if demurrage:
            return f"at {demurrage} a day of demurrage; detention counted in days (no rate given)"
        if detention:
            return f"at {detention} a day of detention; demurrage counted in days (no rate given)"
        return "counted in days, as no daily rates were given (--demurrage-per-day, --detention-per-day)"


NO_RATES = Tariff()  # the default: costs counted in days
