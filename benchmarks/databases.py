"""A fresh, empty database per measurement, dropped afterwards.

SQLite: a new file in a temporary directory (WAL + ``synchronous=FULL`` is set by each contestant:
convstore's engine, the floors, and SQLite's own default, FULL, for the OpenAI Agents sessions).
PostgreSQL and MariaDB: ``CREATE DATABASE convstore_bench_<random>`` on the server, ``DROP`` after.
The servers default to this machine's; ``CONVSTORE_BENCH_PG`` / ``CONVSTORE_BENCH_MYSQL`` point
elsewhere (admin URLs, as for the tests).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

ADMIN_URLS = {
    "postgresql": os.environ.get("CONVSTORE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres"),
    "mariadb": os.environ.get("CONVSTORE_BENCH_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
BACKENDS = ("sqlite", "postgresql", "mariadb")
_DRIVERS = {"postgresql": "postgresql+psycopg", "mariadb": "mysql+pymysql"}


@dataclass(frozen=True)
class Database:
    """One empty database: its backend and how each kind of client reaches it."""

    backend: str
    url: sa.URL
    """A plain URL (``sqlite:///file``, ``postgresql://…``, ``mysql://…``) for convstore."""
    path: Path | None = None
    """The SQLite file (None on a server)."""

    @property
    def sqlalchemy_url(self) -> sa.URL:
        """With the synchronous driver named (psycopg, PyMySQL)."""
        return self.url.set(drivername=_DRIVERS.get(self.backend, self.url.drivername))

    @property
    def async_url(self) -> sa.URL:
        """For SQLAlchemy's asyncio extension (aiosqlite, asyncpg)."""
        driver = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg",
                  "mariadb": "mysql+aiomysql"}[self.backend]
        return self.url.set(drivername=driver)

    @property
    def libpq(self) -> str:
        """A libpq connection string (psycopg)."""
        u = self.url
        return f"host={u.host} port={u.port or 5432} user={u.username} dbname={u.database}"

    def mysql_args(self) -> dict[str, object]:
        u = self.url
        return {"host": u.host, "port": u.port or 3306, "user": u.username, "password": u.password or "",
                "database": u.database, "charset": "utf8mb4"}


@contextmanager
def fresh(backend: str) -> Iterator[Database]:
    if backend == "sqlite":
        yield from _sqlite()
    elif backend in ADMIN_URLS:
        yield from _server(backend)
    else:
        raise ValueError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")


def _sqlite() -> Iterator[Database]:
    directory = Path(tempfile.mkdtemp(prefix="convstore-bench-"))
    path = directory / "bench.db"
    try:
        yield Database("sqlite", sa.make_url(f"sqlite:///{path}"), path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _admin(backend: str) -> sa.Engine:
    url = sa.make_url(ADMIN_URLS[backend])
    url = url.set(drivername=_DRIVERS[backend])
    return sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


def _server(backend: str) -> Iterator[Database]:
    name = f"convstore_bench_{uuid.uuid4().hex[:12]}"
    admin = _admin(backend)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield Database(backend, sa.make_url(ADMIN_URLS[backend]).set(database=name))
    finally:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if backend == "postgresql" else ""
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
        admin.dispose()


_DROP_CACHES = "/proc/sys/vm/drop_caches"


def drop_page_cache() -> None:
    """Empty the OS's page cache of clean pages (Linux, as root; else nothing).
    On this shared VM a SQLite ingest ran 30-60% slower with the few hundred MB of pages the
    contestants before it had written still cached, and as fast as the first once they were not
    (thirty-eighth session, benchmarks/README.md). Call it after ``os.sync()``: dirty pages stay."""
    try:
        with open(_DROP_CACHES, "w") as knob:
            knob.write("1")
    except OSError:
        pass


def _sqlite_files(db: Database) -> tuple[Path, ...]:
    """The SQLite file and its ``-wal``, those that exist."""
    assert db.path is not None
    return tuple(f for f in (db.path, db.path.with_name(db.path.name + "-wal")) if f.exists())


def settle(db: Database) -> None:
    """After a bulk load, what the server would soon do by itself: PostgreSQL's ``ANALYZE`` (so
    that the planner knows the new tables; autovacuum would run it within a minute or so).
    SQLite: its files read once, back into the OS's page cache that a later contestant's ingest
    dropped (:func:`drop_page_cache`), so that every contestant's lookups start as warm.
    Not timed; done for every contestant alike."""
    if db.backend == "sqlite":
        for path in _sqlite_files(db):
            with path.open("rb") as f:
                while f.read(1 << 20):
                    pass
        return
    if db.backend != "postgresql":
        return
    import psycopg

    with psycopg.connect(db.libpq, autocommit=True) as conn:
        conn.execute("ANALYZE")


def reachable(backend: str) -> str | None:
    """None when the backend can be used, else why not."""
    if backend == "sqlite":
        return None
    try:
        with _admin(backend).connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure means "skip this backend"
        return " ".join(str(exc).split())[:200]
    return None


def settings(backend: str) -> str:
    """The settings that make a commit durable and the server's own cache, as the server reports them."""
    if backend == "sqlite":  # and whether an ingest starts on an empty page cache (measure.timed)
        cold = "emptied" if os.access(_DROP_CACHES, os.W_OK) else "kept (not root)"
        return f"journal_mode=WAL, synchronous=FULL, page cache before an ingest {cold}"
    queries = {
        "postgresql": ["SHOW fsync", "SHOW synchronous_commit", "SHOW shared_buffers", "SHOW server_version"],
        "mariadb": ["SELECT @@innodb_flush_log_at_trx_commit", "SELECT @@innodb_buffer_pool_size", "SELECT @@version"],
    }[backend]
    names = {"postgresql": ["fsync", "synchronous_commit", "shared_buffers", "version"],
             "mariadb": ["innodb_flush_log_at_trx_commit", "innodb_buffer_pool_size", "version"]}[backend]
    with _admin(backend).connect() as conn:
        values = [conn.exec_driver_sql(q).scalar() for q in queries]
    return ", ".join(f"{n}={v}" for n, v in zip(names, values, strict=True))


def size(db: Database) -> int:
    """Bytes the database takes on disk now (untimed; call it after :func:`settle`).

    SQLite: the file plus its ``-wal``, after ``PRAGMA wal_checkpoint(TRUNCATE)`` through a
    connection of its own. PostgreSQL: ``pg_database_size`` (tables, TOAST, indexes, catalogs; not
    the server's WAL). MariaDB: ``data_length + index_length`` of the database's tables after
    ``ANALYZE TABLE`` (InnoDB's allocated pages)."""
    return {"sqlite": _sqlite_size, "postgresql": _pg_size, "mariadb": _mariadb_size}[db.backend](db)


def _sqlite_size(db: Database) -> int:
    import sqlite3

    conn = sqlite3.connect(db.path, timeout=30)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()
    return sum(f.stat().st_size for f in _sqlite_files(db))


def _pg_size(db: Database) -> int:
    import psycopg

    with psycopg.connect(db.libpq, autocommit=True) as conn:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


def _mariadb_size(db: Database) -> int:
    import pymysql

    conn = pymysql.connect(**db.mysql_args(), autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
        tables = [name for (name,) in cur.fetchall()]
        if tables:
            cur.execute("ANALYZE TABLE " + ", ".join(f"`{t}`" for t in tables))
            cur.fetchall()
        cur.execute("SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables"
                    " WHERE table_schema = DATABASE()")
        return int(cur.fetchone()[0])
    finally:
        conn.close()
