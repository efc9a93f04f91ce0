"""Container numbers as ISO 6346 writes them: an owner code of three letters and `U`, six digits of
serial, and a check digit computed from the ten characters before it."""

from __future__ import annotations

import re
import string

NUMBER = re.compile(r"^[A-Z]{3}U\d{7}$")
# Letters count from 10 up, skipping the multiples of 11 (A=10, B=12, ..., Z=38).
LETTER_VALUES = dict(zip(string.ascii_uppercase, (n for n in range(10, 39) if n % 11), strict=True))


def check_digit(owner_and_serial: str) -> int:
    """The check digit: each of the ten characters weighted by 2 to its position, the sum modulo
    11 (10 counting as 0)."""
    total = sum((LETTER_VALUES[c] if c.isalpha() else int(c)) << i for i, c in enumerate(owner_and_serial))
    return total % 11 % 10


def looks_like_container(number: str) -> bool:
    return NUMBER.match(number) is not None


def check_digit_passes(number: str) -> bool:
    return looks_like_container(number) and check_digit(number[:10]) == int(number[10])
