"""A message's extras no longer repeat a long string its document keeps.

Where a key of ``extras[source_format]["fields"]`` (a key the format has no field for, such
as OpenAI's ``reasoning_content``) holds a string of 64 characters or more that the item of
the message's one-item document (``messages.doc``) holds under the same key, ``extras`` now
holds the string ``"\\u0001"`` there (``store.docs.keep_once``); a read takes the value from
the document (``store.docs.fill``). No table changes. The upgrade leaves extras as they are
(whole extras read the same); the downgrade puts every value back, so the code of revision
0011 reads whole extras.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"

HOLE = "\x01"
MARK = "\U000f0000"  # how convstore's JSON columns keep a string holding NUL (or starting with MARK)
PAGE = 1000


def upgrade() -> None:
    pass


def downgrade() -> None:
    bind = op.get_bind()
    pg = bind.dialect.name == "postgresql"
    m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("source_format"),
                 sa.column("extras"), sa.column("doc"))
    text = sa.cast(m.c.extras, sa.Text) if pg else m.c.extras
    first = (sa.select(m.c.conversation_id, m.c.seq, m.c.source_format, m.c.extras, m.c.doc)
             .where(m.c.doc.is_not(None), text.contains("u0001"))
             .order_by(m.c.conversation_id, m.c.seq).limit(PAGE))
    after = first.where(sa.tuple_(m.c.conversation_id, m.c.seq) > sa.tuple_(sa.bindparam("c"), sa.bindparam("s")))
    # PostgreSQL hands JSONB over parsed: it goes back through the engine's serializer, the pair
    # that wrote it. Elsewhere JSON text is written.
    put = sa.text("UPDATE messages SET extras = :e WHERE conversation_id = :c AND seq = :s")
    if pg:
        put = put.bindparams(sa.bindparam("e", type_=postgresql.JSONB))
    rows = bind.execute(first).all()
    while rows:
        updates = [{"c": cid, "s": seq, "e": whole} for cid, seq, fmt, extras, doc in rows
                   if (whole := _whole(extras, fmt, doc)) is not None]
        if updates:
            bind.execute(put, updates)
        rows = bind.execute(after, {"c": rows[-1][0], "s": rows[-1][1]}).all()


def _whole(extras: str | dict[str, Any], fmt: str | None, doc: str) -> str | dict[str, Any] | None:
    """The extras with the values their document kept, or None where none was left out."""
    value = json.loads(extras) if isinstance(extras, str) else extras
    own = value.get(fmt) if isinstance(value, dict) else None
    fields = own.get("fields") if isinstance(own, dict) else None
    if not isinstance(fields, dict) or HOLE not in fields.values():
        return None
    items = orjson.loads("[" + doc + "]")
    if items and isinstance(items[0], str) and items[0][:1] == HOLE:  # the lead of revision 0010
        items = items[1:]
    if len(items) != 1 or not isinstance(items[0], dict):
        return None
    escaped = isinstance(extras, str)  # JSON text as stored; PostgreSQL's serializer escapes what it writes
    for key, held in fields.items():
        if held == HOLE and isinstance(kept := items[0].get(key), str):
            marked = escaped and ("\x00" in kept or kept.startswith(MARK))
            fields[key] = MARK + json.dumps(kept) if marked else kept
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) if escaped else value
