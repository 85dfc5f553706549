"""A message of one plain tool result keeps it in its own row: ``messages.call_id``, ``tool_name``.

A third of an agent's messages are a tool result of a text output, its call id and its tool
name. On PostgreSQL its block row (a 24-byte header, the conversation id, seq, position and kind
again, and an entry in the blocks' key) cost more than a message's share of the peer's whole row:
bytes a message stayed above `SQLAlchemySession`'s. Such a result is now kept in its message row
(``text`` its output, ``call_id``, ``tool_name``), with no block row (``store.codec.block_rows``); a
read gives the same block. Rows written before keep their block rows (NULL ``call_id``): every
read takes both forms, as for revision 0013's texts. The downgrade writes a block row for each
such result before dropping the columns, so the code of revision 0019 finds them. MariaDB/MySQL
commit each DDL statement at once: each step looks first, so an interrupted upgrade or downgrade
finishes when run again.

On PostgreSQL the keys written in key order fill their pages: fillfactor 100 (the default 90 left a
tenth of every page an ingest or a conversation's appends fill empty, 8 bytes a message). It only
tells where a page that overflows at its end is split: pages filled before stay as they are, and
inserts between keys (many conversations written at once) split their pages in halves either way.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"

NEW = ("call_id", "tool_name")
PACKED = ("pk_messages", "pk_blocks", "pk_tool_calls", "ix_tool_calls_call_id")


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("messages")}


def upgrade() -> None:
    have = _columns()
    for name in NEW:
        if name not in have:
            op.add_column("messages", sa.Column(name, sa.String(255), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        for index in PACKED:
            op.execute(f"ALTER INDEX {index} SET (fillfactor = 100)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for index in PACKED:
            op.execute(f"ALTER INDEX {index} RESET (fillfactor)")
    have = _columns()
    if "call_id" in have:
        m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("text"),
                     sa.column("call_id"), sa.column("tool_name"))
        b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                     sa.column("kind"), sa.column("text"), sa.column("call_id"), sa.column("tool_name"))
        # Values as stored (PostgreSQL's escaped forms included) go to the block row as they are.
        op.execute(b.insert().from_select(
            ["conversation_id", "seq", "position", "kind", "text", "call_id", "tool_name"],
            sa.select(m.c.conversation_id, m.c.seq, sa.literal_column("0"), sa.literal_column("'tool_result'"),
                      m.c.text, m.c.call_id, m.c.tool_name)
            .where(m.c.call_id.is_not(None), ~sa.exists().where(  # not again, after an interrupted downgrade
                b.c.conversation_id == m.c.conversation_id, b.c.seq == m.c.seq, b.c.position == 0))))
        op.execute(m.update().where(m.c.call_id.is_not(None)).values(text=None))
    for name in reversed(NEW):
        if name in have:
            op.drop_column("messages", name)  # SQLite 3.35+
