"""Engines for the three backends, transactions, and the schema revision (creating the tables
in a new database: :mod:`store.creation`)."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import RevisionError
from alembic.util import CommandError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine as _create_async_engine

from .errors import DatabaseError, InputError, SchemaTooNewError
from .schema import dumps, loads, metadata

log = logging.getLogger("convstore")

VERSION_TABLE = "convstore_alembic_version"
"""Our own version table, so convstore can share a database with an app that uses Alembic too."""
CREATING = "convstore_creating"
"""A table that exists only while a first creation runs: on MariaDB/MySQL, where each DDL
statement commits, one killed half-way leaves it behind, telling its leftovers from an old
database's."""

# Plain "postgresql://" and "mysql://" get the drivers convstore installs with its extras.
_DEFAULT_DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}
_ASYNC_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+psycopg", "mysql": "mysql+asyncmy",
                  "mariadb": "mariadb+asyncmy"}
_SYNC_ONLY = {"pysqlite", "pymysql", "mysqldb", "psycopg2"}
_ASYNC_ONLY = {"aiosqlite": "pysqlite", "asyncpg": "psycopg", "psycopg_async": "psycopg", "asyncmy": "pymysql",
               "aiomysql": "pymysql"}
"""An asyncio driver's sync counterpart: the sync store (and the command line) opens the same
database through it."""
SQLITE_BUSY_TIMEOUT_S = 60.0
SQLITE_PAGE_SIZE = 8192
"""For a new SQLite file (an existing one keeps its own). Tables keyed by conversation are
WITHOUT ROWID: on 4 KiB pages a row above ~1 KiB (a long text block, a message's stored
document) spills into an overflow page of its own; 8 KiB pages keep rows up to ~2 KiB inline
(the benchmark's messages: 2,244 instead of 3,087 bytes a message). 16 KiB pages save little
more (2,214) and cost an append 10%: a commit writes whole pages to the WAL (an append: 14, 28,
56 KB on 4, 8, 16 KiB pages)."""


