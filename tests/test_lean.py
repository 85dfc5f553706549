"""Plain OpenAI items (a role and its text, a tool result, an assistant's calls) are stored straight
from the item (store.lean): the very same rows, and the very same errors, as the canonical path gives
for them."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from store import docs, links, onepass, rows, streaming
from store.errors import ConvstoreError
from store.formats import read, read_marked
from store.holes import HOLE
from store.lean import Call, Plain
from store.limits import Limits
from store.schema import MARK
from tests.samples import OPENAI_CHAT, chat


def lean_path(items: list[Any]) -> list[Any]:
    return docs.read(items, "openai")


def canonical_path(items: list[Any]) -> docs.Batch:
    """``docs.read`` as it was before store.lean: a canonical message for every item."""
    msgs, _, plain = read_marked(items, "openai")
    assert plain is not None
    return docs.Batch(msgs, [docs._given(item) if kept else None for item, kept in zip(items, plain)])


def outcome(read_batch: Any, items: list[Any], limits: Limits, known: dict[str, bool]) -> Any:
    """The rows of a chunk stored at seq 5 after the stored calls ``known`` (id -> answered), or
    the error on the way."""
    try:
        batch = read_batch(copy.deepcopy(items))
        stored = {call_id: links.KnownCall(i, answered) for i, (call_id, answered) in enumerate(known.items())}
        plan = rows.chunk_rows(limits, "c", batch, first_seq=5, index_base=2, known=stored,
                               prior_starts={i: i for i in range(5)})
    except ConvstoreError as exc:
        return type(exc), str(exc)
    return (plan.messages, plan.message_keys, plan.blocks, plan.block_keys, plan.tool_calls, plan.link_updates,
            plan.blobs.rows)


_text = st.one_of(st.text(max_size=80), st.sampled_from(["", HOLE, HOLE + "x", "\ud800 lone", "x" * 300]))
_id = st.one_of(st.sampled_from(["call_1", "call_2", "stored_1", "stored_2", ""]), st.text(max_size=5),
                st.just("i" * 300))
_arguments = st.one_of(
    st.sampled_from(["{}", '{"a": 1}', "not json", "", "[1]", "7", '"s"', "null", ' { "a" : 1 } ', '{"a":1,"a":2}',
                     '{"a": 123456789012345678901234567890}', '{"a": NaN}', '{"a": 1e400}', '{"a": -0.0}',
                     '{"a": 1e16}', '{"a": "\\u0000"}', '{"a": "\\u0001"}', '{"\\udc00": 1}', "[" * 201 + "]" * 201,
                     '{"q": "' + "x" * 70 + '"}', '{"a": "' + MARK + '"}', '{"a": "x-0.0"}', '{"a": [1.5e+300]}']),
    st.dictionaries(st.text(max_size=3), st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.none()),
                    max_size=2).map(json.dumps))
_call = st.builds(lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
                  _id, st.sampled_from(["f", "g", "", "n" * 300]), _arguments)
_items = st.one_of(
    st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["system", "user", "assistant", "developer"]),
              _text),
    st.builds(lambda c, r: {"content": c, "role": r}, _text, st.sampled_from(["user", "tool"])),  # another order
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, _id, _text),
    st.builds(lambda i, c: {"role": "tool", "content": c, "tool_call_id": i}, _id, _text),
    st.builds(lambda c, calls: {"role": "assistant", "content": c, "tool_calls": calls},
              st.one_of(st.none(), _text), st.lists(_call, max_size=2)),
    st.builds(lambda c, calls: {"content": c, "role": "assistant", "tool_calls": calls},  # another order
              st.one_of(st.none(), _text), st.lists(_call, min_size=1, max_size=2)),
    st.builds(lambda r, c, extra: {"role": r, "content": c, **extra}, st.sampled_from(["user", "assistant"]), _text,
              st.dictionaries(st.sampled_from(["name", "x_note", "reasoning_content"]), _text, max_size=2)),
    st.builds(lambda extra, c, calls: {"role": "assistant", **extra, **c, **calls},  # reasoning, calls, no content
              st.dictionaries(st.sampled_from(["reasoning_content", "x_note"]), _text, max_size=2),
              st.one_of(st.just({}), st.builds(lambda c: {"content": c}, st.one_of(st.none(), _text))),
              st.one_of(st.just({}), st.builds(lambda calls: {"tool_calls": calls}, st.lists(_call, max_size=2)))),
    st.builds(lambda c: {"role": "user", "content": [{"type": "text", "text": c}]}, _text),
    st.builds(lambda c, data: {"role": "user", "content": [  # a blob, its block's columns beside the others'
        {"type": "text", "text": c}, {"type": "image_url", "image_url": {
            "url": "data:image/png;base64," + base64.b64encode(data).decode()}}]}, _text, st.binary(max_size=12)),
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": [{"type": "text", "text": c}]}, _id, _text),
)

_turn = st.builds(  # calls, then their results (which take their names), one perhaps twice or missing
    lambda ids, texts, extra: [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": f"tool_{i}", "arguments": "{}"}} for i in ids]},
        *({"role": "tool", "tool_call_id": i, "content": t} for i, t in zip(ids + extra, texts))],
    st.lists(_id, min_size=1, max_size=3, unique=True), st.lists(_text, max_size=4), st.lists(_id, max_size=1))
_conversation = st.lists(st.one_of(_items.map(lambda item: [item]), _turn), max_size=6).map(
    lambda parts: [item for part in parts for item in part])


_limits = st.sampled_from([Limits(), Limits(max_message_bytes=150), Limits(max_message_bytes=150, escaped=True)])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([{"role": "assistant", "content": None, "tool_calls": [  # null arguments: the default, left out of a dump
    {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "null"}}]}], Limits(), {})
@given(_conversation, _limits,
       st.dictionaries(st.sampled_from(["stored_1", "stored_2", "call_1"]), st.booleans(), max_size=2))
def test_plain_items_give_the_rows_and_errors_of_the_canonical_path(items, limits, known):
    assert outcome(lean_path, items, limits, known) == outcome(canonical_path, items, limits, known)


@pytest.mark.parametrize("arguments", [
    '{"n":1234567890123456789}', '{"n":18446744073709551615}', '{"n":18446744073709551616}',
    '{"n":-9223372036854775809}', '{"id":"123456789012345678901234"}', '{"x":0.123456789012345678901234}',
    '{"x":12345678901234567890.5}', '{"x":1e16}', '{"x":1e400}', '[' * 199 + ']' * 199, '[' * 201 + ']' * 201,
])
def test_arguments_of_long_digits_or_deep_give_the_rows_of_the_canonical_path(arguments):
    # lean.bare_arguments no longer searches for long digits: what orjson reads otherwise than
    # exactjson (an integer beyond 64 bits) it dumps as 1e+19 or more, which the canonical path keeps apart
    items = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    assert outcome(lean_path, items, Limits(), {}) == outcome(canonical_path, items, Limits(), {})


@pytest.mark.parametrize("call_id,name", [("call_\ud800", "f"), ("call_1", "f\udc00"), ("\ud800", "\udc00")])
def test_a_lone_surrogate_in_a_call_gives_the_error_of_the_canonical_path(call_id, name):
    # a call's id, name and arguments, and a result's id and tool name, are sized together
    items = [{"role": "assistant", "content": "x", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "ok"}]
    lean, general = outcome(lean_path, items, Limits(), {}), outcome(canonical_path, items, Limits(), {})
    assert lean == general and "surrogate" in general[1]


@pytest.mark.parametrize("items", [OPENAI_CHAT, chat(40)], ids=["sample", "chat"])
def test_the_samples_give_the_rows_of_the_canonical_path(items):
    assert outcome(lean_path, items, Limits(), {}) == outcome(canonical_path, items, Limits(), {})


def test_only_an_item_its_row_says_all_of_is_plain():
    items = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"content": "hi", "role": "user"},  # written back in its own key order: a document
        {"role": "user", "content": "hi", "name": "ana"},
        {"role": "user", "content": HOLE + "hi"},  # a document could not be told from a hole
        {"role": "developer", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "done"},
        {"role": "assistant", "content": "let me see",
         "tool_calls": [{"id": "call_3", "type": "function", "function": {"name": "g", "arguments": "{bad"}}]},
        {"role": "tool", "tool_call_id": "call_3", "content": "done"},
    ]
    batch = docs.read(copy.deepcopy(items), "openai")
    assert [type(m).__name__ for m in batch] == ["Plain", "Plain"] + ["Message"] * 4 + ["Plain"] * 2 + [
        "Message", "Plain"]  # arguments that are no JSON: their block row keeps more than the text
    assert batch[6] == Plain("assistant", None, "openai", (Call("call_2", "f", "{}"),),
                             extras={"openai": {"content": "null"}})
    assert batch[7] == Plain("tool", "done", "openai", batch[7].content, "f")  # the name of its call
    assert batch[9].name == "g"  # a call read the canonical way names its result all the same
    assert [m.role for m in batch] == [m.role for m in read(copy.deepcopy(items), "openai")]


def test_a_read_error_names_the_item_in_the_whole_input():
    items = [{"role": "user", "content": "hi"}] * 3 + [{"role": "user", "content": 7}]
    with pytest.raises(ConvstoreError) as lean:
        docs.read(copy.deepcopy(items), "openai")
    with pytest.raises(ConvstoreError) as full:
        read(copy.deepcopy(items), "openai")
    assert str(lean.value) == str(full.value) and "3" in str(lean.value)


def _rows(store: Any, cid: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the conversation holds, but its id."""
    key = cid.replace("-", "") if store.engine.dialect.name != "postgresql" else cid
    out = {}
    with store.engine.connect() as conn:
        for table in ("messages", "blocks", "tool_calls"):
            found = conn.execute(sa.text(f"SELECT * FROM {table} WHERE conversation_id = :c"), {"c": key})
            out[table] = sorted((tuple(v for k, v in row._mapping.items() if k != "conversation_id") for row in found),
                                key=repr)
    return out


