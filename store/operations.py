"""What the store does on one connection: the SQL and the row mapping.

Every function here takes a synchronous SQLAlchemy ``Connection`` inside a
transaction the caller owns. :class:`~store.ConversationStore` calls them
directly; :class:`~store.AsyncConversationStore` calls the very same functions
through ``AsyncConnection.run_sync``, so both stores share one implementation
and differ only in how they do I/O.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple, TypeVar

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict

from . import fulltext, holes, rows
from .chains import END as _END, Chain, chain_for, chain_of, within
from .codec import blob_refs, from_utc
from .db import ONE_STATEMENT, SnapshotNeeded
from .errors import ConversationNotFoundError, InputError, SharedHistoryError
from .fetch import messages as _messages, readable
from .formats import FORMATS
from .lean import Writable
from .limits import Limits, check_count
from .prepared import Prepared
from .model import Conversation, ConversationUsage, Message
from .schema import BlobRow, BlockRow, ConversationRow, ConversationTagRow, MessageRow, SearchRow, ToolCallRow

T = TypeVar("T")
CHUNK = 5000
"""Messages per insert round within one write transaction."""

conversations = ConversationRow.__table__
messages_t = MessageRow.__table__
blocks_t = BlockRow.__table__
search_t = SearchRow.__table__
blobs_t = BlobRow.__table__
tool_calls_t = ToolCallRow.__table__
tags_t = ConversationTagRow.__table__


@dataclass(frozen=True)
class Scope:
    """Who is asking: the tenant every read and write is confined to, and its limits."""

    namespace: str
    limits: Limits


class ConversationInfo(BaseModel):
    """A conversation without its messages, as ``list_conversations`` returns it."""

    model_config = ConfigDict(ser_json_inf_nan="constants")  # NaN metadata stays NaN in mode="json"

    id: str
    namespace: str
    key: str | None
    title: str | None
    source_format: str | None
    message_count: int
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    tags: list[str] = []
    """Filled by ``info`` and ``list_conversations``."""
    expires_at: datetime | None = None
    """When ``prune`` may delete it (UTC), if ever."""
    usage: ConversationUsage | None = None
    """Its token usage, in total and per model: filled by ``info`` (None in listings)."""
    parent_id: str | None = None
    """A fork's parent, whose first ``fork_seq`` messages it shares (see ``fork``)."""
    fork_seq: int | None = None


