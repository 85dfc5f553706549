"""Tenants kept apart, reads that are one snapshot, writers that never fail each other:
what a hostile tester broke (issue 17), on every backend."""

from __future__ import annotations

import asyncio
import copy

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore
from store.errors import ConversationNotFoundError, ToolCallNotFoundError

from .samples import OPENAI_CHAT, tool_turn

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
