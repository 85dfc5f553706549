"""The asyncio twin of :class:`~store.ConversationStore`.

Same operations, same guarantees (every write one transaction, a fixed number
of statements per load, windows that keep tool calls with their results), on
async drivers: aiosqlite, psycopg's async mode, asyncmy. The SQL and the row
mapping are the very functions the sync store runs (:mod:`store.operations`),
called through ``AsyncConnection.run_sync``; only the I/O differs.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from . import creation, db, forks, listing, retention, streaming, toolcalls, usage
from . import operations as ops
from . import search as search_
from .codec import new_id
from .errors import DatabaseError
from .formats import Loss
from .limits import Limits, check_chunk
from .model import Conversation, Message, Page, ToolCallRecord, ToolStatus
from .operations import ConversationInfo
from .storebase import DEFAULT_NAMESPACE, DEFAULT_URL, StoreBase, packet_size

T = TypeVar("T")


def _noting_workers(engine: AsyncEngine) -> AsyncEngine:
    """``engine``, noting each aiosqlite connection it opens (for :func:`_drop`): one listener an
    engine, however many stores are handed it."""
    if engine.dialect.driver == "aiosqlite" and engine.sync_engine not in _WORKERS:
        opened: weakref.WeakSet[Any] = weakref.WeakSet()
        sa.event.listen(engine.sync_engine, "connect", lambda _dbapi, entry: opened.add(entry.driver_connection))
        _WORKERS[engine.sync_engine] = opened
    return engine


_WORKERS: weakref.WeakKeyDictionary[sa.Engine, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()


def _drop(engine: AsyncEngine) -> None:
    """Drop the pool of a loop that is closed or not this one: its connections cannot be closed
    through it (their driver answers on that loop), so they go without a goodbye, as a
    ``dispose(close=False)`` does. aiosqlite's worker threads are stopped first, from a thread
    with no event loop: left to the collector, each stopped itself with a future of whatever
    loop ran at that moment, and answered it from its thread after that loop had closed
    ("Event loop is closed" in a worker thread)."""
    opened = _WORKERS.get(engine.sync_engine)
    workers = list(opened or ())
    if workers:
        opened.clear()  # type: ignore[union-attr]
        stopping = threading.Thread(target=lambda: [worker.stop() for worker in workers],
                                    name="convstore-aiosqlite-stop")
        stopping.start()
        stopping.join()
    engine.sync_engine.dispose(close=False)


def _drop_all(engines: list[AsyncEngine]) -> None:
    for engine in engines:
        _drop(engine)
    engines.clear()


class AsyncConversationStore(StoreBase):
    """Conversations in SQLite, PostgreSQL or MariaDB/MySQL, for asyncio programs.

    ``url`` takes the same URLs as the sync store (``sqlite:///…``,
    ``postgresql://…``, ``mysql://…``); convstore picks the async driver. The
    database is opened (and, if empty, given its tables, which is logged) on
    first use, or explicitly with ``await store.open()`` / ``async with``.
    """

    def __init__(self, url: str | sa.URL = DEFAULT_URL, *, namespace: str = DEFAULT_NAMESPACE,
                 format: str = "openai", create: bool = True, limits: Limits | None = None,
                 engine: AsyncEngine | None = None) -> None:
        super().__init__(namespace=namespace, format=format, limits=limits)
        first = _noting_workers(engine if engine is not None else db.create_async_engine(url))
        self._url = first.url
        self._unclaimed: AsyncEngine | None = first
        self._engines: list[tuple[weakref.ref[asyncio.AbstractEventLoop], AsyncEngine]] = []
        self._first = first
        self._made: list[AsyncEngine] = [] if engine is not None else [first]
        """The engines this store made and has not dropped: a store never closed drops them when it is
        collected (its connections' threads stopped, see :func:`_drop`), an engine handed to it stays."""
        weakref.finalize(self, _drop_all, self._made).atexit = False  # at exit no thread may start
        self._guard = threading.Lock()
        self._create = create
        self._opened = False
        self.created_schema = False

    @property
    def engine(self) -> AsyncEngine:
        """The engine (connection pool) of the running event loop. A driver's connection
        belongs to the loop that opened it, so each loop that uses the store (threads that
        run loops of their own) gets a pool of its own; the first loop gets the engine the
        store was made with. Outside any loop: that first engine."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._first
        with self._guard:
            for ref, engine in self._engines:
                if ref() is loop:
                    return engine
            self._forget_closed_loops()
            engine = self._unclaimed
            if engine is None:
                engine = _noting_workers(db.create_async_engine(self._url))
                self._made.append(engine)
            self._unclaimed = None
            self._engines.append((weakref.ref(loop), engine))
            return engine

    def _forget_closed_loops(self) -> None:
        alive = []
        for ref, engine in self._engines:
            loop = ref()
            if loop is None or loop.is_closed():
                self._drop(engine)
            else:
                alive.append((ref, engine))
        self._engines = alive

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    async def open(self) -> AsyncConversationStore:
        """Check the schema (creating it in an empty database unless ``create=False``).
        Every operation does this once by itself; call it to fail early. Concurrent first
        calls each check (creating the schema is safe under any number of them): nothing
        here waits on an object bound to one event loop."""
        if not self._opened:
            self.created_schema = await self._open() or self.created_schema
            self._opened = True
        return self

    async def _open(self) -> bool:
        creation.refuse_missing_file(self.engine.url, create=self._create)
        with db.database_errors(self.engine.sync_engine, "cannot open"):
            async with self.engine.connect() as conn:
                current = await conn.run_sync(db.current_revision_on)
                self._cap_limits(await conn.run_sync(packet_size))
            if current == db.head_revision():
                return False
            # Anything else goes to the sync code, in a worker thread: its schema lock may
            # wait for another process creating the tables, and must not block the loop.
            return await asyncio.to_thread(self._ensure_schema)

    def _ensure_schema(self) -> bool:
        engine = db.create_engine(db.sync_url(self.engine.url), poolclass=sa.pool.NullPool)
        try:
            return creation.ensure_schema(engine, create=self._create)
        finally:
            engine.dispose()

    async def close(self) -> None:
        """Close the connections of this loop's pool; other loops' pools are dropped."""
        current = self.engine
        with self._guard:
            others = [engine for _, engine in self._engines if engine is not current]
            self._engines = [(ref, engine) for ref, engine in self._engines if engine is current]
        for engine in others:
            self._drop(engine)
        await current.dispose()

    def _drop(self, engine: AsyncEngine) -> None:
        _drop(engine)
        if engine in self._made:
            self._made.remove(engine)

    async def __aenter__(self) -> AsyncConversationStore:
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _connection(self, write: bool, one_statement: bool = False) -> AsyncIterator[AsyncConnection]:
        await self.open()
        with db.database_errors(self.engine.sync_engine):
            async with self.engine.connect() as conn:
                try:
                    one = one_statement and db.one_statement_options(conn.dialect)
                    options = {"convstore_write": True} if write else one or db.read_options(conn.dialect)
                    conn = await conn.execution_options(**options)
                    if one:  # autocommit: no transaction to begin
                        yield conn
                    else:
                        async with conn.begin():
                            yield conn
                except BaseException as exc:
                    if isinstance(exc, Exception) and not _being_cancelled():
                        raise
                    await _discard(conn)
                    if isinstance(exc, Exception):  # asyncmy turns a cancellation into its own error
                        raise asyncio.CancelledError() from exc
                    raise

    async def _run(self, write: bool, fn: Callable[..., T], *args: Any, _retry: bool = True, **kwargs: Any) -> T:
        """``fn(sync_connection, scope, *args)`` in one transaction on an async connection;
        a write the database undid as a deadlock victim runs again (unless ``_retry`` is
        False: a stream cannot be read twice)."""
        for attempt in range(db.WRITE_ATTEMPTS):
            try:
                async with self._connection(write) as conn:
                    return await conn.run_sync(fn, self.scope, *args, **kwargs)
            except DatabaseError as exc:
                if not (write and _retry) or attempt == db.WRITE_ATTEMPTS - 1 or not db.transient(exc.__cause__):
                    raise
            await asyncio.sleep(db.backoff(attempt))
        raise AssertionError("unreachable")

    # --- writes ------------------------------------------------------------------

    async def save(self, messages: Any, format: str | None = None, *, title: str | None = None,
                   metadata: dict[str, Any] | None = None, source_format: str | None = None,
                   progress: Callable[[int], None] | None = None, tags: Iterable[str] | None = None,
                   expires_at: datetime | None = None) -> str:
        """Store ``messages`` (in ``format``) as a new conversation and return its id.
        An iterator is read and written chunk by chunk, as by the sync store."""
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        fields.update(progress=progress, source_format=self._source_format(format, source_format))
        conversation_id = new_id()
        if isinstance(messages, Iterator):
            await self._run(True, ops.save_stream, conversation_id, self._chunks(messages, format), _retry=False,
                            **fields)
        else:
            await self._run(True, ops.save, conversation_id, self._new_messages(messages, format, conversation_id),
                            **fields)
        return conversation_id

    async def save_many(self, conversations: Iterable[tuple[Any, dict[str, Any]]], format: str | None = None, *,
                        progress: Callable[[int], None] | None = None) -> list[str]:
        """Store several new conversations in one transaction, all or none; see
        :meth:`store.ConversationStore.save_many`."""
        planned = self._planned(conversations, format)
        await self._run(True, ops.save_many, planned, progress=progress)
        return [conversation_id for conversation_id, _, _ in planned]

    async def update(self, conversation_id: str, *, title: str | None = listing.UNSET,
                     metadata: dict[str, Any] | None = listing.UNSET, tags: Iterable[str] | None = listing.UNSET,
                     expires_at: datetime | None = listing.UNSET) -> ConversationInfo:
        """Change a conversation's own fields; see :meth:`store.ConversationStore.update`."""
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        return await self._run(True, listing.update, conversation_id, **fields)

    async def conversation_for(self, key: str, *, title: str | None = None, metadata: dict[str, Any] | None = None,
                               tags: Iterable[str] | None = None, expires_at: datetime | None = None) -> str:
        """The id of the conversation named ``key`` in this namespace, created empty if
        there is none; concurrent callers all get the same one."""
        self._check_required(key=key)  # None would find a conversation without a key
        self._check_conversation(key=key)
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        if (found := await self._run(False, ops.by_key, key)) is not None:
            return found
        try:
            await self._run(True, ops.new_conversation, new_id(), key=key, **fields)
        except DatabaseError as exc:
            if not isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise  # an IntegrityError means another writer created it first: theirs is the one
        found = await self._run(False, ops.by_key, key)
        assert found is not None
        return found

    async def append(self, conversation_id: str, messages: Any, format: str | None = None, *,
                     progress: Callable[[int], None] | None = None) -> None:
        """Add ``messages`` to the end of a conversation, all or nothing; concurrent
        appends to one conversation each land as one contiguous run."""
        if isinstance(messages, Iterator):
            await self._run(True, ops.append_stream, conversation_id, self._chunks(messages, format), _retry=False,
                            progress=progress)
        else:
            await self._run(True, ops.append, conversation_id, self._canonical(messages, format), progress=progress)

    async def pop(self, conversation_id: str, n: int = 1, format: str | None = None) -> Any:
        """Remove the last ``n`` messages and return them in ``format`` (oldest first)."""
        target = self._target(format)
        return self._output(await self._run(True, ops.pop, conversation_id, n), target, False, None)

    async def pop_item(self, conversation_id: str, format: str | None = None) -> Any:
        """Remove the newest element of the conversation as ``format`` writes it and return
        it (None when there is none), in one transaction: see ``ConversationStore.pop_item``."""
        return await self._run(True, ops.pop_item, conversation_id, self._item_split(self._target(format)))

    async def replace(self, conversation_id: str, messages: Any, format: str | None = None, *,
                      progress: Callable[[int], None] | None = None) -> None:
        """Replace every message of a conversation with ``messages``, all or nothing."""
        canonical = self._canonical(messages, format)
        await self._run(True, ops.replace, conversation_id, canonical, progress=progress)

    async def truncate(self, conversation_id: str, keep: int) -> int:
        """Remove the messages from index ``keep`` on; return how many were removed."""
        return await self._run(True, ops.truncate, conversation_id, keep)

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation and everything stored with it."""
        await self._run(True, ops.delete, conversation_id)

    async def prune(self, older_than: timedelta | datetime | None = None, *, dry_run: bool = False,
                    progress: Callable[[int], None] | None = None) -> retention.PruneReport:
        """Delete conversations not written to since a cutoff; see :meth:`store.ConversationStore.prune`."""
        report = retention.plan(older_than, dry_run)
        due = retention.due_before(report)
        if dry_run:
            retention.record(report, await self._run(False, retention.count_due, due), None)
        else:
            while retention.record(report, await self._run(True, retention.prune_batch, due), progress):
                pass
        return report

    # --- reads -------------------------------------------------------------------

    async def load(self, conversation_id: str, format: str | None = None, *, last: int | None = None,
                   strict: bool = False, on_loss: Callable[[Loss], None] | None = None) -> Any:
        """The conversation in ``format`` (``last=N``: the recent window, widened to keep
        tool calls with their results)."""
        target = self._target(format)
        read = self._lookup(ops.load, conversation_id, last, target) if ops.windowed(last, target) \
            else self._run(False, ops.load, conversation_id, last, target)  # a window: usually one statement
        return self._loaded(await read, target, strict, on_loss)

    async def export(self, conversation_id: str, format: str | None = None, *, strict: bool = False,
                     on_loss: Callable[[Loss], None] | None = None,
                     chunk: int = streaming.CHUNK) -> AsyncIterator[Any]:
        """The conversation's messages in ``format``, one at a time, in bounded memory
        (see :meth:`store.ConversationStore.export`)."""
        check_chunk(chunk)  # 0 would cut forever
        target = self._target(format)
        if not self._streams(target):
            for value in self._export_part(await self.load_messages(conversation_id), 0, target, strict, on_loss):
                yield value
            return
        async with self._connection(False) as conn:
            start = 0
            for stop in await conn.run_sync(streaming.safe_cuts, self.scope, conversation_id, chunk):
                items, part = await conn.run_sync(ops.part, self.scope, conversation_id, start, stop, target)
                for value in items if items is not None else self._export_part(part, start, target, strict, on_loss):
                    yield value
                start = stop

    async def load_messages(self, conversation_id: str, *, last: int | None = None) -> list[Message]:
        return (await self.get_conversation(conversation_id, last=last)).messages

    async def get_conversation(self, conversation_id: str, *, last: int | None = None) -> Conversation:
        """The conversation with its canonical messages: at most four statements."""
        return await self._run(False, ops.get_conversation, conversation_id, last)

    async def info(self, conversation_id: str) -> ConversationInfo:
        return await self._run(False, listing.describe, conversation_id)

    async def usage(self, conversation_id: str) -> usage.ConversationUsage:
        """The conversation's token usage; see :meth:`store.ConversationStore.usage`."""
        return await self._run(False, usage.conversation_usage, conversation_id)

    async def list_conversations(self, *, key: str | None = None, tags: Iterable[str] | None = None,
                                 metadata: dict[str, Any] | None = None, source_format: str | None = None,
                                 created_after: datetime | None = None, created_before: datetime | None = None,
                                 updated_after: datetime | None = None, updated_before: datetime | None = None,
                                 order_by: listing.Order = "created_at", descending: bool = True,
                                 limit: int | None = None, cursor: str | None = None) -> Page[ConversationInfo]:
        """One page of the namespace's conversations; see :meth:`store.ConversationStore.list_conversations`."""
        return await self._run(
            False, listing.list_page, key=key, tags=tags, metadata=metadata, source_format=source_format,
            created_after=created_after, created_before=created_before, updated_after=updated_after,
            updated_before=updated_before, order_by=order_by, descending=descending, limit=limit,
            cursor=cursor)

    async def fork(self, conversation_id: str, at: int | None = None, *, key: str | None = None,
                   title: str | None = listing.UNSET, metadata: dict[str, Any] | None = listing.UNSET,
                   tags: Iterable[str] | None = listing.UNSET, expires_at: datetime | None = None,
                   allow_pending: bool = False) -> str:
        """A fork sharing the first ``at`` messages; see :meth:`store.ConversationStore.fork`."""
        fork_id = new_id()
        fields = self._fields(title=title, metadata=metadata, tags=tags, expires_at=expires_at)
        self._check_conversation(key=key)
        await self._run(True, forks.fork, conversation_id, fork_id, at, allow_pending=allow_pending, key=key,
                        **fields)
        return fork_id

    async def lineage(self, conversation_id: str) -> list[ConversationInfo]:
        """The conversation and the ones it was forked from; see :meth:`store.ConversationStore.lineage`."""
        return await self._run(False, forks.lineage, conversation_id)

    async def search(self, query: str, *, role: str | None = None, kind: str | None = None,
                     conversation_id: str | None = None, metadata: dict[str, Any] | None = None,
                     limit: int | None = search_.DEFAULT_PAGE,
                     cursor: str | None = None, index: bool = True) -> Page[search_.SearchHit]:
        """One page of full-text hits; see :meth:`store.ConversationStore.search`."""
        args = dict(role=role, kind=kind, conversation_id=conversation_id, metadata=metadata, limit=limit,
                    cursor=cursor)
        if not index:
            return await self._run(False, search_.search, query, indexed=True, **args)
        try:
            return await self._run(False, search_.search, query, **args)
        except search_.IndexBehind:
            await self._run(True, search_.catch_up)
        return await self._run(False, search_.search, query, indexed=True, **args)

    async def index_pending(self) -> int:
        """How many conversations hold messages the search index does not have yet."""
        return await self._run(False, search_.pending)

    async def index(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Bring the search index up to date; see :meth:`store.ConversationStore.index`."""
        total = await self.index_pending()
        done = 0
        while some := await self._run(True, search_.catch_up, search_.BATCH):
            done += some
            if progress is not None:
                progress(done, max(total, done))
        return done

    async def get_tool_call(self, call_id: str, conversation_id: str | None = None) -> ToolCallRecord:
        self._check_required(call_id=call_id)
        self._check_lookup(call_id=call_id)
        return await self._lookup(toolcalls.get_tool_call, call_id, conversation_id)

    async def find_tool_calls(self, *, name: str | None = None, status: ToolStatus | None = None,
                              call_id: str | None = None, conversation_id: str | None = None,
                              limit: int | None = toolcalls.DEFAULT_PAGE,
                              cursor: str | None = None) -> Page[ToolCallRecord]:
        """One page of the matching tool calls; see :meth:`store.ConversationStore.find_tool_calls`."""
        self._check_lookup(call_id=call_id, name=name)
        return await self._lookup(toolcalls.find_tool_calls, name=name, status=status, call_id=call_id,
                                  conversation_id=conversation_id, limit=limit, cursor=cursor)

    async def _lookup(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A read that is usually one statement: see ``ConversationStore._lookup``."""
        try:
            async with self._connection(False, one_statement=True) as conn:
                return await conn.run_sync(fn, self.scope, *args, **kwargs)
        except db.SnapshotNeeded:
            return await self._run(False, fn, *args, **kwargs)


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)  # Python 3.11+
    return bool(cancelling and cancelling())


async def _discard(conn: AsyncConnection) -> None:
    """Close the driver connection of an operation that was cancelled (or interrupted)
    part-way: its protocol state is unknown, and returned to the pool it could stay
    inside a transaction (asyncpg then turns the next BEGIN into a savepoint, and later
    "commits" only release it). Shielded, so a second cancellation cannot skip it."""
    try:
        await asyncio.shield(conn.invalidate())
    except Exception:  # noqa: BLE001 - already broken: being dropped is all it needs
        pass
