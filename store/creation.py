"""Creating convstore's tables in a new database, safely when many first users race.

:func:`ensure_schema` runs on open: a database at the head revision is used as it is, an
empty one gets the tables (said in the log), anything else is refused. Creation runs under a
lock held in the database itself, and a first creation that was killed half-way on
MariaDB/MySQL (whose DDL commits statement by statement) is told apart from an old database.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from .db import (CREATING, VERSION_TABLE, current_revision_on, head_revision, known_revisions, log, run_alembic,
                 write_connection)
from .errors import DatabaseError, SchemaOutdatedError
from .schema import metadata

SCHEMA_LOCK_TIMEOUT_S = 300
_SCHEMA_LOCK_KEY = 0x636F6E7673746F72  # "convstor": PostgreSQL's advisory locks are per database
_IN_PROCESS = threading.Lock()  # Alembic's context is process-wide: one command at a time


@contextmanager
def schema_change(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection in a transaction that holds convstore's schema lock, taken in the
    database so that any number of first users (threads, processes, hosts) create or
    upgrade the tables one at a time; whoever comes next sees the new revision. The lock:
    an advisory lock on PostgreSQL, ``GET_LOCK`` on MariaDB/MySQL (held past the commit,
    as their DDL commits by itself), the write lock of ``BEGIN IMMEDIATE`` on SQLite."""
    with _IN_PROCESS, write_connection(engine) as conn:
        if conn.dialect.name not in ("mysql", "mariadb"):
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                yield conn
            return
        name = f"convstore.schema.{conn.exec_driver_sql('SELECT DATABASE()').scalar()}"[:64]
        got = conn.exec_driver_sql("SELECT GET_LOCK(%s, %s)", (name, SCHEMA_LOCK_TIMEOUT_S)).scalar()
        conn.commit()
        if got != 1:
            raise DatabaseError(f"waited {SCHEMA_LOCK_TIMEOUT_S} s for another process creating or "
                                f"upgrading convstore's tables in {engine.url.render_as_string(hide_password=True)}")
        try:
            with conn.begin():
                yield conn
        finally:
            conn.exec_driver_sql("SELECT RELEASE_LOCK(%s)", (name,))
            conn.commit()


def missing_file(url: sa.URL) -> bool:
    """Whether ``url`` names a SQLite file that does not exist (which the driver would create empty)."""
    name = url.database
    if url.get_backend_name() != "sqlite" or not name or name == ":memory:" or name.startswith("file:"):
        return False
    return not Path(name).exists()


def refuse_missing_file(url: sa.URL, *, create: bool) -> None:
    """With ``create=False``, a SQLite file that does not exist is refused before the
    driver would create it empty."""
    if not create and missing_file(url):
        raise SchemaOutdatedError(url.render_as_string(hide_password=True), None, head_revision())


def ensure_schema(engine: sa.Engine, *, create: bool = True) -> bool:
    """Bring an empty database to the head revision; refuse one at another revision.
    Safe when many processes open a new database at once (see :func:`schema_change`).

    Returns True when it created the tables.
    """
    refuse_missing_file(engine.url, create=create)
    with engine.connect() as conn:
        if current_revision_on(conn) == head_revision():
            return False
    # Anything else is decided under the lock: another process may be creating the tables
    # right now (on MariaDB/MySQL its half-made tables and first revision are visible).
    with schema_change(engine) as conn:
        if not schema_missing(conn, create=create):
            return False  # another process created it while this one waited
        create_schema(conn)
    return True


def schema_missing(conn: sa.Connection, *, create: bool) -> bool:
    """True for an empty database that may be created; False at the head revision;
    :class:`SchemaOutdatedError` otherwise. Run under :func:`schema_change`."""
    head = head_revision()
    current = current_revision_on(conn)
    if current == head:
        return False
    url = conn.engine.url.render_as_string(hide_password=True)
    if current is not None:
        if create and _killed_at(conn, current):
            return True  # made again (create_schema)
        raise SchemaOutdatedError(url, current, head)
    if _present(conn) and not _interrupted_creation(conn):
        raise SchemaOutdatedError(url, current, head)
    if not create:
        raise SchemaOutdatedError(url, None, head)
    return True


def _creating(conn: sa.Connection) -> bool:
    return sa.inspect(conn).has_table(CREATING)


