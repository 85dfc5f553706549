"""One fixture runs every repository test on SQLite, PostgreSQL and MariaDB.

Each run creates its own database on the servers and drops it afterwards. The
servers default to this project's development set-up and can be pointed
elsewhere with CONVSTORE_TEST_PG / CONVSTORE_TEST_MYSQL (admin URLs). With
CI=true an unreachable server fails the run instead of skipping its tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from store import ConversationStore
from store.db import create_engine

ADMIN_URLS = {
    "postgresql": os.environ.get("CONVSTORE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
    "mariadb": os.environ.get("CONVSTORE_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306/test"),
}
BACKENDS = ["sqlite", "postgresql", "mariadb"]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unreachable(backend: str, exc: Exception) -> None:
    message = f"{backend} is not reachable at {ADMIN_URLS[backend]}: {exc}"
    if IN_CI:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _server_database(backend: str) -> Iterator[str]:
    """A new, empty database on the server, dropped at the end."""
    admin_url = sa.make_url(ADMIN_URLS[backend])
    name = f"convstore_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
    except sa.exc.OperationalError as exc:
        admin.dispose()
        _unreachable(backend, exc)
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            drop = f"DROP DATABASE IF EXISTS {name}"
            conn.exec_driver_sql(drop + (" WITH (FORCE)" if backend == "postgresql" else ""))
        admin.dispose()


def fresh_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'convstore.db'}"
    else:
        yield from _server_database(backend)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="session")
def database_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One database per backend for the whole run; tests keep apart by namespace."""
    yield from fresh_database(backend, tmp_path_factory)


@pytest.fixture
def empty_database_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of its own, for tests of migrations and of opening."""
    yield from fresh_database(backend, tmp_path_factory)


@pytest.fixture
def namespace() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[ConversationStore]:
    """A store on a SQLite file of its own: for property tests, which run many examples on one
    backend, and for what only SQLite does (its file, its locks, the connection a store keeps)."""
    with ConversationStore(f"sqlite:///{tmp_path / 'property.db'}") as s:
        yield s


@pytest.fixture
def store(database_url: str, namespace: str) -> Iterator[ConversationStore]:
    with ConversationStore(database_url, namespace=namespace) as s:
        yield s


class StatementCounter:
    def __init__(self, engine: sa.Engine) -> None:
        self.statements: list[str] = []
        sa.event.listen(engine, "before_cursor_execute", self._on_execute)

    def _on_execute(self, conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            self.statements.append(statement)

    def count(self) -> int:
        return len(self.statements)


@pytest.fixture
def statements(store: ConversationStore) -> StatementCounter:
    return StatementCounter(store.engine)
