"""Conversations are ordered by their last write on ``recent_at``; ``updated_at`` is no longer indexed.

An append names ``updated_at`` in its UPDATE of the conversation's row, and SQLite (like any
B-tree index) rewrites the entry of every index over a column an UPDATE names, even where the
value stays: on SQLite one page of the WAL an append of the four or five its commit writes. Now
``updated_at`` (the exact time of the last write, what a reader sees) has no index, and the index
that gives ``list_conversations(order_by="updated_at")`` and ``prune`` their order is over
``recent_at``: ``updated_at`` to within a second, which an append leaves as it is when the row is
the namespace's most recently written and was written within the second (as ``relatime``
leaves a file's atime), so the order it gives is that of the last writes (``store.operations``).

The upgrade fills ``recent_at`` from ``updated_at``. The column is nullable in the database
(SQLite adds a NOT NULL column only with a default); every write of the store sets it.
MariaDB/MySQL commit each DDL statement at once: each step looks first, so an interrupted
upgrade or downgrade finishes when run again.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0021"
down_revision: str | None = "0020"

OLD_INDEX, OLD_COLUMNS = "ix_conversations_namespace_updated_at_id", ["namespace", "updated_at", "id"]
NEW_INDEX, NEW_COLUMNS = "ix_conversations_namespace_recent_at_id", ["namespace", "recent_at", "id"]


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("conversations")}


def _indexes() -> set[str]:
    return {ix["name"] for ix in sa.inspect(op.get_bind()).get_indexes("conversations")}


def upgrade() -> None:
    if "recent_at" not in _columns():
        op.add_column("conversations", sa.Column("recent_at", sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), "mysql", "mariadb"), nullable=True))
    op.execute("UPDATE conversations SET recent_at = updated_at WHERE recent_at IS NULL")
    indexes = _indexes()
    if NEW_INDEX not in indexes:
        op.create_index(NEW_INDEX, "conversations", NEW_COLUMNS)
    if OLD_INDEX in indexes:
        op.drop_index(OLD_INDEX, "conversations")


def downgrade() -> None:
    indexes = _indexes()
    if OLD_INDEX not in indexes:
        op.create_index(OLD_INDEX, "conversations", OLD_COLUMNS)
    if NEW_INDEX in indexes:
        op.drop_index(NEW_INDEX, "conversations")
    if "recent_at" in _columns():
        op.drop_column("conversations", "recent_at")
