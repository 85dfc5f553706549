"""A tool call's arguments are stored once: as the string the source wrote.

A tool call block's payload held ``arguments`` (the parsed JSON) beside ``arguments_raw``
(the string). Where the first is exactly the parse of the second, the payload now holds only
the string, under ``$arguments_raw`` (``store.codec.RAW_ARGUMENTS``); a read parses it. No
table changes. The upgrade leaves payloads as they are (one with both keys still reads the
same); the downgrade writes both keys back, so the code of revision 0010 reads them.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"

RAW = "$arguments_raw"
PAGE = 1000


def upgrade() -> None:
    pass


def downgrade() -> None:
    bind = op.get_bind()
    pg = bind.dialect.name == "postgresql"
    b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                 sa.column("kind"), sa.column("payload"))
    text = sa.cast(b.c.payload, sa.Text) if pg else b.c.payload
    key = sa.tuple_(b.c.conversation_id, b.c.seq, b.c.position)
    first = (sa.select(b.c.conversation_id, b.c.seq, b.c.position, b.c.payload)
             .where(b.c.kind == "tool_call", text.contains(f'"{RAW}"', autoescape=True))
             .order_by(b.c.conversation_id, b.c.seq, b.c.position).limit(PAGE))
    after = first.where(key > sa.tuple_(sa.bindparam("c"), sa.bindparam("s"), sa.bindparam("n")))
    # PostgreSQL hands JSONB over parsed, by the connection's JSON loader: it goes back through the
    # engine's serializer, the pair that wrote it. Elsewhere the JSON text is rewritten as it is.
    put = sa.text("UPDATE blocks SET payload = :p WHERE conversation_id = :c AND seq = :s AND position = :n")
    if pg:
        put = put.bindparams(sa.bindparam("p", type_=postgresql.JSONB))
    rows = bind.execute(first).all()
    while rows:
        updates = [{"c": cid, "s": seq, "n": position, "p": whole} for cid, seq, position, payload in rows
                   if (whole := _whole(payload)) is not None]
        if updates:
            bind.execute(put, updates)
        rows = bind.execute(after, {"c": rows[-1][0], "s": rows[-1][1], "n": rows[-1][2]}).all()


def _whole(payload: str | dict[str, Any]) -> str | dict[str, Any] | None:
    """The payload with both keys (as it was written only where the arguments needed no escaping)."""
    fields = json.loads(payload) if isinstance(payload, str) else dict(payload)
    if RAW not in fields:
        return None
    raw = fields.pop(RAW)
    fields["arguments"], fields["arguments_raw"] = json.loads(raw), raw
    return fields if not isinstance(payload, str) else json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
