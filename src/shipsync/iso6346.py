"""Container numbers (ISO 6346): owner code, category, serial and check digit."""

from __future__ import annotations

import string

_LETTER_VALUES: dict[str, int] = {}
_n = 10
for _letter in string.ascii_uppercase:
    if _n % 11 == 0:  # multiples of 11 are skipped
        _n += 1
    _LETTER_VALUES[_letter] = _n
    _n += 1


def check_digit(first_ten: str) -> int:
    """The check digit of a container number from its first 10 characters."""
    total = sum((_LETTER_VALUES[ch] if ch.isalpha() else int(ch)) * (2**i) for i, ch in enumerate(first_ten.upper()))
    return int(total % 11 % 10)


def is_container_number(text: str) -> bool:
    t = text.strip().upper()
    return len(t) == 11 and t[:3].isalpha() and t[3] in "UJZ" and t[4:].isdigit() and check_digit(t[:10]) == int(t[10])
