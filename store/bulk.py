"""Batch inserts at driver speed.

``conn.execute(table.insert(), rows)`` builds every row's parameters through the
compiler, one dictionary at a time. For a batch of thousands of rows that costs
more than the database does, so rows go to the driver's own ``executemany`` as
tuples, each value passed through its column's bind processor (the same
conversions SQLAlchemy would apply: UUIDs, JSON, NUL escapes, dates). On
PostgreSQL through psycopg's sync driver they are streamed with COPY instead,
the server's own bulk path.

A statement names only the columns some row of the batch sets: the others are NULL
anyway, and a bound NULL is not free (Python's ``sqlite3`` looks an adapter up for
every ``None`` it binds: 9 NULLs cost a message row 5 us, half its insert). Where a
column some rows set is NULL in others, SQLite's statement takes ``NULLIF(?, 0)`` for it
and binds 0 for the NULLs of a text column (``_Insert.zeroed``).

Rows come as dicts of every column (:func:`prepare`), or already listed, each a list of
the columns some row sets in table order (:func:`listed`, :func:`prepare_listed`): the
one pass (``store.onepass``) builds its rows so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from functools import lru_cache
from itertools import compress, repeat
from operator import is_not, itemgetter
from typing import Any, NamedTuple

import sqlalchemy as sa

from .gcpause import paused_gc
from .prepared import driver_execute, sync_psycopg, wrap_driver_error


class _Insert:
    def __init__(self, table: sa.Table, dialect: sa.Dialect, keys: tuple[str, ...]) -> None:
        compiled = table.insert().compile(dialect=dialect, column_keys=list(keys))
        self.sql = str(compiled)
        self.positional = compiled.positional
        self.keys = list(compiled.positiontup or []) if compiled.positional else list(keys)
        assert set(self.keys) == set(keys), "a column default would add a column the rows do not hold"
        self.values = itemgetter(*self.keys)
        types = {c.key: c.type.dialect_impl(dialect) for c in table.columns}
        # Only the columns that need converting are touched per row, by position.
        self.processed = [(i, p) for i, k in enumerate(self.keys)
                          if (p := types[k].bind_processor(dialect)) is not None]
        # Text that keeps its value unless it holds a NUL (PostgreSQL): a column's values are
        # checked at once, and converted one by one only where one of them needs it.
        self.checked = {i: check for i, _ in self.processed
                        if (check := getattr(types[self.keys[i]], "any_escaped", None)) is not None}
        columns = ", ".join(dialect.identifier_preparer.quote(k) for k in self.keys)
        name = dialect.identifier_preparer.format_table(table)
        self.copy_sql = f"COPY {name} ({columns}) FROM STDIN"
        # Python's sqlite3 binds a None through its adapter lookup (~0.3 us; an int ~0.02 us): a nullable
        # text column binds 0 for NULL instead, under NULLIF(?, 0) (no text equals an integer).
        self.zeroed = [i for i, k in enumerate(self.keys) if dialect.name == "sqlite" and table.c[k].nullable
                       and isinstance(getattr(types[k], "impl_instance", types[k]), sa.String)]
        if self.zeroed:
            marks = ", ".join("NULLIF(?, 0)" if i in self.zeroed else "?" for i in range(len(self.keys)))
            self.sql = f"INSERT INTO {name} ({columns}) VALUES ({marks})"

    def tuples(self, rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
        """Each row's values in column order, converted."""
        values = self.values
        return self.converted([list(values(row)) for row in rows])

    def converted(self, out: list[list[Any]]) -> list[list[Any]]:
        """``out`` with the columns that need it converted, in place. Repeated values (the batch's
        conversation id, a message's id on each of its blocks) are converted once."""
        for i, process in self.processed:
            if (check := self.checked.get(i)) is not None:
                present = list(filter(None, map(itemgetter(i), out)))  # "" and None stay as they are
                if not present or not check(present):
                    continue
            seen: dict[str, Any] = {}
            for vals in out:
                if (v := vals[i]) is None:
                    continue
                if type(v) is not str:
                    vals[i] = process(v)
                elif (done := seen.get(v)) is not None:
                    vals[i] = done
                else:
                    vals[i] = seen[v] = process(v)
        for i in self.zeroed:
            for vals in out:
                if vals[i] is None:
                    vals[i] = 0
        return out

    def params(self, out: list[list[Any]]) -> list[Any]:
        """Converted rows (:meth:`tuples`, :meth:`converted`) as the driver takes them."""
        if self.positional:  # sqlite3 and PyMySQL take lists as they take tuples: no copy a row
            return out
        keys = self.keys
        return [dict(zip(keys, vals)) for vals in out]


