"""Full-text search: each database's own engine over the searchable text of the blocks.

The text a block is found by: its text, tool name, and a call's arguments (or a result's
nested output), at most 100,000 characters (``store.fulltext``). Per backend:
- SQLite: ``search`` rows hold the keys of blocks with such text; a contentless FTS5 table
  (Porter stemming over unicode61, accents folded) indexes the text under their rowids;
- PostgreSQL: a GIN index on ``to_tsvector(<config>, <text>)`` over ``blocks`` (partial: the
  kinds with text); the configuration is ``$CONVSTORE_SEARCH_LANGUAGE`` when the upgrade
  runs (default ``english``); ``search`` stays empty;
- MariaDB/MySQL: ``search`` rows hold the text too, under a FULLTEXT index; ``body`` compares
  case-insensitively (the other columns keep revision 0003's byte-exact collation).
Existing blocks are indexed by the upgrade. MariaDB/MySQL commit each DDL statement at once:
every step first looks at what is there, so an interrupted upgrade finishes when run again.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0006"
down_revision: str | None = "0005"

# Frozen copies of the column types and of the indexed text (see 0001): this file keeps its meaning.
Id = sa.Uuid(as_uuid=False)
INDEX = "ix_search_body"
MARK = "\U000f0000"  # revision 0001's escape of strings holding NUL (PostgreSQL)
# The text each block is indexed by, computed from its row: store.fulltext.TEXT_SQL holds the same
# (a test compares them). SQLite removes an entry by recomputing its text: it must never change
# without a revision that rebuilds the index.
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
SEARCH_CHARS = 100_000
BATCH = 5000
_CONFIG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


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


def _body_type() -> sa.types.TypeEngine[Any]:
    # FULLTEXT matching follows the column's collation: a binary one would make it case-sensitive.
    return sa.Text().with_variant(mysql.LONGTEXT(collation="utf8mb4_unicode_ci"), "mysql", "mariadb")


def _language() -> str:
    name = os.environ.get("CONVSTORE_SEARCH_LANGUAGE") or "english"
    if not _CONFIG.fullmatch(name):
        raise ValueError(f"CONVSTORE_SEARCH_LANGUAGE must name a text search configuration, got {name!r}")
    return name


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if not inspector.has_table("search"):
        op.create_table(
            "search",
            sa.Column("conversation_id", Id, nullable=False),
            sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("kind", sa.String(16), nullable=False),
            sa.Column("body", _body_type(), nullable=True),
            sa.ForeignKeyConstraint(["conversation_id", "seq"], ["messages.conversation_id", "messages.seq"],
                                    ondelete="CASCADE", name=op.f("fk_search_conversation_id_messages")),
            sa.PrimaryKeyConstraint("conversation_id", "seq", "position", name=op.f("pk_search")),
            **_options(),
        )
    dialect = bind.dialect.name
    if dialect == "sqlite":
        _sqlite_index(bind)
    elif dialect == "postgresql":
        if INDEX not in {ix["name"] for ix in sa.inspect(bind).get_indexes("blocks")}:
            text = TEXT_SQL["postgresql"].replace("blocks.", "")
            kinds = ", ".join(f"'{k}'" for k in sorted(SEARCHED))
            op.execute(f"CREATE INDEX {INDEX} ON blocks USING gin (to_tsvector('{_language()}'::regconfig, {text})) "
                       f"WHERE kind IN ({kinds})")
    else:
        if INDEX not in {ix["name"] for ix in sa.inspect(bind).get_indexes("search")}:
            op.execute(f"CREATE FULLTEXT INDEX {INDEX} ON search (body)")
        if bind.execute(sa.text("SELECT 1 FROM search LIMIT 1")).first() is None:
            _index_existing(bind)


def _sqlite_index(bind: sa.Connection) -> None:
    """The FTS5 table and, in the same transaction (SQLite's DDL is transactional), every stored
    block with text in it."""
    if bind.execute(sa.text("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'")).first() is not None:
        return
    kinds = ", ".join(f"'{k}'" for k in sorted(SEARCHED))
    op.execute("CREATE VIRTUAL TABLE search_fts USING fts5(body, content='', "
               "tokenize='porter unicode61 remove_diacritics 2')")
    op.execute("INSERT INTO search (conversation_id, seq, position, kind) "
               f"SELECT conversation_id, seq, position, kind FROM blocks WHERE kind IN ({kinds})")
    op.execute(f"INSERT INTO search_fts (rowid, body) SELECT search.rowid, {TEXT_SQL['sqlite']} FROM search "
               "JOIN blocks ON blocks.conversation_id = search.conversation_id AND blocks.seq = search.seq "
               "AND blocks.position = search.position")


def _unmark(value: Any) -> Any:
    if isinstance(value, str):
        return json.loads(value[len(MARK):]) if value.startswith(MARK) else value
    if isinstance(value, dict):
        return {_unmark(k): _unmark(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmark(v) for v in value]
    return value


def _text(kind: str, block: dict[str, Any]) -> str:
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
    return " ".join(p for p in parts if isinstance(p, str) and p)[:SEARCH_CHARS]


def _stored_blocks(bind: sa.Connection) -> Iterator[list[Any]]:
    """The searchable blocks stored before this revision, a batch at a time (by key)."""
    blocks = sa.table("blocks", sa.column("conversation_id", Id), sa.column("seq"), sa.column("position"),
                      sa.column("kind"), sa.column("text"), sa.column("tool_name"), sa.column("payload"))
    key = sa.tuple_(blocks.c.conversation_id, blocks.c.seq, blocks.c.position)
    query = (sa.select(blocks).where(blocks.c.kind.in_(sorted(SEARCHED)))
             .order_by(blocks.c.conversation_id, blocks.c.seq, blocks.c.position).limit(BATCH))
    rows = bind.execute(query).all()
    while rows:
        yield rows
        last = rows[-1]
        after = sa.tuple_(sa.literal(last[0], Id), sa.literal(last[1]), sa.literal(last[2]))
        rows = bind.execute(query.where(key > after)).all()


def _index_existing(bind: sa.Connection) -> None:
    table = sa.table("search", sa.column("conversation_id", Id), sa.column("seq"), sa.column("position"),
                     sa.column("kind"), sa.column("body"))
    for rows in _stored_blocks(bind):
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
            bind.execute(table.insert(), found)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS search_fts")
    elif bind.dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    if sa.inspect(bind).has_table("search"):
        op.drop_table("search")
