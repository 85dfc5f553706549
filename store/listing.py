"""A namespace's conversations as a list: tags, later changes to a conversation's own fields,
and pages filtered and sorted in the database, continued by an opaque keyset cursor.

A page is one statement over the ``conversations`` table (its (namespace, created_at, id) or
(namespace, updated_at, id) index gives the order) plus one for the page's tags: listing never
reads messages, so a page costs the same however long the conversations are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from .errors import InputError
from .limits import check_limit, check_source_format, check_text
from . import usage
from .model import Page
from .operations import (
    ConversationInfo, Scope, conversations, decode_key, encode_key, info, locked_count, now, require,
    stored_time, valid_id,
)
from .schema import ConversationTagRow, Timestamp, escape

tags_t = ConversationTagRow.__table__
c = conversations
UNSET: Any = object()
"""``update``'s default: the field stays as it is."""
MAX_TAGS = 64
TAG_CHARS = 255
Order = Literal["created_at", "updated_at"]


def check_tags(tags: Iterable[str] | None) -> list[str]:
    """A conversation's tags: strings of 1-255 characters, at most 64, each once (in order)."""
    if tags is None:
        return []
    if isinstance(tags, (str, bytes)) or not isinstance(tags, Iterable):
        raise InputError(f"tags must be a list of strings, got {tags!r}")
    unique = list(dict.fromkeys(tags))
    for tag in unique:
        if not isinstance(tag, str) or not tag:
            raise InputError(f"a tag must be a non-empty string, got {tag!r}")
        check_text("tag", tag, TAG_CHARS)
    if len(unique) > MAX_TAGS:
        raise InputError(f"at most {MAX_TAGS} tags a conversation, got {len(unique)}")
    return unique


def set_tags(conn: sa.Connection, conversation_id: str, tags: Sequence[str], *, replace: bool) -> None:
    if replace:
        conn.execute(tags_t.delete().where(tags_t.c.conversation_id == conversation_id))
    if tags:
        conn.execute(tags_t.insert(), [{"conversation_id": conversation_id, "tag": t} for t in tags])


TAGS_CHUNK = 1000
"""Conversations whose tags one statement reads: a page without a limit can hold more ids than
a statement takes parameters (SQLite 32,766, PostgreSQL 65,535)."""


def tags_of(conn: sa.Connection, ids: Sequence[str]) -> dict[str, list[str]]:
    """The tags of these conversations (one statement per ``TAGS_CHUNK`` of them), sorted."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(ids), TAGS_CHUNK):
        query = sa.select(tags_t.c.conversation_id, tags_t.c.tag).where(
            tags_t.c.conversation_id.in_(ids[start:start + TAGS_CHUNK])).order_by(tags_t.c.conversation_id,
                                                                                 tags_t.c.tag)
        for cid, tag in conn.execute(query):
            found.setdefault(str(cid), []).append(tag)
    return found


def describe(conn: sa.Connection, scope: Scope, conversation_id: str) -> ConversationInfo:
    """The conversation's row with its tags and token usage (four statements)."""
    found = require(conn, scope, conversation_id)
    return found.model_copy(update={"tags": tags_of(conn, [found.id]).get(found.id, []),
                                    "usage": usage.of_conversation(conn, found.id)})


def update(conn: sa.Connection, scope: Scope, conversation_id: str, *, title: Any = UNSET, metadata: Any = UNSET,
           tags: Any = UNSET, expires_at: Any = UNSET) -> ConversationInfo:
    """Change the given fields (the others stay), the row locked meanwhile; it counts as a write."""
    locked_count(conn, scope, conversation_id)
    values: dict[str, Any] = {"updated_at": now()}
    if title is not UNSET:
        values["title"] = title
    if metadata is not UNSET:
        values["metadata"] = metadata or None
    if expires_at is not UNSET:
        values["expires_at"] = expires_at
    conn.execute(c.update().where(c.c.id == conversation_id).values(values))
    if tags is not UNSET:
        set_tags(conn, conversation_id, tags, replace=True)
    return describe(conn, scope, conversation_id)


# --- listing ---------------------------------------------------------------------

_CURSOR_VERSION = 1


def _encode(order: str, descending: bool, row: Mapping[str, Any]) -> str:
    return encode_key([_CURSOR_VERSION, order, descending, row[order].isoformat(), str(row["id"])])


def _decode(cursor: str | None, order: str, descending: bool) -> tuple[datetime, str] | None:
    def accept(key: list[Any]) -> tuple[datetime, str] | None:
        version, o, d, at, cid = key
        if version == _CURSOR_VERSION and (o, d) == (order, descending) and valid_id(cid):
            return datetime.fromisoformat(at), cid
        return None

    return None if cursor is None else decode_key(cursor, accept, "filters and order")


