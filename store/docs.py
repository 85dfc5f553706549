"""Stored documents: each message also kept as its own format writes it (revision 0008).

A conversation is most often read back in the format it came in: an agent reloading its
memory. For formats whose writer turns each message into its items on its own, with no
state carried from one message to the next (``PER_MESSAGE`` in the adapter), a message row
holds ``doc``: those items as JSON, written once when the message is stored. Loading a
range whose messages all hold one in the wanted format is then one range scan and one JSON
parse, with no canonical model built. Everything else takes the canonical path, which gives
the very same value: a message of another format, one whose writing reports a loss (loss
reports come from the canonical path only), one that orjson would not read back exactly, one
above :data:`MAX_DOC`, and every row stored before revision 0008.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from .errors import ConvstoreError
from .exactjson import has_nonfinite, long_digits
from .formats import FORMATS, write
from .model import Message

MAX_DOC = 256 * 1024
"""The longest document kept (bytes of JSON): beyond it the JSON parse is the whole cost
either way, and a row stays far below MariaDB's packet limit."""

PER_MESSAGE = frozenset(name for name, fmt in FORMATS.items() if fmt.per_message)
"""The formats whose messages get a document."""


def document(msg: Message) -> str | None:
    """``msg`` as its source format writes it: JSON items separated by commas (a message
    may write none or several), or None where the canonical path has to write it."""
    if msg.source_format not in PER_MESSAGE:
        return None
    try:
        items, losses = write([msg], msg.source_format)
        data = orjson.dumps(items)
    except (ConvstoreError, orjson.JSONEncodeError):  # e.g. an integer beyond 64 bits
        return None
    if len(losses) or len(data) > MAX_DOC or data == b"[]" or long_digits(data) or (b"null" in data and has_nonfinite(items)):
        return None  # no item, or orjson wrote null for NaN or would read a long integer back as a float
    return data[1:-1].decode()


def parse(docs: Sequence[str]) -> list[Any]:
    """The items of consecutive messages' documents, in order."""
    return orjson.loads("[" + ",".join(docs) + "]")
