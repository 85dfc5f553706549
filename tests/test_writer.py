"""A store's writes on SQLite run one at a time on a connection it keeps (``store.writer``):
threads, errors inside a write, a forked child and a close must each leave every acknowledged
write in place and the next write working."""

from __future__ import annotations

import os
import threading

import pytest

from store import ConversationStore, db
from store import operations as ops
from store.errors import ConvstoreError, DatabaseError, NotFoundError
from store.writer import KeptWriter

from .forking import exit_code_of_child


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_writes_of_many_threads_all_land(store):
    cids = [store.save(_user(f"c{n}")) for n in range(6)]
    errors: list[BaseException] = []

    def writer(cid: str) -> None:
        try:
            for i in range(25):
                store.append(cid, _user(f"m{i}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(cid,)) for cid in cids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert all(len(store.load(cid)) == 26 for cid in cids)


def test_a_write_that_failed_inside_its_transaction_leaves_the_next_one_working(store):
    cid = store.save(_user("a"))
    with pytest.raises(NotFoundError):
        store.append("01a21e09-8814-71ba-ae65-c743a4589721", _user("nowhere"))
    with pytest.raises(ConvstoreError):  # a message too long, found while its rows are built
        store.append(cid, [{"role": "user", "content": "x", "name": "n" * 300}])
    store.append(cid, _user("b"))
    assert [m["content"] for m in store.load(cid)] == ["a", "b"]


def test_a_closed_store_writes_again_on_a_new_connection(sqlite_store):
    s = sqlite_store
    assert isinstance(s._writer, KeptWriter)
    cid = s.save(_user("a"))
    s.close()
    s.append(cid, _user("b"))
    assert len(s.load(cid)) == 2


def test_a_write_waits_for_another_threads_write_then_says_so(sqlite_store, monkeypatch):
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_S", 0.3)
    s = sqlite_store
    cid = s.save(_user("a"))
    started, finish = threading.Event(), threading.Event()

    def slow_messages():
        yield {"role": "user", "content": "first"}
        started.set()
        finish.wait(30)

    saving = threading.Thread(target=lambda: s.save(slow_messages()))
    saving.start()
    assert started.wait(30)
    with pytest.raises(DatabaseError, match="database is locked"):
        s.append(cid, _user("b"))
    finish.set()
    saving.join(30)
    s.append(cid, _user("b"))  # the lock and the connection are free again
    assert len(s.load(cid)) == 2 and len(s.list_conversations()) == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_child_forked_during_a_write_writes_on_a_lock_and_connection_of_its_own(sqlite_store, monkeypatch):
    """Forked while another thread of the parent is inside a write of the store (its lock held
    here by the test itself: SQLite's own locks cannot be held across a fork, its documentation
    says): the child inherits that lock held and the store's connection, neither of them its own.
    Waiting on the lock would fail the child's write after the busy timeout."""
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_S", 2)
    s = sqlite_store
    cid = s.save(_user("parent before"))  # the parent's connection is kept from here on
    with s._writer._lock:
        code = exit_code_of_child(lambda: s.append(cid, _user("child")) is None, "the child's append")
    assert code == 0
    s.append(cid, _user("parent after"))
    assert [m["content"] for m in s.load(cid)] == ["parent before", "child", "parent after"]


def test_a_write_kept_waiting_past_the_busy_timeout_is_a_database_error(sqlite_store, monkeypatch):
    """Another process holds SQLite's write lock longer than the busy timeout: convstore's
    DatabaseError, not the driver's own error (SQLAlchemy runs the listener that sends
    ``BEGIN IMMEDIATE`` outside its error handling)."""
    import sqlite3

    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    s = sqlite_store
    cid = s.save(_user("a"))
    s.close()  # the next write opens a connection with the short timeout
    other = sqlite3.connect(s.engine.url.database, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseError, match="database is locked"):
            s.append(cid, _user("b"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    s.append(cid, _user("b"))
    assert len(s.load(cid)) == 2


def test_a_commit_that_fails_is_a_database_error_and_keeps_nothing(sqlite_store):
    """The kept writer sends COMMIT itself: when SQLite refuses it (here a foreign key checked
    at commit), the write is an error, none of it stays, and the next write works."""
    s = sqlite_store
    cid = s.save(_user("a"))

    def append_then_break(conn, scope):
        ops.append(conn, scope, cid, s._canonical(_user("b"), None), progress=None)
        conn.exec_driver_sql("PRAGMA defer_foreign_keys = ON")
        conn.exec_driver_sql("INSERT INTO conversation_tags (conversation_id, tag) VALUES ('nowhere', 't')")

    with pytest.raises(DatabaseError, match="FOREIGN KEY constraint failed"):
        s._transact(append_then_break)
    assert [m["content"] for m in s.load(cid)] == ["a"] and s.info(cid).message_count == 1
    s.append(cid, _user("c"))
    assert [m["content"] for m in s.load(cid)] == ["a", "c"]


def test_the_server_backends_write_on_pooled_connections(store):
    assert isinstance(store._writer, KeptWriter) == (store.engine.dialect.name == "sqlite")


def test_stores_on_an_engine_handed_to_them_keep_no_connection(tmp_path):
    """Many stores on one engine (a store a tenant, a store a request) would each hold a
    connection of its pool (5, then 10 more) for good: theirs write on pooled ones."""
    engine = db.create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    try:
        stores = [ConversationStore(engine=engine, namespace=f"t{n}") for n in range(20)]
        for s in stores:
            assert not isinstance(s._writer, KeptWriter)
            s.save(_user("hi"))
        assert engine.pool.checkedout() == 0
    finally:
        engine.dispose()

