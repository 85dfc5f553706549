"""The connections a store's writes and reads run on.

SQLite takes one writer at a time (``BEGIN IMMEDIATE``), so a store loses no concurrency by
running its writes one at a time on a connection it keeps checked out, and each write skips the
pool's checkout and return and a new ``Connection``: an empty write transaction costs 82-91 us
the pool's way and 22 us on a kept connection, and an append's CPU fell from 547-667 to
393-516 us (``benchmarks/README.md``); sending BEGIN and COMMIT on the driver (:class:`_Held`)
took an empty write from 23-31 to 12-13 us, and an empty read from 18-22 to 7-9. PostgreSQL and
MariaDB take concurrent writers: there each write checks a connection out of the pool.

Reads on SQLite likewise run on connections the store keeps (:class:`KeptReaders`), one per read
in progress; on a server each read checks one out of the pool.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress

import sqlalchemy as sa

from . import db
from .errors import DatabaseError


class _Held:
    """A kept SQLite connection whose transactions are begun and ended on the driver's connection:
    SQLAlchemy's transaction around each (its objects, its events, the listener that sends
    ``BEGIN``) cost 11-18 us of an empty write's 23-31 and of an empty read's 18-22: 4% of an
    append. The connection holds one SQLAlchemy transaction open for its life instead, so that
    statements run through it never autobegin: bookkeeping only, as the driver's own BEGIN is off
    on SQLite (``db._configure_sqlite``) and SQLAlchemy's commit would be the driver's. Closing the
    connection rolls back whatever a failed statement left open."""

    __slots__ = ("conn", "_cursor", "_error")

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn.execution_options(convstore_kept=True)  # the begin listener leaves it alone
        try:
            self.conn.begin()
            self._cursor = self.conn.connection.dbapi_connection.cursor()
        except BaseException:
            self.close()
            raise
        self._error = self.conn.dialect.loaded_dbapi.Error

    def send(self, statement: str) -> None:
        """``statement`` (BEGIN, COMMIT, ...) on the driver's connection; its errors as SQLAlchemy's."""
        try:
            self._cursor.execute(statement)
        except self._error as exc:
            raise sa.exc.DBAPIError.instance(statement, None, exc, self._error) from exc

    def usable(self) -> bool:
        return not (self.conn.closed or self.conn.invalidated)

    def close(self) -> None:
        with suppress(sa.exc.SQLAlchemyError):
            self.conn.close()


class Writer:
    """Each write on a connection of the pool (servers, and an engine handed to the store)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def transaction(self) -> AbstractContextManager[sa.Connection]:
        """One all-or-nothing write transaction."""
        return db.write_transaction(self.engine)

    def close(self) -> None:
        pass


class KeptWriter(Writer):
    """A store's writes one at a time on a connection it keeps (SQLite), each between a
    ``BEGIN IMMEDIATE`` and a ``COMMIT`` of its own (see :class:`_Held`). The connection is
    dropped (back to the pool) after any error in a write, and never used by a process forked
    from the one that opened it."""

    def __init__(self, engine: sa.Engine) -> None:
        super().__init__(engine)
        self._lock = threading.Lock()
        self._held: _Held | None = None
        self._pid = os.getpid()

    def transaction(self) -> AbstractContextManager[sa.Connection]:
        return self  # one write at a time: __enter__ takes the lock, __exit__ gives it back

    def __enter__(self) -> sa.Connection:
        if self._pid != os.getpid():  # a forked child: its parent's lock and connection are not its own
            self._lock, self._held, self._pid = threading.Lock(), None, os.getpid()
        # Another thread's write of this store: waited for as SQLite waits for another process's.
        if not self._lock.acquire(timeout=db.SQLITE_BUSY_TIMEOUT_S):
            url = self.engine.url.render_as_string(hide_password=True)
            raise DatabaseError(f"database error on {url}: database is locked (another write of this "
                                f"store held it for {db.SQLITE_BUSY_TIMEOUT_S:.0f} s)")
        try:
            if self._held is None or not self._held.usable():
                self._held = _Held(db.write_connection(self.engine))
            self._held.send("BEGIN IMMEDIATE")
        except BaseException:
            self._drop()
            self._lock.release()
            raise
        return self._held.conn

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        try:
            if exc_type is not None:
                self._drop()  # whatever the error left in it stays out of the next write
                return
            assert self._held is not None
            try:
                self._held.send("COMMIT")
            except BaseException:
                self._drop()  # a commit that failed is rolled back: none of it is acknowledged
                raise
        finally:
            self._lock.release()

    def _drop(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.close()

    def close(self) -> None:
        """Give the connection back to the pool (after a write in progress, if any)."""
        with self._lock:
            self._drop()


class Readers:
    """Each read on a connection of the pool (servers, and an engine handed to the store)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @contextmanager
    def snapshot(self) -> Iterator[sa.Connection]:
        """A connection in one read transaction: one snapshot (see ``db.read_options``)."""
        with self.engine.connect() as conn:
            if options := db.read_options(conn.dialect):  # none on SQLite and MariaDB: no call per read
                conn = conn.execution_options(**options)
            with conn.begin():
                yield conn

    def close(self) -> None:
        pass


class KeptReaders(Readers):
    """A store's reads on connections it keeps (SQLite): each read takes an idle one, or opens one
    when all are in use, and puts it back after. A read skips the pool's checkout and return and a
    new ``Connection``: 25 of the 180 us of a window of 50 (``benchmarks/README.md``), and
    SQLAlchemy's transaction (:class:`_Held`). A connection whose read could not be ended (or
    invalidated) is dropped; none is used by a process forked from the one that opened it. At
    most :data:`MAX_IDLE` are kept: the pool's other connections stay free for the store's writer
    and for the reads of a busier moment."""

    MAX_IDLE = 4  # the pool keeps 5 (SQLAlchemy's default), the writer one of them

    def __init__(self, engine: sa.Engine) -> None:
        super().__init__(engine)
        self._idle: list[_Held] = []  # list.pop and list.append are atomic: no lock
        self._pid = os.getpid()

    @contextmanager
    def snapshot(self) -> Iterator[sa.Connection]:
        if self._pid != os.getpid():  # a forked child: its parent's connections are not its own
            self._idle, self._pid = [], os.getpid()
        try:
            held = self._idle.pop()
        except IndexError:
            held = _Held(self.engine.connect())
        ended = False
        try:
            held.send("BEGIN")
            try:
                yield held.conn
            except BaseException:
                with suppress(sa.exc.DBAPIError):  # a connection that cannot roll back is dropped below;
                    held.send("ROLLBACK")          # the read's own error is the one raised
                    ended = True
                raise
            held.send("COMMIT")
            ended = True
        finally:
            if ended and held.usable() and self._pid == os.getpid() and len(self._idle) < self.MAX_IDLE:
                self._idle.append(held)
            else:
                held.close()

    def close(self) -> None:
        """Give the idle connections back to the pool."""
        idle, self._idle = self._idle, []
        for held in idle:
            held.close()


def readers_for(engine: sa.Engine, *, own: bool) -> Readers:
    """Kept connections on SQLite, for an engine the store made itself (see :func:`writer_for`)."""
    return KeptReaders(engine) if own and engine.dialect.name == "sqlite" else Readers(engine)


def writer_for(engine: sa.Engine, *, own: bool) -> Writer:
    """A kept connection on SQLite, for an engine the store made itself (``own``): an engine
    handed to several stores would lend each a connection of its pool for good."""
    return KeptWriter(engine) if own and engine.dialect.name == "sqlite" else Writer(engine)
