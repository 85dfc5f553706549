"""Issue 17, item 6 (small but wrong), on every backend, sync and async:

(a) ``truncate(cid, -1)`` is refused, like ``pop(-1)``;
(b) ``limit=0`` gives nothing and a negative limit is refused, for conversations and tool calls alike;
(c) ``find_tool_calls`` pages (a default limit, an opaque keyset cursor);
(d) ``db upgrade``/``db downgrade`` to unknown revisions, and a database newer than the code, are
    one-line errors, and the newer database is not told to run ``db upgrade``;
(e) the command line has ``--namespace`` (and ``$CONVSTORE_NAMESPACE``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from store import AsyncConversationStore, ConversationStore, Page
from store.cli import app
from store.db import VERSION_TABLE, create_engine, head_revision, upgrade
from store.errors import (
    AmbiguousToolCallError,
    ConvstoreError,
    DuplicateToolCallError,
    InputError,
    SchemaError,
    SchemaOutdatedError,
    SchemaTooNewError,
)

from .samples import OPENAI_CHAT, chat, tool_turn

T = TypeVar("T")
CONVSTORE = Path(sys.executable).with_name("convstore")


def arun(test: Callable[[AsyncConversationStore], Awaitable[T]], url: str, namespace: str, **kwargs: Any) -> T:
    async def main() -> T:
        async with AsyncConversationStore(url, namespace=namespace, **kwargs) as s:
            return await test(s)

    return asyncio.run(main())


def cli(*args: str, env: dict[str, str] | None = None) -> Any:
    """The command line in process; a library error is left in ``result.exception`` (the
    console script prints exactly those as one line, anything else as an internal error)."""
    base = {"CONVSTORE_DB": None, "CONVSTORE_NAMESPACE": None}
    return CliRunner().invoke(app, list(args), env={**base, **(env or {})})


# --- (a) truncate with a negative keep ---------------------------------------------


def test_truncate_refuses_a_negative_keep(store):
    cid = store.save(chat(6))
    with pytest.raises(InputError, match="keep must be an integer from 0 to 2147483647, got -1"):
        store.truncate(cid, -1)
    assert store.load(cid) == chat(6) and store.info(cid).message_count == 6
    assert store.truncate(cid, 10) == 0 and store.truncate(cid, 4) == 2 and store.load(cid) == chat(4)


def test_truncate_refuses_a_negative_keep_async(store, database_url):
    cid = store.save(chat(6))

    async def test(s: AsyncConversationStore) -> None:
        with pytest.raises(InputError, match="keep must be an integer from 0 to 2147483647"):
            await s.truncate(cid, -3)
        assert (await s.info(cid)).message_count == 6

    arun(test, database_url, store.namespace)
    assert store.load(cid) == chat(6)


def test_counts_that_are_not_counts_are_refused(store, database_url):
    """``last``, ``n``, ``keep`` and ``export``'s ``chunk`` take integers (a string, a float or a bool
    is an InputError naming the argument, not a TypeError from inside), and a chunk of 0 is refused
    instead of cutting forever."""
    cid = store.save(chat(4))
    calls = {
        "last": [lambda v: store.load(cid, last=v), lambda v: store.load(cid, format="anthropic", last=v),
                 lambda v: store.load_messages(cid, last=v), lambda v: store.get_conversation(cid, last=v)],
        "n": [lambda v: store.pop(cid, v)],
        "keep": [lambda v: store.truncate(cid, v)],
        "chunk": [lambda v: list(store.export(cid, chunk=v)), lambda v: list(store.export(cid, "anthropic", chunk=v))],
    }
    for what, fns in calls.items():
        for fn in fns:
            for bad in ("2", 2.0, True, -1) + ((0,) if what == "chunk" else ()):
                bounds = ">= 1" if what == "chunk" else "from 0 to 2147483647"
                with pytest.raises(InputError, match=f"{what} must be an integer {bounds}, got"):
                    fn(bad)

    async def test(s: AsyncConversationStore) -> None:
        with pytest.raises(InputError, match="last must be an integer from 0 to 2147483647, got '2'"):
            await s.load(cid, last="2")
        with pytest.raises(InputError, match="chunk must be an integer >= 1, got 0"):
            [m async for m in s.export(cid, chunk=0)]

    arun(test, database_url, store.namespace)
    assert store.load(cid) == chat(4)


# --- (b) limit=0 and negative limits --------------------------------------------------


def test_limits_mean_the_same_everywhere(store):
    for i in range(3):
        store.save(tool_turn(i))
    assert store.list_conversations(limit=0) == [] and store.find_tool_calls(limit=0) == []
    assert len(store.list_conversations(limit=2)) == 2 and len(store.find_tool_calls(limit=2)) == 2
    assert len(store.list_conversations()) == 3 and len(store.find_tool_calls()) == 3
    assert len(store.list_conversations(limit=None)) == 3 and len(store.find_tool_calls(limit=None)) == 3
    for call in (lambda: store.list_conversations(limit=-1), lambda: store.find_tool_calls(limit=-1)):
        with pytest.raises(InputError, match="limit must be an integer from 0 to 2147483647, got -1"):
            call()


def test_limits_mean_the_same_everywhere_async(store, database_url):
    for i in range(3):
        store.save(tool_turn(i))

    async def test(s: AsyncConversationStore) -> None:
        assert await s.list_conversations(limit=0) == [] and await s.find_tool_calls(limit=0) == []
        assert len(await s.list_conversations(limit=2)) == 2 and len(await s.find_tool_calls(limit=2)) == 2
        for call in (s.list_conversations(limit=-1), s.find_tool_calls(limit=-1)):
            with pytest.raises(InputError, match="limit must be"):
                await call

    arun(test, database_url, store.namespace)


# --- (c) find_tool_calls pages ---------------------------------------------------------


def _calls(conversation: int, messages: int, per_message: int) -> list[dict]:
    """``messages`` assistant turns of ``per_message`` calls each, then their results; the ids
    are not in their order within a message, so the order's last column (call id) shows."""
    out: list[dict] = []
    for m in range(messages):
        ids = [f"call_{conversation}_{m:02d}_{(7 * k) % per_message}" for k in range(per_message)]
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for i in ids]})
        out.extend({"role": "tool", "tool_call_id": i, "content": f"result of {i}"} for i in ids[: per_message - 1])
    return out


