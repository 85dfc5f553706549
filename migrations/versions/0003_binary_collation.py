"""MariaDB/MySQL: every table compares text byte for byte.

The server's default collation (utf8mb4_general_ci) ignores case, accents and trailing
spaces, so namespace "TENANT_B" or "tenánt_b " matched tenant "tenant_b", session keys
and call ids merged, and a conversation could not hold both "call_aBc" and "call_abc".
Each table is converted to a binary no-pad collation (utf8mb4_nopad_bin on MariaDB,
utf8mb4_0900_bin on MySQL 8), existing rows included. SQLite and PostgreSQL already
compare bytes: nothing to do there.

The downgrade goes back to the server's case-insensitive default; it fails on a
database that now holds ids differing only in case, which that collation cannot keep apart.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"

# Frozen here (not imported from store.schema) so this revision keeps its meaning.
TABLES = ("conversations", "messages", "blocks", "blobs", "tool_calls")
FOREIGN_KEYS = [  # (name, table, columns, referred table, referred columns), all ON DELETE CASCADE
    ("fk_messages_conversation_id_conversations", "messages", ["conversation_id"], "conversations", ["id"]),
    ("fk_blobs_conversation_id_conversations", "blobs", ["conversation_id"], "conversations", ["id"]),
    ("fk_blocks_conversation_id_conversations", "blocks", ["conversation_id"], "conversations", ["id"]),
    ("fk_blocks_message_id_messages", "blocks", ["message_id"], "messages", ["id"]),
    ("fk_blocks_conversation_id_blob_sha256_blobs", "blocks", ["conversation_id", "blob_sha256"], "blobs",
     ["conversation_id", "sha256"]),
    ("fk_tool_calls_conversation_id_conversations", "tool_calls", ["conversation_id"], "conversations", ["id"]),
    ("fk_tool_calls_call_block_id_blocks", "tool_calls", ["call_block_id"], "blocks", ["id"]),
    ("fk_tool_calls_result_block_id_blocks", "tool_calls", ["result_block_id"], "blocks", ["id"]),
]


def _collation() -> str | None:
    bind = op.get_bind()
    if bind.dialect.name not in ("mysql", "mariadb"):
        return None
    if getattr(bind.dialect, "is_mariadb", False):
        return "utf8mb4_nopad_bin"
    version = bind.dialect.server_version_info or (0,)
    # MySQL before 8.0 has no no-pad binary collation: utf8mb4_bin still ignores trailing spaces.
    return "utf8mb4_0900_bin" if version >= (8, 0) else "utf8mb4_bin"


def _convert(collation: str) -> None:
    # MariaDB refuses to change a column that a foreign key uses (even with the checks
    # off), and every foreign key here joins text columns: drop them, convert, put them
    # back. Each step is idempotent (MariaDB has no transactional DDL), so an interrupted
    # upgrade is finished by running it again.
    bind = op.get_bind()
    existing = {fk["name"] for table in TABLES for fk in sa.inspect(bind).get_foreign_keys(table)}
    for name, table, *_ in FOREIGN_KEYS:
        if name in existing:
            op.drop_constraint(name, table, type_="foreignkey")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} CONVERT TO CHARACTER SET utf8mb4 COLLATE {collation}")
    for name, table, columns, referred, referred_columns in FOREIGN_KEYS:
        op.create_foreign_key(name, table, referred, columns, referred_columns, ondelete="CASCADE")


def upgrade() -> None:
    if (collation := _collation()) is not None:
        _convert(collation)


def downgrade() -> None:
    if _collation() is not None:
        _convert("utf8mb4_general_ci")
