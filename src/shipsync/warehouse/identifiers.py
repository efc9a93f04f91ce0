"""SQL text that names things: the one place identifiers and the few unavoidable literals are quoted.

Values are always passed as parameters. What cannot be a parameter in DuckDB (a table or column
name, the path of an `ATTACH`) goes through here: quoted as DuckDB reads it, so no name or path can
end its quotes and add SQL of its own, and a NUL (which would cut the text short) is refused.
"""

from __future__ import annotations

from shipsync.errors import WarehouseError


def _checked(text: str) -> str:
    if "\x00" in text:
        raise WarehouseError(f"a name or path holds a NUL character: {text!r}")
    return text


def ident(name: str) -> str:
    """`name` as a quoted SQL identifier (`"a""b"` for `a"b`)."""
    return '"' + _checked(name).replace('"', '""') + '"'


def literal(text: str) -> str:
    """`text` as a quoted SQL string literal, for the places DuckDB takes no parameter."""
    return "'" + _checked(text).replace("'", "''") + "'"
