"""A message's document no longer holds its text a second time.

A document of one item (``messages.doc``, revision 0008) whose text its message's first block
row keeps in its ``text`` column now holds the JSON string ``"\\u0001"`` in its place, and
starts with a string of its own: ``\\u0001`` and the key holding the text (``store.docs.hollow``). No table changes. The
upgrade leaves documents as they are (one without the lead is whole); the downgrade puts every
left-out text back as a JSON string, so the code of revision 0009 reads whole documents again.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import json

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"

HOLE = "\x01"
LEAD = '"\\u0001'  # how a document without its text starts
MARK = "\U000f0000"  # PostgreSQL's text columns keep a string holding NUL (or MARK) as MARK + its JSON
PAGE = 1000


def upgrade() -> None:
    pass


def downgrade() -> None:
    bind = op.get_bind()
    m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("doc"))
    b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                 sa.column("text"))
    first = (sa.select(m.c.conversation_id, m.c.seq, m.c.doc, b.c.text)
             .select_from(m.join(b, sa.and_(b.c.conversation_id == m.c.conversation_id, b.c.seq == m.c.seq,
                                            b.c.position == 0)))
             .where(m.c.doc.startswith(LEAD, autoescape=True)).order_by(m.c.conversation_id, m.c.seq).limit(PAGE))
    after = first.where(sa.tuple_(m.c.conversation_id, m.c.seq) > sa.tuple_(sa.bindparam("c"), sa.bindparam("s")))
    put = (m.update().where(m.c.conversation_id == sa.bindparam("c"), m.c.seq == sa.bindparam("s"))
           .values(doc=sa.bindparam("d")))
    escaped = bind.dialect.name == "postgresql"
    rows = bind.execute(first).all()
    while rows:
        bind.execute(put, [{"c": cid, "s": seq, "d": _whole(doc, text, escaped)} for cid, seq, doc, text in rows])
        rows = bind.execute(after, {"c": rows[-1][0], "s": rows[-1][1]}).all()


def _whole(doc: str, text: str, escaped: bool) -> str:
    if escaped and text.startswith(MARK):
        text = json.loads(text[len(MARK):])
    lead, item = orjson.loads("[" + doc + "]")
    if lead[1:]:
        item[lead[1:]] = text
    else:
        _put(item, text)
    return orjson.dumps(item).decode()


def _put(value: object, text: str) -> bool:
    if isinstance(value, dict):
        for key, item in value.items():
            if item == HOLE:
                value[key] = text
                return True
        return any(_put(item, text) for item in value.values())
    if isinstance(value, list):
        for index, item in enumerate(value):
            if item == HOLE:
                value[index] = text
                return True
        return any(_put(item, text) for item in value)
    return False
