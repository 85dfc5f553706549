"""Batch inserts at driver speed.

``conn.execute(table.insert(), rows)`` builds every row's parameters through the
compiler, one dictionary at a time. For a batch of thousands of rows that costs
more than the database does, so rows go to the driver's own ``executemany`` as
tuples, each value passed through its column's bind processor (the same
conversions SQLAlchemy would apply: UUIDs, JSON, NUL escapes, dates). On
PostgreSQL through psycopg's sync driver they are streamed with COPY instead,
the server's own bulk path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import sqlalchemy as sa


class _Insert:
    def __init__(self, table: sa.Table, dialect: sa.Dialect) -> None:
        compiled = table.insert().compile(dialect=dialect, column_keys=[c.key for c in table.columns])
        self.sql = str(compiled)
        order = list(compiled.positiontup or []) if compiled.positional else [c.key for c in table.columns]
        processors = {c.key: c.type.dialect_impl(dialect).bind_processor(dialect) for c in table.columns}
        self.keys = order
        self.steps: list[tuple[str, Callable[[Any], Any] | None]] = [(k, processors[k]) for k in order]
        self.positional = compiled.positional
        columns = ", ".join(dialect.identifier_preparer.quote(k) for k in order)
        self.copy_sql = f"COPY {dialect.identifier_preparer.format_table(table)} ({columns}) FROM STDIN"

    def params(self, rows: Sequence[dict[str, Any]]) -> list[Any]:
        steps = self.steps
        if self.positional:
            return [
                tuple(v if p is None or v is None else p(v) for k, p in steps for v in (row.get(k),))
                for row in rows
            ]
        return [{k: (v if p is None or v is None else p(v)) for k, p in steps for v in (row.get(k),)}
                for row in rows]


@lru_cache(maxsize=64)
def _statement(table: sa.Table, dialect: sa.Dialect) -> _Insert:
    return _Insert(table, dialect)


def insert(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` (dicts keyed by column; missing keys are NULL) in one executemany."""
    if not rows:
        return
    statement = _statement(table, conn.dialect)
    if conn.dialect.driver == "psycopg" and not conn.dialect.is_async:
        _copy(conn, statement, rows)
    else:
        conn.exec_driver_sql(statement.sql, statement.params(rows))


def _copy(conn: sa.Connection, statement: _Insert, rows: Sequence[dict[str, Any]]) -> None:
    steps = statement.steps
    raw = conn.connection.dbapi_connection
    assert raw is not None
    dbapi_error = conn.dialect.loaded_dbapi.Error
    try:
        with raw.cursor() as cursor, cursor.copy(statement.copy_sql) as copy:
            for row in rows:
                copy.write_row([v if p is None or v is None else p(v) for k, p in steps for v in (row.get(k),)])
    except dbapi_error as exc:  # the raw cursor bypasses SQLAlchemy: wrap as it would (IntegrityError, ...)
        raise sa.exc.DBAPIError.instance(statement.copy_sql, None, exc, dbapi_error, dialect=conn.dialect) from exc
