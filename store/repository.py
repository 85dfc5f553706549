"""The conversation store: every write one transaction, every read a fixed number of queries."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from . import db, links
from .codec import BlobSink, block_from_row, block_row, blob_refs, from_utc, message_from_row, message_row, new_id
from .errors import (
    AmbiguousToolCallError,
    ConversationNotFoundError,
    DatabaseError,
    InputError,
    ToolCallNotFoundError,
)
from .formats import Loss, get_format, read, write
from .limits import Budget, Limits
from .model import Block, Conversation, Message, ToolCallRecord, ToolStatus
from .schema import BlobRow, BlockRow, ConversationRow, MessageRow, ToolCallRow

DEFAULT_URL = "sqlite:///convstore.db"
DEFAULT_NAMESPACE = "default"
CHUNK = 5000
"""Messages per insert round within one write transaction."""

conversations = ConversationRow.__table__
messages_t = MessageRow.__table__
blocks_t = BlockRow.__table__
blobs_t = BlobRow.__table__
tool_calls_t = ToolCallRow.__table__


class ConversationInfo(BaseModel):
    """A conversation without its messages, as ``list_conversations`` returns it."""

    id: str
    namespace: str
    key: str | None
    title: str | None
    source_format: str | None
    message_count: int
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _valid_id(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


class ConversationStore:
    """Conversations from any supported format, in SQLite, PostgreSQL or MariaDB/MySQL.

    ``url`` is a SQLAlchemy URL (``sqlite:///convstore.db``, ``postgresql://…``,
    ``mysql://…``). A new, empty database gets convstore's tables on first use
    (``create=False`` refuses instead); a database at another schema revision is
    refused with the command that upgrades it. ``namespace`` scopes every read and
    write to one tenant. ``format`` is the default for ``save``, ``append`` and ``load``.
    """

    def __init__(self, url: str | sa.URL = DEFAULT_URL, *, namespace: str = DEFAULT_NAMESPACE,
                 format: str = "openai", create: bool = True, limits: Limits | None = None,
                 engine: sa.Engine | None = None) -> None:
        self.namespace = namespace
        self.format = format
        self.engine = engine if engine is not None else db.create_engine(url)
        self.limits = limits or Limits()
        try:
            with db.database_errors(self.engine, "cannot open"):
                self.created_schema = db.ensure_schema(self.engine, create=create)
                if self.engine.dialect.name in ("mysql", "mariadb"):
                    with self.engine.connect() as conn:
                        packet = conn.exec_driver_sql("SELECT @@max_allowed_packet").scalar_one()
                    self.limits = self.limits.capped(int(packet))
        except DatabaseError:
            self.engine.dispose()
            raise

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- writes ------------------------------------------------------------------

    def save(self, messages: Any, format: str | None = None, *, title: str | None = None,
             metadata: dict[str, Any] | None = None, source_format: str | None = None,
             progress: Callable[[int], None] | None = None) -> str:
        """Store ``messages`` (in ``format``) as a new conversation and return its id.

        ``progress(n)`` is called as each chunk of ``n`` messages is written."""
        fmt = format or self.format
        canonical = self._read(messages, fmt)
        source_format = source_format or (fmt if fmt != "canonical" else None)
        conversation_id = new_id()
        with self._write() as conn:
            self._new_conversation(conn, conversation_id, title=title, source_format=source_format,
                                   metadata=metadata)
            self._insert(conn, conversation_id, canonical, first_seq=0, fresh=True, progress=progress)
        return conversation_id

    def conversation_for(self, key: str, *, title: str | None = None,
                         metadata: dict[str, Any] | None = None) -> str:
        """The id of the conversation named ``key`` (e.g. an agent's session id) in this
        namespace, created empty if there is none. Safe when many writers ask at once:
        they all get the same conversation."""
        if (found := self._by_key(key)) is not None:
            return found
        conversation_id = new_id()
        with db.database_errors(self.engine):
            try:
                with db.write_transaction(self.engine) as conn:
                    self._new_conversation(conn, conversation_id, key=key, title=title, metadata=metadata)
            except sa.exc.IntegrityError:
                pass  # another writer created it first: theirs is the one
        found = self._by_key(key)
        assert found is not None
        return found

    def _new_conversation(self, conn: sa.Connection, conversation_id: str, *, key: str | None = None,
                          title: str | None = None, source_format: str | None = None,
                          metadata: dict[str, Any] | None = None) -> None:
        now = _now()
        conn.execute(conversations.insert(), {
            "id": conversation_id, "namespace": self.namespace, "key": key, "title": title,
            "source_format": source_format, "message_count": 0, "created_at": now, "updated_at": now,
            "metadata": metadata or None,
        })

    def _by_key(self, key: str) -> str | None:
        c = conversations
        with self._connect() as conn:
            return conn.execute(
                sa.select(c.c.id).where(c.c.namespace == self.namespace, c.c.key == key)
            ).scalar_one_or_none()

    def append(self, conversation_id: str, messages: Any, format: str | None = None, *,
               progress: Callable[[int], None] | None = None) -> None:
        """Add ``messages`` to the end of a conversation, all or nothing.

        Concurrent appends to one conversation are serialized: each lands as one
        contiguous run. Tool results are linked to calls stored earlier.
        """
        canonical = self._read(messages, format or self.format)
        with self._write() as conn:
            count = conn.execute(
                sa.select(conversations.c.message_count)
                .where(*self._owned(conversation_id))
                .with_for_update()
            ).scalar_one_or_none() if _valid_id(conversation_id) else None
            if count is None:
                raise ConversationNotFoundError(conversation_id, self.namespace)
            self._insert(conn, conversation_id, canonical, first_seq=count, fresh=False, progress=progress)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation and everything stored with it."""
        with self._write() as conn:
            self._require(conn, conversation_id)
            # Children first: MySQL checks foreign keys row by row, whatever the cascade order.
            for table in (tool_calls_t, blocks_t, blobs_t, messages_t):
                conn.execute(table.delete().where(table.c.conversation_id == conversation_id))
            conn.execute(conversations.delete().where(conversations.c.id == conversation_id))

    def _read(self, messages: Any, format: str) -> list[Message]:
        if format == "canonical":
            return [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]
        return read(messages, format)

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with db.database_errors(self.engine), db.write_transaction(self.engine) as conn:
            yield conn

    def _insert(self, conn: sa.Connection, conversation_id: str, msgs: Sequence[Message], *,
                first_seq: int, fresh: bool, progress: Callable[[int], None] | None = None) -> None:
        """Insert in chunks (bounded memory, progress to report), all in the caller's transaction."""
        for start in range(0, len(msgs), CHUNK):
            chunk = msgs[start:start + CHUNK]
            self._insert_chunk(conn, conversation_id, chunk, first_seq=first_seq + start,
                               fresh=fresh and start == 0, index_base=start)
            if progress is not None:
                progress(len(chunk))

    def _insert_chunk(self, conn: sa.Connection, conversation_id: str, msgs: Sequence[Message], *,
                      first_seq: int, fresh: bool, index_base: int) -> None:
        known = {} if fresh else self._known_calls(conn, conversation_id, links.referenced_call_ids(msgs))
        lo = links.earliest_open_call(msgs, known)
        prior = {} if lo is None else dict(conn.execute(
            sa.select(messages_t.c.seq, messages_t.c.window_start)
            .where(messages_t.c.conversation_id == conversation_id, messages_t.c.seq >= lo)
        ).all())
        blobs = BlobSink(conversation_id)
        message_ids = [new_id() for _ in msgs]
        budgets = [Budget(index_base + i, self.limits) for i in range(len(msgs))]
        block_rows = [
            block_row(b, conversation_id=conversation_id, message_id=mid, position=pos, blobs=blobs, budget=budget)
            for mid, msg, budget in zip(message_ids, msgs, budgets)
            for pos, b in enumerate(msg.content)
        ]
        block_ids: list[list[str]] = []
        it = iter(block_rows)
        for msg in msgs:
            block_ids.append([next(it)["id"] for _ in msg.content])
        plan = links.plan(msgs, conversation_id=conversation_id, first_seq=first_seq, index_base=index_base,
                          block_ids=block_ids, known=known, prior_starts=prior)
        message_rows = [
            message_row(m, id=mid, conversation_id=conversation_id, seq=first_seq + i, window_start=start,
                        budget=budget)
            for i, (m, mid, start, budget) in enumerate(zip(msgs, message_ids, plan.window_starts, budgets))
        ]
        for budget in budgets:
            budget.check()
        self._insert_blobs(conn, conversation_id, blobs, fresh)
        conn.execute(messages_t.insert(), message_rows)
        if block_rows:
            conn.execute(blocks_t.insert(), block_rows)
        if plan.inserts:
            conn.execute(tool_calls_t.insert(), plan.inserts)
        if plan.updates:
            conn.execute(
                tool_calls_t.update().where(tool_calls_t.c.id == sa.bindparam("link_id"))
                .values(status=sa.bindparam("status"), result_block_id=sa.bindparam("result_block_id"),
                        result_seq=sa.bindparam("result_seq")),
                plan.updates,
            )
        conn.execute(
            conversations.update().where(conversations.c.id == conversation_id)
            .values(message_count=first_seq + len(msgs), updated_at=_now())
        )

    def _known_calls(self, conn: sa.Connection, conversation_id: str, call_ids: set[str]) -> dict[str, links.KnownCall]:
        if not call_ids:
            return {}
        t = tool_calls_t
        rows = conn.execute(
            sa.select(t.c.call_id, t.c.id, t.c.call_seq, t.c.result_block_id)
            .where(t.c.conversation_id == conversation_id, t.c.call_id.in_(call_ids))
        ).all()
        return {r.call_id: links.KnownCall(r.id, r.call_seq, r.result_block_id is not None) for r in rows}

    def _insert_blobs(self, conn: sa.Connection, conversation_id: str, blobs: BlobSink, fresh: bool) -> None:
        if not blobs.rows:
            return
        new = blobs.rows
        if not fresh:
            stored = set(conn.execute(
                sa.select(blobs_t.c.sha256)
                .where(blobs_t.c.conversation_id == conversation_id, blobs_t.c.sha256.in_(new))
            ).scalars())
            new = {k: v for k, v in new.items() if k not in stored}
        if new:
            conn.execute(blobs_t.insert(), list(new.values()))

    # --- reads -------------------------------------------------------------------

    def load(self, conversation_id: str, format: str | None = None, *, last: int | None = None,
             strict: bool = False, on_loss: Callable[[Loss], None] | None = None) -> Any:
        """The conversation in ``format`` (a JSON-ready value), in sequence order.

        ``last=N`` returns the recent window: at least the last N messages, widened
        so that no tool result is separated from its call. What the format cannot
        express goes to ``on_loss``; ``strict`` makes it an error.
        """
        target = get_format(format or self.format).name  # an unknown format fails before any query
        value, losses = write(self.load_messages(conversation_id, last=last), target, strict=strict)
        if on_loss is not None:
            for loss in losses:
                on_loss(loss)
        return value

    def load_messages(self, conversation_id: str, *, last: int | None = None) -> list[Message]:
        """The canonical messages of a conversation (or of its recent window)."""
        return self.get_conversation(conversation_id, last=last).messages

    def get_conversation(self, conversation_id: str, *, last: int | None = None) -> Conversation:
        """The conversation with its canonical messages: four queries (five with ``last``)."""
        if last is not None and last < 0:
            raise InputError(f"last must be >= 0, got {last}")
        with self._connect() as conn:
            info = self._require(conn, conversation_id)
            start = 0
            if last is not None:
                start = info.message_count
                if last > 0:
                    start = conn.execute(
                        sa.select(sa.func.min(messages_t.c.window_start)).where(
                            messages_t.c.conversation_id == conversation_id,
                            messages_t.c.seq >= max(info.message_count - last, 0),
                        )
                    ).scalar_one() or 0
            msgs = self._messages(conn, conversation_id, start, windowed=last is not None)
        return Conversation(id=info.id, namespace=info.namespace, title=info.title,
                            created_at=info.created_at, metadata=info.metadata or {}, messages=msgs)

    def _messages(self, conn: sa.Connection, conversation_id: str, start: int, windowed: bool) -> list[Message]:
        m, b = messages_t, blocks_t
        message_rows = conn.execute(
            sa.select(m).where(m.c.conversation_id == conversation_id, m.c.seq >= start).order_by(m.c.seq)
        ).mappings().all()
        if not message_rows:
            return []
        block_rows = conn.execute(
            sa.select(b).join(m, m.c.id == b.c.message_id)
            .where(m.c.conversation_id == conversation_id, m.c.seq >= start)
            .order_by(m.c.seq, b.c.position)
        ).mappings().all()
        blobs = self._blobs(conn, conversation_id, block_rows, everything=not windowed)
        by_message: dict[str, list[Block]] = defaultdict(list)
        for row in block_rows:
            by_message[row["message_id"]].append(block_from_row(row, blobs))
        return [message_from_row(row, by_message.get(row["id"], [])) for row in message_rows]

    def _blobs(self, conn: sa.Connection, conversation_id: str, block_rows: Sequence[Any],
               everything: bool = False) -> dict[str, bytes]:
        wanted = {r["blob_sha256"] for r in block_rows if r["blob_sha256"]}
        wanted.update(
            ref for r in block_rows if r["kind"] == "tool_result" and r["payload"] for ref in blob_refs(r["payload"])
        )
        if not wanted:
            return {}
        query = sa.select(blobs_t.c.sha256, blobs_t.c.data).where(blobs_t.c.conversation_id == conversation_id)
        if not everything:
            query = query.where(blobs_t.c.sha256.in_(wanted))
        return dict(conn.execute(query).all())

    def list_conversations(self, *, limit: int | None = None) -> list[ConversationInfo]:
        """This namespace's conversations, newest first."""
        c = conversations
        query = sa.select(c).where(c.c.namespace == self.namespace).order_by(c.c.created_at.desc(), c.c.id.desc())
        with self._connect() as conn:
            rows = conn.execute(query.limit(limit) if limit else query).mappings().all()
        return [_info(r) for r in rows]

    def get_tool_call(self, call_id: str, conversation_id: str | None = None) -> ToolCallRecord:
        """A tool call by id: its arguments, status, result and where both are.

        Without ``conversation_id`` the id must be unique in the namespace.
        """
        records = self.find_tool_calls(call_id=call_id, conversation_id=conversation_id)
        if not records:
            where = f"in conversation {conversation_id!r}" if conversation_id else f"in namespace {self.namespace!r}"
            raise ToolCallNotFoundError(call_id, where)
        if len(records) > 1:
            raise AmbiguousToolCallError(call_id, [r.conversation_id for r in records])
        return records[0]

    def find_tool_calls(self, *, name: str | None = None, status: ToolStatus | None = None,
                        call_id: str | None = None, conversation_id: str | None = None,
                        limit: int | None = None) -> list[ToolCallRecord]:
        """Tool calls matching every given filter, in the order they were made."""
        if status is not None and status not in ("pending", "answered", "error"):
            raise InputError(f"status must be pending, answered or error, got {status!r}")
        t = tool_calls_t
        cb, rb = blocks_t.alias("call_block"), blocks_t.alias("result_block")
        cm, rm = messages_t.alias("call_message"), messages_t.alias("result_message")
        query = (
            sa.select(
                t.c.call_id, t.c.name, t.c.status, t.c.conversation_id, t.c.call_seq, t.c.result_seq,
                cb.c.payload.label("call_payload"), cm.c.created_at.label("call_at"),
                cm.c.utc_offset.label("call_offset"), rm.c.created_at.label("result_at"),
                rm.c.utc_offset.label("result_offset"),
                *(rb.c[name].label(f"r_{name}") for name in _RESULT_COLUMNS),
            )
            .join(conversations, conversations.c.id == t.c.conversation_id)
            .join(cb, cb.c.id == t.c.call_block_id)
            .join(cm, cm.c.id == cb.c.message_id)
            .outerjoin(rb, rb.c.id == t.c.result_block_id)
            .outerjoin(rm, rm.c.id == rb.c.message_id)
            .where(conversations.c.namespace == self.namespace)
            .order_by(t.c.id)
        )
        filters = {t.c.name: name, t.c.status: status, t.c.call_id: call_id, t.c.conversation_id: conversation_id}
        query = query.where(*(col == value for col, value in filters.items() if value is not None))
        if conversation_id is not None and not _valid_id(conversation_id):
            return []
        with self._connect() as conn:
            rows = conn.execute(query.limit(limit) if limit else query).mappings().all()
            results = [{name: r[f"r_{name}"] for name in _RESULT_COLUMNS} for r in rows]
            blobs: dict[str, bytes] = {}
            for cid in {r["conversation_id"] for r in rows}:
                blobs.update(self._blobs(conn, cid, [b for r, b in zip(rows, results) if r["conversation_id"] == cid]))
        return [_record(r, b, blobs) for r, b in zip(rows, results)]

    # --- helpers -----------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:
        with db.database_errors(self.engine), self.engine.connect() as conn:
            yield conn

    def _owned(self, conversation_id: str) -> tuple[sa.ColumnElement[bool], ...]:
        return (conversations.c.id == conversation_id, conversations.c.namespace == self.namespace)

    def _require(self, conn: sa.Connection, conversation_id: str) -> Any:
        row = conn.execute(
            sa.select(conversations).where(*self._owned(conversation_id))
        ).mappings().one_or_none() if _valid_id(conversation_id) else None
        if row is None:
            raise ConversationNotFoundError(conversation_id, self.namespace)
        return _info(row)


def _info(row: Any) -> ConversationInfo:
    return ConversationInfo(
        id=row["id"], namespace=row["namespace"], key=row["key"], title=row["title"],
        source_format=row["source_format"],
        message_count=row["message_count"], created_at=from_utc(row["created_at"], 0),
        updated_at=from_utc(row["updated_at"], 0),
        metadata=row["metadata"] or {},
    )


_RESULT_COLUMNS = ("kind", "text", "media_type", "tool_name", "call_id", "blob_sha256", "payload")


def _record(row: Any, result_row: dict[str, Any], blobs: dict[str, bytes]) -> ToolCallRecord:
    payload = row["call_payload"] or {}
    result = block_from_row(result_row, blobs) if result_row["kind"] else None
    return ToolCallRecord(
        call_id=row["call_id"], name=row["name"], status=row["status"],
        arguments=payload.get("arguments"), arguments_raw=payload.get("arguments_raw"),
        result=result.output if result is not None else None,
        is_error=bool(result is not None and result.is_error),
        conversation_id=row["conversation_id"], call_position=row["call_seq"],
        result_position=row["result_seq"],
        call_created_at=from_utc(row["call_at"], row["call_offset"]),
        result_created_at=from_utc(row["result_at"], row["result_offset"]),
    )
