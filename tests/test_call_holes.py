"""A document without its calls (revision 0016) or their arguments (revision 0014): where an OpenAI
item's call is what its block row says, the document leaves it out whole; where it holds more or
another order, its arguments of MIN_HOLE characters or more are left out; every load gives them back
exactly."""

from __future__ import annotations

import copy
import base64
import json

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import ConversationStore, backfill
from store import docs as store_docs
from store.db import downgrade, upgrade
from store.formats import write
from store.schema import MARK
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
    assert _leads(stored[1]) == ["#0", "#1", "#2"]  # short arguments too: the call is left out whole
    assert _leads(stored[5]) == ["content", "#0", "#1", "#2", "#3"]
    assert '"tool_calls":["\\u0001","\\u0001","\\u0001"]' in stored[1]
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
        assert _leads(docs_of(s, cid)[-1]) == ["#0"]
        assert s.load(cid, "openai")[-1]["tool_calls"] == [_call(9, LONG)]


def test_a_lead_naming_an_odd_key_reads_back(store):
    """A text found first under a key holding a quote, a comma or a backslash: its lead is read as JSON."""
    text = "the same long text under two keys, long enough to be left out of the document"
    data = [{"role": "user", 'x",\\k': text, "content": text},
            {"role": "assistant", "content": None, "tool_calls": [_call(0, LONG)], 'n",\\': text}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert [_leads(doc) for doc in docs_of(store, cid)] == [['x",\\k'], ["#0"]]
    _reads_exactly(store, cid, data)


def test_a_call_of_another_shape_keeps_all_but_its_long_arguments(store):
    """A call holding more than the block row says, or its keys in another order: the document keeps
    the call (its short arguments too) and leaves out its long arguments only, led by ``@k``."""
    reordered = [{"type": "function", "id": "call_1", "function": {"name": "f", "arguments": LONG}},
                 {"id": "call_2", "type": "function", "function": {"arguments": LONG, "name": "f"}},
                 _call(3, "{}"), _call(4, LONG)]
    data = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [{**_call(0, LONG), "x_extra": 1}]},
            {"role": "assistant", "content": None, "tool_calls": reordered}]
    cid = store.save(copy.deepcopy(data), format="openai")
    stored = docs_of(store, cid)
    assert [_leads(doc) for doc in stored[1:]] == [["@0"], ["@0", "@1", "@3"]]
    assert '"x_extra":1' in stored[1] and '"arguments":"{}"' in stored[2]
    loaded = store.load(cid, "openai")
    assert loaded == data and [list(c) for c in loaded[2]["tool_calls"]] == [list(c) for c in reordered]
    assert [list(c["function"]) for c in loaded[2]["tool_calls"]] == [list(c["function"]) for c in reordered]


_TEXT = st.one_of(st.text(st.characters(codec="utf-8"), max_size=80),
                  st.builds(lambda a, b: a + b, st.sampled_from(["\x01", '"\x01', "\x00", MARK, "#0", "x" * 70]),
                            st.text(st.characters(codec="utf-8"), max_size=20)))
_CALL_KEYS = st.sampled_from([("id", "type", "function"), ("type", "id", "function")])


@st.composite
def _turns(draw: st.DrawFn) -> list[dict]:
    """Assistant items calling 1-3 tools (any ids, names and arguments; the keys of a call in either
    order), each call answered by a tool item of any text."""
    items: list[dict] = []
    for t in range(draw(st.integers(1, 3))):
        calls = []
        for k in range(draw(st.integers(1, 3))):
            fields = {"id": f"c{t}{k}" + draw(_TEXT), "type": "function",
                      "function": {"name": draw(_TEXT), "arguments": draw(_TEXT)}}
            calls.append({key: fields[key] for key in draw(_CALL_KEYS)})
        items.append({"role": "assistant", "content": draw(st.one_of(st.none(), _TEXT)), "tool_calls": calls})
        items += [{"role": "tool", "tool_call_id": call["id"], "content": draw(_TEXT)} for call in calls]
    return items


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_turns())
def test_any_calls_and_results_read_back_exactly(sqlite_store, items):
    """Whatever the ids, names, arguments and texts (U+0001 first or after a quote, NUL, the escape
    mark, a lead's ``#0``, long or short): the stored-format load, the canonical path and a window give
    the items back, key order too wherever every message kept a document."""
    cid = sqlite_store.save(copy.deepcopy(items), format="openai")
    loaded = sqlite_store.load(cid, "openai")
    assert loaded == items == write(sqlite_store.load_messages(cid), "openai")[0]
    if None not in docs_of(sqlite_store, cid):
        assert [list(m) for m in loaded] == [list(m) for m in items]
        assert [[list(c) for c in m.get("tool_calls", ())] for m in loaded] == \
            [[list(c) for c in m.get("tool_calls", ())] for m in items]
    assert sqlite_store.load(cid, "openai", last=2) == items[-len(sqlite_store.load(cid, "openai", last=2)):]


