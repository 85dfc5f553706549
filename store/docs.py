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

Where the writer would give an input item back as it is (``Format.verbatim``: most OpenAI
messages), the item itself is the document (:func:`read`), not written again: a save then
writes no message twice.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import orjson
import sqlalchemy as sa

from .chains import Chain, within
from .errors import ConvstoreError
from .exactjson import has_nonfinite
from .formats import FORMATS, NEEDS_CALL_IDS, Losses, read_marked
from .formats._common import message_list
from .formats._ids import missing_ids
from .model import Message
from .prepared import Prepared
from .schema import MessageRow

MAX_DOC = 256 * 1024
"""The longest document kept (bytes of JSON): beyond it the JSON parse is the whole cost
either way, and a row stays far below MariaDB's packet limit."""

# Only writers with no state across messages qualify (openai, langchain): the others merge or reorder
# messages, pair results with earlier calls, take names from them or number ids by position.
_WRITERS = {name: fmt.write_message for name, fmt in FORMATS.items() if fmt.write_message is not None}
PER_MESSAGE = frozenset(_WRITERS)
"""The formats whose messages get a document."""


class Batch(list[Message]):
    """Messages read from input, with ``given``: for each, its source item as its document
    where the writer would give that item back as it is (``Format.verbatim``), else None.
    A slice is a batch of the slice's messages and documents."""

    def __init__(self, msgs: Sequence[Message], given: Sequence[str | None]) -> None:
        super().__init__(msgs)
        self.given = list(given)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return Batch(list.__getitem__(self, index), self.given[index])
        return list.__getitem__(self, index)


def read(data: Any, format: str) -> list[Message]:
    """``formats.read``, keeping as documents the input items its writer would give back as
    they are (a :class:`Batch`): those messages are not written again to get their document."""
    msgs, fmt, plain = read_marked(data, format)
    if plain is None:
        return msgs
    items = message_list(data, fmt.name)
    if len(items) != len(msgs):
        return msgs
    return Batch(msgs, [_given(item) if kept else None for item, kept in zip(items, plain)])


def _given(item: Any) -> str | None:
    data = orjson.dumps(item)
    return data.decode() if len(data) <= MAX_DOC else None


def documents(msgs: Sequence[Message], skip: Collection[int] = ()) -> list[str | None]:
    """Each message as its source format writes it: JSON items separated by commas (a
    message may write several), or None where the canonical path has to write it. ``skip``:
    the indexes of messages holding a result that answers no call (``links.plan``), which the
    writers report only in a list. A :class:`Batch` gives some documents already."""
    sinks: dict[str, Losses] = {}
    given = msgs.given if isinstance(msgs, Batch) else [None] * len(msgs)
    return [None if index in skip else doc if doc is not None else _document(msg, index, sinks)
            for index, (msg, doc) in enumerate(zip(msgs, given))]


def _document(msg: Message, index: int, sinks: dict[str, Losses]) -> str | None:
    name = msg.source_format
    write = _WRITERS.get(name)  # type: ignore[arg-type]
    if write is None or (name in NEEDS_CALL_IDS and missing_ids([msg])):  # ids made up at export
        return None
    if (losses := sinks.get(name)) is None:  # type: ignore[arg-type]
        losses = sinks[name] = Losses(name)  # type: ignore[arg-type]
    reported = len(losses)
    try:
        items = write(msg, index, losses)
        data = orjson.dumps(items)
    except (ConvstoreError, ValueError, TypeError, RecursionError):  # e.g. an integer beyond 64 bits
        return None
    # No item, a loss (reported by the canonical path only), too long, or orjson wrote null for NaN.
    # Every integer orjson writes it reads back exactly: no check for those.
    if len(losses) != reported or data == b"[]" or len(data) > MAX_DOC or (b"null" in data and has_nonfinite(items)):
        return None
    return data[1:-1].decode()


_m = MessageRow.__table__
_DOCUMENTS = Prepared(sa.select(_m.c.doc).where(
    _m.c.conversation_id == sa.bindparam("cid"), _m.c.seq >= sa.bindparam("start"), _m.c.seq < sa.bindparam("stop"),
    _m.c.source_format == sa.bindparam("fmt"), _m.c.doc.is_not(None)).order_by(_m.c.seq))


def stored(conn: sa.Connection, chain: Chain, start: int, stop: int, target: str, source_format: str | None,
           count: int) -> list[str] | None:
    """The documents in ``target`` of the messages with ``start <= seq < stop`` of a
    conversation of ``count`` messages stored as ``source_format`` (``chain``: where its rows
    are), one statement per segment; None when one of them has none (none is read when the
    formats tell so already)."""
    if target not in PER_MESSAGE or source_format not in (target, None):
        return None
    texts, wanted = [], 0
    for owner, lo, hi in within(chain, start, min(stop, count)):
        texts += _DOCUMENTS.column(conn, cid=owner, start=lo, stop=hi, fmt=target)
        wanted += hi - lo
    return texts if len(texts) == wanted else None


def parse(docs: Sequence[str]) -> list[Any]:
    """The items of consecutive messages' documents, in order."""
    return orjson.loads("[" + ",".join(docs) + "]")
