"""Tenants kept apart, reads that are one snapshot, writers that never fail each other:
what a hostile tester broke (issue 17), on every backend."""

from __future__ import annotations

import asyncio
import base64
import copy

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore, convert
from store.errors import ConversationNotFoundError, ToolCallNotFoundError

from store.model import ImageBlock, Message, TextBlock, ToolCallBlock, ToolResultBlock

from .samples import OPENAI_CHAT, PNG, tool_turn

# Spellings a case-, accent- or pad-insensitive collation takes for the same text.
VARIANTS = ["TENANT_B", "Tenant_B", "tenant_b ", "tenánt_b", "tenant_B"]


def _variant(namespace: str, spelling: str) -> str:
    return f"{namespace}-{spelling}"


def test_namespaces_that_differ_only_in_case_accent_or_spaces_are_apart(database_url, namespace):
    owner = _variant(namespace, "tenant_b")
    with ConversationStore(database_url, namespace=owner) as b:
        cid = b.save(copy.deepcopy(OPENAI_CHAT))
        b.conversation_for("session")
    for spelling in VARIANTS:
        with ConversationStore(database_url, namespace=_variant(namespace, spelling)) as other:
            assert other.list_conversations() == []
            assert other.find_tool_calls() == []
            with pytest.raises(ConversationNotFoundError):
                other.load(cid)
            with pytest.raises(ConversationNotFoundError):
                other.append(cid, [{"role": "user", "content": "intruder"}])
            with pytest.raises(ConversationNotFoundError):
                other.delete(cid)
            with pytest.raises(ToolCallNotFoundError):
                other.get_tool_call("call_paris")
            assert other.conversation_for("session") != cid
    with ConversationStore(database_url, namespace=owner) as b:
        assert b.load(cid) == OPENAI_CHAT


def test_async_namespaces_are_apart(database_url, namespace):
    owner = _variant(namespace, "tenant_b")

    async def main() -> None:
        async with AsyncConversationStore(database_url, namespace=owner) as b:
            cid = await b.save(copy.deepcopy(OPENAI_CHAT))
        for spelling in VARIANTS:
            async with AsyncConversationStore(database_url, namespace=_variant(namespace, spelling)) as other:
                assert await other.list_conversations() == []
                with pytest.raises(ConversationNotFoundError):
                    await other.load(cid)
                with pytest.raises(ConversationNotFoundError):
                    await other.append(cid, [{"role": "user", "content": "intruder"}])
                with pytest.raises(ToolCallNotFoundError):
                    await other.get_tool_call("call_paris")

    asyncio.run(main())


@pytest.mark.parametrize("a, b", [("SessionAbc", "sessionabc"), ("🐱", "🐶"), ("key", "key "),
                                  ("résumé", "resume"), ("straße", "strasse")])
def test_keys_that_a_collation_would_merge_are_different_sessions(store, a, b):
    assert store.conversation_for(a) != store.conversation_for(b)
    assert store.conversation_for(a) == store.conversation_for(a)
    assert {c.key for c in store.list_conversations()} == {a, b}


def _calls(*ids: str, name: str = "lookup") -> list[dict]:
    calls = [{"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}} for i in ids]
    return [{"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": i, "content": f"result of {i}"} for i in ids)]


def test_call_ids_and_tool_names_compare_exactly(store):
    cid = store.save(_calls("call_aBc", "call_abc", "call_abc "))  # one conversation holds all three
    assert store.get_tool_call("call_aBc").result == "result of call_aBc"
    assert store.get_tool_call("call_abc ").result == "result of call_abc "
    store.save(_calls("call_exact", name="get_weather"))
    with pytest.raises(ToolCallNotFoundError):
        store.get_tool_call("CALL_EXACT")
    assert store.find_tool_calls(name="Get_Weather") == []
    assert [r.call_id for r in store.find_tool_calls(name="get_weather")] == ["call_exact"]
    assert len(store.find_tool_calls(conversation_id=cid)) == 3


def test_conversation_ids_are_found_in_any_spelling(store):
    cid = store.save([{"role": "user", "content": "hi"}])
    for spelling in (cid.upper(), cid.replace("-", ""), cid.upper().replace("-", "")):
        assert store.load(spelling)[0] == {"role": "user", "content": "hi"}
        assert store.info(spelling).id == cid
        store.append(spelling, [{"role": "user", "content": "again"}])
    assert store.truncate(cid.upper(), 1) == 3
    store.save(tool_turn(1))
    store.delete(cid.upper())
    with pytest.raises(ConversationNotFoundError):
        store.load(cid)


def test_mariadb_tables_compare_bytes(store):
    if store.engine.dialect.name not in ("mysql", "mariadb"):
        pytest.skip("a MariaDB/MySQL collation")
    with store.engine.connect() as conn:
        collations = conn.execute(sa.text(
            "SELECT DISTINCT collation_name FROM information_schema.columns WHERE table_schema = DATABASE()"
            " AND table_name IN ('conversations', 'messages', 'blocks', 'blobs', 'tool_calls')"
            " AND collation_name IS NOT NULL")).scalars().all()
    assert collations == ["utf8mb4_nopad_bin"]


def test_collation_migration_keeps_the_data(empty_database_url):
    from store.db import create_engine, downgrade, upgrade

    with ConversationStore(empty_database_url, namespace="tenant") as s:
        cid = s.save(copy.deepcopy(OPENAI_CHAT))
    engine = create_engine(empty_database_url)
    try:
        downgrade(engine, "0002")
        upgrade(engine)
    finally:
        engine.dispose()
    with ConversationStore(empty_database_url, namespace="tenant") as s:
        assert s.load(cid) == OPENAI_CHAT
        assert s.get_tool_call("call_paris").status == "answered"
        s.save(_calls("call_aBc", "call_abc"))


# --- one snapshot per read ------------------------------------------------------------


class Interleave:
    """Runs ``write()`` once, just before the ``at``-th statement of the next read on
    ``engine``: a write landing in the middle of a read, without timing luck."""

    def __init__(self, engine: sa.Engine, write, at: int = 2, before: str | None = None) -> None:
        self.write, self.at, self.seen, self.done, self.before = write, at, 0, False, before
        self.engine = engine
        sa.event.listen(engine, "before_cursor_execute", self._on_execute)

    def _on_execute(self, conn, cursor, statement, *_: object) -> None:
        if self.done or statement.lstrip().upper().startswith(("BEGIN", "PRAGMA", "SET", "SELECT @@")):
            return
        self.seen += 1
        if (self.before in statement) if self.before else self.seen == self.at:
            self.done = True
            self.write()

    def remove(self) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._on_execute)