def _stored(store: ConversationStore, conversations: int = 5, messages: int = 10,
            per_message: int = 5) -> list[tuple[str, int, str]]:
    """``conversations x messages x per_message`` tool calls (250 by default), and the order
    ``find_tool_calls`` gives them in: conversation, message, call id."""
    keys = []
    for c in range(conversations):
        msgs = _calls(c, messages, per_message)
        cid = store.save(msgs)
        keys += [(cid, seq, call["id"]) for seq, m in enumerate(msgs) for call in m.get("tool_calls") or ()]
    return sorted(keys, key=_order)


def _key(record: Any) -> tuple[str, int, str]:
    return (str(uuid.UUID(record.conversation_id)), record.call_position, record.call_id)


def test_find_tool_calls_pages_through_every_record_once_in_order(store):
    expected = _stored(store)
    assert len(expected) == 250
    first = store.find_tool_calls()  # the default page: 100 records, not every one
    assert isinstance(first, Page) and isinstance(first, list) and len(first) == 100
    assert first.next_cursor is not None and [_key(r) for r in first] == expected[:100]
    seen, sizes, cursor = [], [], None
    while True:
        page = store.find_tool_calls(limit=100, cursor=cursor)
        sizes.append(len(page))
        seen += [_key(r) for r in page]
        if (cursor := page.next_cursor) is None:
            break
    assert sizes == [100, 100, 50] and seen == expected
    assert [_key(r) for r in store.find_tool_calls(limit=None)] == expected
    assert store.find_tool_calls(limit=None).next_cursor is None
    # A page that ends exactly at the end has no cursor: no empty page to ask for.
    assert store.find_tool_calls(limit=250).next_cursor is None
    assert store.find_tool_calls(limit=249).next_cursor is not None
    # Filters page too, and a record's fields come with it.
    pending, cursor = [], None
    while True:
        page = store.find_tool_calls(status="pending", limit=7, cursor=cursor)
        pending += page
        if (cursor := page.next_cursor) is None:
            break
    assert [_key(r) for r in pending] == [k for k in expected if k[2].endswith("_3")]  # (7*4) % 5 == 3
    assert all(r.status == "pending" and r.result is None for r in pending)
    answered = store.find_tool_calls(status="answered", limit=None)
    assert len(answered) == 200 and all(r.result == f"result of {r.call_id}" for r in answered)


