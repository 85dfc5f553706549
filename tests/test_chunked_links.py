"""A batch written in chunks links and windows as one written whole: what it links to is read once
a batch (``store.rows.Linked``), then each chunk's calls and window starts are carried in memory."""

import random

import pytest
import sqlalchemy as sa

import store.bulk as bulk
import store.operations as operations
import store.rows as rows
from store.errors import ConvstoreError, DuplicateToolCallError

from .conftest import StatementCounter
from .samples import chat


def _tangled(n: int, seed: int) -> list[dict]:
    """Calls answered many messages later (across chunks), some twice, some never, results of no call."""
    rng, msgs, open_calls = random.Random(seed), [], []
    for i in range(n):
        roll = rng.random()
        if roll < 0.35:
            ids = [f"c{i}_{k}" for k in range(rng.randint(1, 2))]
            open_calls += ids
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}} for c in ids]})
        elif roll < 0.7 and open_calls:
            call = open_calls.pop(rng.randrange(len(open_calls))) if rng.random() < 0.9 else f"c{i}_ghost"
            msgs.append({"role": "tool", "tool_call_id": call, "content": f"result {i}"})
        else:
            msgs.append({"role": "user", "content": f"message {i}"})
    return msgs


def _links(store, cid):
    return sorted((r.call_id, r.status, r.call_position, r.result_position)
                  for r in store.find_tool_calls(conversation_id=cid, limit=10_000))


def _windows(store, cid, n):
    return [len(store.load(cid, last=k)) for k in range(1, n + 1)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_and_batches_link_and_window_as_one_write(store, monkeypatch, seed):
    msgs = _tangled(60, seed)
    whole = store.save(msgs)
    expected = (_links(store, whole), _windows(store, whole, len(msgs)))
    monkeypatch.setattr(operations, "CHUNK", 4)
    chunked = store.save(msgs)
    assert store.load(chunked) == msgs
    assert (_links(store, chunked), _windows(store, chunked, len(msgs))) == expected
    batched = store.save(msgs[:7])
    for lo, hi in [(7, 20), (20, 21), (21, 47), (47, 60)]:
        store.append(batched, msgs[lo:hi])
    assert store.load(batched) == msgs
    assert (_links(store, batched), _windows(store, batched, len(msgs))) == expected


def test_a_batch_reads_what_it_links_to_once_whatever_its_chunks(store, monkeypatch):
    cid = store.save(chat(8))
    monkeypatch.setattr(operations, "CHUNK", 2)
    counter = StatementCounter(store.engine)
    store.append(cid, chat(40)[:1] + [{"role": "tool", "tool_call_id": "call_0", "content": "again"}])
    store.save(chat(40))
    sa.event.remove(store.engine, "before_cursor_execute", counter._on_execute)
    lookups = [s for s in counter.statements if s.lstrip().upper().startswith("SELECT")]
    assert len(lookups) <= 2  # the append's stored calls and window starts; the save's none


def test_stored_calls_are_looked_up_in_lists_of_bounded_length(store, monkeypatch):
    monkeypatch.setattr(rows, "IN_LIST", 4)
    calls = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"k{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]} for i in range(10)]
    cid = store.save(calls)
    store.append(cid, [{"role": "tool", "tool_call_id": f"k{i}", "content": str(i)} for i in range(10)])
    assert {r.status for r in store.find_tool_calls(conversation_id=cid)} == {"answered"}
    with pytest.raises(DuplicateToolCallError, match="k9"):
        store.append(cid, [{"role": "user", "content": "x"}] * 5 + calls[9:])
    assert len(store.load(cid)) == 20


def test_chunks_built_while_the_server_takes_the_last_are_one_write(store, monkeypatch):
    """Through psycopg's COPY, a chunk's rows are built while a worker waits for the COPY before it
    (``rows._overlapped``): the same rows, links and windows as one chunk, progress in order."""
    msgs = _tangled(700, 4)
    whole = store.save(msgs)
    expected = (_links(store, whole), _windows(store, whole, 30))
    monkeypatch.setattr(operations, "CHUNK", 100)  # past bulk.COPY_FROM: each chunk's messages by COPY
    reported = []
    chunked = store.save(msgs, progress=reported.append)
    assert reported == [100] * 7
    assert store.load(chunked) == msgs
    assert (_links(store, chunked), _windows(store, chunked, 30)) == expected


def test_an_error_in_a_later_chunk_leaves_nothing(store, monkeypatch):
    monkeypatch.setattr(operations, "CHUNK", 100)
    msgs = _tangled(700, 5)
    call = next(m for m in msgs if m.get("tool_calls"))
    msgs[450] = call  # its call id a second time, in the fifth chunk
    before = [info.id for info in store.list_conversations()]
    with pytest.raises(DuplicateToolCallError, match="message 450"):
        store.save(msgs)
    assert [info.id for info in store.list_conversations()] == before
    assert store.load(store.save(msgs[:450])) == msgs[:450]  # and the store writes on


def test_a_copy_that_fails_at_its_end_fails_the_write(store, monkeypatch):
    """The end of a COPY, waited for in a worker thread, raises in the write (and undoes it all)."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("psycopg's COPY")
    real, ends = bulk._copy, []

    def failing(conn, statement, params):  # noqa: ANN001, ANN202
        end = real(conn, statement, params)

        def broken() -> None:
            end()
            ends.append(statement.copy_sql)
            if len(ends) == 5:
                raise sa.exc.IntegrityError(statement.copy_sql, None, Exception("refused at the end"))
        return broken

    monkeypatch.setattr(bulk, "_copy", failing)
    monkeypatch.setattr(operations, "CHUNK", 100)
    before = [info.id for info in store.list_conversations()]
    with pytest.raises(ConvstoreError, match="refused at the end"):
        store.save(_tangled(700, 6))
    assert [info.id for info in store.list_conversations()] == before
    monkeypatch.setattr(bulk, "_copy", real)
    msgs = _tangled(700, 6)
    assert store.load(store.save(msgs)) == msgs
