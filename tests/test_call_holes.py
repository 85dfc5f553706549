"""A document without its calls' arguments (revision 0014): where an OpenAI item's call has
arguments of MIN_HOLE characters or more, its block row keeps them and the document does not;
every load gives them back exactly."""

from __future__ import annotations

import copy
import json

import sqlalchemy as sa

from store import ConversationStore, backfill
from store import docs as store_docs
from store.db import downgrade, upgrade
from store.formats import write
from tests.test_docs import docs_of, forget_docs

LONG = '{"query": "the weather in Kyoto, step by step", "days": 3, "units": "metric", "x": 1}'
ODD = ['{"s": "a NUL \\u0000 and a quote \\" and \\\\ in Kyoto, long enough to be left out"}',
       '{"n": 1.0, "pad": "an int where the text has a float: both keys stay in the block"}',
       "not JSON at all, but long enough to be left out of the document: Kyoto Kyoto",
       '{"emoji": "\U0001f600 and \u2028 a line separator, long enough to be left out"}']


def _call(i: int, arguments: str) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": arguments}}


def _chat() -> list[dict]:
    calls = [_call(0, LONG), _call(1, "{}"), _call(2, LONG)]  # the same string twice, a short one between
    odd = [_call(3 + k, text) for k, text in enumerate(ODD)]
    return [
        {"role": "user", "content": "plan the trip"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls),
        {"role": "assistant", "content": "now the odd ones, with a text long enough to be left out as well",
         "tool_calls": odd},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in odd),
        {"role": "assistant", "content": "done"},
    ]


def _leads(doc: str | None) -> list[str]:
    return None if doc is None else store_docs.leads(doc)[0]


def _reads_exactly(store: ConversationStore, cid: str, data: list[dict]) -> None:
    assert store.load(cid, "openai") == data == write(store.load_messages(cid), "openai")[0]
    assert [store.load(cid, "openai", last=n) for n in (1, 6, len(data))] == [data[-1:], data[-6:], data]
    assert list(store.export(cid, "openai", chunk=2)) == data


def test_long_arguments_are_left_to_the_call_blocks(store, statements):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    stored = docs_of(store, cid)
    assert _leads(stored[1]) == ["@0", "@2"]  # the short arguments stay
    assert _leads(stored[5]) == ["content", "@0", "@1", "@2", "@3"]
    assert LONG not in stored[1] and all(json.dumps(text)[1:-1] not in stored[5] for text in ODD[2:3])
    statements.statements.clear()
    _reads_exactly(store, cid, data)
    statements.statements.clear()
    store.load(cid, "openai")
    assert statements.count() == 3  # the conversation and its window, the documents, the calls' blocks
    for i, arguments in enumerate([LONG, "{}", LONG, *ODD]):
        assert store.get_tool_call(f"call_{i}", cid).arguments_raw == arguments
    fork = store.fork(cid, at=5)
    store.append(fork, [{"role": "assistant", "content": None, "tool_calls": [_call(9, LONG)]}], format="openai")
    assert store.load(fork, "openai") == data[:5] + [{"role": "assistant", "content": None,
                                                        "tool_calls": [_call(9, LONG)]}]
    forget_docs(store)
    assert store.load(cid, "openai") == data  # the canonical path
    backfill.fill(store.engine, {cid: len(data)})
    assert [_leads(doc) for doc in docs_of(store, cid)] == [_leads(doc) for doc in stored]
    _reads_exactly(store, cid, data)


def test_a_call_whose_block_is_gone_sends_the_load_the_canonical_way(store):
    data = _chat()[:5]
    cid = store.save(copy.deepcopy(data), format="openai")
    key = cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")
    with store.engine.begin() as conn:  # never so: a document and its blocks are written and removed together
        conn.execute(sa.text("DELETE FROM blocks WHERE conversation_id = :c AND seq = 1 AND position = 2"),
                     {"c": key})
    loaded = store.load(cid, "openai")
    assert loaded[1]["tool_calls"] == data[1]["tool_calls"][:2]


def test_a_downgrade_puts_the_arguments_back(empty_database_url):
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        downgrade(s.engine, "0013")
        docs = docs_of(s, cid)
        assert not any("@" in key for doc in docs if doc for key in _leads(doc))
        assert json.loads(docs[1]) == data[1]  # whole again, as revision 0013 keeps it
        assert _leads(docs[5]) == ["content"]
        upgrade(s.engine)
        _reads_exactly(s, cid, data)
        s.append(cid, [{"role": "assistant", "content": None, "tool_calls": [_call(9, LONG)]}], format="openai")
        assert _leads(docs_of(s, cid)[-1]) == ["@0"]
        assert s.load(cid, "openai")[-1]["tool_calls"] == [_call(9, LONG)]


def test_a_lead_naming_an_odd_key_reads_back(store):
    """A text found first under a key holding a quote, a comma or a backslash: its lead is read as JSON."""
    text = "the same long text under two keys, long enough to be left out of the document"
    data = [{"role": "user", 'x",\\k': text, "content": text},
            {"role": "assistant", "content": None, "tool_calls": [_call(0, LONG)], 'n",\\': text}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert [_leads(doc) for doc in docs_of(store, cid)] == [['x",\\k'], ["@0"]]
    _reads_exactly(store, cid, data)
