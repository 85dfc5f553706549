"""A message of one plain text block keeps its text in its own row: ``messages.text``.

Most messages are one text with nothing else; their block row cost more than its text on
disk and a row of its own on every write. Such a message's text is now kept in
``messages.text``, with no block row (``store.codec.block_rows``); a read gives the same block.
Rows written before keep their block rows (NULL ``text``): every read takes both forms. The
downgrade writes a block row for each such text before dropping the column, so the code of
revision 0012 finds them. MariaDB/MySQL commit each DDL statement at once: each step looks
first, so an interrupted upgrade or downgrade finishes when run again.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0013"
down_revision: str | None = "0012"

LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")  # frozen copy (see 0001)


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("messages")}


def upgrade() -> None:
    if "text" not in _columns():
        op.add_column("messages", sa.Column("text", LongText, nullable=True))


def downgrade() -> None:
    if "text" not in _columns():
        return
    m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("text"))
    b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                 sa.column("kind"), sa.column("text"))
    # The text as stored (PostgreSQL's escaped form included) goes to the block row as it is.
    op.execute(b.insert().from_select(
        ["conversation_id", "seq", "position", "kind", "text"],
        sa.select(m.c.conversation_id, m.c.seq, sa.literal_column("0"), sa.literal_column("'text'"), m.c.text)
        .where(m.c.text.is_not(None), ~sa.exists().where(  # not again, after an interrupted downgrade
            b.c.conversation_id == m.c.conversation_id, b.c.seq == m.c.seq, b.c.position == 0))))
    op.drop_column("messages", "text")  # SQLite 3.35+
