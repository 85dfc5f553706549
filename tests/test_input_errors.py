"""Only convstore's own errors leave the library (issue 17): hostile input is refused with a
line that says what and where, before anything is written, on every backend."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import store as store_package
from store import FORMATS, AsyncConversationStore, ConversationStore, convert, onepass
from store.errors import ConvstoreError, InputError, SchemaError
from store.limits import MAX_DEPTH, Limits
from store.model import Message, TextBlock


def _deep(levels: int) -> object:
    value: object = "x"
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _call(call_id: str = "c", **extra: object) -> list[dict]:
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "r", **extra}]


DEEP_INPUTS = {
    "a deep extra field": _call(extra=_deep(300)),
    "a deep content part": [{"role": "user", "content": [{"type": "text", "text": "x", "meta": _deep(300)}]}],
}


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("case", DEEP_INPUTS)
def test_convert_refuses_values_nested_too_deep(case, target):
    with pytest.raises(InputError, match=rf"message \d: nested deeper than {MAX_DEPTH} levels"):
        convert(DEEP_INPUTS[case], from_="openai", to=target)


def test_values_as_deep_as_allowed_convert_to_every_format():
    messages = [{"role": "user", "content": [{"type": "text", "text": "x", "meta": _deep(MAX_DEPTH - 10)}]}]
    for target in FORMATS:
        convert(messages, from_="openai", to=target)


def test_save_refuses_what_could_not_be_loaded_and_writes_nothing(store):
    with pytest.raises(InputError, match="message 1: nested deeper"):
        store.save(DEEP_INPUTS["a deep extra field"])
    assert store.list_conversations() == []


def test_arguments_nested_too_deep_are_kept_as_text(store):
    raw = "[" * 600 + "]" * 600
    cid = store.save([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "deep", "type": "function", "function": {"name": "f", "arguments": raw}}]}])
    record = store.get_tool_call("deep")
    assert record.arguments is None and record.arguments_raw == raw
    for target in FORMATS:
        store.load(cid, format=target)  # loadable everywhere


@pytest.mark.parametrize("where", ["call id", "text", "tool name"])
def test_convert_refuses_lone_surrogates(where):
    messages = {"call id": _call("\ud800"), "text": [{"role": "user", "content": "a \ud800 b"}],
                "tool name": [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f\udfff", "arguments": "{}"}}]}]}[where]
    for target in ("anthropic", "docent", "qwen"):
        with pytest.raises(InputError, match="message 0: not valid Unicode"):
            convert(messages, from_="openai", to=target)


def test_names_and_lookup_ids_with_lone_surrogates_are_refused(database_url, store):
    with pytest.raises(InputError, match="namespace: not valid Unicode"):
        ConversationStore(database_url, namespace="tenant\ud800")
    with pytest.raises(InputError, match="key: not valid Unicode"):
        store.conversation_for("session\ud800")
    with pytest.raises(InputError, match="call_id: not valid Unicode"):
        store.get_tool_call("call\udc00")
    with pytest.raises(InputError, match="name: not valid Unicode"):
        store.find_tool_calls(name="f\udc00")
    assert store.list_conversations() == []


@pytest.mark.parametrize("field, value, message", [
    ("title", "t" * 501, "title: 501 characters, the most this store takes is 500"),
    ("key", "k" * 256, "key: 256 characters, the most this store takes is 255"),
    ("metadata", {"x": "y" * (20 * 1024 * 1024)}, "metadata: 20.0 MiB of JSON is over"),
])
def test_one_limit_for_conversation_fields_on_every_backend(store, field, value, message):
    limited = ConversationStore(engine=store.engine, namespace=store.namespace,
                                limits=store.limits.__class__(max_message_bytes=16 * 1024 * 1024))
    with pytest.raises(InputError, match=message):
        if field == "key":
            limited.conversation_for(value)
        else:
            limited.save([{"role": "user", "content": "hi"}], **{field: value})
    assert store.list_conversations() == []


def test_long_namespaces_are_refused(database_url):
    with pytest.raises(InputError, match="namespace: 129 characters"):
        ConversationStore(database_url, namespace="n" * 129)


def test_async_store_checks_the_same(database_url, namespace):
    async def main() -> None:
        async with AsyncConversationStore(database_url, namespace=namespace) as s:
            with pytest.raises(InputError, match="key: not valid Unicode"):
                await s.conversation_for("\ud800")
            with pytest.raises(InputError, match="title: 501 characters"):
                await s.save([], title="t" * 501)
            with pytest.raises(InputError, match="call_id: not valid Unicode"):
                await s.get_tool_call("\ud800")
            assert await s.list_conversations() == []

    asyncio.run(main())


@pytest.mark.parametrize("when", [
    dt.datetime(9999, 12, 31, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
    dt.datetime(1, 1, 1, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=5))),
])
def test_times_beyond_the_utc_range_are_refused(store, when):
    with pytest.raises(InputError, match="message 0, created_at: .* out of range in UTC"):
        store.save([Message(role="user", content=[TextBlock(text="x")], created_at=when)], format="canonical")
    assert store.list_conversations() == []


def test_bad_canonical_dicts_are_schema_errors_naming_message_and_field(store):
    good = {"role": "user", "content": [{"kind": "text", "text": "hi"}]}
    bad = {"role": "user", "content": [{"type": "text", "text": "hi"}]}  # OpenAI's tag, not ours
    with pytest.raises(SchemaError) as caught:
        store.save([good, Message(role="assistant"), bad], format="canonical")
    assert "message 2" in str(caught.value) and "content[0].kind" in str(caught.value)
    with pytest.raises(SchemaError):
        store.save({"role": "user"}, format="canonical")
    assert store.list_conversations() == []


@pytest.mark.parametrize("url, message", [
    ("nosuchdb://x", "unknown database or driver 'nosuchdb'"),
    ("::::", "not a database URL"),
    ("postgresql+nosuchdriver://x/y", "unknown database or driver"),
])
def test_bad_urls_are_one_line_errors(url, message):
    with pytest.raises(ConvstoreError, match=message):
        ConversationStore(url)
    with pytest.raises(ConvstoreError, match=message):
        AsyncConversationStore(url)


def test_escaped_size_counts_on_mariadb(store):
    if store.engine.dialect.name not in ("mysql", "mariadb"):
        pytest.skip("MariaDB/MySQL escape values on the wire")
    slashes = "\\" * (9 * 1024 * 1024)
    assert 9 * 1024 * 1024 < store.limits.max_message_bytes  # under the cap as characters...
    with pytest.raises(InputError, match="Limits.max_message_bytes"):  # ...over it as sent
        store.save([{"role": "user", "content": slashes}])
    assert store.list_conversations() == []
    cid = store.save([{"role": "user", "content": "\\" * (4 * 1024 * 1024)}])
    assert len(store.load(cid)[0]["content"]) == 4 * 1024 * 1024


hostile = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.sampled_from(["\ud800", "\udfff"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(hostile, max_size=4), st.sampled_from(list(FORMATS)), st.sampled_from(list(FORMATS)))
def test_convert_raises_only_its_own_errors(data, source, target):
    try:
        convert(data, from_=source, to=target)
    except ConvstoreError:
        pass


SAMPLES = {f: json.loads((Path(store_package.__file__).parent / "samples" / f"{f}.json").read_text()) for f in FORMATS}
ODD = [None, True, 0, 2**70, 1.5, float("nan"), "", "\x00", "user", "tool", "text", [], {}, [1], {"a": 1}]


def _places(value: object, at: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (its keys and indexes), the value's own first."""
    inner = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [at] + [p for k, v in inner for p in _places(v, (*at, k))]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(FORMATS)), st.sampled_from(list(FORMATS)), st.data())
