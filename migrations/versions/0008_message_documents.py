"""Stored documents: ``messages.doc``, the message as its source format writes it (``store.docs``).

A nullable column: rows stored before it have none and are loaded through the canonical
path as before, giving the same value. MariaDB/MySQL commit each DDL statement at once:
the step looks first, so an interrupted upgrade finishes when run again.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0008"
down_revision: str | None = "0007"

DocText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")  # frozen copy (see 0001)


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("messages")}


def upgrade() -> None:
    if "doc" not in _columns():
        op.add_column("messages", sa.Column("doc", DocText, nullable=True))


def downgrade() -> None:
    if "doc" in _columns():
        op.drop_column("messages", "doc")  # SQLite 3.35+
