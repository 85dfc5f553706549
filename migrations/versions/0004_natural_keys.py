"""Natural keys led by the conversation id: ready to partition, no surrogate ids.

A message is addressed by (conversation_id, seq), a block by (conversation_id, seq,
position), a tool-call link by (conversation_id, call_id) with each end a block's
(seq, position). The per-row UUIDs of messages, blocks and links go, with the unique
indexes beside them, the index on conversations.namespace (the (namespace, key) key
serves it), the foreign keys from links to blocks and from blocks to blobs, and the
indexes those needed. SQLite keeps messages, blocks and links WITHOUT ROWID (clustered
by conversation). Rows keep every value; the downgrade gives them new UUIDs.

Each direction copies the three tables aside (CREATE TABLE ... AS SELECT, joining in the
new key columns), drops them, creates them in the new shape and fills them from the
copies: one code path for every backend, and no constraint or index name is ever in use
twice. MariaDB/MySQL commit each DDL statement at once, so every step first looks at what
is there: an upgrade interrupted anywhere finishes when it runs again.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql, postgresql

revision: str = "0004"
down_revision: str | None = "0003"

# Frozen copies of the column types (see 0001), so this file keeps its meaning.
Id = sa.Uuid(as_uuid=False)
Json = sa.Text().with_variant(postgresql.JSONB(), "postgresql").with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Name = sa.String(255)

TABLES = ("messages", "blocks", "tool_calls")  # parents first
MESSAGE_COLUMNS = ("conversation_id", "seq", "window_start", "role", "source_role", "name", "source_format",
                   "source_type", "external_id", "model", "created_at", "utc_offset", "usage", "metadata", "extras")
BLOCK_COLUMNS = ("conversation_id", "position", "kind", "text", "media_type", "tool_name", "call_id",
                 "blob_sha256", "payload")
LINK_COLUMNS = ("conversation_id", "call_id", "name", "status", "call_seq", "result_seq")


def _message_columns() -> list[sa.Column]:
    return [
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
    ]


def _block_columns() -> list[sa.Column]:
    return [
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", LongText),
        sa.Column("media_type", Name),
        sa.Column("tool_name", Name),
        sa.Column("call_id", Name),
        sa.Column("blob_sha256", sa.String(64)),
        sa.Column("payload", Json),
    ]


def _link_columns() -> list[sa.Column]:
    return [
        sa.Column("name", Name, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.CheckConstraint("status IN ('pending', 'answered', 'error')", name=op.f("ck_tool_calls_status")),
    ]


def _cid() -> sa.Column:
    return sa.Column("conversation_id", Id, nullable=False)


def _conversation_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                   name=op.f(f"fk_{table}_conversation_id_conversations"), ondelete="CASCADE")


def _create_v4(options: dict[str, object]) -> None:
    clustered = {**options, "sqlite_with_rowid": False}
    op.create_table(
        "messages", _cid(), sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        *_message_columns(), _conversation_fk("messages"),
        sa.PrimaryKeyConstraint("conversation_id", "seq", name=op.f("pk_messages")), **clustered,
    )
    op.create_table(
        "blocks", _cid(), sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("position", sa.Integer(), nullable=False, autoincrement=False), *_block_columns(),
        sa.ForeignKeyConstraint(["conversation_id", "seq"], ["messages.conversation_id", "messages.seq"],
                                name=op.f("fk_blocks_conversation_id_seq_messages"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("conversation_id", "seq", "position", name=op.f("pk_blocks")), **clustered,
    )
    op.create_table(
        "tool_calls", _cid(), sa.Column("call_id", Name, nullable=False), *_link_columns(),
        sa.Column("call_seq", sa.Integer(), nullable=False),
        sa.Column("call_position", sa.Integer(), nullable=False),
        sa.Column("result_seq", sa.Integer()),
        sa.Column("result_position", sa.Integer()),
        _conversation_fk("tool_calls"),
        sa.PrimaryKeyConstraint("conversation_id", "call_id", name=op.f("pk_tool_calls")), **clustered,
    )
    for column in ("call_id", "name"):
        op.create_index(op.f(f"ix_tool_calls_{column}"), "tool_calls", [column])


def _create_v3(options: dict[str, object]) -> None:
    op.create_table(
        "messages", sa.Column("id", Id, nullable=False), _cid(), sa.Column("seq", sa.Integer(), nullable=False),
        *_message_columns(), _conversation_fk("messages"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.UniqueConstraint("conversation_id", "seq", name=op.f("uq_messages_conversation_id_seq")), **options,
    )
    op.create_table(
        "blocks", sa.Column("id", Id, nullable=False), _cid(), sa.Column("message_id", Id, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False), *_block_columns(),
        sa.ForeignKeyConstraint(["conversation_id", "blob_sha256"], ["blobs.conversation_id", "blobs.sha256"],
                                name=op.f("fk_blocks_conversation_id_blob_sha256_blobs"), ondelete="CASCADE"),
        _conversation_fk("blocks"),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], name=op.f("fk_blocks_message_id_messages"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blocks")),
        sa.UniqueConstraint("message_id", "position", name=op.f("uq_blocks_message_id_position")), **options,
    )
    op.create_index(op.f("ix_blocks_conversation_id_blob_sha256"), "blocks", ["conversation_id", "blob_sha256"])
    op.create_table(
        "tool_calls", sa.Column("id", Id, nullable=False), _cid(), sa.Column("call_id", Name, nullable=False),
        *_link_columns(),
        sa.Column("call_block_id", Id, nullable=False),
        sa.Column("call_seq", sa.Integer(), nullable=False),
        sa.Column("result_block_id", Id),
        sa.Column("result_seq", sa.Integer()),
        sa.ForeignKeyConstraint(["call_block_id"], ["blocks.id"], name=op.f("fk_tool_calls_call_block_id_blocks"),
                                ondelete="CASCADE"),
        _conversation_fk("tool_calls"),
        sa.ForeignKeyConstraint(["result_block_id"], ["blocks.id"],
                                name=op.f("fk_tool_calls_result_block_id_blocks"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_calls")),
        sa.UniqueConstraint("conversation_id", "call_id", name=op.f("uq_tool_calls_conversation_id_call_id")),
        **options,
    )
    for column in ("call_block_id", "call_id", "name", "result_block_id"):
        op.create_index(op.f(f"ix_tool_calls_{column}"), "tool_calls", [column])


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


def _new_uuid() -> str:
    """SQL for a random id per row, in the spelling the backend stores ids in."""
    name = op.get_bind().dialect.name
    if name == "postgresql":
        return "md5(random()::text || clock_timestamp()::text)::uuid"
    if name in ("mysql", "mariadb"):
        return "REPLACE(UUID(), '-', '')"
    return "lower(hex(randomblob(16)))"


def _has_message_ids() -> bool | None:
    """Whether messages has the surrogate id of revision 0003 (None: no messages table:
    an interrupted run dropped it after copying it aside)."""
    if "messages" not in _tables():
        return None
    return "id" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("messages")}


def _tables() -> set[str]:
    return set(sa.inspect(op.get_bind()).get_table_names())


def _switch(aside: str, copies: dict[str, str], old_shape: Callable[[], bool], create: Callable[[], None],
            fills: dict[str, str]) -> None:
    """Copy the tables aside, drop them, create them anew, fill them from the copies.

    ``copies`` and ``fills`` map each table to the SELECT that makes its copy and the one
    that fills it from the copies (``{aside}`` names the copy of a table)."""
    if old_shape():
        for table in TABLES:  # an earlier, interrupted run may have left partial copies
            op.execute(f"DROP TABLE IF EXISTS {aside}{table}")
        for table in TABLES:
            op.execute(f"CREATE TABLE {aside}{table} AS {copies[table]}")
        for table in reversed(TABLES):
            op.execute(f"DROP TABLE {table}")
    existing = _tables()
    if not set(TABLES) <= existing:
        for table in reversed(TABLES):  # a half-done creation: start it over (the copies hold the rows)
            op.execute(f"DROP TABLE IF EXISTS {table}")
        create()
    for table in TABLES:
        if f"{aside}{table}" in _tables():
            if op.get_bind().execute(sa.text(f"SELECT count(*) FROM {table}")).scalar() == 0:
                op.execute(fills[table])
    for table in reversed(TABLES):
        op.execute(f"DROP TABLE IF EXISTS {aside}{table}")


def _list(columns: tuple[str, ...]) -> str:
    quote = op.get_bind().dialect.identifier_preparer.quote  # "usage" is reserved on MariaDB/MySQL
    return ", ".join(quote(c) for c in columns)


def upgrade() -> None:
    options = _options()
    copies = {
        "messages": "SELECT * FROM messages",
        "blocks": "SELECT b.*, m.seq AS seq FROM blocks b JOIN messages m ON m.id = b.message_id",
        "tool_calls": "SELECT t.*, cb.position AS call_position, rb.position AS result_position "
                      "FROM tool_calls t JOIN blocks cb ON cb.id = t.call_block_id "
                      "LEFT JOIN blocks rb ON rb.id = t.result_block_id",
    }
    new_links = (*LINK_COLUMNS, "call_position", "result_position")
    fills = {
        "messages": f"INSERT INTO messages ({_list(MESSAGE_COLUMNS)}) SELECT {_list(MESSAGE_COLUMNS)} "
                    "FROM _v3_messages",
        "blocks": f"INSERT INTO blocks (seq, {_list(BLOCK_COLUMNS)}) SELECT seq, {_list(BLOCK_COLUMNS)} "
                  "FROM _v3_blocks",
        "tool_calls": f"INSERT INTO tool_calls ({_list(new_links)}) SELECT {_list(new_links)} FROM _v3_tool_calls",
    }
    _switch("_v3_", copies, lambda: _has_message_ids() is True, lambda: _create_v4(options), fills)
    if "ix_conversations_namespace" in {ix["name"] for ix in sa.inspect(op.get_bind()).get_indexes("conversations")}:
        op.drop_index(op.f("ix_conversations_namespace"), table_name="conversations")


def downgrade() -> None:
    options, uuid = _options(), _new_uuid()
    copies = {
        "messages": f"SELECT {uuid} AS id, m.* FROM messages m",
        "blocks": f"SELECT {uuid} AS id, m.id AS message_id, b.* FROM blocks b "
                  "JOIN _v4_messages m ON m.conversation_id = b.conversation_id AND m.seq = b.seq",
        "tool_calls": f"SELECT {uuid} AS id, cb.id AS call_block_id, rb.id AS result_block_id, t.* "
                      "FROM tool_calls t JOIN _v4_blocks cb ON cb.conversation_id = t.conversation_id "
                      "AND cb.seq = t.call_seq AND cb.position = t.call_position "
                      "LEFT JOIN _v4_blocks rb ON rb.conversation_id = t.conversation_id "
                      "AND rb.seq = t.result_seq AND rb.position = t.result_position",
    }
    old_links = (*LINK_COLUMNS, "id", "call_block_id", "result_block_id")
    fills = {
        "messages": f"INSERT INTO messages (id, {_list(MESSAGE_COLUMNS)}) SELECT id, {_list(MESSAGE_COLUMNS)} "
                    "FROM _v4_messages",
        "blocks": f"INSERT INTO blocks (id, message_id, {_list(BLOCK_COLUMNS)}) "
                  f"SELECT id, message_id, {_list(BLOCK_COLUMNS)} FROM _v4_blocks",
        "tool_calls": f"INSERT INTO tool_calls ({_list(old_links)}) SELECT {_list(old_links)} FROM _v4_tool_calls",
    }
    _switch("_v4_", copies, lambda: _has_message_ids() is False, lambda: _create_v3(options), fills)
    if "ix_conversations_namespace" not in {ix["name"] for ix in sa.inspect(op.get_bind()).get_indexes("conversations")}:
        op.create_index(op.f("ix_conversations_namespace"), "conversations", ["namespace"])