def _order(key: tuple[str, int, str]) -> tuple[bytes, int, str]:
    return uuid.UUID(key[0]).bytes, key[1], key[2]


def test_a_cursor_neither_skips_nor_repeats_when_others_write_in_between(store):
    expected = _stored(store, conversations=3, messages=4, per_message=5)  # 60: 20 a conversation
    page = store.find_tool_calls(limit=25)
    first = [_key(r) for r in page]
    assert first == expected[:25]
    store.append(expected[25][0], _calls(8, 2, 5))  # after the cursor, in its conversation
    store.save(_calls(9, 2, 5))  # a new conversation
    store.delete(expected[-1][0])  # a conversation after the cursor goes
    rest, cursor = [], page.next_cursor
    while cursor is not None:
        page = store.find_tool_calls(limit=25, cursor=cursor)
        rest += [_key(r) for r in page]
        cursor = page.next_cursor
    now = [_key(r) for r in store.find_tool_calls(limit=None)]
    assert rest == [k for k in now if _order(k) > _order(first[-1])]
    assert not set(rest) & set(first) and set(expected[25:40]) <= set(rest)


def test_get_tool_call_still_finds_one_and_names_every_conversation_of_an_ambiguous_id(store):
    cids = [store.save(tool_turn(7)) for _ in range(3)]
    for i in range(150):  # more calls in the namespace than a page holds
        store.append(cids[0], tool_turn(100 + i))
    assert store.get_tool_call("call_249").conversation_id == cids[0]
    with pytest.raises(AmbiguousToolCallError, match="3 conversations") as caught:
        store.get_tool_call("call_7")
    assert sorted(caught.value.conversation_ids) == sorted(cids)
    assert store.get_tool_call("call_7", conversation_id=cids[2]).conversation_id == cids[2]


def _cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize("cursor", [
    "", "bogus", "!!!!", "e30", _cursor({}), _cursor([]), _cursor([1, "not-a-uuid", 0, "x"]),
    _cursor([2, str(uuid.uuid4()), 0, "x"]), _cursor([1, str(uuid.uuid4()), -1, "x"]),
    _cursor([1, str(uuid.uuid4()), True, "x"]), _cursor([1, str(uuid.uuid4()), 2**40, "x"]),
    _cursor([1, str(uuid.uuid4()), 0, 5]), _cursor([1, str(uuid.uuid4()), 0, "\ud800"]),
    _cursor("[" * 5000), "x" * 100_000, 42,
])
def test_a_malformed_cursor_is_an_input_error(store, cursor):
    store.save(tool_turn(1))
    with pytest.raises(InputError, match="invalid cursor"):
        store.find_tool_calls(cursor=cursor)


def test_find_tool_calls_pages_async(store, database_url):
    expected = _stored(store, conversations=3, messages=10, per_message=5)  # 150

    async def test(s: AsyncConversationStore) -> list[tuple[str, int, str]]:
        first = await s.find_tool_calls()
        assert isinstance(first, Page) and len(first) == 100 and first.next_cursor is not None
        seen, cursor = [], None
        while True:
            page = await s.find_tool_calls(limit=40, cursor=cursor)
            seen += [_key(r) for r in page]
            if (cursor := page.next_cursor) is None:
                return seen

    assert arun(test, database_url, store.namespace) == expected

    async def bad(s: AsyncConversationStore) -> None:
        with pytest.raises(InputError, match="invalid cursor"):
            await s.find_tool_calls(cursor="bogus")

    arun(bad, database_url, store.namespace)