def test_a_save_and_appends_store_the_rows_of_the_canonical_path(store, monkeypatch):
    items = [*OPENAI_CHAT, *chat(12), {"role": "tool", "tool_call_id": "nobody", "content": "stray"}]
    lean = store.save(copy.deepcopy(items[:20]))
    for item in items[20:]:
        store.append(lean, [copy.deepcopy(item)])
    monkeypatch.setattr(docs, "_stand_in", lambda item, names: None)  # every item a canonical message
    monkeypatch.setattr(onepass, "read", lambda data, limits: docs.read(data, "openai"))
    full = store.save(copy.deepcopy(items[:20]))
    for item in items[20:]:
        store.append(full, [copy.deepcopy(item)])
    assert _rows(store, lean) == _rows(store, full)
    assert store.load(lean) == store.load(full) == items


def test_a_streamed_save_stores_the_rows_of_the_canonical_path(store, monkeypatch):
    """Chunks of three: results in a later chunk than their calls take their tool names all the same."""
    monkeypatch.setattr(streaming, "CHUNK", 3)
    items = [*chat(12), {"role": "tool", "tool_call_id": "nobody", "content": "stray"}, *OPENAI_CHAT]
    streamed = store.save(iter(copy.deepcopy(items)))
    monkeypatch.setattr(docs, "_stand_in", lambda item, names: None)
    full = store.save(copy.deepcopy(items))
    assert _rows(store, streamed) == _rows(store, full)
    assert store.load(streamed) == items


