"""Stored documents for messages stored before revision 0008 (``store.docs``).

A migration cannot write them: it would need today's format writers, and a migration must
mean the same whatever the package becomes. ``convstore db upgrade`` fills them after
upgrading, conversation by conversation (each one transaction), from the rows, exactly as a
save would have written them; until then those messages are loaded through the canonical path.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from . import db
from .chains import END
from .codec import messages_from_rows
from .docs import PER_MESSAGE, documents
from .fetch import fetch_rows
from .operations import CHUNK, messages_t, tool_calls_t

_m, _t = messages_t, tool_calls_t
_WITHOUT = sa.and_(_m.c.doc.is_(None), _m.c.source_format.in_(sorted(PER_MESSAGE)))
_SET_DOC = sa.update(_m).where(_m.c.conversation_id == sa.bindparam("cid"), _m.c.seq == sa.bindparam("at"),
                               _m.c.doc.is_(None)).values(doc=sa.bindparam("document"))


def pending(engine: sa.Engine) -> dict[str, int]:
    """The conversations holding messages of a format with documents but without one, and how many."""
    with engine.connect() as conn:
        return {str(cid): n for cid, n in conn.execute(
            sa.select(_m.c.conversation_id, sa.func.count()).where(_WITHOUT).group_by(_m.c.conversation_id))}


def fill(engine: sa.Engine, conversations: dict[str, int] | None = None,
         progress: Callable[[int], None] | None = None) -> int:
    """Write the missing documents of ``conversations`` (default: :func:`pending`); returns how
    many were written (a message its format cannot write without a loss keeps none)."""
    written = 0
    for cid, count in (pending(engine) if conversations is None else conversations).items():
        with db.database_errors(engine), db.write_transaction(engine) as conn:
            written += _fill(conn, cid)
        if progress is not None:
            progress(count)
    return written


def _fill(conn: sa.Connection, cid: str) -> int:
    wanted = set(conn.execute(sa.select(_m.c.seq).where(_m.c.conversation_id == cid, _WITHOUT)).scalars())
    if not wanted:
        return 0
    calls = dict(conn.execute(sa.select(_t.c.call_id, _t.c.call_seq).where(_t.c.conversation_id == cid)).all())
    updates = []
    for lo in range(min(wanted), max(wanted) + 1, CHUNK):  # the conversation's own rows, part by part
        rows, blocks, blobs = fetch_rows(conn, cid, lo, windowed=True, stop=lo + CHUNK, chain=[(cid, 0, END)])
        seqs, msgs = [row[0] for row in rows], messages_from_rows(rows, blocks, blobs)
        # as links.plan marks them on a save: a result whose call is not stored before it
        unanswered = {i for i, (seq, msg) in enumerate(zip(seqs, msgs))
                      if any(b.kind == "tool_result" and calls.get(b.call_id, seq) >= seq for b in msg.content)}
        updates += [{"cid": cid, "at": seq, "document": text}
                    for seq, text in zip(seqs, documents(msgs, skip=unanswered)) if text is not None and seq in wanted]
    if updates:
        conn.execute(_SET_DOC, updates)
    return len(updates)
