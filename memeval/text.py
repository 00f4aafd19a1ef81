"""Text that can be written anywhere: no lone UTF-16 surrogates.

A JSON reply may escape half of a UTF-16 pair (`"\\ud800"`), as a JavaScript server does when
it cuts a string in the middle of an emoji. Python decodes it into a `str` that no UTF-8
writer accepts, so it crashed the store, a report or a later reply far from where it came in.
Every boundary that takes outside text mends it here (or refuses it), the moment it arrives.
"""

from __future__ import annotations

import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: the character UTF-8 decoders put for bytes they cannot read."""


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in `text`, escaped for a message (`\\ud800`), or None."""
    found = LONE_SURROGATE.search(text)
    return None if found is None else f"\\u{ord(found.group()):04x}"


def mended(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (in lists, tuples and dict keys and
    values too) replaced by U+FFFD; anything else is returned as it is."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {mended(k): mended(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(mended(v) for v in value)
    return value