def test_a_streamed_read_error_names_the_item_in_the_whole_stream(store):
    items = [{"role": "user", "content": "hi"}] * 7 + [{"role": "user", "content": 7}]
    with pytest.raises(ConvstoreError) as streamed:
        store.save(iter(copy.deepcopy(items)))
    with pytest.raises(ConvstoreError) as whole:
        store.save(copy.deepcopy(items))
    assert str(streamed.value) == str(whole.value) and "7" in str(streamed.value)


def _agent_turns() -> list[dict[str, Any]]:
    """What a reasoning agent writes: reasoning with and without calls, calls with a text or null,
    long texts and arguments (left out of documents), and the results answering the calls."""
    long = "a long thought that goes on " * 4
    args = '{"query": "' + "weather in Lisbon " * 5 + '", "n": 3}'
    call = lambda i, a: {"id": f"call_{i}", "type": "function", "function": {"name": f"tool_{i % 2}", "arguments": a}}
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "plan it"},
        {"role": "assistant", "content": "thinking done", "reasoning_content": long},
        {"role": "assistant", "content": None, "tool_calls": [call(1, args), call(2, "{}")]},
        {"role": "tool", "tool_call_id": "call_1", "content": long},
        {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
        {"role": "assistant", "content": long, "reasoning_content": "short", "tool_calls": [call(3, '{"a": 1}')]},
        {"role": "tool", "tool_call_id": "call_3", "content": "3"},
        {"role": "assistant", "reasoning_content": long, "tool_calls": [call(4, args)]},
        {"role": "tool", "tool_call_id": "call_4", "content": "4"},
        {"role": "assistant", "content": None, "reasoning_content": long, "tool_calls": [call(5, "null")]},
        {"role": "tool", "tool_call_id": "call_5", "content": "5"},
        {"role": "assistant", "content": "done", "x_note": "kept"},
    ]


def test_reasoning_and_calls_store_the_rows_of_the_canonical_path(store, monkeypatch):
    """Items with calls and keys of their own, saved and appended on every backend: the rows of the
    canonical path, and the very items back."""
    items = _agent_turns()
    assert sum(type(m).__name__ == "Plain" for m in docs.read(copy.deepcopy(items), "openai")) >= 10
    lean = store.save(copy.deepcopy(items[:7]))
    for item in items[7:]:
        store.append(lean, [copy.deepcopy(item)])
    monkeypatch.setattr(docs, "_stand_in", lambda item, names: None)
    monkeypatch.setattr(onepass, "read", lambda data, limits: docs.read(data, "openai"))
    full = store.save(copy.deepcopy(items[:7]))
    for item in items[7:]:
        store.append(full, [copy.deepcopy(item)])
    assert _rows(store, lean) == _rows(store, full)
    assert store.load(lean) == store.load(full) == items
    assert store.get_tool_call("call_1", conversation_id=lean).result == items[4]["content"]
