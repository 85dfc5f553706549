"""A message's extras kept once (revision 0012): a long value of a key the format has no
field for (OpenAI's ``reasoning_content``) is left to the message's document, and every read
gives it back exactly."""

from __future__ import annotations

import copy
import json

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import ConversationStore
from store import docs as store_docs
from store.db import downgrade, upgrade
from store.formats import write
from store.schema import MARK
from tests.test_docs import docs_of

LONG = "the reasoning, step by step: " + "x" * store_docs.MIN_HOLE
ODD = ["with a NUL \x00 " + LONG, MARK + " starts with the escape mark " + LONG, "\x01 starts with HOLE " + LONG,
       "line\u2028separator \"quoted\" " + LONG]


def _chat() -> list[dict]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "where is Kyoto?"},
        {"role": "assistant", "content": "In Japan.", "reasoning_content": LONG},
        {"role": "assistant", "content": "Short.", "reasoning_content": "short thought"},
        {"role": "assistant", "content": None, "reasoning_content": ODD[0],
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        *({"role": "assistant", "content": "Done " + str(i), "reasoning_content": odd} for i, odd in enumerate(ODD[1:])),
        {"role": "assistant", "content": LONG, "reasoning_content": LONG},  # the same string as the text
        {"role": "assistant", "content": "x", "vendor_notes": ["a list", LONG], "reasoning_content": LONG + "!"},
    ]


def _extras(store: ConversationStore, cid: str) -> list:
    dialect = store.engine.dialect.name
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT extras FROM messages WHERE conversation_id = :c ORDER BY seq"),
                            {"c": cid if dialect == "postgresql" else cid.replace("-", "")}).scalars()
        return [row if row is None or isinstance(row, dict) else json.loads(row) for row in rows]


def _held(extras: dict | None) -> list[str]:
    fields = ((extras or {}).get("openai") or {}).get("fields") or {}
    return sorted(key for key, value in fields.items() if value == store_docs.HOLE)


def _reads_exactly(store: ConversationStore, cid: str, data: list[dict]) -> None:
    assert store.load(cid, "openai") == data
    assert write(store.load_messages(cid), "openai")[0] == data  # the canonical path
    assert [store.load(cid, "openai", last=n) for n in (1, 3)] == [data[-1:], data[-3:]]
    assert list(store.export(cid, "openai", chunk=2)) == data
    messages = store.load_messages(cid)
    assert [m.extras.get("openai", {}).get("fields", {}).get("reasoning_content") for m in messages] == [
        item.get("reasoning_content") for item in data]


def test_long_unknown_values_are_stored_once_and_read_back_exactly(store):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    held = [_held(extras) for extras in _extras(store, cid)]
    # Long values the document holds as they are: left out, also where the same string is the text
    # the document leaves out. Short ones, lists, and a string starting with HOLE (whose message keeps
    # no document) stay.
    r = ["reasoning_content"]
    assert held == [[], [], r, [], r, [], r, [], r, r, r]
    _reads_exactly(store, cid, data)
    anthropic = store.load(cid, "anthropic")  # another format: the canonical path, where the reasoning is lost
    assert anthropic == write(store.load_messages(cid), "anthropic")[0]
    fork = store.fork(cid, at=3)
    store.append(fork, [{"role": "assistant", "content": "forked", "reasoning_content": LONG}], format="openai")
    forked = data[:3] + [{"role": "assistant", "content": "forked", "reasoning_content": LONG}]
    assert store.load(fork, "openai") == forked == write(store.load_messages(fork), "openai")[0]


def test_values_are_put_back_with_no_statement_of_their_own(store, statements):
    plain = store.save([{"role": "assistant", "content": "ok"}] * 3, format="openai")
    held = store.save([{"role": "assistant", "content": "ok", "reasoning_content": LONG}] * 3, format="openai")
    counts = []
    for cid in (plain, held):
        statements.statements.clear()
        store.load_messages(cid)
        counts.append(statements.count())
    assert counts[0] == counts[1]


def test_a_value_that_is_hole_itself_keeps_no_document(store):
    """A read would take HOLE for a value left to the document: such a message keeps none."""
    data = [{"role": "user", "content": "hi", "x_flag": store_docs.HOLE},
            {"role": "assistant", "content": "ok", "reasoning_content": LONG}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert [_held(extras) for extras in _extras(store, cid)] == [["x_flag"], ["reasoning_content"]]
    assert [doc is None for doc in docs_of(store, cid)] == [True, False]
    _reads_exactly(store, cid, data)


def test_a_value_whose_document_is_gone_reads_as_stored(store):
    """keep_once never leaves a value out without a document; were the document gone, the read
    keeps what the row holds rather than fail."""
    data = [{"role": "assistant", "content": "ok", "reasoning_content": LONG}]
    cid = store.save(copy.deepcopy(data), format="openai")
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE messages SET doc = NULL"))
    assert store.load_messages(cid)[0].extras["openai"]["fields"]["reasoning_content"] == store_docs.HOLE


def test_a_downgrade_puts_the_values_back(empty_database_url):
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        downgrade(s.engine, "0011")
        extras = _extras(s, cid)
        assert not any(_held(e) for e in extras)
        reasoning = [((e or {}).get("openai") or {}).get("fields", {}).get("reasoning_content") for e in extras]
        text = s.engine.dialect.name != "postgresql"  # JSON text as stored; PostgreSQL's loader unescapes JSONB
        escaped = [MARK + json.dumps(v) if text and isinstance(v, str) and ("\x00" in v or v.startswith(MARK)) else v
                   for v in (item.get("reasoning_content") for item in data)]
        assert reasoning == escaped  # as revision 0011 stores them
        upgrade(s.engine)
        _reads_exactly(s, cid, data)
        s.append(cid, [{"role": "assistant", "content": "after", "reasoning_content": LONG}], format="openai")
        assert s.load(cid, "openai")[-1]["reasoning_content"] == LONG


def test_langchain_unknown_values_read_back_exactly(store):
    data = [{"type": "human", "data": {"content": "hi", "type": "human"}},
            {"type": "ai", "data": {"content": "ok", "type": "ai", "vendor_field": LONG,
                                    "additional_kwargs": {"reasoning_content": LONG}}}]
    cid = store.save(copy.deepcopy(data), format="langchain")
    assert store.load(cid, "langchain") == write(store.load_messages(cid), "langchain")[0]


_TEXT = st.text(st.characters(codec="utf-8"), min_size=0, max_size=90)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.fixed_dictionaries({"content": _TEXT}, optional={
    "reasoning_content": _TEXT, "x_other": _TEXT, "x_list": st.lists(_TEXT, max_size=2)}), min_size=1, max_size=4))
def test_any_unknown_values_read_back_exactly(sqlite_store, items):
    data = [{"role": "assistant", **item} for item in items]
    cid = sqlite_store.save(copy.deepcopy(data), format="openai")
    assert sqlite_store.load(cid, "openai") == data == write(sqlite_store.load_messages(cid), "openai")[0]



def test_a_save_leaves_the_callers_messages_as_they_were(store):
    from store.formats import read

    msgs = read([{"role": "assistant", "content": "ok", "reasoning_content": LONG}], "openai")
    before = [m.model_dump() for m in msgs]
    cid = store.save(msgs, format="canonical")
    assert [m.model_dump() for m in msgs] == before
    assert store.load_messages(cid)[0].extras == msgs[0].extras
