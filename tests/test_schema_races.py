"""A new database opened by many users at once, and a first open killed half-way:
never a failed open, never a bricked database (issues 16 and 17), on every backend."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from store import ConversationStore
from store.db import VERSION_TABLE, create_engine, current_revision, head_revision, upgrade

ROOT = Path(__file__).resolve().parents[1]

# Each process opens the store from 2 threads at once, and each thread saves a conversation.
FIRST_USER = """
import sys, threading
from store import ConversationStore, AsyncConversationStore
url, who = sys.argv[1:3]
errors = []
def sync_user(n):
    try:
        with ConversationStore(url, namespace="race") as s:
            s.save([{"role": "user", "content": f"{who}-{n}"}])
    except BaseException as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=sync_user, args=(n,)) for n in range(2)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    sys.exit("; ".join(errors))
"""

ASYNC_FIRST_USER = """
import asyncio, sys
from store import AsyncConversationStore
url, who = sys.argv[1:3]
async def user(n):
    async with AsyncConversationStore(url, namespace="race") as s:
        await s.save([{"role": "user", "content": f"{who}-{n}"}])
async def main():
    await asyncio.gather(*(user(n) for n in range(2)))
asyncio.run(main())
"""


def _spawn(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _all_succeed(procs: list[subprocess.Popen]) -> None:
    failures = []
    for p in procs:
        _, err = p.communicate(timeout=300)
        if p.returncode != 0:
            failures.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
    assert not failures, failures


def test_first_use_by_eight_processes_of_two_threads(empty_database_url):
    procs = [_spawn(FIRST_USER, empty_database_url, f"p{i}") for i in range(6)]
    procs += [_spawn(ASYNC_FIRST_USER, empty_database_url, f"a{i}") for i in range(2)]
    _all_succeed(procs)
    with ConversationStore(empty_database_url, namespace="race") as s:
        assert len(s.list_conversations()) == 16


def test_concurrent_upgrades_of_an_empty_database(empty_database_url):
    script = "import sys\nfrom store.db import create_engine, upgrade\nupgrade(create_engine(sys.argv[1]))\n"
    _all_succeed([_spawn(script, empty_database_url) for _ in range(4)])
    engine = create_engine(empty_database_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def _half_made(url: str) -> None:
    """What a first creation killed on MariaDB leaves: some tables, an empty version table."""
    engine = create_engine(url)
    try:
        upgrade(engine, "0001")
        with engine.begin() as conn:
            conn.exec_driver_sql(f"DELETE FROM {VERSION_TABLE}")
            conn.exec_driver_sql("DROP TABLE tool_calls")
    finally:
        engine.dispose()


def test_an_interrupted_first_creation_is_finished_on_open(empty_database_url):
    _half_made(empty_database_url)
    with ConversationStore(empty_database_url) as s:
        assert s.created_schema
        s.save([{"role": "user", "content": "hi"}])


def test_an_interrupted_first_creation_is_finished_by_db_upgrade(empty_database_url):
    _half_made(empty_database_url)
    engine = create_engine(empty_database_url)
    try:
        upgrade(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_first_opens_killed_at_random_moments_leave_an_openable_database(empty_database_url):
    rng = random.Random(17)
    for _ in range(4):
        p = _spawn("import sys\nfrom store import ConversationStore\nConversationStore(sys.argv[1])\n",
                   empty_database_url)
        time.sleep(rng.uniform(0.2, 1.2))  # past the imports, somewhere in the creation
        p.send_signal(signal.SIGKILL)
        p.communicate()
    with ConversationStore(empty_database_url) as s:
        s.save([{"role": "user", "content": "hi"}])
        assert len(s.list_conversations()) == 1


@pytest.mark.parametrize("table,rows", [
    ("conversations (id INTEGER PRIMARY KEY)", 1),  # a table holding rows
    ("conversation_tags (x INTEGER)", 0),  # a table of today's, which revision 0001 never made: no KeyError
], ids=["holding rows", "not of revision 0001"])
def test_tables_of_someone_else_are_never_dropped(empty_database_url, table, rows):
    """Beside an empty version table, tables that are not what a first creation killed before its
    first revision leaves are refused, and kept as they are."""
    from store.errors import SchemaOutdatedError

    name = table.split()[0]
    engine = create_engine(empty_database_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32) NOT NULL)")
            conn.exec_driver_sql(f"CREATE TABLE {table}")
            if rows:
                conn.exec_driver_sql(f"INSERT INTO {name} VALUES (1)")
        with pytest.raises(SchemaOutdatedError, match="revision unknown"):
            ConversationStore(empty_database_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text(f"SELECT count(*) FROM {name}")).scalar() == rows
    finally:
        engine.dispose()


def test_a_first_creation_interrupted_between_revisions_is_finished_on_open(empty_database_url):
    """MariaDB/MySQL record each revision as it goes: a first creation killed after revision
    0003 leaves an empty database at 0003, with the creation's marker table; opening it drops
    those empty tables and creates the head's. Without the marker, an empty database at 0003
    is an old one: refused."""
    from store.db import CREATING, current_revision, head_revision, upgrade

    engine = create_engine(empty_database_url)
    try:
        upgrade(engine, "0003")
        with engine.begin() as conn:
            conn.exec_driver_sql(f"CREATE TABLE {CREATING} (started INTEGER)")
        with ConversationStore(empty_database_url) as s:
            s.save([{"role": "user", "content": "hi"}])
        assert current_revision(engine) == head_revision()
        assert not sa.inspect(engine).has_table(CREATING)
    finally:
        engine.dispose()


def _killed_inside_0019(url: str) -> sa.Engine:
    """What a process killed inside revision 0019 leaves on MariaDB/MySQL: recorded at 0018,
    with the first of 0019's foreign keys already dropped."""
    engine = create_engine(url)
    upgrade(engine, "0018")
    with engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE messages DROP "
                             + ("FOREIGN KEY" if conn.dialect.name in ("mysql", "mariadb") else "CONSTRAINT")
                             + " fk_messages_conversation_id_conversations")
    return engine


