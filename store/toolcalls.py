"""Tool calls by id, name or status: one statement per page, keyset-paged.

The page is chosen on the ``tool_calls`` link table (its index on the call id, or a
conversation's key range) and only its rows are joined to the blocks and messages holding
the call and its result.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import sqlalchemy as sa

from .codec import BLOCK_COLUMNS, block_from_row, blob_refs, call_arguments, from_utc
from .chains import Chain, chain_of
from .db import ONE_STATEMENT, SnapshotNeeded
from .errors import AmbiguousToolCallError, InputError, ToolCallNotFoundError
from .limits import check_limit
from .fetch import blobs as read_blobs
from .model import Page, ToolCallRecord, ToolStatus
from .prepared import Prepared
from .operations import (
    Scope, blocks_t, conversations, decode_key, encode_key, messages_t, tool_calls_t, valid_id,
)

def get_tool_call(conn: sa.Connection, scope: Scope, call_id: str, conversation_id: str | None) -> ToolCallRecord:
    # Two records tell whether the id is unique; only an ambiguous one reads where else it is.
    records = find_tool_calls(conn, scope, call_id=call_id, conversation_id=conversation_id, limit=2)
    if not records:
        where = f"in conversation {conversation_id!r}" if conversation_id else f"in namespace {scope.namespace!r}"
        raise ToolCallNotFoundError(call_id, where)
    if len(records) > 1:
        raise AmbiguousToolCallError(call_id, _conversations_with_call(conn, scope, call_id))
    return records[0]


def _conversations_with_call(conn: sa.Connection, scope: Scope, call_id: str) -> list[str]:
    t = tool_calls_t
    return list(conn.execute(
        sa.select(t.c.conversation_id).join(conversations, conversations.c.id == t.c.conversation_id)
        .where(conversations.c.namespace == scope.namespace, t.c.call_id == call_id)
        .order_by(t.c.conversation_id)
    ).scalars())


def _uses_blobs(block_row: Sequence[Any]) -> bool:  # a row in BLOCK_COLUMNS order
    return bool(block_row[5] or (block_row[0] == "tool_result" and block_row[6] and blob_refs(block_row[6])))


DEFAULT_PAGE = 100
"""Records a page of ``find_tool_calls`` holds unless the caller says otherwise."""


def find_tool_calls(conn: sa.Connection, scope: Scope, *, name: str | None = None,
                    status: ToolStatus | None = None, call_id: str | None = None,
                    conversation_id: str | None = None, limit: int | None = DEFAULT_PAGE,
                    cursor: str | None = None) -> Page[ToolCallRecord]:
    """The tool calls matching every given filter, one page of at most ``limit`` (None:
    all of them at once; 0: none), ordered by conversation, then by the message holding
    the call, then by call id. The page's ``next_cursor`` (None on the last page) asks for
    the records after its last one: keyset paging (not OFFSET) on that order, which is total
    (a call id is unique in its conversation), so the records that exist throughout come
    exactly once, whatever is written in between. The page is chosen on the link table and
    only its rows are read whole: memory is bounded by the page, not the namespace."""
    if status is not None and status not in ("pending", "answered", "error"):
        raise InputError(f"status must be pending, answered or error, got {status!r}")
    check_limit(limit)
    after = decode_cursor(cursor)
    if limit == 0 or (conversation_id is not None and not valid_id(conversation_id)):
        return Page()
    given = {"name": name, "status": status, "call_id": call_id, "conversation_id": conversation_id}
    filters = {k: v for k, v in given.items() if v is not None}
    params: dict[str, Any] = {"namespace": scope.namespace, **filters}
    if limit is not None:
        params["limit"] = limit + 1  # one row more than the page says whether another follows
    if after is not None:
        params.update(zip(_AFTER, after))
    query, names = _prepared_query(frozenset(filters), limit is not None, after is not None)
    rows = [dict(zip(names, row)) for row in query.run(conn, **params)]
    more = limit is not None and len(rows) > limit
    if more:
        rows = rows[:limit]
    shared = [i for i, r in enumerate(rows) if _in_shared_prefix(r)]
    if shared and conn.get_execution_options().get(ONE_STATEMENT):
        raise SnapshotNeeded
    rows = _with_shared_ends(conn, rows, shared) if shared else rows
    results = [_result_row(r) for r in rows]
    if conn.get_execution_options().get(ONE_STATEMENT) and any(_uses_blobs(b) for b in results):
        raise SnapshotNeeded
    blobs: dict[str, bytes] = {}
    for cid in {r.get("result_owner") or r["conversation_id"] for r in rows}:
        blobs.update(read_blobs(conn, cid, [b for r, b in zip(rows, results)
                                            if (r.get("result_owner") or r["conversation_id"]) == cid]))
    return Page([_record(r, b, blobs) for r, b in zip(rows, results)],
                next_cursor=encode_cursor(rows[-1]) if more else None)


_AFTER = ("after_conversation", "after_seq", "after_call")
_CURSOR_VERSION = 1


def encode_cursor(row: Any) -> str:
    """The cursor after ``row``: its sort key."""
    return encode_key([_CURSOR_VERSION, str(row["conversation_id"]), row["call_seq"], row["call_id"]])


def decode_cursor(cursor: str | None) -> tuple[str, int, str] | None:
    """The sort key a cursor of :func:`encode_cursor` holds; :class:`InputError` for anything else."""
    return None if cursor is None else decode_key(cursor, _after, "filters")


def _after(key: list[Any]) -> tuple[str, int, str] | None:
    version, cid, seq, call = key
    if (version == _CURSOR_VERSION and isinstance(cid, str) and type(seq) is int and 0 <= seq < 2**31
            and isinstance(call, str) and call == call.encode("utf-8").decode("utf-8")):  # no lone surrogates
        return str(uuid.UUID(cid)), seq, call
    return None


@lru_cache(maxsize=128)
def _prepared_query(filters: frozenset[str], limited: bool, after: bool) -> tuple[Prepared, tuple[str, ...]]:
    """:func:`_tool_call_query` run on the driver's cursor (``store.prepared``: a lookup by id is
    mostly the statement's own overhead), and its columns' names."""
    query = _tool_call_query(filters, limited, after)
    return Prepared(query), tuple(column.key for column in query.selected_columns)


def _tool_call_query(filters: frozenset[str], limited: bool, after: bool = False) -> sa.Select[Any]:
    """One statement per set of filters, built once (by :func:`_prepared_query`): looking a call up by id costs one
    index probe and no query building. Ordered by ``(conversation_id, call_seq, call_id)``,
    a total order on natural columns (no surrogate id), which the keyset of a cursor
    (``after``) continues. The page is chosen on the link table alone; only its rows are
    joined to their blocks and messages."""
    t: Any = tool_calls_t
    own = [t.c[column] == sa.bindparam(column) for column in sorted(filters)]
    if "call_id" in filters:
        # The calls with this id first, through its index, then their namespace: with the
        # namespace's conversations estimated at a handful (statistics older than a bulk
        # load), PostgreSQL would probe every conversation of the namespace for the id.
        t = sa.select(t).where(*own).cte("hits").prefix_with("MATERIALIZED", dialect="postgresql")
        own = []
    key = (t.c.conversation_id, t.c.call_seq, t.c.call_id)
    page = (
        sa.select(*key, t.c.name, t.c.status, t.c.call_position, t.c.result_seq, t.c.result_position)
        .join(conversations, conversations.c.id == t.c.conversation_id)
        .where(conversations.c.namespace == sa.bindparam("namespace"), *own)
        .order_by(*key)
    )
    if after:
        bound = [sa.bindparam(name, type_=column.type) for name, column in zip(_AFTER, key)]
        # The leading column alone as well: a range every backend's planner can use.
        page = page.where(key[0] >= bound[0], sa.tuple_(*key) > sa.tuple_(*bound))
    if limited:
        page = page.limit(sa.bindparam("limit"))
    p = page.subquery("page")
    cb, rb = blocks_t.alias("call_block"), blocks_t.alias("result_block")
    cm, rm = messages_t.alias("call_message"), messages_t.alias("result_message")
    return (
        sa.select(
            p.c.call_id, p.c.name, p.c.status, p.c.conversation_id, p.c.call_seq, p.c.result_seq,
            p.c.call_position, p.c.result_position, cm.c.seq.label("call_found"), rm.c.seq.label("result_found"),
            cb.c.payload.label("call_payload"), cb.c.text.label("call_text"), cm.c.created_at.label("call_at"),
            cm.c.utc_offset.label("call_offset"), rm.c.created_at.label("result_at"),
            rm.c.utc_offset.label("result_offset"),
            *(rb.c[name].label(f"r_{name}") for name in BLOCK_COLUMNS),
            *(rm.c[name].label(f"kept_{name}") for name in _KEPT),
        )
        .select_from(p)
        # Outer joins: a fork's call or result in the prefix it shares is its parent's row.
        .outerjoin(cb, sa.and_(cb.c.conversation_id == p.c.conversation_id, cb.c.seq == p.c.call_seq,
                               cb.c.position == p.c.call_position))
        .outerjoin(cm, sa.and_(cm.c.conversation_id == p.c.conversation_id, cm.c.seq == p.c.call_seq))
        .outerjoin(rb, sa.and_(rb.c.conversation_id == p.c.conversation_id, rb.c.seq == p.c.result_seq,
                               rb.c.position == p.c.result_position))
        .outerjoin(rm, sa.and_(rm.c.conversation_id == p.c.conversation_id, rm.c.seq == p.c.result_seq))
        .order_by(p.c.conversation_id, p.c.call_seq, p.c.call_id)
    )


def _in_shared_prefix(row: Any) -> bool:
    return row["call_found"] is None or (row["result_seq"] is not None and row["result_found"] is None)


_KEPT = ("text", "call_id", "tool_name")  # a result kept in its message row (revision 0020)


def _result_row(row: dict[str, Any]) -> tuple[Any, ...]:
    """A record's result as a block row (BLOCK_COLUMNS): its block's, or the one its message row keeps."""
    if row["r_kind"] is None and row["kept_call_id"] is not None:
        return ("tool_result", row["kept_text"], None, row["kept_tool_name"], row["kept_call_id"], None, None)
    return tuple(row[f"r_{name}"] for name in BLOCK_COLUMNS)


def _end(with_block: tuple[sa.Column[Any], ...]) -> sa.Select[Any]:
    """A block (or what its message row keeps of a result) and its message's time, by key."""
    b, m = blocks_t, messages_t
    return (sa.select(*with_block, m.c.created_at, m.c.utc_offset)
            .select_from(m.outerjoin(b, sa.and_(b.c.conversation_id == m.c.conversation_id, b.c.seq == m.c.seq,
                                                b.c.position == sa.bindparam("position"))))
            .where(m.c.conversation_id == sa.bindparam("cid"), m.c.seq == sa.bindparam("seq")))


