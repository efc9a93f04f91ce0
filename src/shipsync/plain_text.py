"""Text from data shown to people as what it is: control and bidirectional characters escaped.

A container number, a cell or a message from the service may hold a NUL, a BEL, an escape
sequence that recolours or retitles a terminal, or a right-to-left override (U+202E) that makes
`exe.txt` read as `txt.exe`. Shown as they are, they act on the screen instead of being read. So
every such character is written as its Python escape (`\\x00`, `\\x1b`, `\\u202e`), which a reader
can see and search for, and everything printable stays as it is. "Printable" is Python's
`str.isprintable`: it leaves out the Unicode categories Cc (controls), Cf (format characters, the
bidirectional overrides and isolates among them), Cs, Co, Cn and the separators other than the
space (a line or paragraph separator, a no-break space).
"""

from __future__ import annotations


def plain(text: str) -> str:
    """`text` with every character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)
