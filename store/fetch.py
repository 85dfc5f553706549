"""Reading a range of a conversation's rows: its messages, their blocks and the blobs they use,
each a range scan of a primary key (per segment of a fork's chain)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from . import kept_once, rows
from .chains import END as _END, Chain, within
from .codec import BLOCK_COLUMNS, MESSAGE_COLUMNS, blob_refs, messages_from_rows, readable_from_rows
from .lean import Writable
from .model import Message
from .prepared import Prepared
from .schema import BlobRow, BlockRow, MessageRow

messages_t = MessageRow.__table__
blocks_t = BlockRow.__table__
blobs_t = BlobRow.__table__


def _range(table: sa.Table, columns: tuple[str, ...], *order: str, also: tuple[Any, ...] = ()) -> Prepared:
    """``columns`` of ``table``'s rows in a seq range of one conversation (then ``also``): one
    range scan of its primary key, in key order. Messages and blocks are read by two of these,
    not a join (planned as a quadratic loop when statistics predate the conversation) nor a
    UNION ALL (its merge and NULL-padded rows cost a third of a load)."""
    return Prepared(sa.select(*(table.c[name] for name in columns), *also).where(
        table.c.conversation_id == sa.bindparam("cid"), table.c.seq >= sa.bindparam("start"),
        table.c.seq < sa.bindparam("stop")).order_by(*(table.c[name] for name in order)))


_MESSAGE_ROWS = _range(messages_t, MESSAGE_COLUMNS, "seq", also=(kept_once.DOC_IF_HELD,))
_BLOCK_ROWS = _range(blocks_t, ("seq", *BLOCK_COLUMNS), "seq", "position")


def fetch_rows(conn: sa.Connection, conversation_id: str, start: int, windowed: bool,
               stop: int | None = None, chain: Chain | None = None,
               ) -> tuple[list[list[Any]], list[list[Any]], dict[str, bytes]]:
    """The message rows from ``start`` on, their block rows (``seq`` first) and the blobs
    they use: three statements at most, per segment of ``chain`` for a fork. A message row
    ends with its document where its extras left a value to it (``kept_once.fill``)."""
    msgs: list[list[Any]] = []
    blocks: list[list[Any]] = []
    found: dict[str, bytes] = {}
    for owner, lo, hi in within(chain or [(conversation_id, 0, _END)], start, _END if stop is None else stop):
        msg_rows = _MESSAGE_ROWS.run(conn, cid=owner, start=lo, stop=hi)
        kept_once.fill(msg_rows)
        msgs += msg_rows
        part = _BLOCK_ROWS.run(conn, cid=owner, start=lo, stop=hi)
        blocks += part
        found.update(blobs(conn, owner, part, everything=not windowed, offset=1))
    return msgs, blocks, found


def messages(conn: sa.Connection, conversation_id: str, start: int, windowed: bool,
              stop: int | None = None, chain: Chain | None = None) -> list[Message]:
    return messages_from_rows(*fetch_rows(conn, conversation_id, start, windowed, stop, chain))


def readable(conn: sa.Connection, conversation_id: str, start: int, windowed: bool,
             stop: int | None = None, chain: Chain | None = None) -> list[Writable]:
    """:func:`messages`, plain ones as :class:`~store.lean.Plain` (for a writer that takes them)."""
    return readable_from_rows(*fetch_rows(conn, conversation_id, start, windowed, stop, chain))


def blobs(conn: sa.Connection, conversation_id: str, block_rows_: Sequence[Any],
           everything: bool = False, offset: int = 0) -> dict[str, bytes]:
    """The blobs that block rows use; rows in BLOCK_COLUMNS order from column ``offset`` on."""
    kind, sha, payload = offset, offset + 5, offset + 6
    wanted = {r[sha] for r in block_rows_ if r[sha]}
    wanted.update(ref for r in block_rows_ if r[kind] == "tool_result" and r[payload] for ref in blob_refs(r[payload]))
    if not wanted:
        return {}
    if everything:  # a whole conversation's load: every blob it has, without a list of hashes
        return dict(_ALL_BLOBS.run(conn, cid=conversation_id))
    return dict(rows.in_conversation(conn, _BLOB_COLUMNS, blobs_t.c.sha256, conversation_id, wanted))


_BLOB_COLUMNS = (blobs_t.c.sha256, blobs_t.c.data)
_ALL_BLOBS = Prepared(sa.select(*_BLOB_COLUMNS).where(blobs_t.c.conversation_id == sa.bindparam("cid")))
