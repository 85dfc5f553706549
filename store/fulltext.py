"""What each database's full-text engine needs kept in step with the blocks (revision 0006).

The text a block is found by is the same on every backend: its text, its tool name, and a
call's arguments as the source wrote them (or a result's nested output), at most
``SEARCH_CHARS`` characters. Each engine gets it its own cheapest way:

- SQLite: a contentless FTS5 table (the text is not stored twice) whose rowids are those of
  ``search`` rows holding the block's key. convstore inserts a chunk's entries after its
  blocks, and removes entries before their blocks go, computing the text from the blocks
  both times (FTS5 removes a contentless entry by its text); statements, not triggers, which
  cost FTS5 four times as much per row.
- PostgreSQL: a GIN index on ``to_tsvector(config, <the text>)`` over ``blocks`` itself: the
  index is all it needs, ``search`` stays empty.
- MariaDB/MySQL: FULLTEXT indexes stored columns only, so ``search`` rows hold the text.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa

from .codec import SEARCH_CHARS, SEARCHED
from .prepared import Prepared
from .schema import BlockRow, SearchRow

blocks_t = BlockRow.__table__
search_t = SearchRow.__table__
Rows = Literal["keys", "text"] | None

ROWS: dict[str, Rows] = {"sqlite": "keys", "postgresql": None, "mysql": "text", "mariadb": "text"}
"""What a ``search`` row holds on each backend: the key only, the text too, or no row at all."""

_JOINED = "coalesce(blocks.tool_name, '') || ' ' || coalesce(blocks.text, '') || ' ' || "
TEXT_SQL = {
    "sqlite": f"substr({_JOINED}coalesce(json_extract(blocks.payload, '$.arguments_raw'), "
              f"json_extract(blocks.payload, '$.arguments'), json_extract(blocks.payload, '$.output'), ''), "
              f"1, {SEARCH_CHARS})",
    "postgresql": f"left({_JOINED}coalesce(blocks.payload ->> 'arguments_raw', blocks.payload ->> 'arguments', "
                  f"blocks.payload ->> 'output', ''), {SEARCH_CHARS})",
}
"""The searched text of a block, computed from its row (a column expression over ``blocks``)."""
KINDS_SQL = "blocks.kind IN (" + ", ".join(f"'{k}'" for k in sorted(SEARCHED)) + ")"
"""The searched kinds as a literal predicate: PostgreSQL's partial index is on it."""

FTS = sa.table("search_fts", sa.column("rowid"), sa.column("body"), sa.column("rank"), sa.column("search_fts"))
"""SQLite's FTS5 table (revision 0006)."""
ON_BLOCK = sa.and_(blocks_t.c.conversation_id == search_t.c.conversation_id, blocks_t.c.seq == search_t.c.seq,
                    blocks_t.c.position == search_t.c.position)


def rows_for(dialect: sa.Dialect) -> Rows:
    return ROWS.get(dialect.name, "text")


def _entries(*where: Any, delete: bool) -> sa.Insert:
    text = sa.literal_column(TEXT_SQL["sqlite"])
    columns = [sa.literal_column("search.rowid"), text]
    if delete:  # FTS5's delete command: removes the entry with this rowid and exactly this text
        columns.insert(0, sa.literal_column("'delete'"))
    selected = sa.select(*columns).select_from(search_t.join(blocks_t, ON_BLOCK)).where(*where)
    names = ["search_fts", "rowid", "body"] if delete else ["rowid", "body"]
    return sa.insert(FTS).from_select(names, selected)


# An append runs this: compiled once, on the driver's cursor (see store.prepared).
_INDEX = Prepared(_entries(search_t.c.conversation_id == sa.bindparam("cid"), search_t.c.seq >= sa.bindparam("lo"),
                           search_t.c.seq < sa.bindparam("hi"), delete=False))


def index(conn: sa.Connection, conversation_id: str, first_seq: int, stop_seq: int) -> None:
    """Index the ``search`` rows just written for messages ``first_seq <= seq < stop_seq``."""
    if conn.dialect.name == "sqlite":
        _INDEX.run(conn, cid=conversation_id, lo=first_seq, hi=stop_seq)


def forget(conn: sa.Connection, *where: Any) -> None:
    """Remove the index entries of the ``search`` rows matching ``where``, before they and their
    blocks are deleted."""
    if conn.dialect.name == "sqlite":
        conn.execute(_entries(*where, delete=True))