def test_mutated_samples_raise_only_our_errors(source, target, data):
    """A format's own sample, one to three values replaced by odd ones (a dict where a name is, a
    list where a type is) or removed: read, converted and (OpenAI) read for a write in one pass,
    only convstore's errors come out (a list as a role once raised a TypeError from a set lookup)."""
    value = copy.deepcopy(SAMPLES[source])
    for _ in range(data.draw(st.integers(1, 3))):
        places = _places(value)[1:]
        if not places:
            break
        *parent_at, key = data.draw(st.sampled_from(places))
        parent = value
        for k in parent_at:
            parent = parent[k]
        if data.draw(st.booleans()):
            parent[key] = copy.deepcopy(data.draw(st.sampled_from(ODD)))
        else:
            del parent[key]
    try:
        convert(value, from_=source, to=target)
        if source == "openai":
            onepass.read(value, Limits())
    except ConvstoreError:
        pass


@pytest.mark.parametrize("items", [
    [{"role": ["user"], "content": "hi"}],  # onepass: a role that is no string, in a set lookup
    [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": ["function"], "function": {}}]},
     {"role": "tool", "tool_call_id": "c", "content": "r", "name": "f"}],  # a call's type that is no string
], ids=["role", "call-type"])
def test_odd_types_in_openai_items_are_schema_errors(store, items):
    with pytest.raises(SchemaError, match="message 0"):
        store.save(items, format="openai")
    assert store.list_conversations() == []


def test_a_langchain_part_whose_type_is_no_string_is_kept():
    msgs = [{"type": "human", "data": {"content": [{"type": {"odd": 1}, "x": 1}]}}]
    assert convert(msgs, from_="langchain", to="langchain") == msgs  # kept as it is, as any unknown part
    lost: list = []
    convert(msgs, from_="langchain", to="openai", on_loss=lost.append)
    assert lost  # OpenAI has no place for it: said, not dropped in silence


def test_urls_as_people_write_them(tmp_path, monkeypatch):
    from store.db import normalize_url

    assert normalize_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgres+asyncpg://u@h/db", asynchronous=True).drivername == "postgresql+asyncpg"
    assert normalize_url("postgres+asyncpg://u@h/db").drivername == "postgresql+psycopg"  # a sync store's
    monkeypatch.chdir(tmp_path)
    with ConversationStore("./chat.db") as s:  # a plain file path is a SQLite database
        s.save([{"role": "user", "content": "hi"}])
    assert (tmp_path / "chat.db").exists()


def test_a_missing_driver_names_the_extra_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_psycopg(name, *args, **kwargs):
        if name.split(".")[0] == "psycopg":
            raise ModuleNotFoundError(f"No module named {name!r}", name="psycopg")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    for mod in [m for m in __import__("sys").modules if m.split(".")[0] == "psycopg"]:
        monkeypatch.delitem(__import__("sys").modules, mod)
    with pytest.raises(ConvstoreError, match=r"pip install 'convstore\[postgres\]'"):
        ConversationStore("postgresql://nobody@127.0.0.1:1/none")
