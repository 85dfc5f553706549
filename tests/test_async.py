"""The asyncio store on every backend: the same operations and guarantees as the sync one."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore
from store.errors import (
    ConversationNotFoundError,
    DuplicateToolCallError,
    SchemaError,
    SchemaOutdatedError,
    ToolCallNotFoundError,
)

from .conftest import StatementCounter
from .samples import OPENAI_CHAT, chat, tool_turn
from .test_repository import TURN

T = TypeVar("T")


def run(test: Callable[[AsyncConversationStore], Awaitable[T]], url: str, namespace: str, **kwargs: Any) -> T:
    async def main() -> T:
        async with AsyncConversationStore(url, namespace=namespace, **kwargs) as store:
            return await test(store)

    return asyncio.run(main())


def test_every_operation(database_url, namespace):
    async def test(s: AsyncConversationStore) -> None:
        cid = await s.save(copy.deepcopy(OPENAI_CHAT), title="weather")
        assert await s.load(cid) == OPENAI_CHAT
        await s.append(cid, [{"role": "user", "content": "more"}])
        assert (await s.info(cid)).message_count == len(OPENAI_CHAT) + 1
        record = await s.get_tool_call("call_paris")
        assert (record.name, record.arguments, record.status, record.result_position) == (
            "get_weather", {"city": "Paris", "unit": "C"}, "answered", 5)
        assert [r.call_id for r in await s.find_tool_calls(status="pending")] == ["call_bad"]
        assert [c.id for c in await s.list_conversations()] == [cid]
        assert await s.pop(cid) == [{"role": "user", "content": "more"}]
        await s.replace(cid, copy.deepcopy(OPENAI_CHAT) + [{"role": "user", "content": "again"}])
        assert (await s.load(cid))[-1] == {"role": "user", "content": "again"}
        assert await s.truncate(cid, 4) == len(OPENAI_CHAT) + 1 - 4
        assert (await s.get_tool_call("call_paris")).status == "pending"
        turn = await s.save(copy.deepcopy(TURN), format="openai-responses")
        assert await s.pop_item(turn, format="openai-responses") == TURN[2]
        assert await s.load(turn, format="openai-responses") == TURN[:2]
        await s.delete(cid)
        with pytest.raises(ConversationNotFoundError):
            await s.load(cid)
        with pytest.raises(ToolCallNotFoundError):
            await s.get_tool_call("call_paris")

    run(test, database_url, namespace)


def test_written_async_read_sync_and_back(database_url, namespace):
    cid = run(lambda s: s.save(chat(12)), database_url, namespace)
    with ConversationStore(database_url, namespace=namespace) as sync:
        assert sync.load(cid) == chat(12)
        sync.append(cid, [{"role": "user", "content": "from sync"}])

    async def test(s: AsyncConversationStore) -> None:
        assert (await s.load(cid))[-1] == {"role": "user", "content": "from sync"}

    run(test, database_url, namespace)


def test_load_is_a_fixed_number_of_statements(database_url, namespace):
    async def test(s: AsyncConversationStore) -> list[int]:
        counter = StatementCounter(s.engine.sync_engine)
        counts = []
        for n in (10, 300):  # with an image: the blobs are the fourth statement
            cid = await s.save(copy.deepcopy(OPENAI_CHAT) + chat(n))
            for fmt in ("qwen", "openai"):
                for last in (None, 20):
                    counter.statements.clear()
                    await s.load(cid, fmt, last=last)
                    counts.append(counter.count())
        return counts

    full_10, window_10, stored_10, stored_window_10, full_300, window_300, *stored_300 = run(
        test, database_url, namespace)
    assert full_10 == full_300 == window_10 == 4
    assert window_300 == 3  # its last 20 hold no image: no blob query
    # In the stored format: the row, the documents, the block rows of the calls and results they leave out
    # (store.holes); on a server, a window all three in one statement (store.holes.window).
    window = 3 if database_url.startswith("sqlite") else 1
    assert [stored_10, stored_window_10] == stored_300 == [3, window]


def test_windows_keep_calls_with_results(database_url, namespace):
    async def test(s: AsyncConversationStore) -> None:
        msgs = [{"role": "user", "content": "go"}, *tool_turn(1), {"role": "assistant", "content": "done"}]
        cid = await s.save(msgs)
        assert await s.load(cid, last=2) == msgs[1:]

    run(test, database_url, namespace)


def test_a_bad_batch_writes_nothing(database_url, namespace):
    async def test(s: AsyncConversationStore) -> None:
        cid = await s.save(chat(4))
        with pytest.raises(DuplicateToolCallError, match="message 1"):
            await s.append(cid, [{"role": "user", "content": "x"}, *tool_turn(0)])
        with pytest.raises(SchemaError, match=r"message 1"):
            await s.append(cid, [{"role": "user", "content": "ok"}, {"role": "user", "content": 5}])
        assert await s.load(cid) == chat(4)

    run(test, database_url, namespace)


def test_many_tasks_appending_to_one_conversation(database_url, namespace):
    tasks, appends = 16, 10

    async def test(s: AsyncConversationStore) -> None:
        cid = await s.conversation_for("shared")

        async def writer(w: int) -> None:
            for i in range(appends):
                await s.append(cid, [{"role": "user", "content": f"{w}:{i}:a"},
                                     {"role": "assistant", "content": f"{w}:{i}:b"}])

        await asyncio.gather(*(writer(w) for w in range(tasks)))
        texts = [m["content"] for m in await s.load(cid)]
        assert len(texts) == tasks * appends * 2
        # Each append is one contiguous run, and each writer's appends keep their order.
        assert all(a[:-1] == b[:-1] and (a[-1], b[-1]) == ("a", "b") for a, b in zip(texts[::2], texts[1::2]))
        for w in range(tasks):
            assert [t for t in texts[::2] if t.startswith(f"{w}:")] == [f"{w}:{i}:a" for i in range(appends)]

    run(test, database_url, namespace)


def test_same_key_from_many_tasks_is_one_conversation(database_url, namespace):
    async def test(s: AsyncConversationStore) -> set[str]:
        return set(await asyncio.gather(*(s.conversation_for("session-1") for _ in range(12))))

    assert len(run(test, database_url, namespace)) == 1


def test_opening_refuses_what_it_should(empty_database_url, namespace):
    with pytest.raises(SchemaOutdatedError, match="db upgrade"):
        run(lambda s: s.list_conversations(), empty_database_url, namespace, create=False)
    assert run(lambda s: s.list_conversations(), empty_database_url, namespace) == []
    engine = sa.create_engine(ConversationStore(empty_database_url).engine.url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE convstore_alembic_version SET version_num = 'elsewhere'")
    engine.dispose()
    with pytest.raises(SchemaOutdatedError, match="elsewhere"):
        run(lambda s: s.list_conversations(), empty_database_url, namespace)
