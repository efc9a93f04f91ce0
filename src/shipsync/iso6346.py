"""Container numbers (ISO 6346): owner code, category, serial and check digit, as people write
them (`akpu 354575-9`) and in their one form (`AKPU3545759`)."""

from __future__ import annotations

import re
import string

_LETTER_VALUES: dict[str, int] = {}
_n = 10
for _letter in string.ascii_uppercase:
    if _n % 11 == 0:  # multiples of 11 are skipped
        _n += 1
    _LETTER_VALUES[_letter] = _n
    _n += 1
_SEPARATORS = re.compile(r"[\s\-]+")


def check_digit(first_ten: str) -> int:
    """The check digit of a container number from its first 10 characters."""
    total = sum((_LETTER_VALUES[ch] if ch.isalpha() else int(ch)) * (2**i) for i, ch in enumerate(first_ten.upper()))
    return int(total % 11 % 10)


def normalized(text: str) -> str:
    """A container number in its one form: upper case, without the spaces and dashes people
    write in it (`akpu 354575-9` is `AKPU3545759`)."""
    return _SEPARATORS.sub("", text).upper()


def problem(number: str) -> str | None:
    """Why `number` (normalized) is not a container number, in words; None when it is one."""
    if len(number) != 11 or any(c not in _LETTER_VALUES for c in number[:4]) or not number[4:].isascii() or not number[4:].isdigit():
        return "not a container number (ISO 6346: 4 letters, then 7 digits)"
    if number[3] not in "UJZ":
        return f"not a container number (ISO 6346: its 4th letter is U, J or Z, not {number[3]})"
    expected = check_digit(number[:10])
    if expected != int(number[10]):
        return f"not a container number: its check digit is {number[10]}, and ISO 6346 gives {expected} for {number[:10]}"
    return None


def is_container_number(text: str) -> bool:
    return problem(normalized(text)) is None
