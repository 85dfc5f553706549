"""The full-text index is brought up to date by the search that needs it, not by every write.

``conversations.index_from``: the first of a conversation's own messages the index does not
hold yet (NULL: it holds them all). Writes only set it; a search first indexes the messages
from there on, in a write transaction (``store.fulltext``). On PostgreSQL the GIN index moves
from an expression over ``blocks`` to the ``search`` rows, which now hold the text as on
MariaDB/MySQL; the upgrade leaves every conversation to be indexed by the first search (it
keeps the text search configuration of revision 0006's index). On SQLite and MariaDB/MySQL
what is stored is indexed already. MariaDB/MySQL commit each DDL statement at once: every step
looks first, so an interrupted upgrade finishes when run again.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import json
import re
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"

INDEX = "ix_search_body"
PENDING_INDEX = "ix_conversations_namespace_index_from"
# Frozen copies of revision 0006's indexed text: a downgrade indexes what is pending its way.
_JOINED = "coalesce(blocks.tool_name, '') || ' ' || coalesce(blocks.text, '') || ' ' || "
TEXT_SQL = {
    "sqlite": f"substr({_JOINED}coalesce(json_extract(blocks.payload, '$.arguments_raw'), "
              "json_extract(blocks.payload, '$.arguments'), json_extract(blocks.payload, '$.output'), ''), "
              "1, 100000)",
    "postgresql": f"left({_JOINED}coalesce(blocks.payload ->> 'arguments_raw', blocks.payload ->> 'arguments', "
                  "blocks.payload ->> 'output', ''), 100000)",
}
TEXT_FIELD = {"text": "text", "refusal": "text", "reasoning": "text", "code": "code",
              "code_result": "output", "error": "message", "tool_result": "output"}
SEARCHED = frozenset(TEXT_FIELD) | {"tool_call"}
KINDS = ", ".join(f"'{k}'" for k in sorted(SEARCHED))
MARK = "\U000f0000"
_CONFIG = re.compile(r"to_tsvector\('([^']+)'::regconfig")
# The blocks of the messages a conversation's index_from says are not indexed yet.
_PENDING = ("FROM blocks JOIN conversations ON conversations.id = blocks.conversation_id "
            f"WHERE conversations.index_from IS NOT NULL AND blocks.seq >= conversations.index_from "
            f"AND blocks.kind IN ({KINDS})")


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("conversations")}


def _indexes(table: str) -> set[str]:
    return {ix["name"] for ix in sa.inspect(op.get_bind()).get_indexes(table)}


def _pg_config(bind: sa.Connection) -> str:
    definition = bind.execute(sa.text(f"SELECT pg_get_indexdef(to_regclass('{INDEX}'))")).scalar()
    found = _CONFIG.search(definition or "")
    return found[1] if found else "english"


def upgrade() -> None:
    bind = op.get_bind()
    if "index_from" not in _columns():
        op.add_column("conversations", sa.Column("index_from", sa.Integer(), nullable=True))
    if PENDING_INDEX not in _indexes("conversations"):
        op.create_index(PENDING_INDEX, "conversations", ["namespace", "index_from"])
    if bind.dialect.name == "postgresql" and INDEX in _indexes("blocks"):
        config = _pg_config(bind)
        op.execute(f"DROP INDEX {INDEX}")
        op.execute(f"CREATE INDEX {INDEX} ON search USING gin (to_tsvector('{config}'::regconfig, body))")
        op.execute("UPDATE conversations SET index_from = 0 WHERE message_count > coalesce(fork_seq, 0)")


def downgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    if "index_from" in _columns():
        if dialect == "sqlite":
            before = bind.execute(sa.text("SELECT coalesce(max(rowid), 0) FROM search")).scalar()
            op.execute(f"INSERT INTO search (conversation_id, seq, position, kind) "
                       f"SELECT blocks.conversation_id, blocks.seq, blocks.position, blocks.kind {_PENDING}")
            op.execute(f"INSERT INTO search_fts (rowid, body) SELECT search.rowid, {TEXT_SQL['sqlite']} FROM search "
                       "JOIN blocks ON blocks.conversation_id = search.conversation_id AND blocks.seq = search.seq "
                       f"AND blocks.position = search.position WHERE search.rowid > {int(before)}")
        elif dialect == "postgresql":
            if INDEX in _indexes("search"):
                config = _pg_config(bind)
                op.execute(f"DROP INDEX {INDEX}")
                op.execute("DELETE FROM search")
                text = TEXT_SQL["postgresql"].replace("blocks.", "")
                op.execute(f"CREATE INDEX {INDEX} ON blocks USING gin (to_tsvector('{config}'::regconfig, {text})) "
                           f"WHERE kind IN ({KINDS})")
        else:
            _index_pending_text(bind)
    if PENDING_INDEX in _indexes("conversations"):
        op.drop_index(PENDING_INDEX, "conversations")
    if "index_from" in _columns():
        op.drop_column("conversations", "index_from")


def _unmark(value: Any) -> Any:
    if isinstance(value, str):
        return json.loads(value[len(MARK):]) if value.startswith(MARK) else value
    if isinstance(value, dict):
        return {_unmark(k): _unmark(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmark(v) for v in value]
    return value


def _text(kind: str, block: dict[str, Any]) -> str:
    """Revision 0006's text of a block (MariaDB/MySQL keep it in ``search.body``)."""
    if kind == "tool_call":
        args = block.get("arguments_raw")
        if args is None and block.get("arguments") is not None:
            args = json.dumps(block["arguments"], ensure_ascii=False, default=str)
        parts = [block.get("name"), args]
    elif kind == "tool_result":
        output = block.get("output", "")
        parts = [block.get("name"), *([output] if isinstance(output, str) else
                                      (_text(b.get("kind", ""), b) for b in output if b.get("kind") in SEARCHED))]
    else:
        parts = [block.get(TEXT_FIELD[kind])]
    return " ".join(p for p in parts if isinstance(p, str) and p)[:100_000]


def _index_pending_text(bind: sa.Connection) -> None:
    rows = bind.execute(sa.text("SELECT blocks.conversation_id, blocks.seq, blocks.position, blocks.kind, "
                                f"blocks.text, blocks.tool_name, blocks.payload {_PENDING}")).all()
    search = sa.table("search", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                      sa.column("kind"), sa.column("body"))
    found = []
    for cid, seq, position, kind, text, tool_name, payload in rows:
        block = _unmark(json.loads(payload) if isinstance(payload, str) else payload or {})
        # MariaDB keeps texts as they are (SafeText escapes on PostgreSQL only); its JSON is escaped
        block.setdefault("name", tool_name)
        if (field := TEXT_FIELD.get(kind)) is not None and text is not None:
            block[field] = text
        if body := _text(kind, block):
            found.append({"conversation_id": cid, "seq": seq, "position": position, "kind": kind, "body": body})
    if found:
        bind.execute(search.insert(), found)
