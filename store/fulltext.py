"""The full-text index: kept up to date by the search that needs it (revision 0009).

A write does not index what it stores: it only notes, in ``conversations.index_from``,
the first of the conversation's own messages the index does not hold yet. A search first
indexes every such message of its namespace (:func:`catch_up`, one write transaction with
those conversations' rows locked, a fixed number of statements per 500 conversations), then
matches. So appends and imports pay nothing for search, a search sees everything committed
before it began, and a store nobody searches keeps no index at all.

The text a block is found by is the same on every backend: its text, its tool name, and a
call's arguments as the source wrote them (or a result's nested output), at most
``SEARCH_CHARS`` characters. Each engine gets it its own cheapest way:

- SQLite: a contentless FTS5 table (the text is not stored twice) whose rowids are those of
  ``search`` rows holding the block's key. Entries are removed before their blocks go,
  computing the text from the blocks as when they were added (FTS5 removes a contentless
  entry by its text).
- PostgreSQL: ``search`` rows hold the text (computed in SQL from the block's row) under a
  GIN index on its ``tsvector``.
- MariaDB/MySQL: ``search`` rows hold the text (computed here, nested outputs as text) under
  a FULLTEXT index, which indexes stored columns only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from .codec import RAW_ARGUMENTS, SEARCH_CHARS, SEARCHED, block_fields, block_text
from .schema import BlockRow, ConversationRow, MessageRow, SearchRow

blocks_t = BlockRow.__table__
messages_t = MessageRow.__table__
search_t = SearchRow.__table__
conversations = ConversationRow.__table__
BATCH = 500
"""Conversations indexed per statement (their ids are the statement's parameters)."""

# A message's text kept in its own row (revision 0013), or its tool result's output and tool name
# (revision 0020), where it has no block row: SQLite computes an entry's text over search rows
# joined to their messages and, where they have one, their block.
INLINE_TERM = {"sqlite": "messages.text, ", "postgresql": ""}
NAME_TERM = {"sqlite": "messages.tool_name, ", "postgresql": ""}
# A call's arguments are its block's text since revision 0017, in its payload before: they go in the
# payload's place, so an FTS5 entry written before is removed with the very text it was written with.
TEXT_TERM = "CASE WHEN blocks.kind = 'tool_call' THEN NULL ELSE blocks.text END"
ARGUMENTS_TERM = "CASE WHEN blocks.kind = 'tool_call' THEN blocks.text END, "
_JOINED = {name: f"coalesce(blocks.tool_name, {NAME_TERM[name]}'') || ' ' || coalesce({TEXT_TERM}, {term}'') || ' ' || "
           for name, term in INLINE_TERM.items()}
# Revision 0011's payload key, NULL in every row written before it: those keep the very text
# revisions 0006 and 0009 computed (an FTS5 entry is removed by recomputing its text).
RAW_TERM = {"sqlite": f"json_extract(blocks.payload, '$.\"{RAW_ARGUMENTS}\"'), ",
            "postgresql": f"blocks.payload ->> '{RAW_ARGUMENTS}', "}
TEXT_SQL = {
    "sqlite": f"substr({_JOINED['sqlite']}coalesce({ARGUMENTS_TERM}json_extract(blocks.payload, '$.arguments_raw'), "
              f"{RAW_TERM['sqlite']}json_extract(blocks.payload, '$.arguments'), "
              f"json_extract(blocks.payload, '$.output'), ''), 1, {SEARCH_CHARS})",
    "postgresql": f"left({_JOINED['postgresql']}coalesce({ARGUMENTS_TERM}blocks.payload ->> 'arguments_raw', "
                  f"{RAW_TERM['postgresql']}blocks.payload ->> 'arguments', blocks.payload ->> 'output', ''), "
                  f"{SEARCH_CHARS})",
}
"""The searched text of a block, computed from its row (a column expression over ``blocks``;
on SQLite also ``messages``, for a text kept in its message's row)."""
INLINE_TEXT = sa.literal_column(f"left(coalesce(messages.tool_name, '') || ' ' || messages.text || ' ', {SEARCH_CHARS})")
"""PostgreSQL: what TEXT_SQL gives for a message's text or tool result kept in its row, as for its block row."""
INLINE_KIND = sa.literal_column("CASE WHEN messages.call_id IS NULL THEN 'text' ELSE 'tool_result' END")
"""The kind of the block a message row keeps (``codec.block_rows``)."""

FTS = sa.table("search_fts", sa.column("rowid"), sa.column("body"), sa.column("rank"), sa.column("search_fts"))
"""SQLite's FTS5 table (revision 0006)."""
ON_BLOCK = sa.and_(blocks_t.c.conversation_id == search_t.c.conversation_id, blocks_t.c.seq == search_t.c.seq,
                    blocks_t.c.position == search_t.c.position)
ON_MESSAGE = sa.and_(messages_t.c.conversation_id == search_t.c.conversation_id, messages_t.c.seq == search_t.c.seq)


# The conversations of namespace ``ns`` holding messages the index does not (on the index of
# (namespace, index_from)).
_BEHIND = (conversations.c.namespace == sa.bindparam("ns"), conversations.c.index_from.is_not(None))
_PENDING = sa.select(conversations.c.id).where(*_BEHIND).limit(1)
_PENDING_COUNT = sa.select(sa.func.count()).select_from(conversations).where(*_BEHIND)
_LOCK_PENDING = sa.select(conversations.c.id).where(*_BEHIND).order_by(conversations.c.id).with_for_update()


def behind(conn: sa.Connection, namespace: str) -> bool:
    """Whether a conversation of ``namespace`` holds messages the index does not (one statement)."""
    return conn.execute(_PENDING, {"ns": namespace}).first() is not None


def pending(conn: sa.Connection, namespace: str) -> int:
    """How many conversations of ``namespace`` hold messages the index does not."""
    return conn.execute(_PENDING_COUNT, {"ns": namespace}).scalar()


def catch_up(conn: sa.Connection, namespace: str, limit: int | None = None) -> int:
    """Index every message of ``namespace`` (of at most ``limit`` conversations) the index
    does not hold yet, in the caller's write transaction; returns how many conversations had
    some. Their rows stay locked until it ends: a concurrent catch-up waits and then finds
    nothing left, an append to one of them waits and then notes its own messages."""
    ids = [str(i) for i in conn.execute(_LOCK_PENDING.limit(limit), {"ns": namespace}).scalars()]
    index = _INDEXERS.get(conn.dialect.name, _index_text)
    for start in range(0, len(ids), BATCH):
        some = ids[start:start + BATCH]
        index(conn, some)
        conn.execute(conversations.update().where(conversations.c.id.in_(some)).values(index_from=None))
    return len(ids)


def _pending_blocks(ids: Sequence[str], *columns: Any) -> sa.Select[Any]:
    """The searchable blocks of these conversations from their ``index_from`` on."""
    c = conversations.c
    return (sa.select(*columns).select_from(blocks_t.join(conversations, c.id == blocks_t.c.conversation_id))
            .where(c.id.in_(ids), blocks_t.c.seq >= c.index_from, blocks_t.c.kind.in_(sorted(SEARCHED))))


def _pending_texts(ids: Sequence[str], *columns: Any) -> sa.Select[Any]:
    """The texts and tool results these conversations keep in message rows (revisions 0013 and
    0020) from their ``index_from`` on: each as its block would be, at position 0."""
    c = conversations.c
    return (sa.select(*columns).select_from(messages_t.join(conversations, c.id == messages_t.c.conversation_id))
            .where(c.id.in_(ids), messages_t.c.seq >= c.index_from, messages_t.c.text.is_not(None)))


_KEY = (blocks_t.c.conversation_id, blocks_t.c.seq, blocks_t.c.position, blocks_t.c.kind)
_INLINE_KEY = (messages_t.c.conversation_id, messages_t.c.seq, sa.literal_column("0"), INLINE_KIND)
_KEY_NAMES = ["conversation_id", "seq", "position", "kind"]


def _index_sqlite(conn: sa.Connection, ids: Sequence[str]) -> None:
    before = conn.execute(sa.select(sa.func.coalesce(sa.func.max(sa.literal_column("rowid")), 0))
                          .select_from(search_t)).scalar()
    conn.execute(search_t.insert().from_select(_KEY_NAMES, _pending_blocks(ids, *_KEY)))
    conn.execute(search_t.insert().from_select(_KEY_NAMES, _pending_texts(ids, *_INLINE_KEY)))
    conn.execute(_entries(sa.literal_column("search.rowid") > before, delete=False))


def _index_postgresql(conn: sa.Connection, ids: Sequence[str]) -> None:
    text = sa.literal_column(TEXT_SQL["postgresql"])
    conn.execute(search_t.insert().from_select([*_KEY_NAMES, "body"], _pending_blocks(ids, *_KEY, text)))
    conn.execute(search_t.insert().from_select([*_KEY_NAMES, "body"],
                                                _pending_texts(ids, *_INLINE_KEY, INLINE_TEXT)))


_TEXT_SOURCE = (blocks_t.c.kind, blocks_t.c.text, blocks_t.c.media_type, blocks_t.c.tool_name, blocks_t.c.call_id,
                blocks_t.c.blob_sha256, blocks_t.c.payload)


def _index_text(conn: sa.Connection, ids: Sequence[str]) -> None:
    """MariaDB/MySQL: the text computed here from each block (``codec.block_text``), the
    blocks read a batch at a time in key order."""
    key = sa.tuple_(*_KEY[:3])
    query = _pending_blocks(ids, *_KEY[:3], *_TEXT_SOURCE).order_by(*_KEY[:3]).limit(5000)
    rows = conn.execute(query).all()
    while rows:
        found = [{"conversation_id": r[0], "seq": r[1], "position": r[2], "kind": r[3], "body": body}
                 for r in rows if (body := block_text(r[3], block_fields(r[3:], {})))]
        if found:
            conn.execute(search_t.insert(), found)
        rows = conn.execute(query.where(key > sa.tuple_(*rows[-1][:3]))).all()
    m = messages_t.c
    texts = _pending_texts(ids, m.conversation_id, m.seq, m.text, m.call_id, m.tool_name).where(
        sa.or_(m.text != "", m.tool_name.is_not(None))).order_by(m.conversation_id, m.seq).limit(5000)
    rows = conn.execute(texts).all()
    while rows:
        found = [{"conversation_id": cid, "seq": seq, "position": 0, "kind": kind, "body": body}
                 for cid, seq, text, call_id, name in rows
                 if (body := block_text(kind := "text" if call_id is None else "tool_result",
                                        {"text": text} if call_id is None else {"output": text, "name": name}))]
        if found:
            conn.execute(search_t.insert(), found)
        rows = conn.execute(texts.where(sa.tuple_(messages_t.c.conversation_id, messages_t.c.seq)
                                        > sa.tuple_(*rows[-1][:2]))).all()


_INDEXERS = {"sqlite": _index_sqlite, "postgresql": _index_postgresql}


def _entries(*where: Any, delete: bool) -> sa.Insert:
    """SQLite: add (or remove) the FTS5 entries of the ``search`` rows matching ``where``."""
    text = sa.literal_column(TEXT_SQL["sqlite"])
    columns = [sa.literal_column("search.rowid"), text]
    if delete:  # FTS5's delete command: removes the entry with this rowid and exactly this text
        columns.insert(0, sa.literal_column("'delete'"))
    selected = sa.select(*columns).select_from(search_t.join(messages_t, ON_MESSAGE).outerjoin(blocks_t, ON_BLOCK)
                                               ).where(*where)
    names = ["search_fts", "rowid", "body"] if delete else ["rowid", "body"]
    return sa.insert(FTS).from_select(names, selected)


def forget(conn: sa.Connection, *where: Any) -> None:
    """Remove the index entries of the ``search`` rows matching ``where``, before they and their
    blocks are deleted."""
    if conn.dialect.name == "sqlite":
        conn.execute(_entries(*where, delete=True))
