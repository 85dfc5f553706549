"""Hot statements compiled once per dialect and run on the driver's own cursor.

The hot statements (a conversation's row and window, its messages and blocks,
the append's reservation and link lookups) run on every load and every append.
Built and executed as SQLAlchemy constructs, each costs a cache-key walk, an
execution context, parameter processing and a result row per value conversion:
on an agent's one-message append or a ``last=50`` load that is most of the time.
Here each statement is compiled once per dialect and executed straight on the
DBAPI cursor of the caller's connection (inside its transaction); only the
parameters and columns whose type needs it (UUIDs, JSON, NUL escapes, SQLite
dates) are converted. Driver errors are wrapped as SQLAlchemy would wrap them
(``IntegrityError``, ...), a lost connection is invalidated, and listeners of the
``before_cursor_execute`` event still see every statement (``echo`` logging does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import sqlalchemy as sa


def driver_execute(conn: sa.Connection, sql: str, params: Any = None, *, many: bool = False,
                   fetch: bool = False) -> list[Any]:
    """Run ``sql`` on the driver cursor of ``conn``; the rows when ``fetch``."""
    raw = conn.connection.dbapi_connection
    assert raw is not None
    cursor = raw.cursor()
    dispatch = conn.dispatch
    if dispatch.before_cursor_execute:  # statement listeners (tracing, counting) still see every statement
        dispatch.before_cursor_execute(conn, cursor, sql, params, None, many)
    try:
        if many:
            cursor.executemany(sql, params)
        elif params is None:
            cursor.execute(sql)
        else:
            cursor.execute(sql, params)
        return cursor.fetchall() if fetch else []
    except conn.dialect.loaded_dbapi.Error as exc:
        raise wrap_driver_error(conn, exc, sql, cursor) from exc
    finally:
        cursor.close()


@contextmanager
def pipelined(conn: sa.Connection) -> Iterator[None]:
    """Statements run inside go out without waiting for each one's reply: psycopg's pipeline
    mode (sync driver; elsewhere a no-op), one round trip for a whole small write. Their
    errors surface by the end of the block, wrapped as SQLAlchemy would wrap them. COPY
    cannot run inside."""
    raw = conn.connection.dbapi_connection
    if not sync_psycopg(conn.dialect) or not hasattr(raw, "pipeline"):
        yield
        return
    try:
        with raw.pipeline():
            yield
    except conn.dialect.loaded_dbapi.Error as exc:
        raise wrap_driver_error(conn, exc, "(pipeline)", None) from exc


def sync_psycopg(dialect: sa.Dialect) -> bool:
    """psycopg's sync driver: the one with COPY and pipeline mode on the raw connection."""
    return dialect.driver == "psycopg" and not dialect.is_async


def wrap_driver_error(conn: sa.Connection, exc: Exception, sql: str, cursor: Any) -> sa.exc.DBAPIError:
    """A driver error raised past SQLAlchemy, as SQLAlchemy would raise it (``IntegrityError``,
    ...); a lost connection is invalidated so the pool does not hand it out again."""
    disconnect = conn.dialect.is_disconnect(exc, conn.connection.dbapi_connection, cursor)
    if disconnect:
        conn.invalidate(exc)
    return sa.exc.DBAPIError.instance(sql, None, exc, conn.dialect.loaded_dbapi.Error,
                                      connection_invalidated=disconnect, dialect=conn.dialect)


class Prepared:
    """A statement (select, or DML with or without RETURNING) whose parameters are
    all named ``bindparam`` values."""

    def __init__(self, statement: sa.Executable) -> None:
        self.statement = statement

    def run(self, conn: sa.Connection, **params: Any) -> list[list[Any]]:
        """Execute once; the result rows (none for DML without RETURNING)."""
        compiled = _compile(self, conn.dialect)
        rows = driver_execute(conn, compiled.sql, compiled.params(params), fetch=compiled.returns)
        return compiled.rows(rows)

    def column(self, conn: sa.Connection, **params: Any) -> list[Any]:
        """Execute once; the first column of the result rows, as the driver gives it (for
        a column whose type converts nothing)."""
        compiled = _compile(self, conn.dialect)
        return [row[0] for row in driver_execute(conn, compiled.sql, compiled.params(params), fetch=True)]

    def run_many(self, conn: sa.Connection, params: Sequence[dict[str, Any]]) -> None:
        """Execute once per parameter set, in one ``executemany``."""
        if params:
            compiled = _compile(self, conn.dialect)
            driver_execute(conn, compiled.sql, [compiled.params(dict(p)) for p in params], many=True)


class _Compiled:
    def __init__(self, statement: Any, dialect: sa.Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self.order = list(compiled.positiontup or []) if compiled.positional else None
        self.binds = {name: p for name, bind in compiled.binds.items()
                      if (p := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None}
        # Values the statement fixes itself (SQLite's OFFSET 0 beside a bound LIMIT)
        self.fixed = {name: value for name, value in compiled.params.items() if value is not None}
        columns = list(statement.exported_columns) if compiled.returning or statement.is_select else []
        self.returns = bool(columns)
        self.processed: list[tuple[int, Callable[[Any], Any]]] = [
            (i, p) for i, column in enumerate(columns)
            if (p := column.type.dialect_impl(dialect).result_processor(dialect, None)) is not None
        ]

    def params(self, params: dict[str, Any]) -> Any:
        if self.fixed:
            params = {**self.fixed, **params}
        for name, process in self.binds.items():
            if params.get(name) is not None:
                params[name] = process(params[name])
        return tuple(params[name] for name in self.order) if self.order is not None else params

    def rows(self, rows: list[Any]) -> list[list[Any]]:
        if not self.processed:
            return [list(row) for row in rows]
        out = []
        for row in rows:
            values = list(row)
            for i, process in self.processed:
                if values[i] is not None:
                    values[i] = process(values[i])
            out.append(values)
        return out


@lru_cache(maxsize=256)
def _compile(prepared: Prepared, dialect: sa.Dialect) -> _Compiled:
    return _Compiled(prepared.statement, dialect)