def test_calls_and_results_of_odd_strings_survive_a_downgrade_and_an_upgrade(empty_database_url):
    """Ids and names holding NUL or the mark PostgreSQL escapes with: revision 0015's documents are
    written back from the block rows, and the upgrade makes this revision's again."""
    calls = [{"id": "call_\x00" + MARK, "type": "function", "function": {"name": "f\x00" + MARK, "arguments": LONG}},
             _call(1, "{}")]
    data = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "calling", "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c["id"], "content": "out \x00 " + MARK} for c in calls),
            {"role": "tool", "tool_call_id": "call_nowhere", "content": "an orphan: no document"}]
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        fresh = docs_of(s, cid)
        assert fresh[2:] == ["", "", None] and _leads(fresh[1]) == ["#0", "#1"]
        downgrade(s.engine, "0015")
        old = docs_of(s, cid)
        assert _leads(old[1]) == ["@0"] and [_leads(doc) for doc in old[2:4]] == [["content"]] * 2
        upgrade(s.engine)  # (the code reads revision 0020's columns: no read in between)
        assert docs_of(s, cid) == fresh
        _reads_exactly(s, cid, data)


def test_an_older_document_led_for_a_key_starting_with_a_hash_gets_its_text_back(empty_database_url):
    """Revision 0015 could lead a document by a text's key starting with ``#``, which a load now
    takes for a call's lead: the upgrade puts the text back in its place (not setting the document
    aside: the message's extras take the value they left to it), and no save leads one so since."""
    text = "the same long text under two keys, long enough to be left out of the document"
    data = [{"role": "user", "#0": text, "content": text}]
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        assert _leads(docs_of(s, cid)[0]) == []  # kept whole: no lead names a key starting with "#"
        downgrade(s.engine, "0015")
        key = cid if s.engine.dialect.name == "postgresql" else cid.replace("-", "")
        with s.engine.begin() as conn:  # as revision 0015 wrote it
            conn.execute(sa.text("UPDATE messages SET doc = :d WHERE conversation_id = :c"),
                         {"d": '"\\u0001#0",{"role":"user","#0":"\\u0001","content":%s}' % json.dumps(text), "c": key})
        upgrade(s.engine)
        assert [json.loads(doc) for doc in docs_of(s, cid)] == data
        assert s.load(cid, "openai") == data == write(s.load_messages(cid), "openai")[0]


def _image(seed: int) -> str:
    return "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes([seed]) * 300).decode()


def test_an_images_url_stays_in_its_document(store, statements):
    """An image's ``data:`` URL stays in its document beside its blob: left out, a load would read the blob
    too, one more statement for every window holding an image, for a twentieth of the bytes."""
    data = [{"role": "user", "content": [{"type": "text", "text": "what is in this?"},
                                         {"type": "image_url", "image_url": {"url": _image(1), "detail": "low"}}]},
            {"role": "assistant", "content": None, "tool_calls": [_call(0, LONG)]},
            {"role": "tool", "tool_call_id": "call_0", "content": "ok"}, {"role": "assistant", "content": "done"}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert _image(1) in docs_of(store, cid)[0]
    statements.statements.clear()
    assert store.load(cid, "openai") == data
    assert statements.count() == 3  # the conversation and its window, the documents, the calls' and results' blocks
