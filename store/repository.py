"""The conversation store: every write one transaction, every read a fixed number of queries.

The SQL lives in :mod:`store.operations`, shared with the asyncio twin in
:mod:`store.aio`; what both stores do around it (formats, loss reports) is
:mod:`store.storebase`; this module holds the synchronous I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa

from . import creation, db, forks, listing, retention, streaming, toolcalls, usage
from . import operations as ops
from . import search as search_
from .codec import new_id
from .errors import DatabaseError
from .formats import Loss
from .gcpause import paused_gc
from .limits import Limits, check_chunk
from .model import Conversation, Message, Page, ToolCallRecord, ToolStatus
from .operations import ConversationInfo
from .storebase import DEFAULT_NAMESPACE, DEFAULT_URL, StoreBase, packet_size
from .writer import readers_for, writer_for

T = TypeVar("T")


__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_URL", "ConversationInfo", "ConversationStore"]


class ConversationStore(StoreBase):
    """Conversations from any supported format, in SQLite, PostgreSQL or MariaDB/MySQL.

    ``url`` is a SQLAlchemy URL (``sqlite:///convstore.db``, ``postgresql://…``,
    ``mysql://…``). A new, empty database gets convstore's tables on first use
    (``create=False`` refuses instead); a database at another schema revision is
    refused with the command that upgrades it. ``namespace`` scopes every read and
    write to one tenant. ``format`` is the default for ``save``, ``append`` and ``load``.
    ``engine`` (from ``store.db.create_engine``) replaces ``url``, e.g. one engine for many stores.
    On SQLite a store that made its own engine runs its writes one at a time on a connection it
    keeps (SQLite takes one writer at a time anyway), and its reads on connections it keeps, one
    per read in progress; ``close`` gives them back.
    """

    def __init__(self, url: str | sa.URL = DEFAULT_URL, *, namespace: str = DEFAULT_NAMESPACE,
                 format: str = "openai", create: bool = True, limits: Limits | None = None,
                 engine: sa.Engine | None = None) -> None:
        super().__init__(namespace=namespace, format=format, limits=limits)
        self.engine = engine if engine is not None else db.create_engine(url)
        self._writer = writer_for(self.engine, own=engine is None)
        self._readers = readers_for(self.engine, own=engine is None)
        try:
            with db.database_errors(self.engine, "cannot open"):
                self.created_schema = creation.ensure_schema(self.engine, create=create)
                with self.engine.connect() as conn:
                    self._cap_limits(packet_size(conn))
        except Exception:
            self.engine.dispose()
            raise

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self._writer.close()
        self._readers.close()
        self.engine.dispose()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with db.database_errors(self.engine), self._writer.transaction() as conn:
            yield conn

    def _transact(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(connection, scope, *args)`` in one write transaction; run again when the
        database undid it whole as a deadlock victim (streams use ``_write`` once)."""
        for attempt in range(db.WRITE_ATTEMPTS):
            try:
                with self._write() as conn:
                    return fn(conn, self.scope, *args, **kwargs)
            except DatabaseError as exc:
                if attempt == db.WRITE_ATTEMPTS - 1 or not db.transient(exc.__cause__):
                    raise
            time.sleep(db.backoff(attempt))
        raise AssertionError("unreachable")

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:
        """A read: one transaction, one snapshot (see ``db.read_options``)."""
        with db.database_errors(self.engine), self._readers.snapshot() as conn:
            yield conn

    def _lookup(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(connection, scope, *args)``, a read that is usually one statement: without a
        transaction's round trips where that saves them, else (or when it needs a second
        statement after all) in a snapshot (see ``db.one_statement_options``)."""
        if (options := db.one_statement_options(self.engine.dialect)) is not None:
            try:
                with db.database_errors(self.engine), self.engine.connect() as conn:
                    return fn(conn.execution_options(**options), self.scope, *args, **kwargs)
            except db.SnapshotNeeded:
                pass
        with self._connect() as conn:
            return fn(conn, self.scope, *args, **kwargs)

    # --- writes ------------------------------------------------------------------

    def save(self, messages: Any, format: str | None = None, *, title: str | None = None,
             metadata: dict[str, Any] | None = None, source_format: str | None = None,
             progress: Callable[[int], None] | None = None, tags: Iterable[str] | None = None,
             expires_at: datetime | None = None) -> str:
        """Store ``messages`` (in ``format``) as a new conversation and return its id.

        ``messages`` may be an iterator (e.g. JSON Lines read lazily): it is then read
        and written chunk by chunk in the same single transaction, in bounded memory
        for formats that read message by message (``openai``). ``progress(n)`` is
        called as each chunk of ``n`` messages is written. ``tags`` and ``expires_at``
        (when ``prune`` may delete it) are the conversation's own, like title and metadata."""
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        fields["source_format"] = self._source_format(format, source_format)
        conversation_id = new_id()
        if isinstance(messages, Iterator):
            with self._write() as conn:  # no pause over a stream: it may run for minutes
                ops.save_stream(conn, self.scope, conversation_id, self._chunks(messages, format),
                                progress=progress, **fields)
            return conversation_id
        with paused_gc():
            self._transact(ops.save, conversation_id, self._new_messages(messages, format, conversation_id),
                           progress=progress, **fields)
        return conversation_id

    def save_many(self, conversations: Iterable[tuple[Any, dict[str, Any]]], format: str | None = None, *,
                  progress: Callable[[int], None] | None = None) -> list[str]:
        """Store several new conversations in one transaction, all or none; their ids, in order.
        Each is ``(messages, fields)``, ``fields`` being :meth:`save`'s keywords (``title``,
        ``metadata``, ``source_format``, ``tags``, ``expires_at``). Every one is read and checked
        before any is written."""
        planned = self._planned(conversations, format)
        with paused_gc():
            self._transact(ops.save_many, planned, progress=progress)
        return [conversation_id for conversation_id, _, _ in planned]

    def _store(self, operation: Callable[..., Any], conversation_id: str, messages: Any, format: str | None,
               **kwargs: Any) -> None:
        """``operation`` on ``messages`` read from ``format``, in one pause of the collector from
        reading to writing (see store.gcpause). The canonical messages are an argument, not a local:
        they are freed before the pause ends, so the collector's first pass after it does not walk them."""
        with paused_gc():
            self._transact(operation, conversation_id, self._canonical(messages, format), **kwargs)

    def update(self, conversation_id: str, *, title: str | None = listing.UNSET,
               metadata: dict[str, Any] | None = listing.UNSET, tags: Iterable[str] | None = listing.UNSET,
               expires_at: datetime | None = listing.UNSET) -> ConversationInfo:
        """Change a conversation's own fields: those given replace what it had (None clears
        title, metadata, tags or expiry); the others stay. Counts as a write (``updated_at``)."""
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        return self._transact(listing.update, conversation_id, **fields)

    def conversation_for(self, key: str, *, title: str | None = None, metadata: dict[str, Any] | None = None,
                         tags: Iterable[str] | None = None, expires_at: datetime | None = None) -> str:
        """The id of the conversation named ``key`` (e.g. an agent's session id) in this
        namespace, created empty if there is none. Safe when many writers ask at once:
        they all get the same conversation. The other fields apply only to one created here."""
        self._check_required(key=key)  # None would find a conversation without a key
        self._check_conversation(key=key)
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        with self._connect() as conn:
            if (found := ops.by_key(conn, self.scope, key)) is not None:
                return found
        try:
            self._transact(ops.new_conversation, new_id(), key=key, **fields)
        except DatabaseError as exc:
            if not isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise  # an IntegrityError means another writer created it first: theirs is the one
        with self._connect() as conn:
            found = ops.by_key(conn, self.scope, key)
        assert found is not None
        return found

    def append(self, conversation_id: str, messages: Any, format: str | None = None, *,
               progress: Callable[[int], None] | None = None) -> None:
        """Add ``messages`` to the end of a conversation, all or nothing.

        Concurrent appends to one conversation are serialized: each lands as one
        contiguous run. Tool results are linked to calls stored earlier.
        """
        if isinstance(messages, Iterator):
            with self._write() as conn:
                ops.append_stream(conn, self.scope, conversation_id, self._chunks(messages, format),
                                  progress=progress)
            return
        self._store(ops.append, conversation_id, messages, format, progress=progress)

    def pop(self, conversation_id: str, n: int = 1, format: str | None = None) -> Any:
        """Remove the last ``n`` messages and return them in ``format`` (oldest first)."""
        target = self._target(format)
        popped = self._transact(ops.pop, conversation_id, n)
        return self._output(popped, target, False, None)

    def pop_item(self, conversation_id: str, format: str | None = None) -> Any:
        """Remove the newest element of the conversation as ``format`` writes it (a Responses
        item, an AutoGen message) and return it; None when there is none. When the last stored
        message gives several elements (a model turn's reasoning and answer), the ones before
        the newest are written back; stored messages that give none in ``format`` are removed
        on the way. All in one transaction: no reader or writer sees a half-popped turn."""
        split = self._item_split(self._target(format))
        return self._transact(ops.pop_item, conversation_id, split)

    def replace(self, conversation_id: str, messages: Any, format: str | None = None, *,
                progress: Callable[[int], None] | None = None) -> None:
        """Replace every message of a conversation with ``messages``, all or nothing
        (for memories that edit their history: delete one message, compress, ...)."""
        self._store(ops.replace, conversation_id, messages, format, progress=progress)

    def truncate(self, conversation_id: str, keep: int) -> int:
        """Remove the messages from index ``keep`` on (``keep=0`` empties the
        conversation but keeps it); return how many were removed. Calls whose
        results are removed become pending again."""
        return self._transact(ops.truncate, conversation_id, keep)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation and everything stored with it."""
        self._transact(ops.delete, conversation_id)

    def prune(self, older_than: timedelta | datetime | None = None, *, dry_run: bool = False,
              progress: Callable[[int], None] | None = None) -> retention.PruneReport:
        """Delete this namespace's conversations whose ``expires_at`` has passed and, given
        ``older_than``, those not written to since ``older_than`` ago (a ``timedelta``) or
        since that moment (a ``datetime``; naive ones are UTC), each with
        everything stored with it, in transactions of at most ``retention.BATCH``
        conversations; ``progress(n)`` after each. ``dry_run`` only counts what would go.
        Conversations appended to meanwhile stay (see :mod:`store.retention`)."""
        report = retention.plan(older_than, dry_run)
        if dry_run:
            with self._connect() as conn:
                retention.record(report, retention.count_due(conn, self.scope, retention.due_before(report)), None)
        else:
            while retention.record(report, self._transact(retention.prune_batch, retention.due_before(report)),
                                   progress):
                pass
        return report

    # --- reads -------------------------------------------------------------------

    def load(self, conversation_id: str, format: str | None = None, *, last: int | None = None,
             strict: bool = False, on_loss: Callable[[Loss], None] | None = None) -> Any:
        """The conversation in ``format`` (a JSON-ready value), in sequence order.

        ``last=N`` returns the recent window: at least the last N messages, widened
        so that no tool result is separated from its call. What the format cannot
        express goes to ``on_loss``; ``strict`` makes it an error.
        """
        target = self._target(format)
        with paused_gc():  # one pause from reading to converting: see store.gcpause
            if ops.windowed(last, target):  # usually one statement (``holes.window``)
                return self._loaded(self._lookup(ops.load, conversation_id, last, target), target, strict, on_loss)
            with self._connect() as conn:
                return self._loaded(ops.load(conn, self.scope, conversation_id, last, target), target, strict,
                                    on_loss)

    def export(self, conversation_id: str, format: str | None = None, *, strict: bool = False,
               on_loss: Callable[[Loss], None] | None = None, chunk: int = streaming.CHUNK) -> Iterator[Any]:
        """The conversation's messages in ``format``, one at a time, read in parts of about
        ``chunk`` messages (for formats in ``store.streaming.STREAM_WRITES``; others are
        loaded whole). Gives the same messages as ``load``, in bounded memory."""
        check_chunk(chunk)  # 0 would cut forever
        target = self._target(format)
        if not self._streams(target):
            yield from self._export_part(self.load_messages(conversation_id), 0, target, strict, on_loss)
            return
        with self._connect() as conn:
            start = 0
            for stop in streaming.safe_cuts(conn, self.scope, conversation_id, chunk):
                items, part = ops.part(conn, self.scope, conversation_id, start, stop, target)
                yield from items if items is not None else self._export_part(part, start, target, strict, on_loss)
                start = stop

    def load_messages(self, conversation_id: str, *, last: int | None = None) -> list[Message]:
        """The canonical messages of a conversation (or of its recent window)."""
        return self.get_conversation(conversation_id, last=last).messages

    def get_conversation(self, conversation_id: str, *, last: int | None = None) -> Conversation:
        """The conversation with its canonical messages: at most four statements."""
        with self._connect() as conn, paused_gc():
            return ops.get_conversation(conn, self.scope, conversation_id, last)

    def info(self, conversation_id: str) -> ConversationInfo:
        """The conversation's row: key, title, message count, times, metadata, tags, expiry."""
        with self._connect() as conn:
            return listing.describe(conn, self.scope, conversation_id)

    def usage(self, conversation_id: str) -> usage.ConversationUsage:
        """The conversation's token usage: its messages' counts summed, in total and per
        model (see :mod:`store.usage`). Reads no message text."""
        with self._connect() as conn:
            return usage.conversation_usage(conn, self.scope, conversation_id)

    def list_conversations(self, *, key: str | None = None, tags: Iterable[str] | None = None,
                           metadata: dict[str, Any] | None = None, source_format: str | None = None,
                           created_after: datetime | None = None, created_before: datetime | None = None,
                           updated_after: datetime | None = None, updated_before: datetime | None = None,
                           order_by: listing.Order = "created_at", descending: bool = True,
                           limit: int | None = None, cursor: str | None = None) -> Page[ConversationInfo]:
        """This namespace's conversations matching every filter given, one page (a list)
        of at most ``limit`` (default: all; 0: none), newest first. Filters: ``key``, ``tags``
        (every one of them), ``metadata`` (top-level keys equal to strings, integers or
        booleans), ``source_format``, ``created_after`` / ``created_before`` /
        ``updated_after`` / ``updated_before`` (datetimes; naive ones are UTC). ``order_by``
        is ``created_at`` (default) or ``updated_at``; ``descending=False`` lists oldest
        first. While ``page.next_cursor`` is not None, pass it as ``cursor`` with the same
        filters and order for the next page (keyset: each conversation comes once). Two
        statements a page; no message is read."""
        with self._connect() as conn:
            return listing.list_page(
                conn, self.scope, key=key, tags=tags, metadata=metadata, source_format=source_format,
                created_after=created_after, created_before=created_before, updated_after=updated_after,
                updated_before=updated_before, order_by=order_by, descending=descending, limit=limit,
                cursor=cursor)

    def fork(self, conversation_id: str, at: int | None = None, *, key: str | None = None,
             title: str | None = listing.UNSET, metadata: dict[str, Any] | None = listing.UNSET,
             tags: Iterable[str] | None = listing.UNSET, expires_at: datetime | None = None,
             allow_pending: bool = False) -> str:
        """A new conversation sharing the first ``at`` messages (default: all) of this one,
        without copying them; returns its id. Appends to either go their own way. Title,
        metadata and tags are the parent's unless given. A fork point after a tool call whose
        result comes later (or never) is an ``InputError`` unless ``allow_pending``. While a
        fork shares messages, the parent cannot lose them: ``delete``, and ``pop`` /
        ``truncate`` / ``replace`` below the fork point, raise ``SharedHistoryError``."""
        fork_id = new_id()
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        self._check_conversation(key=key)
        self._transact(forks.fork, conversation_id, fork_id, at, allow_pending=allow_pending, key=key, **fields)
        return fork_id

    def lineage(self, conversation_id: str) -> list[ConversationInfo]:
        """The conversation and the ones it was forked from: the root first, itself last."""
        with self._connect() as conn:
            return forks.lineage(conn, self.scope, conversation_id)

    def search(self, query: str, *, role: str | None = None, kind: str | None = None,
               conversation_id: str | None = None, metadata: dict[str, Any] | None = None,
               limit: int | None = search_.DEFAULT_PAGE, cursor: str | None = None,
               index: bool = True) -> Page[search_.SearchHit]:
        """This namespace's message text, tool names, arguments and results matching
        ``query``, best first: one page (a list) of ``SearchHit`` (conversation, message
        ``seq``, block ``position`` and kind, role, a snippet with its highlighted words).
        Query syntax: words (all must match), ``"a phrase"``, ``prefix*``, ``-excluded``.
        Filters: ``role``, ``kind`` (of block: text, tool_call, tool_result, ...),
        ``conversation_id``, ``metadata`` (as in ``list_conversations``). While
        ``page.next_cursor`` is not None, pass it as ``cursor`` with the same query and filters.

        Messages written since the last search are indexed first, in a write transaction of
        their own (see :meth:`index`); ``index=False`` matches what the index holds already,
        writing nothing (on a read-only connection)."""
        args = dict(role=role, kind=kind, conversation_id=conversation_id, metadata=metadata, limit=limit,
                    cursor=cursor)
        if not index:
            with self._connect() as conn:
                return search_.search(conn, self.scope, query, indexed=True, **args)
        try:
            with self._connect() as conn:
                return search_.search(conn, self.scope, query, **args)
        except search_.IndexBehind:
            self._transact(search_.catch_up)
        with self._connect() as conn:
            return search_.search(conn, self.scope, query, indexed=True, **args)

    def index_pending(self) -> int:
        """How many conversations hold messages the search index does not have yet."""
        with self._connect() as conn:
            return search_.pending(conn, self.scope)

    def index(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Bring the search index up to date with everything written to this namespace, and
        return how many conversations it took in. ``search`` does this itself before it
        matches; call it after a large import so that the first search does not wait.
        Works ``search_.BATCH`` conversations per transaction; ``progress(done, total)``."""
        total = self.index_pending()
        done = 0
        while some := self._transact(search_.catch_up, search_.BATCH):
            done += some
            if progress is not None:
                progress(done, max(total, done))
        return done

    def get_tool_call(self, call_id: str, conversation_id: str | None = None) -> ToolCallRecord:
        """A tool call by id: its arguments, status, result and where both are.

        Without ``conversation_id`` the id must be unique in the namespace.
        """
        self._check_required(call_id=call_id)
        self._check_lookup(call_id=call_id)
        return self._lookup(toolcalls.get_tool_call, call_id, conversation_id)

    def find_tool_calls(self, *, name: str | None = None, status: ToolStatus | None = None,
                        call_id: str | None = None, conversation_id: str | None = None,
                        limit: int | None = toolcalls.DEFAULT_PAGE,
                        cursor: str | None = None) -> Page[ToolCallRecord]:
        """Tool calls matching every given filter: one page (a list) of at most ``limit``
        records, by conversation, then in the order of their messages (calls in one message
        by call id). ``page.next_cursor`` is None on the last page; otherwise pass it back as
        ``cursor`` (with the same filters) for the next one. ``limit=None`` returns every
        match at once (in memory: mind a large namespace)."""
        self._check_lookup(call_id=call_id, name=name)
        return self._lookup(toolcalls.find_tool_calls, name=name, status=status, call_id=call_id,
                            conversation_id=conversation_id, limit=limit, cursor=cursor)
