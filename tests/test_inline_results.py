"""A message of one plain tool result keeps it in its own row (revision 0020): its output, call id
and tool name, no block row; every read, lookup, search and removal gives what a block row gave."""

from __future__ import annotations

import copy
import json

from store import ConversationStore
from store.db import downgrade, upgrade
from store.model import BLOCK
from store.schema import MARK
from tests.test_inline import assert_no_stale_entries, raw, reads_exactly

ODD = "about Kyoto: out \x00 and " + MARK  # NUL and the escape mark: PostgreSQL escapes both


def _chat() -> list[dict]:
    calls = [{"id": f"call_{i}", "type": "function", "function": {"name": f"tool_{i}", "arguments": "{}"}}
             for i in range(3)]
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_0", "content": "a result about Kyoto"},
        {"role": "tool", "tool_call_id": "call_1", "content": ""},
        {"role": "tool", "tool_call_id": "call_2", "content": ODD},
        {"role": "tool", "tool_call_id": "call_orphan", "content": "no call before it"},
        {"role": "assistant", "content": "done"},
    ]


def _canonical() -> list[dict]:
    """Results a row cannot keep (an error, blocks, notes) next to one it can."""
    result = {"kind": "tool_result", "call_id": "c0", "name": "f", "output": "kept in the row, Kyoto"}
    return [
        {"role": "assistant", "content": [{"kind": "tool_call", "call_id": c, "name": "f", "arguments": {}}
                                          for c in ("c0", "c1", "c2", "c3")]},
        {"role": "tool", "content": [result]},
        {"role": "tool", "content": [{**result, "call_id": "c1", "is_error": True}]},
        {"role": "tool", "content": [{**result, "call_id": "c2", "output": [{"kind": "text", "text": "Kyoto"}]}]},
        {"role": "tool", "content": [{**result, "call_id": "c3", "extras": {"x": {"y": 1}}}]},
    ]


def _rows(store: ConversationStore, cid: str) -> tuple[list, list]:
    kept = raw(store, "SELECT call_id, tool_name FROM messages WHERE conversation_id = :c ORDER BY seq", cid)
    blocks = raw(store, "SELECT DISTINCT seq FROM blocks WHERE conversation_id = :c ORDER BY seq", cid)
    return kept, [seq for (seq,) in blocks]


def _unescaped(text: str) -> str:
    """A text as PostgreSQL's raw rows hold it (NUL and the mark escaped), as stored."""
    return json.loads(text[len(MARK):]) if text.startswith(MARK) else text


def test_a_plain_tool_result_keeps_it_in_its_row(store, statements):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    kept, blocks = _rows(store, cid)
    assert kept[2:6] == [("call_0", "tool_0"), ("call_1", "tool_1"), ("call_2", "tool_2"), ("call_orphan", None)]
    assert blocks == [1]  # the calls alone have block rows
    reads_exactly(store, cid, data, lasts=(1, 2))
    statements.statements.clear()
    store.load(cid, "openai", last=len(data))
    assert statements.count() <= 5  # never one per message (on a server, the window tried alone first: one more)
    result = store.load_messages(cid)[4].content[0]
    assert (result.kind, result.call_id, result.name, result.output) == ("tool_result", "call_2", "tool_2", ODD)
    record = store.get_tool_call("call_2")
    assert (record.result, record.status, record.result_position, record.is_error) == (ODD, "answered", 4, False)
    fork = store.fork(cid, at=5)  # the fork shares the results: read from the parent's rows
    assert store.get_tool_call("call_0", conversation_id=fork).result == "a result about Kyoto"
    assert store.load(fork, "openai") == data[:5]
    store.delete(fork)
    popped = store.pop(cid, 3, format="openai")
    assert popped == data[-3:]
    reads_exactly(store, cid, data[:-3], lasts=(1, 2))
    store.append(cid, copy.deepcopy(data[-3:]), format="openai")
    reads_exactly(store, cid, data, lasts=(1, 2))


def test_a_result_a_row_cannot_keep_has_its_block_row(store):
    data = _canonical()
    cid = store.save(copy.deepcopy(data), format="canonical")
    kept, blocks = _rows(store, cid)
    assert kept == [(None, None), ("c0", "f"), (None, None), (None, None), (None, None)]
    assert blocks == [0, 2, 3, 4]
    loaded = store.load_messages(cid)
    assert [m.content[0] for m in loaded[1:]] == [BLOCK.validate_python(m["content"][0]) for m in data[1:]]
    assert [store.get_tool_call(c).is_error for c in ("c0", "c1")] == [False, True]


def test_results_in_message_rows_are_found_and_forgotten(store):
    cid = store.save(copy.deepcopy(_chat()), format="openai")
    hits = store.search("Kyoto", conversation_id=cid, limit=None)
    assert sorted((h.seq, h.position, h.kind, h.role) for h in hits) == [(2, 0, "tool_result", "tool"),
                                                                           (4, 0, "tool_result", "tool")]
    assert [h.seq for h in store.search("tool_1", conversation_id=cid, kind="tool_result", limit=None)] == [3]
    store.truncate(cid, 4)  # the index entries of the removed results go with them
    assert [h.seq for h in store.search("Kyoto", conversation_id=cid, limit=None)] == [2]
    store.append(cid, [{"role": "tool", "tool_call_id": "call_2", "content": "Kyoto again"}], format="openai")
    assert sorted(h.seq for h in store.search("Kyoto", conversation_id=cid, limit=None)) == [2, 4]
    store.delete(cid)
    assert all(h.conversation_id != cid for h in store.search("Kyoto", limit=None))
    assert_no_stale_entries(store)


def test_a_downgrade_writes_their_block_rows(empty_database_url):
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        s.search("Kyoto")  # indexed before the downgrade: its entries must still go with their rows
        downgrade(s.engine, "0019")
        rows = raw(s, "SELECT seq, kind, text, call_id, tool_name FROM blocks WHERE conversation_id = :c "
                      "AND kind = 'tool_result' ORDER BY seq", cid)
        assert [(*r[:2], _unescaped(r[2]), *r[3:]) for r in rows] == [
            (2, "tool_result", "a result about Kyoto", "call_0", "tool_0"), (3, "tool_result", "", "call_1", "tool_1"),
            (4, "tool_result", ODD, "call_2", "tool_2"), (5, "tool_result", "no call before it", "call_orphan", None)]
        texts = raw(s, "SELECT seq FROM messages WHERE conversation_id = :c AND text IS NOT NULL ORDER BY seq", cid)
        assert texts == [(0,), (6,)]  # the plain texts alone, as revision 0019 keeps them
        upgrade(s.engine)
        assert _rows(s, cid)[0][2:6] == [(None, None)] * 4  # rows written before keep their block rows
        reads_exactly(s, cid, data, lasts=(1, 2))
        assert s.get_tool_call("call_2").result == ODD
        s.truncate(cid, 4)
        assert [h.seq for h in s.search("Kyoto", conversation_id=cid, limit=None)] == [2]
        s.append(cid, [{"role": "tool", "tool_call_id": "call_2", "content": "after, about Kyoto"}], format="openai")
        assert _rows(s, cid)[0][4] == ("call_2", None)  # an appended result names no tool (as in its block row)
        assert sorted(h.seq for h in s.search("Kyoto", conversation_id=cid, limit=None)) == [2, 4]
        assert s.get_tool_call("call_2").result == "after, about Kyoto"