COPY_FROM = 64
"""Smaller batches (an agent's append) take one pipelined INSERT: COPY's own handshake
costs more round trips than it saves."""


@lru_cache(maxsize=256)
def _statement(table: sa.Table, dialect: sa.Dialect, keys: tuple[str, ...]) -> _Insert:
    return _Insert(table, dialect, keys)


def set_keys(table: sa.Table, rows: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The columns some row sets (not None), in table order: the first row's, then the column's values
    counted at C speed (most columns a batch leaves NULL it leaves NULL in every row)."""
    if not rows:
        return ()
    first, n = rows[0], len(rows)
    return tuple(key for key, nullable in _columns(table) if not nullable or first[key] is not None
                 or n > 1 and list(map(itemgetter(key), rows)).count(None) != n)


def bound(dialect: sa.Dialect, column: sa.Column[Any], value: Any) -> Any:
    """``value`` as the driver binds it in ``column`` (its bind processor's result, or itself)."""
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)


def sent_as_built(batch_rows: list[list[Any]], statement: _Insert) -> Batch:
    """Rows already the driver's parameters for ``statement`` (``store.onepass.linked_rows``: the
    values bound, NULL as 0 where the statement takes ``NULLIF(?, 0)``): sent as they are."""
    return Batch(statement, batch_rows, False)


def union(table: sa.Table, *keys: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of any of ``keys``, in table order."""
    every = set().union(*keys)
    return tuple(key for key, _ in _columns(table) if key in every)


@lru_cache(maxsize=16)
def _columns(table: sa.Table) -> tuple[tuple[str, bool], ...]:
    """Each column's key, and whether it takes NULL (a table's columns are slow to walk: an append
    walks three)."""
    return tuple((c.key, bool(c.nullable)) for c in table.columns)


class Batch(NamedTuple):
    """A batch's statement and its parameters, built (:func:`prepare`) before it is sent (:func:`send`)."""

    statement: _Insert
    params: list[Any]
    copy: bool


def prepare(dialect: sa.Dialect, table: sa.Table, rows: Sequence[dict[str, Any]],
            keys: tuple[str, ...] | None = None) -> Batch | None:
    """The statement and parameters of ``rows`` (dicts holding every column; ``keys``: the columns some
    row sets, where known, see :func:`set_keys`); None for no rows. Pure CPU."""
    if not rows:
        return None
    statement = _statement(table, dialect, set_keys(table, rows) if keys is None else keys)
    with paused_gc():
        return _batch(dialect, statement, statement.tuples(rows))


def prepare_listed(dialect: sa.Dialect, table: sa.Table, rows: list[list[Any]],
                   keys: tuple[str, ...]) -> Batch | None:
    """:func:`prepare` of rows already listed in ``keys`` order, the columns some row sets (:func:`listed`),
    converted in place: the rows are the driver's then, and written once."""
    if not rows:
        return None
    statement = _statement(table, dialect, keys)
    assert statement.keys == list(keys), "keys in table order"
    with paused_gc():
        return _batch(dialect, statement, statement.converted(rows))


def _batch(dialect: sa.Dialect, statement: _Insert, converted: list[list[Any]]) -> Batch:
    copy = len(converted) >= COPY_FROM and sync_psycopg(dialect)
    return Batch(statement, converted if copy else statement.params(converted), copy)


def listed(table: sa.Table, rows: Sequence[dict[str, Any]]) -> tuple[list[list[Any]], tuple[str, ...]]:
    """Rows as lists of the columns some row sets (:func:`set_keys`), in table order, and those columns."""
    keys = set_keys(table, rows)
    if not keys:
        return [], keys
    values = itemgetter(*keys)
    return ([list(values(row)) for row in rows] if len(keys) > 1 else [[values(row)] for row in rows]), keys


def trimmed(table: sa.Table, keys: tuple[str, ...], rows: list[list[Any]]) -> tuple[list[list[Any]], tuple[str, ...]]:
    """Listed ``rows`` of ``keys`` with only the columns some row sets (not None) or that take no NULL,
    and those columns. One row (an agent's append) is read at once; more, each column is scanned until
    its first value (a chunk of texts sets no call id)."""
    if not rows:
        return rows, ()
    not_null = _not_null(table)
    if len(rows) == 1:
        row, = rows
        taken = [value is not None or key in not_null for key, value in zip(keys, row)]
        return [list(compress(row, taken))], tuple(compress(keys, taken))
    to = tuple(key for i, key in enumerate(keys) if key in not_null
               or any(map(is_not, map(itemgetter(i), rows), repeat(None))))
    return narrowed(rows, keys, to), to


@lru_cache(maxsize=16)
def _not_null(table: sa.Table) -> frozenset[str]:
    return frozenset(key for key, nullable in _columns(table) if not nullable)


def narrowed(rows: list[list[Any]], keys: tuple[str, ...], to: tuple[str, ...]) -> list[list[Any]]:
    """Listed rows of ``keys`` as rows of ``to`` (a part of ``keys``, or more of the table's columns,
    None in each row)."""
    if to == keys:
        return rows
    at = {key: i for i, key in enumerate(keys)}
    picks = [at.get(key) for key in to]
    return [[None if i is None else row[i] for i in picks] for row in rows]


def send(conn: sa.Connection, batch: Batch | None, *, defer: bool = False) -> Callable[[], None] | None:
    """Send a prepared batch in one executemany (or COPY). With ``defer``, a COPY's rows are sent and
    the wait for the server to take them (its end) is returned to be called later (``rows.insert``
    builds the next chunk meanwhile); else, and for an executemany, the batch is done on return."""
    if batch is None:
        return None
    if not batch.copy:
        driver_execute(conn, batch.statement.sql, batch.params, many=True)
        return None
    end = _copy(conn, batch.statement, batch.params)
    if defer:
        return end
    end()
    return None


def insert(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]],
           keys: tuple[str, ...] | None = None) -> None:
    """Insert ``rows`` (dicts holding every column) in one executemany (or COPY); ``keys``: the
    columns some row sets, where known (:func:`set_keys`)."""
    send(conn, prepare(conn.dialect, table, rows, keys))


def _copy(conn: sa.Connection, statement: _Insert, rows: list[list[Any]]) -> Callable[[], None]:
    """Send ``rows`` through COPY; the COPY's end (the wait for the server) is returned."""
    raw = conn.connection.dbapi_connection
    assert raw is not None
    error = conn.dialect.loaded_dbapi.Error
    try:
        with ExitStack() as stack:  # closed here on an error; else handed on open, to end the COPY later
            copy = stack.enter_context(stack.enter_context(raw.cursor()).copy(statement.copy_sql))
            for values in rows:
                copy.write_row(values)
            opened = stack.pop_all()
    except error as failed:  # the raw cursor bypasses SQLAlchemy
        raise wrap_driver_error(conn, failed, statement.copy_sql, None) from failed

    def end() -> None:
        try:
            opened.close()
        except error as failed:
            raise wrap_driver_error(conn, failed, statement.copy_sql, None) from failed
    return end