def migrations_dir() -> Path:
    """The Alembic script directory: shipped inside the wheel, or the repository's own."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_migrations", here.parent / "migrations"):
        if (candidate / "env.py").exists():
            return candidate
    raise DatabaseError(f"convstore's migrations are missing (looked in {here / '_migrations'})")


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_EXTRAS = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql"}
_BACKEND_ALIASES = {"postgres": "postgresql"}  # what hosting providers hand out


def normalize_url(url: str | sa.URL, *, asynchronous: bool = False) -> sa.URL:
    """convstore's URL for ``url``: a SQLAlchemy URL, ``postgres://`` (as providers write
    it) or a plain SQLite file path (``./chat.db``), on the drivers convstore installs."""
    if isinstance(url, str) and "://" not in url and (
            url.endswith(_SQLITE_SUFFIXES) or url.startswith((".", "/", "~"))):
        url = f"sqlite:///{Path(url).expanduser()}"
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise InputError(f"not a database URL: {str(url)!r} (for example sqlite:///convstore.db, "
                         "./chat.db, postgresql://user@host/db or mysql://user@host/db)") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend in _BACKEND_ALIASES:
        parsed = parsed.set(drivername="+".join(filter(None, (_BACKEND_ALIASES[backend], driver))))
    with _driver_errors(parsed):
        return _on_our_drivers(parsed, asynchronous)


def _on_our_drivers(parsed: sa.URL, asynchronous: bool) -> sa.URL:
    if asynchronous and parsed.get_driver_name() in _SYNC_ONLY:
        parsed = parsed.set(drivername=_ASYNC_DRIVERS.get(parsed.get_backend_name(), parsed.drivername))
    elif not asynchronous and (sync := _ASYNC_ONLY.get(parsed.get_driver_name())) is not None:
        parsed = parsed.set(drivername=f"{parsed.get_backend_name()}+{sync}")
    parsed = parsed.set(drivername=_DEFAULT_DRIVERS.get(parsed.drivername, parsed.drivername))
    if parsed.get_backend_name() in ("mysql", "mariadb") and "charset" not in parsed.query:
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed


def create_engine(url: str | sa.URL, **kwargs: Any) -> sa.Engine:
    """An engine with convstore's settings: orjson for JSON, and on SQLite foreign
    keys, WAL, a busy timeout and ``BEGIN IMMEDIATE`` for writes."""
    parsed = normalize_url(url)
    with _driver_errors(parsed):
        engine = sa.create_engine(parsed, json_serializer=dumps, json_deserializer=loads,
                                  **_engine_options(parsed, kwargs))
    _configure(engine)
    return engine


def create_async_engine(url: str | sa.URL, **kwargs: Any) -> AsyncEngine:
    """The asyncio engine with the same settings, on the backend's async driver
    (aiosqlite, psycopg, asyncmy) unless the URL names one."""
    parsed = normalize_url(url, asynchronous=True)
    with _driver_errors(parsed):
        engine = _create_async_engine(parsed, json_serializer=dumps, json_deserializer=loads,
                                      **_engine_options(parsed, kwargs))
    _configure(engine.sync_engine)
    return engine


@contextmanager
def _driver_errors(url: sa.URL) -> Iterator[None]:
    """An unknown database or a driver that is not installed, said in one line with the fix."""
    shown = url.render_as_string(hide_password=True)
    try:
        yield
    except sa.exc.NoSuchModuleError:
        raise InputError(f"{shown}: unknown database or driver {url.drivername!r}; convstore works with "
                         "sqlite, postgresql (psycopg, asyncpg) and mysql/mariadb (pymysql, asyncmy)") from None
    except ImportError as exc:
        extra = _EXTRAS.get(url.get_backend_name())
        fix = f"pip install 'convstore[{extra}]'" if extra else f"pip install {exc.name}"
        raise DatabaseError(f"{shown}: its driver ({exc.name or url.get_driver_name()}) is not installed; "
                            f"{fix}") from None


def _engine_options(url: sa.URL, kwargs: dict[str, Any]) -> dict[str, Any]:
    # A server may drop an idle pooled connection (restart, timeout): a ping on checkout
    # replaces it, so the next operation does not fail for it.
    if url.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
    return kwargs


def _configure(engine: sa.Engine) -> None:
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine)
    elif engine.dialect.name in ("mysql", "mariadb"):
        _configure_mysql(engine)
    elif engine.dialect.name == "postgresql":
        _configure_postgresql(engine)


# Settings of every PostgreSQL connection convstore opens. convstore's statements are index
# probes and range scans that run in well under a millisecond, but one very large
# conversation skews the statistics of conversation_id until joins on it are estimated at
# ~1e9 rows. PostgreSQL then JIT-compiled every tool-call lookup (~290 ms each, for a 0.1 ms
# query), and kept planning it anew on every call instead of reusing its prepared plan
# (0.9 ms of planning for 0.1 ms of work): no JIT, and prepared statements keep their
# generic plan (every statement of convstore is driven by a key, whatever the values).
_POSTGRESQL_SETTINGS = ("SET jit = off", "SET plan_cache_mode = force_generic_plan")


def _configure_postgresql(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        try:
            for setting in _POSTGRESQL_SETTINGS:
                try:
                    cursor.execute(setting)
                except Exception:  # noqa: BLE001 - an older server without the setting: nothing to change
                    dbapi_conn.rollback()
                else:
                    dbapi_conn.commit()
        finally:
            cursor.close()


def _configure_mysql(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Writes run at READ COMMITTED: at InnoDB's default REPEATABLE READ their range
        # deletes and updates (a pop, a truncate) take next-key locks on the gaps between
        # conversations in the (conversation_id, seq) indexes, and writers of different
        # conversations deadlock. Every write locks its conversation's row first, so it
        # needs no gap lock. Reads keep REPEATABLE READ: their snapshot.
        if conn.get_execution_options().get("convstore_write", False):
            cursor = conn.connection.dbapi_connection.cursor()
            cursor.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            cursor.close()


_SYNC_TWINS = {"aiosqlite": "pysqlite", "asyncmy": "pymysql", "aiomysql": "pymysql", "asyncpg": "psycopg",
               "psycopg_async": "psycopg"}


def sync_url(url: sa.URL) -> sa.URL:
    """The URL of an async engine, on the backend's synchronous driver."""
    driver = _SYNC_TWINS.get(url.get_driver_name(), url.get_driver_name())
    return url.set(drivername=f"{url.get_backend_name()}+{driver}")


