"""Forks: a conversation may share the first messages of another instead of holding them.

``conversations.parent_id`` (nullable, a foreign key to ``conversations.id``, indexed: a
parent's forks are looked up before it is deleted, pruned or truncated) and
``conversations.fork_seq``: a fork's messages with ``seq < fork_seq`` are its parent's. Existing
conversations are no forks. MariaDB/MySQL commit each DDL statement at once: every step first
looks at what is there, so an interrupted upgrade finishes when run again.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"

Id = sa.Uuid(as_uuid=False)  # frozen copy (see 0001)
FK = "fk_conversations_parent_id_conversations"
INDEX = "ix_conversations_parent_id"


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    columns = {c["name"] for c in inspector.get_columns("conversations")}
    if "fork_seq" not in columns:
        op.add_column("conversations", sa.Column("fork_seq", sa.Integer(), nullable=True))
    if "parent_id" not in columns:
        if bind.dialect.name == "sqlite":  # ALTER TABLE cannot add a constraint; a column may reference
            op.execute("ALTER TABLE conversations ADD COLUMN parent_id CHAR(32) "
                       f"CONSTRAINT {FK} REFERENCES conversations (id)")
        else:
            op.add_column("conversations", sa.Column("parent_id", Id, nullable=True))
    if INDEX not in {ix["name"] for ix in sa.inspect(bind).get_indexes("conversations")}:
        op.create_index(INDEX, "conversations", ["parent_id"])
    if bind.dialect.name != "sqlite" and FK not in {
            fk["name"] for fk in sa.inspect(bind).get_foreign_keys("conversations")}:
        op.create_foreign_key(FK, "conversations", "conversations", ["parent_id"], ["id"])


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite" and FK in {fk["name"] for fk in sa.inspect(bind).get_foreign_keys("conversations")}:
        op.drop_constraint(FK, "conversations", type_="foreignkey")
    if INDEX in {ix["name"] for ix in sa.inspect(bind).get_indexes("conversations")}:
        op.drop_index(INDEX, table_name="conversations")
    columns = {c["name"] for c in sa.inspect(bind).get_columns("conversations")}
    if bind.dialect.name == "sqlite" and "parent_id" in columns:
        op.execute("ALTER TABLE conversations DROP COLUMN parent_id")  # SQLite 3.35+
        columns.discard("parent_id")
    for name in ("parent_id", "fork_seq"):
        if name in columns:
            op.drop_column("conversations", name)