def _killed_at(conn: sa.Connection, current: str) -> bool:
    """Whether a first creation was killed after recording revision ``current`` (MariaDB/MySQL
    record each one as it goes): its marker table is there, the revision is ours, nothing is stored."""
    return current in known_revisions() and _creating(conn) and _all_empty(conn)


def _all_empty(conn: sa.Connection) -> bool:
    return not any(_holds_rows(conn, name) for name in _our_table_names(conn))


def _holds_rows(conn: sa.Connection, name: str) -> bool:
    return conn.execute(sa.select(sa.literal(1)).select_from(sa.table(name)).limit(1)).first() is not None


def _our_table_names(conn: sa.Connection) -> list[str]:
    """convstore's tables present (of any revision), and copies a revision left aside."""
    names = sa.inspect(conn).get_table_names()
    return [n for n in names if n in _FIRST_COLUMNS or n in metadata.tables or re.fullmatch(r"_v\d+_(\w+)", n)]


def _present(conn: sa.Connection) -> list[sa.Table]:
    """convstore's tables in the database, children first."""
    names = set(sa.inspect(conn).get_table_names())
    return [t for t in reversed(metadata.sorted_tables) if t.name in names]


_FIRST_COLUMNS = {  # the tables as revision 0001 makes them, frozen here
    "conversations": {"id", "namespace", "key", "title", "source_format", "message_count", "created_at",
                      "updated_at", "metadata"},
    "blobs": {"conversation_id", "sha256", "media_type", "size", "data"},
    "messages": {"id", "conversation_id", "seq", "window_start", "role", "source_role", "name", "source_format",
                 "source_type", "external_id", "model", "created_at", "utc_offset", "usage", "metadata", "extras"},
    "blocks": {"id", "conversation_id", "message_id", "position", "kind", "text", "media_type", "tool_name",
               "call_id", "blob_sha256", "payload"},
    "tool_calls": {"id", "conversation_id", "call_id", "name", "status", "call_block_id", "call_seq",
                   "result_block_id", "result_seq"},
}


def _interrupted_creation(conn: sa.Connection) -> bool:
    """Whether convstore's tables are what a first creation left behind when it was killed
    before recording its first revision (MariaDB/MySQL have no transactional DDL: each table
    commits as it is made): Alembic's version table is there, empty, and every table of ours
    is empty. False when the tables may hold something (or are not ours): those are refused."""
    inspector = sa.inspect(conn)
    if not inspector.has_table(VERSION_TABLE):
        return False
    # Only tables as revision 0001 makes them (the first revision records itself last).
    return all({c["name"] for c in inspector.get_columns(table.name)} == _FIRST_COLUMNS.get(table.name)
               and not _holds_rows(conn, table.name) for table in _present(conn))


def finish_interrupted_creation(conn: sa.Connection) -> None:
    """Clear what a first creation killed half-way left (MariaDB/MySQL), so that it runs again."""
    current = current_revision_on(conn)
    if current is None:
        if _present(conn) and _interrupted_creation(conn):
            _drop_killed_creation(conn, "an interrupted first creation")
    elif current != head_revision() and _killed_at(conn, current):
        # It may have died inside the next revision, some of whose statements committed: going
        # on from ``current`` could repeat them.
        _drop_killed_creation(conn, f"a first creation interrupted at revision {current}")


def _drop_killed_creation(conn: sa.Connection, what: str) -> None:
    """Drop the empty tables ``what`` left, in the order of the keys found between them (whatever
    revision made them: MariaDB refuses to drop a table another one still references). The version
    row goes last, so that a kill here too leaves a database this finds again."""
    log.warning("convstore: %s holds the empty tables of %s; dropping them to create the schema again",
                conn.engine.url.render_as_string(hide_password=True), what)
    tables = sa.MetaData()
    tables.reflect(conn, only=_our_table_names(conn))
    tables.drop_all(conn)
    conn.exec_driver_sql(f"DELETE FROM {VERSION_TABLE}")


def create_schema(conn: sa.Connection) -> None:
    """``alembic upgrade head`` on ``conn`` (in its transaction), said in the log."""
    url = conn.engine.url.render_as_string(hide_password=True)
    log.info("convstore: new database %s, creating the tables (alembic upgrade head)", url)
    finish_interrupted_creation(conn)  # before the marker: with it, it tells a killed creation
    conn.exec_driver_sql(f"CREATE TABLE IF NOT EXISTS {CREATING} (started INTEGER)")
    run_alembic(conn, command.upgrade, "head")
    conn.exec_driver_sql(f"DROP TABLE {CREATING}")
