"""Where a conversation's messages are: its own rows, and for a fork (``store.forks``) the
rows its ancestors hold of the prefix it shares with them."""

from __future__ import annotations

import sqlalchemy as sa

from .prepared import Prepared
from .schema import ConversationRow

END = 2**31 - 1
"""Past any seq."""
Chain = list[tuple[str, int, int]]
"""``(owner, lo, hi)`` segments, oldest first: the owner's own rows with ``lo <= seq < hi``.
A conversation that is no fork is one segment, ``(id, 0, END)``."""

_c = ConversationRow.__table__
_parent = _c.alias("parent")
_link = sa.select(_c.c.id, _c.c.parent_id, _c.c.fork_seq, sa.literal_column("0").label("depth")).where(
    _c.c.id == sa.bindparam("cid")).cte("chain", recursive=True)
_link = _link.union_all(sa.select(_parent.c.id, _parent.c.parent_id, _parent.c.fork_seq, _link.c.depth + sa.literal_column("1"))
                        .where(_parent.c.id == _link.c.parent_id))
_CHAIN = Prepared(sa.select(_link).order_by(_link.c.depth))


def chain_for(conn: sa.Connection, conversation_id: str, parent_id: str | None) -> Chain:
    """The conversation's chain: read for a fork, its own single segment otherwise (no statement)."""
    return [(conversation_id, 0, END)] if parent_id is None else chain_of(conn, conversation_id)


def within(chain: Chain, start: int, stop: int = END) -> Chain:
    """The segments of ``chain`` clipped to ``start <= seq < stop``, empty ones left out."""
    return [(owner, max(lo, start), min(hi, stop)) for owner, lo, hi in chain if max(lo, start) < min(hi, stop)]


def chain_of(conn: sa.Connection, conversation_id: str) -> Chain:
    """The segments of a conversation and its ancestors (one recursive statement)."""
    segments, hi = [], END
    for owner, _, fork_seq, _ in _CHAIN.run(conn, cid=conversation_id):
        lo = min(fork_seq or 0, hi)
        if lo < hi:
            segments.append((str(owner), lo, hi))
        hi = lo
    return segments[::-1]