def test_cli_tool_calls_pages_with_limit_and_cursor(store, database_url):
    expected = _stored(store, conversations=2, messages=5, per_message=5)  # 50
    seen, pages, cursor = [], 0, None
    while True:
        args = ["--db", database_url, "--namespace", store.namespace, "tool-calls", "--json", "--limit", "20"]
        result = cli(*args, *(["--cursor", cursor] if cursor else []))
        assert result.exit_code == 0, result.output
        seen += [(str(uuid.UUID(r["conversation_id"])), r["call_position"], r["call_id"])
                 for r in json.loads(result.stdout)]
        pages += 1
        lines = [line for line in result.stderr.splitlines() if line.startswith("next page: --cursor ")]
        if not lines:
            break
        cursor = lines[0].split()[-1]
    assert pages == 3 and seen == expected
    table = cli("--db", database_url, "--namespace", store.namespace, "tool-calls", "--limit", "1")
    assert table.exit_code == 0 and "next page: --cursor" in table.stderr
    bad = cli("--db", database_url, "--namespace", store.namespace, "tool-calls", "--cursor", "bogus")
    assert isinstance(bad.exception, InputError) and "invalid cursor" in str(bad.exception)


# --- (d) migrations to unknown revisions, and a database newer than the code ------------------


def _migrated(url: str, version: str | None = None) -> None:
    engine = create_engine(url)
    try:
        upgrade(engine)
        if version is not None:
            with engine.begin() as conn:
                conn.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = :v"), {"v": version})
    finally:
        engine.dispose()


@pytest.mark.parametrize(("args", "message"), [
    (["db", "downgrade", "bogus"], "cannot downgrade .* to 'bogus': Can't locate revision identified by 'bogus'"),
    (["db", "upgrade", "0099"], "cannot upgrade .* to '0099': Can't locate revision identified by '0099'"),
])
def test_unknown_target_revisions_are_input_errors(empty_database_url, args, message):
    _migrated(empty_database_url)
    result = cli("--db", empty_database_url, *args)
    assert isinstance(result.exception, InputError), result.exception
    assert result.exit_code != 0
    assert re.search(message, str(result.exception)) and "known revisions: base, 0001" in str(result.exception)


@pytest.mark.parametrize("args", [["db", "upgrade"], ["db", "downgrade", "base"], ["list"],
                                  ["tool-calls"], ["db", "upgrade", "head"]])
def test_a_database_newer_than_the_code_says_to_upgrade_convstore(empty_database_url, args):
    _migrated(empty_database_url, "0099")
    result = cli("--db", empty_database_url, *args)
    assert isinstance(result.exception, SchemaTooNewError), result.exception
    message = str(result.exception)
    assert "revision 0099" in message and "a newer convstore wrote it; upgrade convstore" in message
    assert "db upgrade" not in message and "alembic upgrade" not in message
    assert head_revision() in message


def test_a_database_newer_than_the_code_is_refused_by_both_stores(empty_database_url, namespace):
    _migrated(empty_database_url, "0099")
    with pytest.raises(SchemaTooNewError, match="newer convstore") as caught:
        ConversationStore(empty_database_url)
    assert isinstance(caught.value, SchemaOutdatedError) and "db upgrade" not in str(caught.value)
    with pytest.raises(SchemaTooNewError, match="newer convstore"):
        arun(lambda s: s.list_conversations(), empty_database_url, namespace)


def test_an_older_database_is_still_told_to_run_db_upgrade(empty_database_url):
    engine = create_engine(empty_database_url)
    try:
        upgrade(engine, "0001")
    finally:
        engine.dispose()
    with pytest.raises(SchemaOutdatedError, match="db upgrade") as caught:
        ConversationStore(empty_database_url)
    assert not isinstance(caught.value, SchemaTooNewError)


