"""Conversation tags, an expiry time, and indexes for listing a namespace page by page.

``conversation_tags`` holds a conversation's tags, keyed (conversation_id, tag) like every
table (ready to partition), with an index on the tag for listings filtered by one.
``conversations.expires_at`` (nullable) is when ``prune`` may delete the conversation.
Two indexes on conversations, (namespace, created_at, id) and (namespace, updated_at, id),
give ``list_conversations`` its page in either order from an index range, however many
conversations the namespace holds. Existing conversations keep everything; they have no tags
and no expiry. MariaDB/MySQL commit each DDL statement at once: every step first looks at what
is there, so an upgrade interrupted anywhere finishes when it runs again.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0005"
down_revision: str | None = "0004"

# Frozen copies of the column types (see 0001), so this file keeps its meaning.
Id = sa.Uuid(as_uuid=False)
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Name = sa.String(255)
INDEXES = {
    "ix_conversations_namespace_created_at_id": ["namespace", "created_at", "id"],
    "ix_conversations_namespace_updated_at_id": ["namespace", "updated_at", "id"],
}


def _options() -> dict[str, object]:
    """Table options: on MariaDB/MySQL the byte-exact collation of revision 0003."""
    bind = op.get_bind()
    if bind.dialect.name not in ("mysql", "mariadb"):
        return {}
    if getattr(bind.dialect, "is_mariadb", False):
        collation = "utf8mb4_nopad_bin"
    else:
        collation = "utf8mb4_0900_bin" if (bind.dialect.server_version_info or (0,)) >= (8, 0) else "utf8mb4_bin"
    return {"mysql_charset": "utf8mb4", "mysql_collate": collation}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("conversation_tags"):
        op.create_table(
            "conversation_tags",
            sa.Column("conversation_id", Id, nullable=False),
            sa.Column("tag", Name, nullable=False),
            sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE",
                                    name=op.f("fk_conversation_tags_conversation_id_conversations")),
            sa.PrimaryKeyConstraint("conversation_id", "tag", name=op.f("pk_conversation_tags")),
            sqlite_with_rowid=False,
            **_options(),
        )
    if "ix_conversation_tags_tag" not in {ix["name"] for ix in inspector.get_indexes("conversation_tags")}:
        op.create_index(op.f("ix_conversation_tags_tag"), "conversation_tags", ["tag"])
    if "expires_at" not in {c["name"] for c in inspector.get_columns("conversations")}:
        op.add_column("conversations", sa.Column("expires_at", Timestamp, nullable=True))
    present = {ix["name"] for ix in inspector.get_indexes("conversations")}
    for name, columns in INDEXES.items():
        if name not in present:
            op.create_index(op.f(name), "conversations", columns)


def downgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    present = {ix["name"] for ix in inspector.get_indexes("conversations")}
    for name in INDEXES:
        if name in present:
            op.drop_index(op.f(name), table_name="conversations")
    if "expires_at" in {c["name"] for c in inspector.get_columns("conversations")}:
        op.drop_column("conversations", "expires_at")
    if inspector.has_table("conversation_tags"):
        op.drop_table("conversation_tags")