def _image_turns(n: int, first: int = 0) -> list[dict]:
    out = []
    for i in range(first, first + n):
        out += [{"role": "user", "content": [
                    {"type": "text", "text": f"look {i}"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]},
                *tool_turn(i)]
    return out


@pytest.fixture
def writer(database_url, namespace):
    with ConversationStore(database_url, namespace=namespace) as w:
        yield w


@pytest.mark.parametrize("write", ["delete", "truncate", "replace", "append"])
@pytest.mark.parametrize("last, fmt", [(None, "openai"), (4, "openai"), (4, "anthropic")])
def test_a_load_is_one_snapshot(store, writer, write, last, fmt):
    original = _image_turns(6)
    cid = store.save(copy.deepcopy(original))
    writes = {
        "delete": lambda: writer.delete(cid),
        "truncate": lambda: writer.truncate(cid, 0),
        "replace": lambda: writer.replace(cid, [{"role": "user", "content": "new"}]),
        "append": lambda: writer.append(cid, _image_turns(3, first=100)[1:]),  # a call, its result, more
    }
    interleave = Interleave(store.engine, writes[write])
    try:
        got = store.load(cid, fmt, last=last)
    finally:
        interleave.remove()
    expected = original if last is None else original[-5:]  # the window widened to call 4
    assert got == (expected if fmt == "openai" else convert(copy.deepcopy(expected), from_="openai", to=fmt))
    # on a server, a window in the format of its documents is one statement (store.holes.window): nothing
    # lands inside it
    assert interleave.done == (last is None or fmt != "openai" or store.engine.dialect.name == "sqlite")


def test_a_tool_call_lookup_is_one_snapshot(store, writer):
    cid = store.save([
        Message(role="assistant", content=[ToolCallBlock(call_id="call_img", name="shot", arguments={})]),
        Message(role="tool", content=[ToolResultBlock(call_id="call_img", output=[
            TextBlock(text="here"), ImageBlock(data=base64.b64decode(PNG), media_type="image/png")])]),
    ], format="canonical")
    # Just before the binary payloads are read (a lookup's second statement, if it has one).
    interleave = Interleave(store.engine, lambda: writer.truncate(cid, 0), before="blobs")
    try:
        record = store.get_tool_call("call_img")
    finally:
        interleave.remove()
    assert interleave.done and record.status == "answered"


def test_an_export_is_one_snapshot(store, writer):
    original = _image_turns(10)
    cid = store.save(copy.deepcopy(original))
    interleave = Interleave(store.engine, lambda: writer.replace(cid, [{"role": "user", "content": "new"}]), at=3)
    try:
        got = list(store.export(cid, chunk=4))
    finally:
        interleave.remove()
    assert interleave.done and got == original


def test_async_load_is_one_snapshot(database_url, namespace, writer):
    original = _image_turns(4)

    async def main() -> None:
        async with AsyncConversationStore(database_url, namespace=namespace) as s:
            cid = await s.save(copy.deepcopy(original))
            interleave = Interleave(s.engine.sync_engine, lambda: writer.delete(cid))
            try:
                assert await s.load(cid, "anthropic", last=2) == convert(original[-2:], from_="openai", to="anthropic")
            finally:
                interleave.remove()
            assert interleave.done

    asyncio.run(main())


# --- a server that drops pooled connections -----------------------------------------


def _drop_connections(store: ConversationStore) -> None:
    """Kill every other session of the store's database, as a server restart would."""
    from .conftest import ADMIN_URLS
    from store.db import create_engine

    name = store.engine.url.database
    backend = "postgresql" if store.engine.dialect.name == "postgresql" else "mariadb"
    admin = create_engine(ADMIN_URLS[backend], isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            if backend == "postgresql":
                conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                     "WHERE datname = :d AND pid <> pg_backend_pid()"), {"d": name})
            else:
                ids = conn.execute(sa.text("SELECT id FROM information_schema.processlist WHERE db = :d "
                                           "AND id <> CONNECTION_ID()"), {"d": name}).scalars().all()
                for i in ids:
                    conn.exec_driver_sql(f"KILL {int(i)}")
    finally:
        admin.dispose()


def test_the_first_operation_after_the_server_dropped_the_pool_succeeds(store):
    if store.engine.dialect.name == "sqlite":
        pytest.skip("an embedded database has no server")
    cid = store.save([{"role": "user", "content": "hi"}])
    _drop_connections(store)
    assert store.load(cid) == [{"role": "user", "content": "hi"}]
    _drop_connections(store)
    store.append(cid, [{"role": "user", "content": "again"}])
    assert len(store.load(cid)) == 2
