"""The conversation every framework suite plays with its scripted model, and the check a
reading suite runs on what another framework's backend wrote (no framework imported here)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from store import AsyncConversationStore, ConversationStore, Message

T = TypeVar("T")

QUESTION = "What is the weather in Paris?"
TOOL = "get_weather"
ARGUMENTS = {"city": "Paris"}
RESULT = "Sunny, 21C"
ANSWER = "It is sunny in Paris, 21C."

URL = os.environ.get("CONVSTORE_TEST_URL", "sqlite:///convstore-integrations.db")
SHARED_KEY = os.environ.get("CONVSTORE_SHARED_KEY", "")


def require_shared_key() -> str:
    """The hand-over ring's conversation key; a test outside the ring is skipped."""
    if not SHARED_KEY:
        pytest.skip("CONVSTORE_SHARED_KEY is not set")
    return SHARED_KEY


def in_event_loops(n: int, work: Callable[[int], Awaitable[Any]]) -> None:
    """Run ``work(i)`` in ``n`` threads at once, each on an event loop of its own (as the OpenAI
    Agents SDK's tests use sessions); fail with whatever any of them raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        try:
            start.wait()
            asyncio.run(work(i))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert not errors, errors


def get_weather(city: str) -> str:
    """The tool every scripted agent calls."""
    return RESULT if city == "Paris" else f"No weather for {city}"


def texts(messages: list[Message]) -> list[str]:
    return [b.text for m in messages for b in m.content if b.kind == "text"]


def check_played(messages: list[Message]) -> None:
    """``messages`` (canonical, as stored) hold the whole scripted turn, the call linked to its result."""
    assert any(QUESTION in t for t in texts(messages)), texts(messages)
    assert any(ANSWER in t for t in texts(messages)), texts(messages)
    calls = [b for m in messages for b in m.content if b.kind == "tool_call"]
    results = {b.call_id: b for m in messages for b in m.content if b.kind == "tool_result"}
    assert [(c.name, c.arguments) for c in calls] == [(TOOL, ARGUMENTS)], calls
    assert RESULT in str(results[calls[0].call_id].output)


def check_stored(store: ConversationStore, key: str) -> None:
    """The conversation named ``key`` holds the scripted turn, and its call is found by id."""
    cid = store.conversation_for(key)
    check_played(store.load_messages(cid))
    [call] = store.find_tool_calls(conversation_id=cid)
    assert (call.name, call.arguments, call.status) == (TOOL, ARGUMENTS, "answered")
    assert RESULT in str(call.result)


def with_store(body: Callable[[Any], Awaitable[T]], *, store_class: type[AsyncConversationStore] = AsyncConversationStore,
               **kwargs: Any) -> T:
    """``body(store)`` in a fresh event loop, on a store (at ``URL``) closed afterwards."""
    async def main() -> T:
        async with store_class(URL, **kwargs) as store:
            return await body(store)
    return asyncio.run(main())


class CountingStore(AsyncConversationStore):
    """An AsyncConversationStore that counts the calls a memory makes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: Counter[str] = Counter()

    async def load(self, *args: Any, **kwargs: Any) -> Any:
        self.calls["load"] += 1
        return await super().load(*args, **kwargs)

    async def append(self, *args: Any, **kwargs: Any) -> None:
        self.calls["append"] += 1
        await super().append(*args, **kwargs)

    async def replace(self, *args: Any, **kwargs: Any) -> None:
        self.calls["replace"] += 1
        await super().replace(*args, **kwargs)

    async def truncate(self, *args: Any, **kwargs: Any) -> int:
        self.calls["truncate"] += 1
        return await super().truncate(*args, **kwargs)

    def take(self) -> dict[str, int]:
        """The calls so far (then forgotten)."""
        calls, self.calls = dict(self.calls), Counter()
        return calls
