"""The relational schema: typed ORM rows over five tables.

Hybrid rows: what users query (kind, text, call id, tool name, media type,
sequence) is a real column; the rest of a block goes into a JSON ``payload``.
Every table carries ``conversation_id`` so the schema can be sharded by
conversation; ids are client-generated UUIDv7 (time-ordered), so a batch
inserts with one executemany per table. Change this file only together with a
migration under ``migrations/versions``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class JSONDocument(TypeDecorator[Any]):
    """JSONB on PostgreSQL, JSON (LONGTEXT) on MariaDB/MySQL, TEXT on SQLite."""

    impl = sa.JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.JSONB(none_as_null=True))
        if dialect.name == "sqlite":
            # TEXT, not SQLite's JSON type name, whose NUMERIC affinity turns "12" into 12.
            return dialect.type_descriptor(sa.Text())
        return dialect.type_descriptor(sa.JSON(none_as_null=True))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if dialect.name == "sqlite" and value is not None:
            return dumps(value)
        return value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if dialect.name == "sqlite" and value is not None:
            return orjson.loads(value)
        return value


Id = sa.Uuid(as_uuid=False)
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
LongBlob = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Name = sa.String(255)


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONDocument(), Any: JSONDocument(), datetime: Timestamp}


class ConversationRow(Base):
    __tablename__ = "conversations"

    id: Mapped[str] = mapped_column(Id, primary_key=True)
    namespace: Mapped[str] = mapped_column(sa.String(128), index=True)
    title: Mapped[str | None] = mapped_column(sa.String(500))
    source_format: Mapped[str | None] = mapped_column(sa.String(32))
    message_count: Mapped[int] = mapped_column(sa.Integer, default=0)
    """Also the sequence number the next message gets; appends lock this row."""
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata")


class MessageRow(Base):
    __tablename__ = "messages"
    __table_args__ = (
        sa.UniqueConstraint("conversation_id", "seq"),
        sa.CheckConstraint("role IN ('system', 'user', 'assistant', 'tool')", name="role"),
    )

    id: Mapped[str] = mapped_column(Id, primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        Id, sa.ForeignKey("conversations.id", ondelete="CASCADE")
    )
    seq: Mapped[int]
    """0-based position in the conversation."""
    window_start: Mapped[int]
    """Earliest seq a window that contains this message must start at to keep every
    tool result with its call (see ``store.links``)."""
    role: Mapped[str] = mapped_column(sa.String(16))
    source_role: Mapped[str | None] = mapped_column(sa.String(64))
    name: Mapped[str | None] = mapped_column(Name)
    source_format: Mapped[str | None] = mapped_column(sa.String(32))
    source_type: Mapped[str | None] = mapped_column(sa.String(64))
    external_id: Mapped[str | None] = mapped_column(Name)
    model: Mapped[str | None] = mapped_column(Name)
    created_at: Mapped[datetime | None]
    """UTC; ``utc_offset`` keeps the source's offset (minutes), NULL for naive times."""
    utc_offset: Mapped[int | None] = mapped_column(sa.SmallInteger)
    usage: Mapped[dict[str, Any] | None]
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata")
    extras: Mapped[dict[str, Any] | None]


class BlockRow(Base):
    __tablename__ = "blocks"
    __table_args__ = (
        sa.UniqueConstraint("message_id", "position"),
        sa.ForeignKeyConstraint(
            ["conversation_id", "blob_sha256"],
            ["blobs.conversation_id", "blobs.sha256"],
            ondelete="CASCADE",
        ),
        # Serves both foreign keys that start with conversation_id.
        sa.Index(None, "conversation_id", "blob_sha256"),
    )

    id: Mapped[str] = mapped_column(Id, primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        Id, sa.ForeignKey("conversations.id", ondelete="CASCADE")
    )
    message_id: Mapped[str] = mapped_column(Id, sa.ForeignKey("messages.id", ondelete="CASCADE"))
    position: Mapped[int]
    kind: Mapped[str] = mapped_column(sa.String(16))
    text: Mapped[str | None] = mapped_column(LongText)
    media_type: Mapped[str | None] = mapped_column(Name)
    tool_name: Mapped[str | None] = mapped_column(Name)
    call_id: Mapped[str | None] = mapped_column(Name, index=True)
    blob_sha256: Mapped[str | None] = mapped_column(sa.String(64))
    payload: Mapped[dict[str, Any] | None]


class BlobRow(Base):
    """Binary payloads (images, audio, ...), stored once per conversation by content hash."""

    __tablename__ = "blobs"

    conversation_id: Mapped[str] = mapped_column(
        Id, sa.ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    sha256: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    media_type: Mapped[str | None] = mapped_column(Name)
    size: Mapped[int]
    data: Mapped[bytes] = mapped_column(LongBlob)


class ToolCallRow(Base):
    """The link between a tool call and its result."""

    __tablename__ = "tool_calls"
    __table_args__ = (
        sa.UniqueConstraint("conversation_id", "call_id"),
        sa.CheckConstraint("status IN ('pending', 'answered', 'error')", name="status"),
    )

    id: Mapped[str] = mapped_column(Id, primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        Id, sa.ForeignKey("conversations.id", ondelete="CASCADE")
    )
    call_id: Mapped[str] = mapped_column(Name, index=True)
    name: Mapped[str] = mapped_column(Name, index=True)
    status: Mapped[str] = mapped_column(sa.String(16))
    call_block_id: Mapped[str] = mapped_column(
        Id, sa.ForeignKey("blocks.id", ondelete="CASCADE"), index=True
    )
    call_seq: Mapped[int]
    result_block_id: Mapped[str | None] = mapped_column(
        Id, sa.ForeignKey("blocks.id", ondelete="CASCADE"), index=True
    )
    result_seq: Mapped[int | None]


metadata = Base.metadata
