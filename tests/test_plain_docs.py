"""An OpenAI item that is its role and its text alone is stored as an empty document (revision
0015): every read gives what the document gave, wherever the text is kept."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import ConversationStore
from store.db import downgrade, upgrade
from store.docs import MAX_DOC, PLAIN
from store.formats import read, write
from store.schema import MARK
from tests.test_docs import docs_of

LONG = "Kyoto " * 20


def _chat() -> list[dict]:
    return [
        {"role": "system", "content": "be brief"},  # short: the text was in the document
        {"role": "user", "content": LONG},  # long: the document left it out
        {"role": "user", "content": ""},
        {"role": "user", "content": "a NUL \x00 and " + MARK + " the escape mark " + LONG},
        {"role": "assistant", "content": "line\u2028separator"},
        {"role": "developer", "content": LONG},  # a source role: the item's role is not the row's
        {"role": "user", "content": LONG, "name": "ana"},
        {"role": "user", "content": LONG, "x_note": "kept in extras"},
        {"content": LONG, "role": "user"},  # keys in another order: written back as they came
        {"role": "user", "content": [{"type": "text", "text": LONG}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": LONG},
        {"role": "assistant", "content": LONG, "reasoning_content": "r" * 70},
    ]


PLAIN_AT = [0, 1, 2, 3, 4, 11]  # 11: a tool result (revision 0016)


def _reads_exactly(store: ConversationStore, cid: str, data: list[dict]) -> None:
    assert store.load(cid, "openai") == data
    assert [list(m) for m in store.load(cid, "openai")] == [list(m) for m in data]  # key order too
    assert list(store.export(cid, "openai", chunk=3)) == data
    for last in range(1, len(data) + 1):
        assert store.load(cid, "openai", last=last) == data[-len(store.load(cid, "openai", last=last)):]
    assert [m.content[0].text for m in store.load_messages(cid)[:5]] == [m["content"] for m in data[:5]]


def test_plain_items_keep_an_empty_document_and_read_back_exactly(store):
    data = _chat()
    cid = store.save(copy.deepcopy(data), format="openai")
    docs = docs_of(store, cid)
    assert [i for i, doc in enumerate(docs) if doc == PLAIN] == PLAIN_AT and None not in docs
    _reads_exactly(store, cid, data)
    store.append(cid, [{"role": "user", "content": LONG}], format="openai")
    assert docs_of(store, cid)[-1] == PLAIN
    assert store.load(cid, "openai", last=1) == [{"role": "user", "content": LONG}]
    fork = store.fork(cid, at=3)
    assert store.load(fork, "openai") == data[:3]


def test_another_format_keeps_its_own_documents(store):
    data = write(read([{"role": "user", "content": LONG}, {"role": "assistant", "content": "short"}], "openai"),
                 "langchain")[0]
    cid = store.save(copy.deepcopy(data), format="langchain")
    assert PLAIN not in docs_of(store, cid)
    assert store.load(cid, "langchain") == data


def test_a_downgrade_writes_the_documents_back_and_an_upgrade_empties_them(empty_database_url):
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        downgrade(s.engine, "0014")
        docs = docs_of(s, cid)
        assert PLAIN not in docs
        assert docs[1] == '"\\u0001content",{"role":"user","content":"\\u0001"}'
        assert docs[0] == '"\\u0001content",{"role":"system","content":"\\u0001"}'  # a short text is led too
        upgrade(s.engine)  # (the code reads revision 0020's columns: no read in between)
        assert [i for i, doc in enumerate(docs_of(s, cid)) if doc == PLAIN] == PLAIN_AT
        _reads_exactly(s, cid, data)


def test_an_empty_document_whose_text_is_in_a_block_row(empty_database_url):
    """Rows stored before revision 0013 keep their texts in block rows: the upgrade empties their
    documents too (short texts were led by the downgrade through 0014), and a load takes the texts
    from the blocks."""
    data = _chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data), format="openai")
        downgrade(s.engine, "0012")
        upgrade(s.engine)
        assert [i for i, doc in enumerate(docs_of(s, cid)) if doc == PLAIN] == PLAIN_AT
        _reads_exactly(s, cid, data)


def test_a_text_a_load_would_take_for_a_hole_keeps_no_document(store):
    data = [{"role": "user", "content": "\x01" + LONG}, {"role": "user", "content": "\x01"}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert docs_of(store, cid) == [None, None]
    assert store.load(cid, "openai") == data


@pytest.mark.parametrize("role", ["system", "user", "assistant"])
def test_every_role_of_a_plain_item(store, role):
    """Of any length: above MAX_DOC too, as no text is in its document."""
    data = [{"role": role, "content": LONG}, {"role": role, "content": "short"},
            {"role": role, "content": "x" * (MAX_DOC + 1)}, {"role": role, "content": 'a quote "\x01 then'}]
    cid = store.save(copy.deepcopy(data), format="openai")
    assert docs_of(store, cid) == [PLAIN] * 4
    assert store.load(cid, "openai") == data


_TEXT = st.one_of(st.text(st.characters(codec="utf-8"), max_size=90),
                  st.builds(lambda a, b: a + b, st.sampled_from(["\x01", '"\x01', "\x00", MARK, "x" * 70]),
                            st.text(st.characters(codec="utf-8"), max_size=20)))
_ITEMS = st.one_of(
    st.builds(lambda role, text: {"role": role, "content": text},
              st.sampled_from(["system", "user", "assistant", "developer"]), _TEXT),
    st.builds(lambda role, text, extra: {"role": role, "content": text, **extra},
              st.sampled_from(["user", "assistant"]), _TEXT,
              st.dictionaries(st.sampled_from(["name", "x_note"]), _TEXT, max_size=1)),
    st.builds(lambda text: {"content": text, "role": "user"}, _TEXT),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_ITEMS, min_size=1, max_size=5))
def test_any_items_read_back_exactly_in_every_way(sqlite_store, items):
    """Whatever the texts (U+0001 first or after a quote, NUL, the escape mark, long or short) and the
    keys: the stored-format load, the canonical path and a window give the items back, key order too
    wherever every message kept a document."""
    cid = sqlite_store.save(copy.deepcopy(items), format="openai")
    loaded = sqlite_store.load(cid, "openai")
    assert loaded == items == write(sqlite_store.load_messages(cid), "openai")[0]
    if None not in docs_of(sqlite_store, cid):
        assert [list(m) for m in loaded] == [list(m) for m in items]
    assert sqlite_store.load(cid, "openai", last=2) == items[-2:]

