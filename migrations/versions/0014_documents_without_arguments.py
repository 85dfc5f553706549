"""A message's document no longer holds its calls' arguments a second time.

Where an OpenAI item's call has arguments of 64 characters or more, which the call's block
row keeps (``$arguments_raw`` or ``arguments_raw`` in its payload), the document (revision
0008) holds the JSON string ``"\\u0001"`` there instead and is led by a string naming the call:
``\\u0001@`` and its index among the item's calls (``store.docs.hollow``). No table changes.
The upgrade leaves documents as they are; the downgrade puts every call's arguments back, so
the code of revision 0013 reads documents led by a text's lead at most.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import json

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"

HOLE = "\x01"
MARK = "\U000f0000"  # how convstore's JSON columns keep a string holding NUL (or starting with MARK)
PAGE = 1000


def upgrade() -> None:
    pass


def downgrade() -> None:
    bind = op.get_bind()
    m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("doc"))
    b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                 sa.column("kind"), sa.column("payload"))
    first = (sa.select(m.c.conversation_id, m.c.seq, m.c.doc).where(m.c.doc.contains("0001@"))
             .order_by(m.c.conversation_id, m.c.seq).limit(PAGE))
    after = first.where(sa.tuple_(m.c.conversation_id, m.c.seq) > sa.tuple_(sa.bindparam("c"), sa.bindparam("s")))
    calls = (sa.select(b.c.payload).where(b.c.conversation_id == sa.bindparam("c"), b.c.seq == sa.bindparam("s"),
                                          b.c.kind == "tool_call").order_by(b.c.position))
    put = (m.update().where(m.c.conversation_id == sa.bindparam("c"), m.c.seq == sa.bindparam("s"))
           .values(doc=sa.bindparam("d")))
    rows = bind.execute(first).all()
    while rows:
        updates = []
        for cid, seq, doc in rows:
            payloads = bind.execute(calls, {"c": cid, "s": seq}).scalars().all()
            if (whole := _whole(doc, [_raw(p) for p in payloads])) is not None:
                updates.append({"c": cid, "s": seq, "d": whole})
        if updates:
            bind.execute(put, updates)
        rows = bind.execute(after, {"c": rows[-1][0], "s": rows[-1][1]}).all()


def _raw(payload: str | dict | None) -> str | None:
    """A call's arguments as the source wrote them, from its payload as stored."""
    fields = json.loads(payload) if isinstance(payload, str) else payload or {}
    raw = fields.get("$arguments_raw", fields.get("arguments_raw"))
    if isinstance(raw, str) and isinstance(payload, str) and raw.startswith(MARK):  # JSON text as stored
        raw = json.loads(raw[len(MARK):])
    return raw


def _whole(doc: str, arguments: list[str | None]) -> str | None:
    """The document with its calls' arguments, led by its text's lead only; None where it has no call lead."""
    items = orjson.loads("[" + doc + "]")
    leads = [item for item in items if isinstance(item, str) and item[:1] == HOLE]
    calls = [int(lead[2:]) for lead in leads if lead[1:2] == "@"]
    if not calls:
        return None
    item = items[len(leads)]
    for k in calls:
        item["tool_calls"][k]["function"]["arguments"] = arguments[k]
    kept = [lead for lead in leads if lead[1:2] != "@"]
    return ",".join(orjson.dumps(value).decode() for value in [*kept, item])