def encode_key(key: list[Any]) -> str:
    """A page cursor holding a sort key: URL-safe base64 of JSON (opaque to callers)."""
    text = json.dumps(key, separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(text.encode("ascii")).rstrip(b"=").decode("ascii")


def decode_key(cursor: Any, accept: Callable[[list[Any]], T | None], same: str) -> T:
    """The sort key a cursor of :func:`encode_key` holds, as ``accept`` takes it (None, or a
    ValueError or TypeError: not a key of its kind); :class:`InputError` for anything else."""
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
        key = json.loads(raw)
        if isinstance(key, list) and (found := accept(key)) is not None:
            return found
    except (TypeError, ValueError, UnicodeError, RecursionError):
        pass
    shown = repr(cursor[:60] + "..." if isinstance(cursor, str) and len(cursor) > 60 else cursor)
    raise InputError(f"invalid cursor {shown}: pass a page's next_cursor as it is, with the same {same}")


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def stored_time(value: datetime | None, what: str) -> datetime | None:
    """A time as the tables store it: naive UTC (a naive value is taken as UTC)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InputError(f"{what} must be a datetime, got {value!r}")
    return value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value


def valid_id(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


# --- conversations -----------------------------------------------------------------


def new_conversation(conn: sa.Connection, scope: Scope, conversation_id: str, *, key: str | None = None,
                     title: str | None = None, source_format: str | None = None,
                     metadata: dict[str, Any] | None = None, message_count: int = 0,
                     tags: Sequence[str] = (), expires_at: datetime | None = None, parent_id: str | None = None,
                     fork_seq: int | None = None) -> None:
    stamp = now()
    conn.execute(conversations.insert(), {
        "id": conversation_id, "namespace": scope.namespace, "key": key, "title": title,
        "source_format": source_format, "message_count": message_count, "created_at": stamp, "updated_at": stamp,
        "metadata": metadata or None, "expires_at": expires_at, "parent_id": parent_id, "fork_seq": fork_seq,
        "index_from": 0 if message_count and parent_id is None else None,  # a fork's own messages: none yet
    })
    if tags:
        conn.execute(tags_t.insert(), [{"conversation_id": conversation_id, "tag": t} for t in tags])


def by_key(conn: sa.Connection, scope: Scope, key: str) -> str | None:
    c = conversations
    return conn.execute(
        sa.select(c.c.id).where(c.c.namespace == scope.namespace, c.c.key == key)
    ).scalar_one_or_none()


# The conversation named by the ``cid`` and ``ns`` parameters: every hot statement's filter.
_OWNED = (conversations.c.id == sa.bindparam("cid"), conversations.c.namespace == sa.bindparam("ns"))

_CONVERSATION = Prepared(sa.select(conversations).where(*_OWNED))


def require(conn: sa.Connection, scope: Scope, conversation_id: str) -> ConversationInfo:
    rows = _CONVERSATION.run(conn, cid=conversation_id, ns=scope.namespace) if valid_id(conversation_id) else []
    if not rows:
        raise ConversationNotFoundError(conversation_id, scope.namespace)
    return info(dict(zip(conversations.c.keys(), rows[0])))


def locked_count(conn: sa.Connection, scope: Scope, conversation_id: str) -> int:
    """The conversation's message count, its row locked until the transaction ends
    (so concurrent appends to one conversation take turns)."""
    return _locked_row(conn, scope, conversation_id)[0]


def _locked_row(conn: sa.Connection, scope: Scope, conversation_id: str) -> list[Any]:
    """The conversation's message count and ``index_from``, its row locked (see :func:`locked_count`)."""
    rows = _LOCKED.run(conn, cid=conversation_id, ns=scope.namespace) if valid_id(conversation_id) else []
    if not rows:
        raise ConversationNotFoundError(conversation_id, scope.namespace)
    return rows[0]


_LOCKED = Prepared(sa.select(conversations.c.message_count, conversations.c.index_from).where(*_OWNED)
                   .with_for_update())

# The count and the time alone: an UPDATE naming ``index_from`` rewrites its index entry even where
# the value stays (SQLite: a WAL frame an append, a tenth of its commit). It is set apart, once.
_RESERVE_STATEMENT = conversations.update().where(*_OWNED).values(
    message_count=conversations.c.message_count + sa.bindparam("n"), updated_at=sa.bindparam("now"))
_RESERVE = Prepared(_RESERVE_STATEMENT)
_RESERVE_RETURNING = Prepared(_RESERVE_STATEMENT.returning(conversations.c.message_count, conversations.c.index_from))
_INDEX_FROM = Prepared(conversations.update().where(conversations.c.id == sa.bindparam("cid"))
                       .values(index_from=sa.bindparam("first")))


def reserve(conn: sa.Connection, scope: Scope, conversation_id: str, n: int) -> int:
    """Claim the next ``n`` sequence numbers of a conversation and return the first.

    The conversation's row stays locked until the transaction ends, so concurrent
    appends take turns. Where UPDATE has RETURNING (SQLite, PostgreSQL) this is one
    statement (two when the search index has caught up: ``index_from`` then marks where
    it is behind from): on the agent-memory path every round trip counts."""
    if not valid_id(conversation_id):
        raise ConversationNotFoundError(conversation_id, scope.namespace)
    params = {"cid": conversation_id, "ns": scope.namespace, "n": n, "now": now()}
    if conn.dialect.update_returning:
        rows = _RESERVE_RETURNING.run(conn, **params)
        if not rows:
            raise ConversationNotFoundError(conversation_id, scope.namespace)
        first, index_from = rows[0][0] - n, rows[0][1]
    else:
        first, index_from = _locked_row(conn, scope, conversation_id)
        _RESERVE.run(conn, **params)
    if index_from is None:
        _INDEX_FROM.run(conn, cid=conversation_id, first=first)
    return first


def delete(conn: sa.Connection, scope: Scope, conversation_id: str) -> None:
    locked_count(conn, scope, conversation_id)  # no fork can begin meanwhile
    refuse_shared(conn, conversation_id, 0, "delete")
    delete_conversations(conn, [conversation_id])


_SHARING = Prepared(sa.select(conversations.c.id, conversations.c.fork_seq).where(
    conversations.c.parent_id == sa.bindparam("cid"), conversations.c.fork_seq > sa.bindparam("keep"))
    .order_by(conversations.c.id))


def refuse_shared(conn: sa.Connection, conversation_id: str, keep: int, doing: str) -> None:
    """Refuse a write that would take away messages from ``keep`` on that forks share."""
    if forks := _SHARING.run(conn, cid=conversation_id, keep=keep):
        names = ", ".join(f"{cid} (its first {n})" for cid, n in forks[:3]) + (" and more" if len(forks) > 3 else "")
        raise SharedHistoryError(
            f"cannot {doing} messages {keep}.. of conversation {conversation_id}: forks share them: {names}; "
            "delete those forks first, or replace their history so that they hold their own")


def delete_conversations(conn: sa.Connection, ids: Sequence[str]) -> None:
    """These conversations and everything stored with them (their rows already checked or locked,
    none shared by a fork that stays)."""
    c = conversations
    # Forks that shared nothing (or go too) let go of their parent: nothing else may refer to it.
    conn.execute(c.update().where(c.c.parent_id.in_(ids), sa.or_(c.c.fork_seq == 0, c.c.id.in_(ids)))
                 .values(parent_id=None, fork_seq=None))
    fulltext.forget(conn, search_t.c.conversation_id.in_(ids))
    # Children first: MySQL checks foreign keys row by row, whatever the cascade order.
    for table in (tool_calls_t, search_t, blocks_t, blobs_t, messages_t, tags_t):
        conn.execute(table.delete().where(table.c.conversation_id.in_(ids)))
    conn.execute(conversations.delete().where(conversations.c.id.in_(ids)))


def pop(conn: sa.Connection, scope: Scope, conversation_id: str, n: int) -> list[Message]:
    """Remove the last ``n`` messages and return them (oldest first)."""
    check_count("n", n)
    count = locked_count(conn, scope, conversation_id)
    keep = max(count - n, 0)
    popped = _messages(conn, conversation_id, keep, windowed=True, chain=chain_of(conn, conversation_id)) \
        if keep < count else []
    truncate(conn, scope, conversation_id, keep)
    return popped


def pop_item(conn: sa.Connection, scope: Scope, conversation_id: str,
             split: Callable[[list[Message]], tuple[Any, list[Message]]]) -> Any:
    """Pop stored messages until one gives an element: ``split(popped)`` returns the newest
    element a message gives in the caller's format and the messages holding the others,
    which go back at the end, in this same transaction. None when nothing gives one."""
    while popped := pop(conn, scope, conversation_id, 1):
        item, rest = split(popped)
        if item is not None:
            if rest:
                append(conn, scope, conversation_id, rest, progress=None)
            return item
    return None


def replace(conn: sa.Connection, scope: Scope, conversation_id: str, msgs: Sequence[Writable], *,
            progress: Callable[[int], None] | None) -> None:
    """The conversation's messages become ``msgs`` (its id, key and metadata stay)."""
    truncate(conn, scope, conversation_id, 0)
    reserve(conn, scope, conversation_id, len(msgs))
    insert(conn, scope, conversation_id, msgs, first_seq=0, fresh=False, progress=progress)


def truncate(conn: sa.Connection, scope: Scope, conversation_id: str, keep: int) -> int:
    """Remove every message from seq ``keep`` on; returns how many went.

    Calls whose results go become pending again; results whose calls go lose
    their link (there is nothing left to link them to)."""
    check_count("keep", keep)  # not "from the end": a negative keep would silently empty the conversation
    count = locked_count(conn, scope, conversation_id)
    keep = min(keep, count)
    if keep == count:
        return 0
    refuse_shared(conn, conversation_id, keep, "remove")
    t, cid = tool_calls_t, conversation_id
    conn.execute(t.delete().where(t.c.conversation_id == cid, t.c.call_seq >= keep))
    conn.execute(
        t.update().where(t.c.conversation_id == cid, t.c.result_seq >= keep)
        .values(status="pending", result_seq=None, result_position=None)
    )
    going = (search_t.c.conversation_id == cid, search_t.c.seq >= keep)
    fulltext.forget(conn, *going)
    conn.execute(search_t.delete().where(*going))
    conn.execute(blocks_t.delete().where(blocks_t.c.conversation_id == cid, blocks_t.c.seq >= keep))
    conn.execute(messages_t.delete().where(messages_t.c.conversation_id == cid, messages_t.c.seq >= keep))
    used = sa.select(blocks_t.c.blob_sha256).where(
        blocks_t.c.conversation_id == cid, blocks_t.c.blob_sha256.is_not(None))
    if keep == 0:  # blobs referenced from tool-result payloads only are gone too
        conn.execute(blobs_t.delete().where(blobs_t.c.conversation_id == cid))
    else:
        results = conn.execute(sa.select(blocks_t.c.payload).where(
            blocks_t.c.conversation_id == cid, blocks_t.c.kind == "tool_result")).scalars()
        nested = {ref for payload in results if payload for ref in blob_refs(payload)}
        conn.execute(blobs_t.delete().where(
            blobs_t.c.conversation_id == cid, blobs_t.c.sha256.not_in(used),
            *([blobs_t.c.sha256.not_in(nested)] if nested else [])))
    fork_seq, index_from = conversations.c.fork_seq, conversations.c.index_from
    conn.execute(conversations.update().where(conversations.c.id == cid).values(
        message_count=keep, updated_at=now(),
        fork_seq=sa.case((fork_seq > keep, keep), else_=fork_seq),  # a fork's shared prefix shrinks with it
        index_from=sa.case((index_from >= keep, None), else_=index_from)))  # nothing left from there on
    return count - keep


# --- writing messages --------------------------------------------------------------


def save(conn: sa.Connection, scope: Scope, conversation_id: str, msgs: Sequence[Writable], *,
         progress: Callable[[int], None] | None, **fields: Any) -> None:
    """A new conversation holding ``msgs``; ``fields`` are its own (see ``new_conversation``)."""
    new_conversation(conn, scope, conversation_id, message_count=len(msgs), **fields)
    insert(conn, scope, conversation_id, msgs, first_seq=0, fresh=True, progress=progress)


def save_many(conn: sa.Connection, scope: Scope, planned: Sequence[tuple[str, Sequence[Writable], dict[str, Any]]], *,
              progress: Callable[[int], None] | None) -> None:
    """Several new conversations, ``(id, msgs, fields)`` each, in the caller's one transaction."""
    for conversation_id, msgs, fields in planned:
        save(conn, scope, conversation_id, msgs, progress=progress, **fields)


def append(conn: sa.Connection, scope: Scope, conversation_id: str, msgs: Sequence[Writable], *,
           progress: Callable[[int], None] | None) -> None:
    """``msgs`` at the end of the conversation, its row locked meanwhile."""
    first = reserve(conn, scope, conversation_id, len(msgs))
    insert(conn, scope, conversation_id, msgs, first_seq=first, fresh=False, progress=progress)


def save_stream(conn: sa.Connection, scope: Scope, conversation_id: str, chunks: Iterable[Sequence[Message]], *,
                progress: Callable[[int], None] | None, **fields: Any) -> None:
    """A new conversation holding the messages of ``chunks``, read one chunk at a time."""
    new_conversation(conn, scope, conversation_id, **fields)
    total = _insert_stream(conn, scope, conversation_id, chunks, first_seq=0, fresh=True, progress=progress)
    reserve(conn, scope, conversation_id, total)


def append_stream(conn: sa.Connection, scope: Scope, conversation_id: str, chunks: Iterable[Sequence[Message]],
                  *, progress: Callable[[int], None] | None) -> None:
    first = reserve(conn, scope, conversation_id, 0)  # locks the row; the count follows at the end
    total = _insert_stream(conn, scope, conversation_id, chunks, first_seq=first, fresh=False, progress=progress)
    reserve(conn, scope, conversation_id, total)


def _insert_stream(conn: sa.Connection, scope: Scope, conversation_id: str, chunks: Iterable[Sequence[Message]],
                   *, first_seq: int, fresh: bool, progress: Callable[[int], None] | None) -> int:
    done = 0
    for chunk in chunks:
        insert(conn, scope, conversation_id, chunk, first_seq=first_seq + done, fresh=fresh and done == 0,
               progress=progress, index_base=done)
        done += len(chunk)
    return done


def insert(conn: sa.Connection, scope: Scope, conversation_id: str, msgs: Sequence[Writable], *,
           first_seq: int, fresh: bool, progress: Callable[[int], None] | None = None, index_base: int = 0) -> None:
    """Insert at ``first_seq`` (reserved by the caller) in chunks (bounded memory, progress
    to report), all in the caller's transaction. Errors name message ``index_base + i``."""
    rows.insert(conn, scope.limits, conversation_id, msgs, first_seq=first_seq, fresh=fresh, index_base=index_base,
                chunk=CHUNK, progress=progress)


# --- reading -----------------------------------------------------------------------


_WINDOW = holes.EARLIEST
_CONVERSATION_AND_WINDOW = Prepared(sa.select(conversations, _WINDOW).where(*_OWNED))


def get_conversation(conn: sa.Connection, scope: Scope, conversation_id: str, last: int | None) -> Conversation:
    """At most four statements, whatever the length: the conversation's row with the
    window's start, its messages, their blocks (a key range scan each), and their binary payloads."""
    found, start = locate(conn, scope, conversation_id, last)
    chain = chain_for(conn, found.id, found.parent_id)
    msgs = _messages(conn, conversation_id, start, windowed=last is not None, chain=chain)
    return Conversation(id=found.id, namespace=found.namespace, title=found.title,
                        created_at=found.created_at, metadata=found.metadata or {}, messages=msgs)


def windowed(last: int | None, target: str) -> bool:
    """Whether a load may be one statement (``holes.window``): a window in a format that keeps
    documents. The stores run only those as a lookup (``_lookup``): a try in autocommit first."""
    return last is not None and target in holes.PER_MESSAGE


def load(conn: sa.Connection, scope: Scope, conversation_id: str, last: int | None,
         target: str) -> tuple[list[Any] | None, list[Message]]:
    """What a load in ``target`` needs: the items themselves when every message in range keeps
    its document in ``target`` (``store.docs``: two statements, three when one leaves its text
    out), else the canonical messages. A window (``last``) in a format its documents are in is one
    statement (``holes.window``); run as one (``db.ONE_STATEMENT``), a read that needs more
    raises ``db.SnapshotNeeded``."""
    seen = holes.window(conn, scope.namespace, conversation_id, last, target) \
        if windowed(last, target) and valid_id(conversation_id) else None
    if seen is not None and seen.items is not None:
        return seen.items, []
    if conn.get_execution_options().get(ONE_STATEMENT):
        raise SnapshotNeeded
    if seen is not None:  # its row as this snapshot holds it: no second look
        found = Located(str(uuid.UUID(conversation_id)), seen.source_format, seen.message_count, None, None)
        return _read_range(conn, found, target, seen.start, _END, windowed=True)
    found, start = locate_range(conn, scope, conversation_id, last)
    return _read_range(conn, found, target, start, _END, windowed=last is not None)


class Located(NamedTuple):
    """What a read of a conversation's messages needs of its row (``ConversationInfo`` has
    these too: building it, dates and metadata, is a tenth of a recent window's load)."""

    id: str
    source_format: str | None
    message_count: int
    parent_id: str | None
    fork_seq: int | None


_LOCATED_AND_WINDOW = Prepared(sa.select(
    conversations.c.id, conversations.c.source_format, conversations.c.message_count, conversations.c.parent_id,
    conversations.c.fork_seq, _WINDOW).where(*_OWNED))


def locate_range(conn: sa.Connection, scope: Scope, conversation_id: str, last: int | None) -> tuple[Located, int]:
    """``locate``, with only what a read of the messages needs."""
    *row, window = _located_row(conn, _LOCATED_AND_WINDOW, scope, conversation_id, last)
    cid, source_format, count, parent, fork_seq = row
    found = Located(str(cid), source_format, count, None if parent is None else str(parent), fork_seq)
    return found, _window_start(conn, found, last, window)


def _read_range(conn: sa.Connection, found: ConversationInfo | Located, target: str, start: int, stop: int,
        windowed: bool) -> tuple[list[Any] | None, list[Writable]]:
    """The messages with ``start <= seq < stop``: their stored documents in ``target`` parsed
    when each has one, else the messages (plain ones as ``lean.Plain`` where ``target``'s writer
    takes them)."""
    chain = chain_for(conn, found.id, found.parent_id)
    texts = holes.stored(conn, chain, start, stop, target, found.source_format, found.message_count)
    if texts is not None:
        return holes.parse(texts), []
    read = readable if FORMATS[target].takes_plain else _messages
    return None, read(conn, found.id, start, windowed=windowed, stop=stop, chain=chain)


def locate(conn: sa.Connection, scope: Scope, conversation_id: str,
           last: int | None) -> tuple[ConversationInfo, int]:
    """The conversation, and the seq its window of the ``last`` messages starts at (one statement;
    a fork whose window reaches into the prefix it shares: two more, and one per segment)."""
    *row, window = _located_row(conn, _CONVERSATION_AND_WINDOW, scope, conversation_id, last)
    found = info(dict(zip(conversations.c.keys(), row)))
    return found, _window_start(conn, found, last, window)


def _located_row(conn: sa.Connection, statement: Prepared, scope: Scope, conversation_id: str,
                 last: int | None) -> list[Any]:
    if last is not None:
        check_count("last", last)
    rows = statement.run(conn, cid=conversation_id, ns=scope.namespace, last=last or 0) \
        if valid_id(conversation_id) else []
    if not rows:
        raise ConversationNotFoundError(conversation_id, scope.namespace)
    return rows[0]


def _window_start(conn: sa.Connection, found: ConversationInfo | Located, last: int | None, window: int | None) -> int:
    """Where the window of the ``last`` messages starts (``window``: as the row's statement found it)."""
    first = found.message_count - (last or 0)
    if last and found.parent_id is not None and first < (found.fork_seq or 0):  # reaches into what it shares
        return _window(conn, chain_of(conn, found.id), first)
    return 0 if last is None else found.message_count if last == 0 else window or 0


def _window(conn: sa.Connection, chain: Chain, first: int) -> int:
    """Where a fork's window from ``first`` starts, its shared prefix included (per segment)."""
    m, starts = messages_t, [first]
    for owner, lo, hi in within(chain, first):
        starts.append(conn.execute(sa.select(sa.func.min(m.c.window_start)).where(
            m.c.conversation_id == owner, m.c.seq >= lo, m.c.seq < hi)).scalar() or first)
    return min(starts)


def messages_between(conn: sa.Connection, scope: Scope, conversation_id: str, start: int, stop: int) -> list[Message]:
    """The canonical messages with ``start <= seq < stop``."""
    found = require(conn, scope, conversation_id)
    return _messages(conn, conversation_id, start, windowed=True, stop=stop,
                     chain=chain_for(conn, found.id, found.parent_id))


def part(conn: sa.Connection, scope: Scope, conversation_id: str, start: int, stop: int,
         target: str) -> tuple[list[Any] | None, list[Message]]:
    """A part of a streamed export in ``target``, as :func:`load` gives a whole conversation."""
    return _read_range(conn, require(conn, scope, conversation_id), target, start, stop, windowed=True)




def info(row: Any) -> ConversationInfo:
    return ConversationInfo(
        id=row["id"], namespace=row["namespace"], key=row["key"], title=row["title"],
        source_format=row["source_format"],
        message_count=row["message_count"], created_at=from_utc(row["created_at"], 0),
        updated_at=from_utc(row["updated_at"], 0),
        metadata=row["metadata"] or {}, expires_at=from_utc(row.get("expires_at"), 0),
        parent_id=None if row.get("parent_id") is None else str(row["parent_id"]), fork_seq=row.get("fork_seq"),
    )