def test_a_first_creation_killed_inside_a_revision_is_made_again(empty_database_url, backend):
    """The kill that failed a CI run (2026-12-03): going on from 0018 would drop that key
    again. The empty tables of a killed first creation are dropped and made anew instead."""
    from store.db import CREATING

    if backend == "sqlite":
        pytest.skip("DDL is transactional here: a killed creation leaves nothing")
    engine = _killed_inside_0019(empty_database_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"CREATE TABLE {CREATING} (started INTEGER)")
        with ConversationStore(empty_database_url) as s:
            assert s.created_schema
            s.save([{"role": "user", "content": "hi"}])
        assert current_revision(engine) == head_revision()
        assert not sa.inspect(engine).has_table(CREATING)
    finally:
        engine.dispose()


def test_an_upgrade_killed_inside_a_revision_finishes_when_run_again(empty_database_url, backend):
    if backend == "sqlite":
        pytest.skip("DDL is transactional here: a killed upgrade leaves nothing")
    engine = _killed_inside_0019(empty_database_url)
    try:
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        assert not sa.inspect(engine).get_foreign_keys("messages")
    finally:
        engine.dispose()


def test_a_first_creation_killed_after_every_first_table_is_finished(empty_database_url, backend):
    """Revision 0001's tables link tool_calls -> blocks -> blobs; today's do not. MariaDB
    (no transactional DDL) keeps what a killed first creation made: they are dropped in
    0001's order, children first, and the schema created again."""
    if backend != "mariadb":
        pytest.skip("DDL is transactional here: a killed creation leaves nothing")
    engine = create_engine(empty_database_url)
    try:
        upgrade(engine, "0001")
        with engine.begin() as conn:  # killed before the revision was recorded
            conn.exec_driver_sql(f"DELETE FROM {VERSION_TABLE}")
    finally:
        engine.dispose()
    with ConversationStore(empty_database_url) as s:
        s.save([{"role": "user", "content": "hi"}])
        assert len(s.list_conversations()) == 1


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_new_file_turned_to_wal_while_another_open_writes_it(tmp_path, asynchronous):
    """Two first opens of a new SQLite file at once: one turns it to WAL while the other holds
    its write lock (turning it too). SQLite answers "database is locked" there at once, without
    its busy handler; the open waits instead (the race failed a CI run on 2026-11-27)."""
    import asyncio
    import sqlite3
    import threading

    from store import AsyncConversationStore

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # a rollback-journal file, its write lock held
    threading.Timer(0.3, lambda: other.execute("COMMIT")).start()

    async def open_async() -> None:
        async with AsyncConversationStore(f"sqlite:///{path}") as s:
            await s.save([{"role": "user", "content": "hi"}])

    try:
        if asynchronous:
            asyncio.run(open_async())
        else:
            with ConversationStore(f"sqlite:///{path}") as s:
                s.save([{"role": "user", "content": "hi"}])
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()
