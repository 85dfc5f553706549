"""Stored documents (``store.docs``, revision 0008): a load in the format a message came in
reads the document kept with it, and gives exactly what the canonical path gives."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pydantic
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import store
from store import ConversationStore, backfill
from store import docs as store_docs, operations as store_ops
from store.docs import MAX_DOC, PER_MESSAGE
from store.formats import FORMATS, Losses, convert, openai as openai_format, read, write
from store.formats._common import validate
from tests.samples import OPENAI_CHAT, chat, tool_turn
from tests.test_cli import run as run_cli
from tests.test_openai_format import messages as openai_messages


def canonical_path(store: ConversationStore, cid: str, fmt: str = "openai", last: int | None = None) -> list:
    """What the load gives without documents: the canonical messages written in ``fmt``."""
    return write(store.load_messages(cid, last=last), fmt)[0]


def docs_of(store: ConversationStore, cid: str) -> list[str | None]:
    with store.engine.connect() as conn:
        return list(conn.execute(sa.text("SELECT doc FROM messages WHERE conversation_id = :c ORDER BY seq"),
                                 {"c": cid.replace("-", "") if store.engine.dialect.name != "postgresql" else cid})
                    .scalars())


def items_of(stored: list[str | None], data: list[dict]) -> list[dict]:
    """Stored documents as the items they stand for: an empty one (``docs.PLAIN``, revision 0015)
    is its message's role and text (a tool result's: and its call id, revision 0016), which equals
    the item only where it holds nothing more; a call left out whole (``#k``) is the item's own
    call, as its block row keeps it."""
    out = []
    for doc, item in zip(stored, data):
        if doc == store_docs.PLAIN:
            out.append({key: item[key] for key in (_TOOL_KEYS if item["role"] == "tool" else ("role", "content"))})
            continue
        keys, end = store_docs.leads(doc)
        found = json.loads(doc[end:])
        for key in keys:
            assert key[:1] == "#", "a document with a text's lead is not an input item"
            found["tool_calls"][int(key[1:])] = item["tool_calls"][int(key[1:])]
        out.append(found)
    return out


_TOOL_KEYS = ("role", "tool_call_id", "content")


def forget_docs(store: ConversationStore) -> None:
    """As rows stored before revision 0008: no documents."""
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE messages SET doc = NULL"))


def test_loads_from_documents_equal_the_canonical_path(store, statements):
    cid = store.save(copy.deepcopy(OPENAI_CHAT) + chat(40) + tool_turn(99))
    assert None not in docs_of(store, cid)
    statements.statements.clear()
    stored = store.load(cid, "openai")
    assert statements.count() == 3  # the conversation and its window, the documents, the block rows of
    # the calls and results they leave out (revision 0016)
    assert stored == canonical_path(store, cid) == copy.deepcopy(OPENAI_CHAT) + chat(40) + tool_turn(99)
    windows = [store.load(cid, "openai", last=n) for n in (0, 1, 3, 7)]
    assert windows == [canonical_path(store, cid, last=n) for n in (0, 1, 3, 7)]
    assert list(store.export(cid, "openai", chunk=7)) == stored
    forget_docs(store)
    assert store.load(cid, "openai") == stored  # rows without documents: the canonical path
    assert [store.load(cid, "openai", last=n) for n in (0, 1, 3, 7)] == windows
    assert list(store.export(cid, "openai", chunk=7)) == stored


@pytest.mark.parametrize("odd", ["nan", "long integer", "empty call id", "too long", "no format"])
def test_a_message_without_a_document_sends_the_load_the_canonical_way(store, odd):
    """Whatever orjson would not read back exactly, what loses something when written, what
    is too long or what has no source format keeps no document, and the load is still exact."""
    message: dict = {"role": "user", "content": "odd one"}
    fmt = "openai"
    if odd == "nan":
        message["weight"] = math.nan
    elif odd == "long integer":
        message["weight"] = 2**70
    elif odd == "empty call id":
        message = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    elif odd == "too long":  # with a name: not an item of its role and text alone (see test_plain_docs)
        message.update(content="x" * (MAX_DOC + 1), name="ana")
    else:
        message, fmt = {"role": "user", "content": [{"kind": "text", "text": "odd one"}]}, "canonical"
    cid = store.save(chat(4))
    store.append(cid, [message], format=fmt)
    store.append(cid, [{"role": "user", "content": "after"}, {"role": "assistant", "content": "it"}])
    assert [doc is None for doc in docs_of(store, cid)] == [False] * 4 + [True] + [False] * 2
    losses: list = []
    loaded = store.load(cid, "openai", on_loss=losses.append)
    assert loaded[4].get("content") == message["content"] or odd == "no format"
    if odd == "nan":
        assert math.isnan(loaded[4]["weight"])
    elif odd == "long integer":
        assert loaded[4]["weight"] == 2**70 and isinstance(loaded[4]["weight"], int)
    elif odd == "empty call id":
        assert [loss.field for loss in losses] == ["tool_call.call_id"]  # reported as before
    assert loaded == write(store.load_messages(cid), "openai")[0]
    assert store.load(cid, "openai", last=2) == canonical_path(store, cid, last=2)  # past it: documents


def test_messages_appended_in_another_format_are_written_from_their_rows(store):
    cid = store.save(chat(4))
    store.append(cid, [{"role": "user", "content": "from qwen"}], format="qwen")
    assert docs_of(store, cid)[-1] is None  # qwen's writer carries state across messages
    assert store.load(cid, "openai") == chat(4) + [{"role": "user", "content": "from qwen"}]
    assert store.load(cid, "qwen") == canonical_path(store, cid, "qwen")


def test_replace_pop_and_truncate_keep_documents_true(store):
    cid = store.save(chat(6))
    store.replace(cid, chat(3) + [{"role": "user", "content": "new"}])
    assert store.load(cid, "openai") == chat(3) + [{"role": "user", "content": "new"}]
    assert store.pop(cid, 1) == [{"role": "user", "content": "new"}]
    store.truncate(cid, 2)
    store.append(cid, [{"role": "user", "content": "again"}])
    assert store.load(cid, "openai") == chat(2) + [{"role": "user", "content": "again"}]
    assert None not in docs_of(store, cid)


def test_a_fork_loads_its_shared_prefix_from_its_ancestors_documents(store, statements):
    parent = store.save(chat(10))
    fork = store.fork(parent, at=7)
    store.append(fork, [{"role": "user", "content": "in the fork"}])
    statements.statements.clear()
    loaded = store.load(fork, "openai")
    assert statements.count() == 5  # the row and window, the chain, the documents of each segment, the
    # block rows of the calls and results of the one holding some (revision 0016)
    assert loaded == chat(7) + [{"role": "user", "content": "in the fork"}] == canonical_path(store, fork)
    assert store.load(fork, "openai", last=3) == canonical_path(store, fork, last=3)


def test_strict_loads_from_documents(store):
    cid = store.save(copy.deepcopy(OPENAI_CHAT))
    assert store.load(cid, "openai", strict=True) == OPENAI_CHAT


def _sources() -> list[tuple[str, list]]:
    """Every bundled sample and test fixture, as canonical messages."""
    out = []
    for folder in (Path(store.__file__).parent / "samples", Path(__file__).parent / "fixtures"):
        for path in sorted(folder.glob("*.json")):
            fmt = {"agentscope-java": "agentscope"}.get(path.stem, path.stem)
            if fmt in FORMATS:
                out.append((f"{folder.name}/{path.stem}", read(json.loads(path.read_text()), fmt)))
    return out


@pytest.mark.parametrize("target", sorted(PER_MESSAGE))
def test_formats_with_documents_write_each_message_on_its_own(target):
    """What ``store.docs`` relies on: a whole list written is its messages written one by one,
    and a message written alone without a loss loses nothing in a list either."""
    assert {"openai", "langchain"} <= PER_MESSAGE
    for name, msgs in _sources():
        whole, losses = write(msgs, target)
        alone = [write([m], target) for m in msgs]
        assert whole == [item for items, _ in alone for item in items], name
        clean = {i for i, (items, lost) in enumerate(alone) if items and not len(lost)} - _unanswered(msgs)
        assert not clean & {loss.index for loss in losses}, name


def _unanswered(msgs: list) -> set[int]:
    """Messages holding a result that answers no call before it: reported only in a list, and
    kept without a document (``links.plan``)."""
    called, out = set(), set()
    for index, msg in enumerate(msgs):
        for block in msg.content:
            if block.kind == "tool_call":
                called.add(block.call_id)
            elif block.kind == "tool_result" and block.call_id not in called:
                out.add(index)
    return out


def test_a_result_answering_no_call_is_reported_from_its_rows(store):
    """OpenAI refuses a tool message without its call: kept where it stood, and reported."""
    orphan = {"role": "tool", "tool_call_id": "call_nowhere", "content": "late"}
    cid = store.save(chat(4) + [orphan])
    store.append(cid, [dict(orphan, tool_call_id="call_elsewhere")])
    assert [doc is None for doc in docs_of(store, cid)] == [False] * 4 + [True, True]
    losses: list = []
    assert store.load(cid, "openai", on_loss=losses.append) == chat(4) + [orphan, dict(orphan, tool_call_id="call_elsewhere")]
    assert [(loss.index, loss.field, loss.action) for loss in losses] == [
        (4, "tool_result", "approximated"), (5, "tool_result", "approximated")]
    assert "answers no call" in losses[0].detail


@pytest.mark.parametrize("target", ["openai", "openai-responses"])
def test_a_result_answering_no_call_is_reported_in_memory(target):
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "out"}]
    losses: list = []
    out = convert(orphan, from_="openai", to=target, on_loss=losses.append)
    assert [(loss.index, loss.field) for loss in losses] == [(1, "tool_result")]
    assert out == orphan if target == "openai" else out[-1]["call_id"] == "call_x"  # kept where it stood
    answered = chat(4)
    losses.clear()
    convert(answered, from_="openai", to=target, on_loss=losses.append)
    assert not losses


def test_a_langchain_conversation_loads_from_its_documents(store, statements):
    msgs = json.loads((Path(__file__).parent / "fixtures" / "langchain.json").read_text())
    cid = store.save(msgs, format="langchain")
    assert None not in docs_of(store, cid)
    statements.statements.clear()
    loaded = store.load(cid, "langchain")
    assert statements.count() == 2  # the conversation and its window, the documents (the texts they leave out in their rows)
    assert any(doc.startswith(store_docs._OPEN) for doc in docs_of(store, cid))
    assert loaded == canonical_path(store, cid, "langchain")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(openai_messages)
def test_any_openai_conversation_loads_the_same_with_or_without_documents(store, data):
    calls = [c["id"] for m in data for c in m.get("tool_calls", [])]
    assume(len(calls) == len(set(calls)))  # ids are unique within a conversation
    cid = store.save(copy.deepcopy(data))
    losses: list = []
    assert store.load(cid, "openai", on_loss=losses.append) == data
    expected, expected_losses = write(store.load_messages(cid), "openai")
    assert [(loss.index, loss.field) for loss in losses] == [(loss.index, loss.field) for loss in expected_losses]
    assert [store.load(cid, "openai", last=n) for n in (1, 3)] == [canonical_path(store, cid, last=n) for n in (1, 3)]


def test_documents_of_older_rows_are_filled_as_a_save_writes_them(store, statements):
    """Rows stored before revision 0008 have none; ``store.backfill`` (run by ``convstore db
    upgrade``) writes them from the rows, as a save would have, and skips what a save skips."""
    orphan = {"role": "tool", "tool_call_id": "call_nowhere", "content": "late"}
    cid = store.save(copy.deepcopy(OPENAI_CHAT) + chat(30) + [orphan])
    fork = store.fork(cid, at=len(OPENAI_CHAT) + 4, allow_pending=True)
    store.append(fork, [{"role": "user", "content": "in the fork"}])
    other = store.save([{"role": "user", "content": "from qwen"}], format="qwen")
    saved = {c: docs_of(store, c) for c in (cid, fork, other)}
    forget_docs(store)
    missing = backfill.pending(store.engine)
    assert {cid, fork} <= set(missing) and other not in missing
    assert missing[cid] == len(saved[cid]) and missing[fork] == 1
    assert backfill.fill(store.engine, {c: missing[c] for c in (cid, fork)}) == len(saved[cid]) - 1 + 1
    assert {c: docs_of(store, c) for c in (cid, fork, other)} == saved  # the orphan's stays None
    statements.statements.clear()
    store.load(fork, "openai")
    assert statements.count() == 5  # from documents: row and window, chain, one statement per segment,
    # and the block rows of the calls and results in the first (revision 0016)
    assert backfill.fill(store.engine, {cid: 1}) == 0  # nothing left to write


def test_db_upgrade_fills_the_documents_of_older_rows(empty_database_url):
    with ConversationStore(empty_database_url) as s:
        cid = s.save(chat(12))
        forget_docs(s)
    result = run_cli("db", "upgrade", db=empty_database_url)
    assert result.returncode == 0 and "stored the documents of 12 messages" in result.stdout, result.stderr
    with ConversationStore(empty_database_url) as s:
        assert None not in docs_of(s, cid)
    assert "documents" not in run_cli("db", "upgrade", db=empty_database_url).stdout  # nothing left


# Items near the shapes ``Format.verbatim`` accepts: names, unknown keys of every kind (OpenAI's
# own among them), call ids empty or not, content absent, null or text.
_short = st.text(max_size=6)
_extra = st.dictionaries(st.sampled_from(["reasoning_content", "x_note", "audio", "refusal", "function_call", "name"]),
                         st.one_of(_short, st.none(), st.integers()), max_size=2)
_call = st.builds(lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
                  st.text(max_size=3), _short, st.one_of(_short, st.just('{"a": 1}'), st.just("[1e400]")))
_content = st.one_of(st.just({}), st.builds(lambda c: {"content": c}, st.one_of(st.none(), _short)))
_items = st.one_of(
    st.builds(lambda r, c, e: {"role": r, "content": c, **e}, st.sampled_from(["system", "developer", "user"]),
              _short, _extra),
    st.builds(lambda c, calls, e: {"role": "assistant", **c, **calls, **e}, _content,
              st.one_of(st.just({}), st.builds(lambda calls: {"tool_calls": calls}, st.lists(_call, max_size=2))),
              _extra),
    st.builds(lambda i, c, e: {"role": "tool", "tool_call_id": i, "content": c, **e}, st.text(max_size=3), _short,
              _extra),
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_items, max_size=4), openai_messages))
def test_an_item_kept_as_its_own_document_is_what_the_writer_gives(data):
    """``Format.verbatim`` may only accept what the writer gives back unchanged: then a stored
    item is the very document a save would have written."""
    try:
        msgs = read(copy.deepcopy(data), "openai")
    except store.errors.InputError:
        return
    writer = FORMATS["openai"].write_message
    for index, (item, msg) in enumerate(zip(data, msgs, strict=True)):
        if FORMATS["openai"].verbatim(item):
            losses = Losses("openai")
            assert writer(msg, index, losses) == [item]
            assert not losses or item["role"] == "tool"  # a result answering no call: never kept (links.plan)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_items, max_size=6), openai_messages))
def test_a_plain_item_is_read_as_the_source_models_read_it(data):
    """The OpenAI reader takes an item ``Format.verbatim`` accepts as it is, without its source
    model: it must give the very fields (in the same order) the model's path gives, and an
    input with an invalid item the same errors."""
    reader = openai_format.Reader()
    try:
        parsed = openai_format.MESSAGES.validate_python(copy.deepcopy(data))
    except pydantic.ValidationError:
        with pytest.raises(store.errors.SchemaError) as fast:
            reader.read(copy.deepcopy(data))
        with pytest.raises(store.errors.SchemaError) as slow:
            validate(openai_format.MESSAGES, copy.deepcopy(data), "openai")
        assert str(fast.value) == str(slow.value)
        return
    models = openai_format.Reader()
    assert repr(reader.read(copy.deepcopy(data))[0]) == repr([models.message(m, i) for i, m in enumerate(parsed)])


def test_a_save_keeps_the_items_the_writer_gives_back_as_their_documents(store):
    data = copy.deepcopy(OPENAI_CHAT) + [{"role": "assistant", "content": "x", "reasoning_content": "why"}]
    batch = store_docs.read(copy.deepcopy(data), "openai")
    assert isinstance(batch, store_docs.Batch) and batch[1:3].given == batch.given[1:3]
    kept = [doc for doc in batch.given if doc is not None]
    assert kept and len(kept) < len(data)  # OPENAI_CHAT holds an image part: that one is written
    cid = store.save(copy.deepcopy(data))
    assert items_of(docs_of(store, cid), data) == data
    assert store.load(cid) == data == canonical_path(store, cid)


def test_each_chunk_of_a_save_keeps_its_own_items_as_documents(store, monkeypatch):
    monkeypatch.setattr(store_ops, "CHUNK", 3)
    data = chat(11)
    cid = store.save(copy.deepcopy(data))
    assert items_of(docs_of(store, cid), data) == data
    store.replace(cid, copy.deepcopy(data[:7]))
    assert items_of(docs_of(store, cid), data) == data[:7]


# Texts a document may leave out, and what a JSON string of them must keep exactly.
_LONG = ["x" * store_docs.MIN_HOLE, "quote \" backslash \\ slash / tab \t line\n" * 4,
         "nul \x00 and the mark \U000f0000 and \x01 itself, " * 3, "\U000f0000 first" * 10,
         "unicode é 中文 🙂 \u2028 \x7f " * 5, "  spaces around  " * 5]


def _long_chat() -> list[dict]:
    call = {"id": "call_long", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return ([{"role": "system", "content": _LONG[0]}]
            + [{"role": "user" if i % 2 else "assistant", "content": text} for i, text in enumerate(_LONG[1:])]
            + [{"role": "assistant", "content": _LONG[1], "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "call_long", "content": _LONG[2]},
               {"role": "user", "name": _LONG[4], "content": _LONG[4]},  # the same string twice
               {"role": "user", "content": "short"}])


def test_a_document_leaves_out_the_text_its_block_keeps(store, statements):
    """Texts of MIN_HOLE characters or more are stored once, in the block row: the document
    holds HOLE's JSON string in their place, and a load puts them back exactly (NUL, the mark PostgreSQL
    escapes with, a literal \\x01, line separators, the same string twice)."""
    data = _long_chat()
    cid = store.save(copy.deepcopy(data))
    stored = docs_of(store, cid)
    plain = [item.keys() in ({"role", "content"}, set(_TOOL_KEYS)) for item in data]  # empty (0015, 0016)
    assert [doc == store_docs.PLAIN for doc in stored] == plain
    assert all(doc.startswith(store_docs._OPEN) for doc, empty in zip(stored, plain) if not empty)
    whole = [len(json.dumps(item, ensure_ascii=False, separators=(",", ":"))) for item in data]
    marks = len(store_docs._OPEN + "content\",\"" + store_docs._MARK)  # the lead, with its key, and the stand-in
    assert all(len(doc) <= size + marks - store_docs.MIN_HOLE for doc, size in zip(stored[:-1], whole))
    statements.statements.clear()
    loaded = store.load(cid, "openai")
    assert statements.count() == 3  # the conversation and its window, the documents, their texts
    assert loaded == data == canonical_path(store, cid)
    assert [store.load(cid, "openai", last=n) for n in (1, 2, 5)] == [data[-1:], data[-2:], data[-5:]]
    assert list(store.export(cid, "openai", chunk=3)) == data
    fork = store.fork(cid, at=4)
    store.append(fork, [{"role": "user", "content": _LONG[3]}])
    assert store.load(fork, "openai") == data[:4] + [{"role": "user", "content": _LONG[3]}]
    forget_docs(store)
    assert backfill.fill(store.engine, {c: 1 for c in (cid, fork)}) == len(data) + 1
    assert [doc == store_docs.PLAIN or doc.startswith(store_docs._OPEN) for doc in docs_of(store, cid)] == [True] * len(data)
    assert store.load(cid, "openai") == data


def test_a_document_whose_text_is_gone_is_loaded_the_canonical_way(store):
    """A document and its block are written and removed together; were one ever without the
    other, the load would take the canonical path, not fail."""
    data = _long_chat()
    cid = store.save(copy.deepcopy(data))
    with store.engine.begin() as conn:  # the text of the message, in another row than the first block
        conn.execute(sa.text("UPDATE messages SET doc = :d WHERE seq = 0"),
                     {"d": store_docs._OPEN + 'content",{"role":"system","content":' + store_docs._MARK + "}"})
        conn.execute(sa.text("DELETE FROM blocks WHERE seq = 0"))
    assert store.load(cid, "openai")[1:] == data[1:]


def test_a_downgrade_puts_the_texts_back_into_the_documents(empty_database_url):
    from store.db import downgrade, upgrade

    data = _long_chat()
    with ConversationStore(empty_database_url) as s:
        cid = s.save(copy.deepcopy(data))
        downgrade(s.engine, "0009")
        assert [json.loads(doc) for doc in docs_of(s, cid)] == data  # whole documents, as 0009 keeps them
        upgrade(s.engine)
        assert s.load(cid, "openai") == data


@pytest.mark.parametrize("odd", ["the hole's own string", "the text as a key first", "the text inside another string",
                                 "two items"])
def test_a_document_whose_text_cannot_be_left_out_is_kept_whole(store, odd):
    """Where a load could not tell the hole from the rest, the document keeps its text (or, if
    it holds HOLE's own JSON string, is not kept at all); the load is exact either way."""
    text = "t" * store_docs.MIN_HOLE
    message: dict = {
        "the hole's own string": {"role": "user", "content": text, "x_flag": store_docs.HOLE},
        "the text as a key first": {"role": "user", text: "value", "content": text},
        "the text inside another string": {"role": "user", "x_note": '"' + text, "content": text},
        "two items": {"role": "tool", "tool_call_id": "call_b", "content": text},
    }[odd]
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for k in "ab"]}
    data = [call, {"role": "tool", "tool_call_id": "call_a", "content": text}, message]
    fmt = "openai"
    if odd == "two items":  # one canonical message holding both results writes two items
        data, fmt = [copy.deepcopy(call)], "openai"
    cid = store.save(copy.deepcopy(data), format=fmt)
    if odd == "two items":
        results = [{"kind": "tool_result", "call_id": f"call_{k}", "output": text} for k in "ab"]
        store.append(cid, [{"role": "tool", "content": results, "source_format": "openai"}], format="canonical")
        data += [{"role": "tool", "tool_call_id": f"call_{k}", "content": text} for k in "ab"]
    docs = docs_of(store, cid)
    last = docs[-1]
    if odd == "the hole's own string":
        assert last is None
    else:
        assert not last.startswith(store_docs._OPEN) and text in last
    assert store.load(cid, "openai") == data == canonical_path(store, cid)


