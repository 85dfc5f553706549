"""Initial schema: conversations, messages, blocks, blobs and the tool-call link table.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql, postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of store.schema's column types, so this file keeps meaning what it
# meant when later revisions change the package.
Id = sa.Uuid(as_uuid=False)
# JSONB on PostgreSQL; elsewhere text that convstore (de)serializes itself (MariaDB's JSON type
# refuses documents nested deeper than 32 levels).
Json = sa.Text().with_variant(postgresql.JSONB(), "postgresql").with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
LongBlob = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Name = sa.String(255)


def _conversation_id(primary_key: bool = False) -> sa.Column:
    return sa.Column("conversation_id", Id, nullable=False, primary_key=primary_key)


def _conversation_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["conversation_id"], ["conversations.id"],
        name=op.f(f"fk_{table}_conversation_id_conversations"), ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", Id, nullable=False),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("key", Name),
        sa.Column("title", sa.String(500)),
        sa.Column("source_format", sa.String(32)),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("metadata", Json),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
        sa.UniqueConstraint("namespace", "key", name=op.f("uq_conversations_namespace_key")),
    )
    op.create_index(op.f("ix_conversations_namespace"), "conversations", ["namespace"])

    op.create_table(
        "blobs",
        _conversation_id(),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("media_type", Name),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", LongBlob, nullable=False),
        _conversation_fk("blobs"),
        sa.PrimaryKeyConstraint("conversation_id", "sha256", name=op.f("pk_blobs")),
    )

    op.create_table(
        "messages",
        sa.Column("id", Id, nullable=False),
        _conversation_id(),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("source_role", sa.String(64)),
        sa.Column("name", Name),
        sa.Column("source_format", sa.String(32)),
        sa.Column("source_type", sa.String(64)),
        sa.Column("external_id", Name),
        sa.Column("model", Name),
        sa.Column("created_at", Timestamp),
        sa.Column("utc_offset", sa.SmallInteger()),
        sa.Column("usage", Json),
        sa.Column("metadata", Json),
        sa.Column("extras", Json),
        sa.CheckConstraint("role IN ('system', 'user', 'assistant', 'tool')", name=op.f("ck_messages_role")),
        _conversation_fk("messages"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.UniqueConstraint("conversation_id", "seq", name=op.f("uq_messages_conversation_id_seq")),
    )

    op.create_table(
        "blocks",
        sa.Column("id", Id, nullable=False),
        _conversation_id(),
        sa.Column("message_id", Id, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", LongText),
        sa.Column("media_type", Name),
        sa.Column("tool_name", Name),
        sa.Column("call_id", Name),
        sa.Column("blob_sha256", sa.String(64)),
        sa.Column("payload", Json),
        sa.ForeignKeyConstraint(
            ["conversation_id", "blob_sha256"], ["blobs.conversation_id", "blobs.sha256"],
            name=op.f("fk_blocks_conversation_id_blob_sha256_blobs"), ondelete="CASCADE",
        ),
        _conversation_fk("blocks"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name=op.f("fk_blocks_message_id_messages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blocks")),
        sa.UniqueConstraint("message_id", "position", name=op.f("uq_blocks_message_id_position")),
    )
    op.create_index(op.f("ix_blocks_call_id"), "blocks", ["call_id"])
    op.create_index(op.f("ix_blocks_conversation_id_blob_sha256"), "blocks", ["conversation_id", "blob_sha256"])

    op.create_table(
        "tool_calls",
        sa.Column("id", Id, nullable=False),
        _conversation_id(),
        sa.Column("call_id", Name, nullable=False),
        sa.Column("name", Name, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("call_block_id", Id, nullable=False),
        sa.Column("call_seq", sa.Integer(), nullable=False),
        sa.Column("result_block_id", Id),
        sa.Column("result_seq", sa.Integer()),
        sa.CheckConstraint(
            "status IN ('pending', 'answered', 'error')", name=op.f("ck_tool_calls_status")
        ),
        sa.ForeignKeyConstraint(
            ["call_block_id"], ["blocks.id"], name=op.f("fk_tool_calls_call_block_id_blocks"), ondelete="CASCADE"
        ),
        _conversation_fk("tool_calls"),
        sa.ForeignKeyConstraint(
            ["result_block_id"], ["blocks.id"], name=op.f("fk_tool_calls_result_block_id_blocks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_calls")),
        sa.UniqueConstraint("conversation_id", "call_id", name=op.f("uq_tool_calls_conversation_id_call_id")),
    )
    for column in ("call_block_id", "call_id", "name", "result_block_id"):
        op.create_index(op.f(f"ix_tool_calls_{column}"), "tool_calls", [column])


def downgrade() -> None:
    for table in ("tool_calls", "blocks", "messages", "blobs", "conversations"):
        op.drop_table(table)
