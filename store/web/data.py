"""What the viewer reads that the store's public API does not give: a read-only store,
tool-call counts of a page of conversations, the call/result links of a page of
messages, a range of messages, and one binary payload.

Everything here only reads, and the connections themselves refuse writes (see
:func:`open_store`), so no route can change the database even by mistake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from .. import creation, db, operations as ops
from ..chains import chain_of
from ..errors import SchemaOutdatedError
from ..model import Message
from ..repository import ConversationStore
from ..schema import BlobRow, ConversationRow, ToolCallRow

tool_calls_t = ToolCallRow.__table__
blobs_t = BlobRow.__table__
conversations_t = ConversationRow.__table__

# Each backend's way to make every transaction of a session read-only: the database then
# refuses any write the viewer might attempt, whatever the code path.
_READ_ONLY_SESSION = {
    "sqlite": "PRAGMA query_only = ON",
    "postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "mysql": "SET SESSION TRANSACTION READ ONLY",
    "mariadb": "SET SESSION TRANSACTION READ ONLY",
}


def open_store(url: str, namespace: str) -> ConversationStore:
    """The store at ``url`` for reading only: its connections refuse writes, and a
    database without convstore's tables (or at another schema revision) is refused with
    :class:`store.errors.SchemaOutdatedError` instead of being created or upgraded."""
    engine = db.create_engine(url)
    statement = _READ_ONLY_SESSION[engine.dialect.name]

    # Registered after the store's own connect hooks (WAL, session settings), so it runs last.
    @sa.event.listens_for(engine, "connect")
    def _read_only(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(statement)
        finally:
            cursor.close()
        if engine.dialect.name != "sqlite":  # SQLite's connections run without an implicit transaction
            dbapi_conn.commit()

    try:
        _require_head(engine)
        return ConversationStore(url, namespace=namespace, create=False, engine=engine)
    except Exception:
        engine.dispose()
        raise


def _require_head(engine: sa.Engine) -> None:
    """Refuse a database not at this convstore's schema revision before the store sees it:
    the store's own check of such a database takes its schema lock, which is a write
    (``BEGIN IMMEDIATE`` on SQLite) that a read-only connection fails with a driver error."""
    creation.refuse_missing_file(engine.url, create=False)  # connecting would create the file
    with db.database_errors(engine, "cannot open"):
        current = db.current_revision(engine)
    if current != db.head_revision():
        raise SchemaOutdatedError(engine.url.render_as_string(hide_password=True), current, db.head_revision())


def tool_call_counts(store: ConversationStore, conversation_ids: Sequence[str]) -> dict[str, int]:
    """How many tool calls each of these conversations holds, in one statement (a list
    page is at most a few dozen ids)."""
    if not conversation_ids:
        return {}
    query = (sa.select(tool_calls_t.c.conversation_id, sa.func.count())
             .where(tool_calls_t.c.conversation_id.in_(list(conversation_ids)))
             .group_by(tool_calls_t.c.conversation_id))
    with store._connect() as conn:  # the store's read: one snapshot, read-only on PostgreSQL
        return {str(cid): int(n) for cid, n in conn.execute(query)}


@dataclass(frozen=True)
class CallLink:
    """Where a tool call and its result are (message seqs) and the call's status."""

    call_id: str
    name: str
    status: str
    call_seq: int
    result_seq: int | None


@dataclass
class MessageRange:
    """Messages ``start <= seq < stop`` of a conversation, read in one snapshot with the
    conversation's length and the links of every call or result among them."""

    messages: list[Message]
    start: int
    count: int
    links: dict[str, CallLink]

    @property
    def stop(self) -> int:
        return self.start + len(self.messages)


def message_range(store: ConversationStore, conversation_id: str, start: int, stop: int) -> MessageRange:
    """The messages from ``start`` to ``stop`` (clamped to the conversation): a page of a
    long conversation, read by key range like the store's own streamed export. Raises
    :class:`store.errors.ConversationNotFoundError` for a conversation not in the namespace."""
    with store._connect() as conn:
        count = ops.require(conn, store.scope, conversation_id).message_count
        start = max(0, min(start, count))
        stop = max(start, min(stop, count))
        messages = ops.messages_between(conn, store.scope, conversation_id, start, stop)
        return MessageRange(messages, start, count, _links(conn, conversation_id, start, stop))


def window_start(store: ConversationStore, conversation_id: str, last: int) -> int:
    """The seq the store's ``last=N`` window starts at (widened to keep results with calls)."""
    with store._connect() as conn:
        return ops.locate(conn, store.scope, conversation_id, last)[1]


def _links(conn: sa.Connection, conversation_id: str, start: int, stop: int) -> dict[str, CallLink]:
    t = tool_calls_t
    in_range = sa.or_(sa.and_(t.c.call_seq >= start, t.c.call_seq < stop),
                      sa.and_(t.c.result_seq >= start, t.c.result_seq < stop))
    query = sa.select(t.c.call_id, t.c.name, t.c.status, t.c.call_seq, t.c.result_seq).where(
        t.c.conversation_id == conversation_id, in_range)
    return {row.call_id: CallLink(row.call_id, row.name, row.status, row.call_seq, row.result_seq)
            for row in conn.execute(query)}


def blob(store: ConversationStore, conversation_id: str, sha256: str) -> tuple[bytes, str | None] | None:
    """A binary payload of a conversation of this namespace, with its stored media type."""
    if not ops.valid_id(conversation_id):
        return None
    with store._connect() as conn:
        owners = [owner for owner, _, _ in chain_of(conn, conversation_id)]  # a fork's prefix: its parents'
        query = (sa.select(blobs_t.c.data, blobs_t.c.media_type)
                 .join(conversations_t, conversations_t.c.id == blobs_t.c.conversation_id)
                 .where(blobs_t.c.conversation_id.in_(owners), blobs_t.c.sha256 == sha256,
                        conversations_t.c.namespace == store.namespace))
        row = conn.execute(query).first()
    return None if row is None else (bytes(row.data), row.media_type)
