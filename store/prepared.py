"""Read statements compiled once per dialect and run at driver level.

The hot reads (a conversation's row, its window start, its messages and blocks)
run on every load. Built and executed as SQLAlchemy constructs, each costs a
cache-key walk, parameter processing and a result row per value conversion:
on a ``last=50`` load that is most of the time. Here each statement is compiled
once per dialect; executing it passes the parameters straight to the driver, and
only the parameters and columns whose type needs it (UUIDs, JSON, NUL escapes,
SQLite dates) are converted.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import sqlalchemy as sa


class Prepared:
    """A select whose parameters are all named ``bindparam`` values."""

    def __init__(self, statement: sa.Select[Any]) -> None:
        self.statement = statement

    def run(self, conn: sa.Connection, **params: Any) -> list[list[Any]]:
        compiled = _compile(self, conn.dialect)
        rows = conn.exec_driver_sql(compiled.sql, compiled.params(params)).all()
        if not compiled.processed:
            return [list(row) for row in rows]
        out = []
        for row in rows:
            values = list(row)
            for i, process in compiled.processed:
                if values[i] is not None:
                    values[i] = process(values[i])
            out.append(values)
        return out


class _Compiled:
    def __init__(self, statement: sa.Select[Any], dialect: sa.Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self.order = list(compiled.positiontup or []) if compiled.positional else None
        self.binds = {name: p for name, bind in compiled.binds.items()
                      if (p := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None}
        self.processed: list[tuple[int, Callable[[Any], Any]]] = [
            (i, p) for i, column in enumerate(statement.selected_columns)
            if (p := column.type.dialect_impl(dialect).result_processor(dialect, None)) is not None
        ]

    def params(self, params: dict[str, Any]) -> Any:
        for name, process in self.binds.items():
            if params.get(name) is not None:
                params[name] = process(params[name])
        return tuple(params[name] for name in self.order) if self.order is not None else params


@lru_cache(maxsize=128)
def _compile(prepared: Prepared, dialect: sa.Dialect) -> _Compiled:
    return _Compiled(prepared.statement, dialect)
