"""An OpenAI list read for a write in one pass (store.onepass): its plain texts and tool results
checked as they are read, and their rows built with no budget. The very same messages, rows and
errors as ``docs.read`` and the general rows give, under every limit."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import bulk, docs, links, onepass, rows
from store.errors import ConvstoreError
from store.holes import HOLE
from store.lean import Parts, Plain
from store.limits import Limits
from store.model import MESSAGES
from tests.samples import OPENAI_CHAT, PNG, chat
from tests.test_lean import _conversation, _id, _rows, _text

_inner = st.sampled_from(["", "x", "a" + HOLE, "a\"" + HOLE, "y" * 70, "é" * 40])  # HOLE inside a string
_odd = st.one_of(
    st.builds(lambda i, n: {"role": "assistant", "content": None, "tool_calls": [  # a custom tool's call
        {"id": i, "type": "custom", "custom": {"name": n, "input": "x"}}]}, _id, st.sampled_from(["f", "g"])),
    st.builds(lambda c, i, n, a: {"role": "assistant", "content": c, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}}]},
        st.one_of(st.none(), _inner), _id, _inner,
        st.sampled_from(["{}", '{"a": "x' + HOLE + '"}', '{"b": "' + "z" * 80 + '"}'])),
    st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "assistant"]), _inner),
    st.builds(lambda c, r, first: {"role": "assistant", **({"reasoning_content": r, "content": c} if first
                                                           else {"content": c, "reasoning_content": r})},
              st.one_of(st.none(), _inner), _inner, st.booleans()),  # reasoning as its text, or before it
    st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, _id, st.one_of(_inner, _text)),
)
_b64 = st.binary(max_size=8).map(lambda data: base64.b64encode(data).decode())
_url = st.one_of(st.builds(lambda t, d: f"data:{t};base64,{d}", st.sampled_from(["image/png", "image/jpeg", ""]), _b64),
                 st.sampled_from(["data:image/png;base64,AB=", "data:image/png;base64,QUJD\n", "https://x.test/a.png",
                                  "data:image/png,abc", "data:" + "i" * 250 + "/p;base64,QUJD"]))
_part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.one_of(_inner, _text)),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": u}}, _url),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": u, "detail": "low"}}, _url),
    st.builds(lambda t: {"text": t, "type": "text"}, _inner),  # another order
    st.just({"type": "input_audio", "input_audio": {"data": "QUJD", "format": "wav"}}),
)
_parted = st.one_of(  # texts and images: the same text twice, an image first, odd parts, roles and URLs
    st.builds(lambda r, parts: {"role": r, "content": parts}, st.sampled_from(["user", "user", "system"]),
              st.lists(_part, max_size=4)),
    st.builds(lambda t, u: {"role": "user", "content": [{"type": "text", "text": t}, {"type": "text", "text": t},
                                                         {"type": "image_url", "image_url": {"url": u}}]}, _inner, _url),
)
_items = st.lists(st.one_of(_conversation, _odd.map(lambda item: [item]), _parted.map(lambda item: [item])),
                  max_size=4).map(
    lambda parts: [item for part in parts for item in part])

_LIMITS = [Limits(), Limits(max_message_bytes=150), Limits(max_message_bytes=150, escaped=True),
           Limits(max_message_bytes=40)]


def _read(read: Any, items: list[Any]) -> Any:
    """The messages read (a user's texts and images read in one pass as their canonical message), and
    their documents as given (an assistant's item read in one pass carries its own, as the rows keep
    it: the rows are compared below)."""
    try:
        batch = read(copy.deepcopy(items))
    except ConvstoreError as exc:
        return type(exc), str(exc)
    given = batch.given if isinstance(batch, docs.Batch) else [None] * len(batch)
    read = [MESSAGES.validate_python([msg.fields()])[0] if msg.__class__ is Parts else msg for msg in batch]
    return read, [doc for doc, msg in zip(given, batch) if not (msg.__class__ is Plain and msg.row)]


def _same_read(items: list[Any], limits: Limits) -> None:
    fast = _read(lambda i: onepass.read(i, limits), items)
    general = _read(lambda i: docs.read(i, "openai"), items)
    if isinstance(fast[0], list) and len(fast[1]) < len(general[1]):  # fewer documents given: drop the same
        kept = {i for i, msg in enumerate(fast[0]) if not (msg.__class__ is Plain and msg.row)}
        general = general[0], [doc for i, doc in enumerate(general[1]) if i in kept]
    assert fast == general


def _chunked(batch: list[Any], limits: Limits, known: dict[str, bool], size: int) -> Any:
    """The rows of ``batch`` stored at seq 5 after the stored calls ``known``, ``size`` messages a
    chunk (results in a later chunk than their calls), or the error on the way."""
    stored = {call_id: links.KnownCall(i, answered) for i, (call_id, answered) in enumerate(known.items())}
    waiting = sorted((call.call_seq, call_id) for call_id, call in stored.items() if not call.answered)
    linked = rows.Linked(stored, {i: i for i in range(5)}, waiting, 0)  # as Linked.look_up gives it
    out = []
    try:
        for at in range(0, len(batch), size):
            chunk = rows.chunk_rows(limits, "c", batch[at:at + size], first_seq=5 + at, index_base=at,
                                    known=linked.known, prior_starts=linked.starts)
            linked.add(chunk)
            for table, keys, listed in ((rows.messages_t, chunk.message_keys, chunk.messages),
                                        (rows.blocks_t, chunk.block_keys, chunk.blocks)):  # a full scan's columns
                as_dicts = [{**dict.fromkeys(table.c.keys()), **dict(zip(keys, row))} for row in listed]
                assert keys == bulk.set_keys(table, as_dicts) and all(len(row) == len(keys) for row in listed)
            out.append((chunk.messages, chunk.message_keys, chunk.blocks, chunk.block_keys, chunk.tool_calls,
                        chunk.link_updates, chunk.blobs.rows))
    except ConvstoreError as exc:
        return type(exc), str(exc)
    return out


def _outcome(read: Any, items: list[Any], limits: Limits, known: dict[str, bool], size: int) -> Any:
    try:
        batch = read(copy.deepcopy(items))
    except ConvstoreError as exc:
        return type(exc), str(exc)
    return _chunked(batch, limits, known, size)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_items, st.sampled_from(_LIMITS),
       st.dictionaries(st.sampled_from(["stored_1", "stored_2", "call_1"]), st.booleans(), max_size=2),
       st.sampled_from([1, 3, 100]))
def test_one_pass_gives_the_messages_rows_and_errors_of_the_general_path(items, limits, known, size):
    _same_read(items, limits)
    assert _outcome(lambda i: onepass.read(i, limits), items, limits, known, size) == \
        _outcome(lambda i: docs.read(i, "openai"), items, limits, known, size)


@pytest.mark.parametrize("items", [OPENAI_CHAT, chat(40)], ids=["sample", "chat"])
def test_the_samples_give_the_rows_of_the_general_path(items):
    limits = Limits()
    batch = onepass.read(copy.deepcopy(items), limits)
    assert sum(m.__class__ is Plain and m.checked is limits for m in batch) >= 2
    assert _outcome(lambda i: onepass.read(i, limits), items, limits, {}, 7) == \
        _outcome(lambda i: docs.read(i, "openai"), items, limits, {}, 7)


def test_a_chunk_with_images_among_calls_gives_the_rows_of_the_general_path():
    """A user's text and image (a blob each, its block rows' columns beside the calls') among texts,
    calls and a result, all read in one pass, and the same image with a part the one pass leaves to
    the reader: the chunk's rows, widened to every column some row sets, are the general path's."""
    image = {"role": "user", "content": [{"type": "text", "text": "see " * 20}, {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes(range(40))).decode()}}]}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
    detailed = copy.deepcopy(image)
    detailed["content"][1]["image_url"]["detail"] = "low"  # its notes in the block's extras: the reader's
    items = [{"role": "user", "content": "hi"}, image, call, detailed, {"role": "tool", "tool_call_id": "call_1",
             "content": "done"}, image, {"role": "assistant", "content": "ok"}]
    limits = Limits()
    batch = onepass.read(copy.deepcopy(items), limits)
    assert [m.__class__.__name__ for m in batch] == ["Plain", "Parts", "Plain", "Message", "Plain", "Parts", "Plain"]
    for size in (1, 3, 7):
        fast = _outcome(lambda i: onepass.read(i, limits), items, limits, {}, size)
        assert fast == _outcome(lambda i: docs.read(i, "openai"), items, limits, {}, size)
    (messages, message_keys, blocks, block_keys, *_), = fast
    assert {"media_type", "blob_sha256"} <= set(block_keys) and len(blocks) == 7
    assert len(fast[0][-1]) == 1  # the three images' one blob
    assert [row[1] for row in blocks] == sorted(row[1] for row in blocks)


def test_only_plain_texts_results_and_calls_within_the_limits_are_checked():
    limits = Limits(max_message_bytes=100)
    items = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "x" * 95},  # over the limit with its source format: the rows say so
        {"role": "user", "content": HOLE + "hi"},
        {"content": "hi", "role": "user"},
        {"role": "developer", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
        {"role": "tool", "tool_call_id": "i" * 256, "content": "done"},  # over the column's bound
        {"role": "tool", "tool_call_id": "", "content": "done"},
        {"role": "function", "name": "f", "content": "done"},
        {"role": "assistant", "content": "so",
         "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{bad"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "done"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_3", "type": "custom", "custom": {"name": "h", "input": "x"}}]},
        {"role": "tool", "tool_call_id": "call_3", "content": "done"},
    ]
    batch = onepass.read(copy.deepcopy(items), limits)
    assert [m.__class__ is Plain and m.checked is limits for m in batch] == [
        True, False, False, False, False, True, True, False, False, False, False, True, False, True]
    assert [batch[i].name for i in (6, 11, 13)] == ["f", "g", "h"]  # its call's name, as the reader gives it


def test_a_check_under_other_limits_is_not_trusted():
    """A message read under one store's limits and written under another's (an async store capped on
    first use) is checked again, as the general path checks it."""
    arguments = '{"q": "' + "w" * 70 + '"}'
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"x" * 60).decode()}}
    items = [{"role": "user", "content": "x" * 200},
             {"role": "assistant", "content": "y" * 80, "tool_calls": [call], "reasoning_content": "z" * 90},
             {"role": "tool", "tool_call_id": "call_1", "content": "done"},
             {"role": "user", "content": [{"type": "text", "text": "v" * 70}, image]}]
    batch = onepass.read(copy.deepcopy(items), Limits())
    assert all(msg.checked is not None for msg in batch)
    for other in (Limits(max_message_bytes=10_000), Limits(max_message_bytes=150)):
        general = docs.read(copy.deepcopy(items), "openai")
        assert _chunked(batch, other, {}, 10) == _chunked(general, other, {}, 10)
    assert "over this store's limit" in _chunked(batch, Limits(max_message_bytes=150), {}, 10)[1]


@pytest.mark.parametrize("reasoning", ["r" * 3_000, "é" * 3_000, "\n" * 3_000, "q" * 300_000],
                         ids=["ascii", "utf8", "escaped", "over-a-document"])
def test_reasoning_left_to_the_document_is_counted_alike(reasoning):
    """A long ``reasoning_content`` is kept once, in the document (``kept_once``): both paths count it
    against the limit as its extras would have, and one over ``docs.MAX_DOC`` keeps no document."""
    items = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "so", "reasoning_content": reasoning}]
    for limits in (Limits(), Limits(max_message_bytes=5_000), Limits(max_message_bytes=7_000, escaped=True)):
        fast = _outcome(lambda i: onepass.read(i, limits), items, limits, {}, 10)
        assert fast == _outcome(lambda i: docs.read(i, "openai"), items, limits, {}, 10)
        over = len(reasoning.encode()) + reasoning.count("\n") * (1 + limits.escaped) > limits.max_message_bytes
        if over:  # the error, as (type, text)
            assert isinstance(fast, tuple) and "message 1, size" in fast[1]
        else:  # the rows of one chunk: the reasoning's message row keeps its extras
            assert dict(zip(fast[0][1], fast[0][0][1]))["extras"]


def test_a_read_error_is_the_general_paths():
    items = [{"role": "user", "content": "hi"}] * 3 + [{"role": "user", "content": 7}]
    with pytest.raises(ConvstoreError) as fast:
        onepass.read(copy.deepcopy(items), Limits())
    with pytest.raises(ConvstoreError) as general:
        docs.read(copy.deepcopy(items), "openai")
    assert str(fast.value) == str(general.value) and "message 3" in str(fast.value)


def test_a_save_and_appends_store_the_rows_of_the_general_path(store, monkeypatch):
    image = {"role": "user", "content": [{"type": "text", "text": "look " * 20},  # the sample's image's blob again
                                         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}
    items = [*OPENAI_CHAT, image, *chat(12), image, {"role": "tool", "tool_call_id": "nobody", "content": "stray"},
             image]
    fast = store.save(copy.deepcopy(items[:20]))
    for at in range(20, len(items), 3):
        store.append(fast, copy.deepcopy(items[at:at + 3]))
    monkeypatch.setattr(onepass, "read", lambda data, limits: docs.read(data, "openai"))
    general = store.save(copy.deepcopy(items[:20]))
    for at in range(20, len(items), 3):
        store.append(general, copy.deepcopy(items[at:at + 3]))
    assert _rows(store, fast) == _rows(store, general)
    assert _blobs(store, fast) == _blobs(store, general) and len(_blobs(store, fast)) == 3  # PNG, PDF, WAV once
    assert store.load(fast) == store.load(general) == items


def _blobs(store: Any, cid: str) -> list[tuple[Any, ...]]:
    key = cid.replace("-", "") if store.engine.dialect.name != "postgresql" else cid
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(
            "SELECT sha256, media_type, size, data FROM blobs WHERE conversation_id = :c ORDER BY sha256"), {"c": key})]


_SQLITE = sa.create_engine("sqlite://").dialect


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_items, st.sampled_from(_LIMITS),
       st.dictionaries(st.sampled_from(["stored_1", "stored_2", "call_1"]), st.booleans(), max_size=2))
def test_rows_built_as_sqlites_parameters_are_those_the_listed_rows_become(items, limits, known):
    """A chunk of checked messages built as SQLite's parameters (``bound``: the id as bound, 0 for NULL)
    sends what its listed rows become through the bind processors (``bulk.prepare_listed``)."""
    try:
        batch = onepass.read(copy.deepcopy(items), limits)
    except ConvstoreError:
        return
    cid = "0190e7a0-0000-7000-8000-000000000000"
    stored = {call_id: links.KnownCall(i, answered) for i, (call_id, answered) in enumerate(known.items())}
    try:
        listed = rows.chunk_rows(limits, cid, batch, first_seq=5, known=copy.deepcopy(stored), prior_starts={
            i: i for i in range(5)})
    except ConvstoreError:
        return
    bound = rows.chunk_rows(limits, cid, batch, first_seq=5, known=stored, prior_starts={i: i for i in range(5)},
                            bound=rows.bound(_SQLITE, cid))
    assert bound.bound == (len(onepass.checked(batch, limits)) == len(batch))
    for made, sent in zip(rows._prepared(_SQLITE, listed), rows._prepared(_SQLITE, bound)):
        assert (made is None) == (sent is None)
        if made is not None:
            assert _written(sent) == _written(made)
            assert {type(value) for row in sent.params for value in row} <= {str, int, bytes}


def _written(batch: bulk.Batch) -> list[dict[str, Any]]:
    """The columns each row of a batch sets, as its statement writes them (0 is NULL under NULLIF)."""
    statement = batch.statement
    return [{key: value for i, (key, value) in enumerate(zip(statement.keys, row))
             if not (value is None or i in statement.zeroed and value == 0)} for row in batch.params]