def test_the_console_script_prints_one_line_for_each(tmp_path):
    url = f"sqlite:///{tmp_path / 'new.db'}"
    _migrated(url, "0099")
    env = {k: v for k, v in os.environ.items() if k not in ("CONVSTORE_DB", "CONVSTORE_DEBUG")}
    for args in (["db", "upgrade"], ["list"], ["db", "downgrade", "bogus"]):
        result = subprocess.run([str(CONVSTORE), "--db", url, *args], capture_output=True, text=True, env=env,
                                timeout=120)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith("error: ") and "internal error" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "db upgrade" not in result.stderr
    _migrated(f"sqlite:///{tmp_path / 'ok.db'}")
    result = subprocess.run([str(CONVSTORE), "--db", f"sqlite:///{tmp_path / 'ok.db'}", "db", "downgrade", "bogus"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1 and result.stderr.startswith("error: cannot downgrade")
    assert len(result.stderr.strip().splitlines()) == 1


# --- (e) --namespace ----------------------------------------------------------------------------


def test_cli_namespace_option_and_environment(tmp_path, database_url, namespace):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    imported = cli("--db", database_url, "--namespace", namespace, "import", str(source), "--format", "openai")
    assert imported.exit_code == 0, imported.output
    cid = imported.stdout.strip()
    with ConversationStore(database_url, namespace=namespace) as s:
        assert [c.id for c in s.list_conversations()] == [cid]

    def ids(*args: str, env: dict[str, str] | None = None) -> list[str]:
        result = cli("--db", database_url, *args, "list", "--json", env=env)
        assert result.exit_code == 0, result.output
        return [c["id"] for c in json.loads(result.stdout)]

    assert ids("--namespace", namespace) == [cid]
    assert ids(env={"CONVSTORE_NAMESPACE": namespace}) == [cid]
    assert cid not in ids() and cid not in ids("--namespace", namespace + "-other")
    assert ids("--namespace", namespace + "-other", env={"CONVSTORE_NAMESPACE": namespace}) == []  # the option wins
    exported = cli("--db", database_url, "--namespace", namespace, "export", cid, "--format", "openai")
    assert exported.exit_code == 0 and json.loads(exported.stdout) == OPENAI_CHAT
    found = cli("--db", database_url, "--namespace", namespace, "tool-call", "call_paris", "--json")
    assert found.exit_code == 0 and json.loads(found.stdout)["conversation_id"] == cid
    elsewhere = cli("--db", database_url, "--namespace", namespace + "-other", "tool-call", "call_paris")
    assert isinstance(elsewhere.exception, ConvstoreError) and "no tool call" in str(elsewhere.exception)
    shown = cli("--db", database_url, "--namespace", namespace, "show", cid)
    assert shown.exit_code == 0 and "get_weather" in shown.stdout
    other = cli("--db", database_url, "--namespace", namespace + "-other", "show", cid)
    assert isinstance(other.exception, ConvstoreError) and "no conversation" in str(other.exception)


# --- found from outside (forty-first session): counts past a query's integer, lookups of None ----------


def test_counts_past_a_querys_integer_are_refused(store, database_url):
    """A ``last`` or ``limit`` beyond PostgreSQL's ``integer`` (SQLite's 64 bits, MariaDB's) is an
    InputError naming it, not an OverflowError or a driver's error; the largest one works."""
    cid = store.save(tool_turn(0))
    calls = {
        "last": lambda v: store.load(cid, last=v),
        "limit": [lambda v: store.list_conversations(limit=v), lambda v: store.find_tool_calls(limit=v),
                  lambda v: store.search("weather", limit=v)],
    }
    for what, fns in calls.items():
        for fn in fns if isinstance(fns, list) else [fns]:
            for huge in (2**31, 2**63, sys.maxsize, 2**64):
                with pytest.raises(InputError, match=f"{what} must be an integer from 0 to 2147483647, got {huge}"):
                    fn(huge)
    assert store.load(cid, last=2**31 - 1) == tool_turn(0)
    assert len(store.find_tool_calls(limit=2**31 - 1)) == 1

    async def test(s: AsyncConversationStore) -> None:
        with pytest.raises(InputError, match="last must be an integer from 0 to 2147483647"):
            await s.load(cid, last=2**63)

    arun(test, database_url, store.namespace)


def test_a_lookup_of_none_is_refused(store, database_url):
    """``get_tool_call(None)`` and ``conversation_for(None)`` are InputErrors: a query took None for
    "any" and answered with another call, or a conversation without a key."""
    store.save(tool_turn(0))
    store.save(chat(2))
    with pytest.raises(InputError, match="call_id must be a string, got None"):
        store.get_tool_call(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="key must be a string, got None"):
        store.conversation_for(None)  # type: ignore[arg-type]

    async def test(s: AsyncConversationStore) -> None:
        with pytest.raises(InputError, match="call_id must be a string, got None"):
            await s.get_tool_call(None)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="key must be a string, got None"):
            await s.conversation_for(None)  # type: ignore[arg-type]

    arun(test, database_url, store.namespace)


@pytest.mark.parametrize("call_id", ["a\x00b", "\U000f0000tool-1"], ids=["nul", "escape-mark"])
def test_an_append_looks_call_ids_up_as_they_are_stored(store, call_id):
    """A call id with a NUL, or starting with the mark that escapes one, is stored escaped on
    PostgreSQL: an append looks it up escaped too (it went unescaped: the NUL failed the append, the
    mark left the result unlinked, the window cut it from its call, a duplicate got past)."""
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": call_id, "content": "the result"}
    cid = store.save([{"role": "user", "content": "hi"}])
    store.append(cid, [call])
    store.append(cid, [result])
    record = store.get_tool_call(call_id, conversation_id=cid)
    assert (record.status, record.result, record.call_position, record.result_position) == ("answered", "the result", 1, 2)
    assert store.load(cid, last=1) == [call, result]
    with pytest.raises(DuplicateToolCallError):
        store.append(cid, [call])


def test_save_many_writes_every_conversation_or_none(store, database_url):
    """``save_many``: several new conversations in one transaction (the command line's import of
    several files): a conversation the store refuses as it is written leaves none of them."""
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    twice = [call, {"role": "tool", "tool_call_id": "c1", "content": "ok"}, call]
    with pytest.raises(DuplicateToolCallError):
        store.save_many([(chat(4), {"title": "first"}), (twice, {})])
    assert store.list_conversations() == []
    with pytest.raises(InputError, match=r"conversation 1: unknown fields \['titel'\]"):
        store.save_many([(chat(4), {}), (chat(2), {"titel": "typo"})])
    ids = store.save_many([(chat(4), {"title": "first", "tags": ["a"]}), (tool_turn(1), {"metadata": {"k": 1}})])
    assert [store.load(cid) for cid in ids] == [chat(4), tool_turn(1)]
    assert (store.info(ids[0]).title, store.info(ids[0]).tags, store.info(ids[1]).metadata) == ("first", ["a"], {"k": 1})

    async def test(s: AsyncConversationStore) -> None:
        with pytest.raises(DuplicateToolCallError):
            await s.save_many([(chat(2), {}), (twice, {})])
        more = await s.save_many([(chat(2), {"title": "async"})])
        assert await s.load(more[0]) == chat(2)

    arun(test, database_url, store.namespace)
    assert len(store.list_conversations()) == 3


def test_a_streamed_write_refuses_what_a_list_refuses_with_the_same_error(store):
    """An iterator of messages is checked chunk by chunk as a list is whole: a lone surrogate is an
    InputError naming the message (a raw TypeError from orjson), a bad canonical dict a SchemaError
    naming message and field (a raw pydantic ValidationError); nothing is written either way."""
    bad = [{"role": "user", "content": "ok"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": "\ud800"}'}}]}]
    cid = store.save(chat(2))
    for write in (lambda m: store.save(m), lambda m: store.append(cid, m)):
        for given in (bad, iter(bad)):
            with pytest.raises(InputError, match="message 1: not valid Unicode"):
                write(given)
    canonical = [{"role": "user", "content": [{"kind": "text", "text": "ok"}]}, {"role": "user", "content": [{"kind": "nope"}]}]
    for given in (canonical, iter(canonical)):
        with pytest.raises(SchemaError, match=r"message 1, field content\[0\]"):
            store.save(given, format="canonical")
    assert len(store.list_conversations()) == 1 and store.load(cid) == chat(2)
