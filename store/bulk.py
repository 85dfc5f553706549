"""Batch inserts at driver speed.

``conn.execute(table.insert(), rows)`` builds every row's parameters through the
compiler, one dictionary at a time. For a batch of thousands of rows that costs
more than the database does, so rows go to the driver's own ``executemany`` as
tuples, each value passed through its column's bind processor (the same
conversions SQLAlchemy would apply: UUIDs, JSON, NUL escapes, dates).
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
    conn.exec_driver_sql(statement.sql, statement.params(rows))