_long_text = st.text(min_size=store_docs.MIN_HOLE, max_size=90)
_long_items = st.one_of(
    st.builds(lambda r, c, e: {"role": r, "content": c, **e}, st.sampled_from(["system", "user", "assistant"]),
              _long_text, st.dictionaries(st.sampled_from(["name", "x_note", "reasoning_content"]),
                                          st.one_of(_long_text, _short), max_size=2)),
    st.builds(lambda c: {"role": "tool", "tool_call_id": "call_1", "content": c}, _long_text),
    st.builds(lambda c, args: {"role": "assistant", "content": c, "tool_calls": [
        {"id": f"call_{k}", "type": "function", "function": {"name": "f", "arguments": a}} for k, a in enumerate(args)]},
        st.one_of(st.none(), _long_text, st.builds(lambda t: [{"type": "text", "text": t}], _long_text)),
        st.lists(st.one_of(_long_text, _short, st.just('{"a": 1}')), max_size=3)),
)




@settings(max_examples=300, deadline=None)
@given(st.lists(_long_items, min_size=1, max_size=4), st.sampled_from(["openai", "langchain"]))
def test_documents_without_their_text_parse_back_to_the_items(data, fmt):
    """Whatever the texts hold (any Unicode, quotes, escapes, the same string in another key),
    the documents a save stores, parsed with the texts of their first blocks and their calls'
    arguments, give the items the writer gives."""
    if fmt == "langchain":
        data = write(read(copy.deepcopy(data), "openai"), "langchain")[0]
    try:
        msgs = store_docs.read(copy.deepcopy(data), fmt)
    except store.errors.InputError:
        return
    stored = store_docs.documents(msgs)
    canonical = read(copy.deepcopy(data), fmt)  # what the plain items (store.lean) stand in for
    expected = [item for msg, i in zip(canonical, range(len(msgs)))
                for item in FORMATS[fmt].write_message(msg, i, Losses(fmt))]
    if None in stored:
        return
    assert store_docs.restore(stored, canonical) == expected
