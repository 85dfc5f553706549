"""The connections a store's writes and reads run on.

SQLite takes one writer at a time (``BEGIN IMMEDIATE``), so a store loses no concurrency by
running its writes one at a time on a connection it keeps checked out, and each write skips the
pool's checkout and return and a new ``Connection``: an empty write transaction costs 82-91 us
the pool's way and 22 us on a kept connection, and an append's CPU fell from 547-667 to
393-516 us (``benchmarks/README.md``). PostgreSQL and MariaDB take concurrent writers: there
each write checks a connection out of the pool.

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
    """A store's writes one at a time on a connection it keeps (SQLite). The connection is
    dropped (back to the pool) after any error in a write, and never used by a process forked
    from the one that opened it."""

    def __init__(self, engine: sa.Engine) -> None:
        super().__init__(engine)
        self._lock = threading.Lock()
        self._conn: sa.Connection | None = None
        self._pid = os.getpid()

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        if self._pid != os.getpid():  # a forked child: its parent's lock and connection are not its own
            self._lock, self._conn, self._pid = threading.Lock(), None, os.getpid()
        # Another thread's write of this store: waited for as SQLite waits for another process's.
        if not self._lock.acquire(timeout=db.SQLITE_BUSY_TIMEOUT_S):
            url = self.engine.url.render_as_string(hide_password=True)
            raise DatabaseError(f"database error on {url}: database is locked (another write of this "
                                f"store held it for {db.SQLITE_BUSY_TIMEOUT_S:.0f} s)")
        try:
            conn = self._connection()
            try:
                with conn.begin():
                    yield conn
            except BaseException:
                self._drop()  # whatever the error left in it stays out of the next write
                raise
        finally:
            self._lock.release()

    def _connection(self) -> sa.Connection:
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            self._conn = db.write_connection(self.engine)
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(sa.exc.SQLAlchemyError):
                conn.close()

    def close(self) -> None:
        """Give the connection back to the pool (after a write in progress, if any)."""
        with self._lock:
            self._drop()


class Readers:
    """Each read on a connection of the pool (servers, and an engine handed to the store)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def connection(self) -> AbstractContextManager[sa.Connection]:
        """A connection for one read (its transaction is the caller's)."""
        return self.engine.connect()

    def close(self) -> None:
        pass


class KeptReaders(Readers):
    """A store's reads on connections it keeps (SQLite): each read takes an idle one, or opens one
    when all are in use, and puts it back after. A read skips the pool's checkout and return and a
    new ``Connection``: 25 of the 180 us of a window of 50 (``benchmarks/README.md``). A connection
    a read's error left in a transaction (or invalidated) is dropped; none is used by a process
    forked from the one that opened it. At most :data:`MAX_IDLE` are kept: the pool's other
    connections stay free for the store's writer and for the reads of a busier moment."""

    MAX_IDLE = 4  # the pool keeps 5 (SQLAlchemy's default), the writer one of them

    def __init__(self, engine: sa.Engine) -> None:
        super().__init__(engine)
        self._idle: list[sa.Connection] = []  # list.pop and list.append are atomic: no lock
        self._pid = os.getpid()

    @contextmanager
    def connection(self) -> Iterator[sa.Connection]:
        if self._pid != os.getpid():  # a forked child: its parent's connections are not its own
            self._idle, self._pid = [], os.getpid()
        try:
            conn = self._idle.pop()
        except IndexError:
            conn = self.engine.connect()
        try:
            yield conn
        finally:
            if conn.closed or conn.invalidated or conn.in_transaction() or self._pid != os.getpid() \
                    or len(self._idle) >= self.MAX_IDLE:
                with suppress(sa.exc.SQLAlchemyError):
                    conn.close()
            else:
                self._idle.append(conn)

    def close(self) -> None:
        """Give the idle connections back to the pool."""
        idle, self._idle = self._idle, []
        for conn in idle:
            with suppress(sa.exc.SQLAlchemyError):
                conn.close()


def readers_for(engine: sa.Engine, *, own: bool) -> Readers:
    """Kept connections on SQLite, for an engine the store made itself (see :func:`writer_for`)."""
    return KeptReaders(engine) if own and engine.dialect.name == "sqlite" else Readers(engine)


def writer_for(engine: sa.Engine, *, own: bool) -> Writer:
    """A kept connection on SQLite, for an engine the store made itself (``own``): an engine
    handed to several stores would lend each a connection of its pool for good."""
    return KeptWriter(engine) if own and engine.dialect.name == "sqlite" else Writer(engine)