_CALL_END = _end((blocks_t.c.payload, blocks_t.c.text))
_RESULT_END = _end((*(blocks_t.c[name] for name in BLOCK_COLUMNS), *(messages_t.c[name] for name in _KEPT)))


def _with_shared_ends(conn: sa.Connection, rows: Sequence[Any], shared: list[int]) -> list[Any]:
    """Fill in calls and results a fork shares with its ancestors, from the ancestor holding
    them (a statement per end: forks only)."""
    out: list[Any] = list(rows)
    chains: dict[str, Chain] = {}
    for i in shared:
        row = dict(rows[i])
        cid = str(row["conversation_id"])
        chain = chains.setdefault(cid, chain_of(conn, cid))
        if row["call_found"] is None:
            found = conn.execute(_CALL_END, {"cid": _owner(chain, row["call_seq"]), "seq": row["call_seq"],
                                             "position": row["call_position"]}).first()
            if found is not None:
                row.update(call_payload=found[0], call_text=found[1], call_at=found[2], call_offset=found[3])
        if row["result_seq"] is not None and row["result_found"] is None:
            owner = _owner(chain, row["result_seq"])
            found = conn.execute(_RESULT_END, {"cid": owner, "seq": row["result_seq"],
                                               "position": row["result_position"]}).first()
            if found is not None:
                row.update(zip((*(f"r_{name}" for name in BLOCK_COLUMNS), *(f"kept_{name}" for name in _KEPT)), found))
                row.update(result_at=found[-2], result_offset=found[-1], result_owner=owner)
        out[i] = row
    return out


def _owner(chain: Chain, seq: int) -> str:
    return next(owner for owner, lo, hi in chain if lo <= seq < hi)


def _record(row: Any, result: tuple[Any, ...], blobs: dict[str, bytes]) -> ToolCallRecord:
    arguments, arguments_raw = call_arguments(row["call_payload"], row["call_text"])
    block = block_from_row(result, blobs) if result[0] else None
    return ToolCallRecord(
        call_id=row["call_id"], name=row["name"], status=row["status"],
        arguments=arguments, arguments_raw=arguments_raw,
        result=block.output if block is not None else None,
        is_error=bool(block is not None and block.is_error),
        conversation_id=row["conversation_id"], call_position=row["call_seq"],
        result_position=row["result_seq"],
        call_created_at=from_utc(row["call_at"], row["call_offset"]),
        result_created_at=from_utc(row["result_at"], row["result_offset"]),
    )
