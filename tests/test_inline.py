"""A message of one plain text block keeps its text in its own row (revision 0013): no block
row, and every read, search and removal gives what a block row gave."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from store import ConversationStore
from store.db import downgrade, upgrade
from store.formats import write
from store.schema import MARK

SAMPLES = Path(__file__).resolve().parents[1] / "store" / "samples"
TEXTS = ["plain", "", "with a NUL \x00 inside", MARK + " the escape mark first", "\x01 and Kyoto " + "x" * 80,
         "line\u2028separator and Kyoto"]


def _chat() -> list[dict]:
    return [
        {"role": "system", "content": "be brief"},
        *({"role": "user", "content": text} for text in TEXTS),
        {"role": "user", "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "parts Kyoto"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/k.png"}}]},
        {"role": "assistant", "content": "calling",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a result about Kyoto"},
        {"role": "assistant", "content": "Kyoto is in Japan.", "reasoning_content": "r" * 70},
    ]


def raw(store: ConversationStore, sql: str, cid: str) -> list[tuple]:
    """The rows of ``sql`` whose ``:c`` is the conversation's id as its tables hold it."""
    key = cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql), {"c": key})]


def _rows(store: ConversationStore, cid: str) -> tuple[list, list]:
    texts = raw(store, "SELECT text FROM messages WHERE conversation_id = :c ORDER BY seq", cid)
    blocks = raw(store, "SELECT seq FROM blocks WHERE conversation_id = :c ORDER BY seq, position", cid)
    return [t for (t,) in texts], [seq for (seq,) in blocks]


def reads_exactly(store: ConversationStore, cid: str, data: list[dict], lasts: tuple[int, ...] = (1, 4)) -> None:
    """Every read gives ``data``: whole, its windows (widened to their results' calls, as from the
    canonical messages), exported, and in another format as from the canonical messages."""
    assert store.load(cid, "openai") == data == write(store.load_messages(cid), "openai")[0]
    for n in lasts:
        window = store.load(cid, "openai", last=n)
        assert window == write(store.load_messages(cid, last=n), "openai")[0] == data[-len(window):]
        assert len(window) >= min(n, len(data))
    assert list(store.export(cid, "openai", chunk=3)) == data
    assert store.load(cid, "anthropic") == write(store.load_messages(cid), "anthropic")[0]


def test_a_message_of_one_plain_text_keeps_it_in_its_row(store, statements):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    texts, blocks = _rows(store, cid)
    inline = 1 + len(TEXTS)  # the system prompt, the plain user texts, the last answer (its reasoning is extras)
    # the tool result's output is kept in its row too (revision 0020, tests/test_inline_results.py)
    assert [t is not None for t in texts] == [True] * inline + [False] * 3 + [True] * 2
    assert sorted(set(blocks)) == list(range(inline, len(data) - 2))  # only the others have block rows
    reads_exactly(store, cid, data)
    statements.statements.clear()
    store.load(cid, "openai", last=len(data))
    assert statements.count() <= 5  # never one per message (on a server, the window tried alone first: one more)
    fork = store.fork(cid, at=3)
    store.append(fork, [{"role": "user", "content": "in the fork about Kyoto"}], format="openai")
    assert store.load(fork, "openai") == data[:3] + [{"role": "user", "content": "in the fork about Kyoto"}]
    popped = store.pop(cid, 6, format="openai")
    assert popped == data[-6:]
    reads_exactly(store, cid, data[:-6])


def test_texts_in_message_rows_are_found_and_forgotten(store):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    hits = store.search("Kyoto", conversation_id=cid, limit=None)
    assert sorted((h.seq, h.position, h.kind) for h in hits) == [
        (5, 0, "text"), (6, 0, "text"), (7, 1, "text"), (10, 0, "tool_result"), (11, 0, "text")]
    assert {h.role for h in hits if h.seq in (5, 6)} == {"user"}
    assert "Kyoto" in next(h.snippet for h in hits if h.seq == 6)
    store.truncate(cid, 6)  # the index entries of the removed texts go with them
    assert sorted(h.seq for h in store.search("Kyoto", conversation_id=cid, limit=None)) == [5]
    store.append(cid, [{"role": "user", "content": "Kyoto again"}], format="openai")
    assert sorted(h.seq for h in store.search("Kyoto", conversation_id=cid, limit=None)) == [5, 6]
    store.delete(cid)
    assert all(h.conversation_id != cid for h in store.search("Kyoto", limit=None))
    assert_no_stale_entries(store)


def assert_no_stale_entries(store: ConversationStore) -> None:
    """SQLite: every FTS5 entry went with its row (FTS5 removes a contentless entry by its exact text)."""
    if store.engine.dialect.name != "sqlite":
        return
    with store.engine.connect() as conn:
        entries = conn.execute(sa.text("SELECT count(*) FROM search_fts_docsize")).scalar()
        assert entries == conn.execute(sa.text("SELECT count(*) FROM search")).scalar()
        stale = conn.execute(sa.text("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'kyoto' "
                                     "AND rowid NOT IN (SELECT rowid FROM search)")).scalar()
        assert stale == 0  # an entry removed with another text than it was added with leaves its words


def test_a_downgrade_writes_their_block_rows(empty_database_url):
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        s.search("Kyoto")  # indexed before the downgrade: its entries must still go with their rows
        downgrade(s.engine, "0012")
        with s.engine.connect() as conn:
            key = cid if s.engine.dialect.name == "postgresql" else cid.replace("-", "")
            seqs = conn.execute(sa.text("SELECT DISTINCT seq FROM blocks WHERE conversation_id = :c"),
                                {"c": key}).scalars().all()
        assert sorted(seqs) == list(range(len(data)))
        upgrade(s.engine)
        assert _rows(s, cid)[0] == [None] * len(data)  # rows written before keep their block rows
        reads_exactly(s, cid, data)
        s.truncate(cid, 6)
        assert sorted(h.seq for h in s.search("Kyoto", conversation_id=cid, limit=None)) == [5]
        s.append(cid, [{"role": "user", "content": "after, about Kyoto"}], format="openai")
        assert s.load(cid, "openai") == data[:6] + [{"role": "user", "content": "after, about Kyoto"}]
        assert sorted(h.seq for h in s.search("Kyoto", conversation_id=cid, limit=None)) == [5, 6]


@pytest.mark.parametrize("fmt", sorted(p.stem for p in SAMPLES.glob("*.json")))
def test_every_sample_reads_back_as_from_block_rows(empty_database_url, fmt):
    """Each bundled sample read back now equals what it read back as from block rows only
    (saved, then downgraded to 0012 and upgraded again)."""
    data = json.loads((SAMPLES / f"{fmt}.json").read_text())
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format=fmt)
        now = [m.model_dump() for m in s.load_messages(cid)], s.load(cid, fmt)
        downgrade(s.engine, "0012")
        upgrade(s.engine)
        assert ([m.model_dump() for m in s.load_messages(cid)], s.load(cid, fmt)) == now
