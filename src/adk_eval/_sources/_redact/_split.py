"""Values split over two messages: "my card is 4111 1111" then "1111 1111".

People send a long value in pieces (a chat's send key pressed mid-number, an
e-mail address cut at its ``@``), and each piece alone is no value: four digits,
a word. So the end of a message and the start of the next one by the same
author are read joined, with a space between (the pieces were words) or nothing
(a number or an address cut in the middle), and a value found across the seam
is replaced in both messages by its one marker.

Only the two sides of the seam are read (`WINDOW` characters each), only when
one of them holds a digit, an ``@`` or a spoken "at"/"dot" (the kinds people
split are numbers and addresses); joined without a space only when joined with
one finds nothing across the seam. Only a value that crosses the seam is taken
from the joined text: what lies in one message is that message's to find.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = ["WINDOW", "Cut", "split_values"]

WINDOW = 60
"""How many characters on each side of the seam are read."""

_WORTH_A_LOOK = re.compile(r"[\d@]|\b(?:at|dot)\b", re.IGNORECASE)


class Cut(NamedTuple):
    """A piece of a value in one message: ``text[start:end]``, the value's kind and key."""

    start: int
    end: int
    kind: str
    key: str


Finder = Callable[[str, str], Sequence[tuple[int, int, str, str]]]
"""``(text, before) -> [(start, end, kind, key), ...]``: a redactor's `find`."""


def split_values(
    first: str, second: str, find: Finder, before: str = ""
) -> tuple[list[Cut], list[Cut]]:
    """The pieces, in `first` and in `second`, of values that cross from one to the other.

    Args:
        first: A message's text.
        second: The next message's text, by the same author.
        find: What finds values in a text.
        before: What `first` answers (the message before it).

    Returns:
        The pieces in `first` and the pieces in `second` (empty lists when none).
    """
    tail, head = first[-WINDOW:].rstrip(), second[:WINDOW].lstrip()
    if not tail or not head or not _WORTH_A_LOOK.search(f"{tail[-20:]} {head[:20]}"):
        return [], []
    offset, lead = len(first) - len(first[-WINDOW:]), len(second[:WINDOW]) - len(head)
    for joiner in (" ", ""):
        seam = len(tail)
        pieces_first, pieces_second = [], []
        for start, end, kind, key in find(tail + joiner + head, before):
            if start < seam and end > seam + len(joiner):
                pieces_first.append(Cut(offset + start, offset + seam, kind, key))
                pieces_second.append(Cut(lead, lead + end - seam - len(joiner), kind, key))
        if pieces_first:
            return pieces_first, pieces_second
    return [], []