def metadata_clause(dialect: str, index: int, key: str, value: Any) -> sa.ColumnElement[bool]:
    """Top-level ``key`` of the conversation's metadata equals ``value`` (a string, integer
    or boolean), with its JSON type: 1 does not match "1", nor true 1."""
    if not isinstance(key, str) or not key or '"' in key or "\\" in key:
        raise InputError("metadata filter keys must be non-empty strings without quotes or backslashes, "
                         f"got {key!r}")
    if isinstance(value, bool):
        kind = ("true" if value else "false", "BOOLEAN")
    elif isinstance(value, int) and -2**63 <= value < 2**63:
        kind = ("integer", "INTEGER")
    elif isinstance(value, str):
        kind = ("text", "STRING")
    else:
        raise InputError(f"metadata filter values must be strings, integers or booleans, got {value!r} "
                         f"for {key!r}")
    column, stored = c.c.metadata, escape(value)
    if dialect == "postgresql":
        # bound as written: the engine's serializer (schema.dumps) escapes it as the column's values were
        return column.op("@>")(sa.bindparam(f"meta{index}", {key: value}, type_=postgresql.JSONB))
    path = sa.bindparam(f"path{index}", "$." + json.dumps(key, ensure_ascii=False))
    param = sa.bindparam(f"meta{index}", stored)
    if dialect == "sqlite":
        same = sa.func.json_extract(column, path) == param if kind[0] in ("text", "integer") else sa.true()
        return sa.and_(sa.func.json_type(column, path) == kind[0], same)
    extracted = sa.func.json_extract(column, path)  # MariaDB/MySQL
    value_of = sa.func.json_unquote(extracted) if kind[1] == "STRING" else extracted
    same = value_of == (param if kind[1] != "BOOLEAN" else ("true" if value else "false"))
    return sa.and_(sa.func.json_type(extracted) == kind[1], same)


def list_page(conn: sa.Connection, scope: Scope, *, key: str | None = None, tags: Iterable[str] | None = None,
              metadata: Mapping[str, Any] | None = None, source_format: str | None = None,
              created_after: datetime | None = None, created_before: datetime | None = None,
              updated_after: datetime | None = None, updated_before: datetime | None = None,
              order_by: Order = "created_at", descending: bool = True, limit: int | None = None,
              cursor: str | None = None) -> Page[ConversationInfo]:
    """One page of the namespace's conversations matching every filter (see
    ``ConversationStore.list_conversations``): two statements."""
    check_limit(limit)
    if order_by not in ("created_at", "updated_at"):
        raise InputError(f"order_by must be created_at or updated_at, got {order_by!r}")
    after = _decode(cursor, order_by, descending)
    if limit == 0:
        return Page()
    where: list[Any] = [c.c.namespace == scope.namespace]
    if key is not None:
        where.append(c.c.key == key)
    if source_format is not None:
        check_source_format(source_format)
        where.append(c.c.source_format == source_format)
    for i, tag in enumerate(check_tags(tags)):
        where.append(sa.exists().where(tags_t.c.conversation_id == c.c.id,
                                       tags_t.c.tag == sa.bindparam(f"tag{i}", tag, type_=tags_t.c.tag.type)))
    for i, (name, value) in enumerate((metadata or {}).items()):
        where.append(metadata_clause(conn.dialect.name, i, name, value))
    for column, low, high, what in ((c.c.created_at, created_after, created_before, "created"),
                                    (c.c.updated_at, updated_after, updated_before, "updated")):
        if (bound := stored_time(low, f"{what}_after")) is not None:
            where.append(column >= bound)
        if (bound := stored_time(high, f"{what}_before")) is not None:
            where.append(column < bound)
    sort = c.c[order_by]
    if after is not None:
        at = sa.bindparam("after_at", after[0], type_=Timestamp)
        cid = sa.bindparam("after_id", after[1], type_=c.c.id.type)
        row, bound = sa.tuple_(sort, c.c.id), sa.tuple_(at, cid)
        # The leading column alone as well: a range every backend's planner can use.
        where += [sort <= at, row < bound] if descending else [sort >= at, row > bound]
    order = (sort.desc(), c.c.id.desc()) if descending else (sort, c.c.id)
    query = sa.select(c).where(*where).order_by(*order)
    rows = conn.execute(query.limit(limit + 1) if limit is not None else query).mappings().all()
    more = limit is not None and len(rows) > limit
    rows = rows[:limit] if more else rows
    found = tags_of(conn, [str(r["id"]) for r in rows])
    infos = [info(r).model_copy(update={"tags": found.get(str(r["id"]), [])}) for r in rows]
    return Page(infos, next_cursor=_encode(order_by, descending, rows[-1]) if more else None)

