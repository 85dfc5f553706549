"""A store's reads on SQLite run on connections it keeps (``store.writer.KeptReaders``): reads
of many threads at once, a read's error, a forked child and a close must each leave the next read
working on a connection of its own."""

from __future__ import annotations

import os
import threading
from contextlib import ExitStack

import pytest

from store import ConversationStore, db
from store.errors import NotFoundError
from store.writer import KeptReaders, Readers

from .forking import exit_code_of_child

_MISSING = "01a21e09-8814-71ba-ae65-c743a4589721"


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_reads_of_many_threads_at_once_each_read_their_own_snapshot(sqlite_store):
    s = sqlite_store
    cids = [s.save(_user(f"c{n}")) for n in range(6)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(cids))

    def reader(n: int, cid: str) -> None:
        try:
            start.wait(30)
            for _ in range(50):
                assert s.load(cid) == _user(f"c{n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(n, cid)) for n, cid in enumerate(cids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert 1 <= len(s._readers._idle) <= len(cids)  # kept for the next reads, one a read at most


def test_overlapping_reads_take_connections_of_their_own(sqlite_store):
    s = sqlite_store
    with s._readers.snapshot() as outer, s._readers.snapshot() as inner:
        assert outer is not inner
    assert {id(held.conn) for held in s._readers._idle} == {id(outer), id(inner)}


def test_a_busy_moment_leaves_the_pool_free_for_the_writer(sqlite_store):
    """As many reads at once as the pool has connections (5, and 10 more): the store keeps four of them,
    and a write that has to open a connection again (after an error dropped its own) still gets one."""
    s = sqlite_store
    cid = s.save(_user("a"))
    s._writer.close()  # as after an error in a write
    with ExitStack() as stack:
        held = [stack.enter_context(s._readers.snapshot()) for _ in range(15)]
    assert len(s._readers._idle) == KeptReaders.MAX_IDLE and sum(c.closed for c in held) == 15 - KeptReaders.MAX_IDLE
    s.append(cid, _user("b"))
    assert s.load(cid) == _user("a") + _user("b")


def test_a_read_that_failed_keeps_its_connection_and_the_next_one_works(sqlite_store):
    s = sqlite_store
    cid = s.save(_user("a"))
    s.load(cid)
    kept = list(s._readers._idle)
    with pytest.raises(NotFoundError):
        s.load(_MISSING)
    assert s._readers._idle == kept  # rolled back: nothing of the failed read is left in it
    assert s.load(cid) == _user("a")


def test_a_connection_an_error_left_unusable_is_dropped(sqlite_store):
    """A read whose connection was lost (invalidated, as a disconnect leaves it) raises its own
    error, not the failed rollback's; the connection is not kept."""
    s = sqlite_store
    with pytest.raises(RuntimeError, match="inside a read"), s._readers.snapshot() as conn:
        conn.invalidate()
        raise RuntimeError("inside a read")
    assert all(held.conn is not conn for held in s._readers._idle) and conn.closed
    cid = s.save(_user("a"))
    assert s.load(cid) == _user("a")


def test_a_closed_store_reads_again_on_a_new_connection(sqlite_store):
    s = sqlite_store
    cid = s.save(_user("a"))
    s.load(cid)
    kept = s._readers._idle[0].conn
    s.close()
    assert kept.closed and not s._readers._idle
    assert s.load(cid) == _user("a")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_reads_on_a_connection_of_its_own(sqlite_store):
    s = sqlite_store
    cid = s.save(_user("parent"))
    s.load(cid)  # the parent keeps a read connection from here on
    parents = list(s._readers._idle)

    def child() -> bool:
        return s.load(cid) == _user("parent") and not any(c in s._readers._idle for c in parents)

    assert exit_code_of_child(child, "the child's load") == 0
    assert s.load(cid) == _user("parent") and s._readers._idle == parents


def test_servers_and_handed_engines_read_on_pooled_connections(store, tmp_path):
    kept = store.engine.dialect.name == "sqlite"
    assert isinstance(store._readers, KeptReaders) == kept
    engine = db.create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    try:
        handed = ConversationStore(engine=engine)
        assert type(handed._readers) is Readers
    finally:
        engine.dispose()