def _configure_sqlite(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take BEGIN out of the driver's hands so writes can BEGIN IMMEDIATE.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")  # a new file only: before WAL
        _enter_wal(cursor)
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # A write takes the lock up front: a deferred transaction that later wants to
        # write fails with "database is locked" instead of waiting for the busy timeout.
        options = conn.get_execution_options()
        if options.get("convstore_kept", False):
            return  # a kept connection's transactions are begun on the driver (store.writer._Held)
        write = options.get("convstore_write", False)
        # On the driver's own cursor: this runs before every transaction, an append included.
        cursor = conn.connection.dbapi_connection.cursor()
        statement = "BEGIN IMMEDIATE" if write else "BEGIN"
        try:
            cursor.execute(statement)
        except conn.dialect.loaded_dbapi.Error as exc:
            # SQLAlchemy calls this listener outside its error handling: wrap it as it would
            # ("database is locked" past the busy timeout becomes a DatabaseError, not the driver's).
            raise sa.exc.DBAPIError.instance(statement, None, exc, conn.dialect.loaded_dbapi.Error) from exc
        finally:
            cursor.close()


def _enter_wal(cursor: Any) -> None:
    """Turn the file to WAL (a no-op once it is). Turning a new file upgrades a read lock to
    a write lock, where SQLite does not call the busy handler: of two first opens at once,
    one failed at once with "database is locked". It waits here as the busy timeout would."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    pause = 0.001
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except Exception as exc:  # the driver's OperationalError (sqlite3 or aiosqlite)
            busy = getattr(exc, "sqlite_errorcode", None) == 5 or str(exc) == "database is locked"
            if not busy or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def read_options(dialect: sa.Dialect) -> dict[str, Any]:
    """Execution options of a read: one transaction, so that its statements
    see one snapshot (a write landing between them would otherwise give a window with a
    result but not its call, or a conversation without its messages). PostgreSQL's
    default READ COMMITTED takes a new snapshot per statement: reads ask for REPEATABLE
    READ, read only (never a serialization failure). SQLite (WAL) and InnoDB's default
    REPEATABLE READ keep the snapshot of a transaction's first read."""
    if dialect.name == "postgresql":
        return {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
    return {}


def one_statement_options(dialect: sa.Dialect) -> dict[str, Any] | None:
    """Execution options of a read that is usually a single statement (a tool-call lookup),
    which is a snapshot by itself: on PostgreSQL it runs in autocommit, sparing BEGIN and
    COMMIT, two of its three round trips. Should it need a second statement, it raises
    ``SnapshotNeeded`` and runs again with :func:`read_options`. None where a
    transaction costs no round trip of its own."""
    if dialect.name == "postgresql":
        return {"isolation_level": "AUTOCOMMIT", ONE_STATEMENT: True}
    return None


ONE_STATEMENT = "convstore_one_statement"


class SnapshotNeeded(Exception):
    """A read begun as one statement needs another (a result's binary payloads, a fork's
    window): the caller runs it again in a snapshot (see :func:`one_statement_options`)."""


WRITE_ATTEMPTS = 5
# A deadlock victim (or a serialization failure) was rolled back whole by the database:
# running it again is safe. PostgreSQL's SQLSTATEs; MariaDB/MySQL's error number.
_RETRY_SQLSTATES = {"40P01", "40001"}
_RETRY_ERRNOS = {1213}


def transient(exc: BaseException | None) -> bool:
    """Whether a failed write may simply be run again: the database undid it whole."""
    orig = getattr(exc, "orig", None)
    if orig is None:
        return False
    if (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)) in _RETRY_SQLSTATES:
        return True
    args = getattr(orig, "args", ())
    return bool(args) and args[0] in _RETRY_ERRNOS


def backoff(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt + 1``: short, growing, jittered."""
    return random.uniform(0.005, 0.02) * 2**attempt


def write_connection(engine: sa.Engine) -> sa.Connection:
    """A connection for writes: on SQLite its transactions begin with ``BEGIN IMMEDIATE``."""
    return engine.connect().execution_options(convstore_write=True)


@contextmanager
def write_transaction(engine: sa.Engine) -> Iterator[sa.Connection]:
    """One all-or-nothing write transaction."""
    with write_connection(engine) as conn, conn.begin():
        yield conn


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: sa.Engine) -> str | None:
    with database_errors(engine):
        return _current_revision(engine)


@contextmanager
def database_errors(engine: sa.Engine, doing: str = "database error on") -> Iterator[None]:
    """Driver and connection errors become a one-line :class:`DatabaseError`."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        url = engine.url.render_as_string(hide_password=True)
        orig = getattr(exc, "orig", None) or exc
        reason = " ".join(str(orig).split()) or type(orig).__name__
        raise DatabaseError(f"{doing} {url}: {reason}") from exc


def current_revision_on(conn: sa.Connection) -> str | None:
    return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def _current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        return current_revision_on(conn)


def run_alembic(conn: sa.Connection, action: Any, *args: str) -> None:
    """Run an Alembic command on ``conn`` (the cookbook's shared connection)."""
    config = alembic_config()
    config.attributes["connection"] = conn
    action(config, *args)


def _alembic(engine: sa.Engine, action: Any, *args: str) -> None:
    from .creation import finish_interrupted_creation, schema_change  # it builds on this module

    with database_errors(engine), schema_change(engine) as conn:
        if action is command.upgrade:
            finish_interrupted_creation(conn)
        run_alembic(conn, action, *args)


def known_revisions() -> set[str]:
    """Every schema revision this convstore's migrations know."""
    return {script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


@contextmanager
def _migration_errors(engine: sa.Engine, doing: str, revision: str) -> Iterator[None]:
    """Alembic's refusals as convstore's errors: a database at a revision this code does not
    know is :class:`SchemaTooNewError` (upgrade convstore, not the database); a target it
    cannot reach or resolve is :class:`InputError`."""
    try:
        yield
    except (CommandError, RevisionError) as exc:
        url = engine.url.render_as_string(hide_password=True)
        known = known_revisions()
        try:
            current = current_revision(engine)
        except DatabaseError:
            current = None
        if current is not None and current not in known:
            raise SchemaTooNewError(url, current, head_revision()) from exc
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"cannot {doing} {url} to {revision!r}: {reason} "
                         f"(known revisions: base, {', '.join(sorted(known))}; head is {head_revision()})") from exc


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    with _migration_errors(engine, "upgrade", revision):
        _alembic(engine, command.upgrade, revision)


def downgrade(engine: sa.Engine, revision: str) -> None:
    with _migration_errors(engine, "downgrade", revision):
        _alembic(engine, command.downgrade, revision)


def check(engine: sa.Engine) -> None:
    """Raise alembic's AutogenerateDiffsDetected if the tables differ from the models."""
    _alembic(engine, command.check)


__all__ = [
    "check", "create_engine", "current_revision", "database_errors", "downgrade",
    "head_revision", "metadata", "upgrade", "write_connection", "write_transaction",
]
