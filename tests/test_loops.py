"""One async store used from several event loops at once (threads that each run their own
loop, as the OpenAI Agents SDK's tests do): nothing may bind to the loop it was made on."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from store import AsyncConversationStore


def _in_loops(n: int, work) -> list[BaseException]:
    """Run ``work(i)`` (a coroutine function) in ``n`` threads, each on its own event loop,
    all at once; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def thread(i: int) -> None:
        start.wait()
        try:
            asyncio.run(asyncio.wait_for(work(i), timeout=120))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_one_store_from_four_event_loops(database_url, namespace):
    store = AsyncConversationStore(database_url, namespace=namespace)

    async def work(i: int) -> None:
        cid = await store.conversation_for("shared")
        for j in range(5):
            await store.append(cid, [{"role": "user", "content": f"loop {i} message {j}"}])
            assert await store.load(cid, last=1)

    try:
        errors = _in_loops(4, work)
        assert not errors, [repr(e) for e in errors]

        async def check() -> list:
            return await store.load(await store.conversation_for("shared"))

        messages = asyncio.run(check())
        assert sorted(m["content"] for m in messages) == sorted(
            f"loop {i} message {j}" for i in range(4) for j in range(5))
    finally:
        asyncio.run(store.close())


def test_a_store_opened_in_one_loop_works_in_the_next(database_url, namespace):
    store = AsyncConversationStore(database_url, namespace=namespace)

    async def first() -> str:
        return await store.save([{"role": "user", "content": "hi"}])

    async def second(cid: str) -> list:
        return await store.load(cid)

    cid = asyncio.run(first())
    assert asyncio.run(second(cid)) == [{"role": "user", "content": "hi"}]
    asyncio.run(store.close())


@contextmanager
def _quietly(monkeypatch) -> Iterator[None]:
    """Inside: no exception in any thread, no aiosqlite connection collected unclosed (what earlier
    tests left behind is collected first, and the workers' answers, if any, waited for after)."""
    gc.collect()
    time.sleep(0.2)
    crashed: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashed.append(args.exc_value))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield
        gc.collect()
        time.sleep(0.2)  # a worker's answer, if any, comes from its own thread
    assert not crashed
    assert not [w for w in caught if "before being closed" in str(w.message)]


def test_the_connections_of_a_closed_loop_go_quietly(database_url, namespace, monkeypatch):
    """A loop's pool is dropped when the next loop finds that loop closed. Its aiosqlite
    connections' worker threads, left to the collector, stopped with a future of the loop that
    ran when it found them, and answered it after that loop had closed: "Event loop is closed"
    in a worker thread, printed at the user, and a ResourceWarning each."""
    store = AsyncConversationStore(database_url, namespace=namespace)

    async def last() -> None:
        await store.close()
        gc.collect()  # the collector finds the first loops' connections now, in this short loop

    with _quietly(monkeypatch):
        cid = asyncio.run(store.save([{"role": "user", "content": "hi"}]))
        assert asyncio.run(store.load(cid)) == [{"role": "user", "content": "hi"}]
        asyncio.run(last())


def test_a_store_never_closed_goes_quietly(database_url, namespace, monkeypatch):
    """A store dropped unclosed (a script's, a request's): the collector stops its connections' worker
    threads with no loop to answer, whichever loop runs when it finds them."""

    async def use() -> None:
        store = AsyncConversationStore(database_url, namespace=namespace)
        await store.save([{"role": "user", "content": "hi"}])

    async def collect() -> None:
        gc.collect()

    with _quietly(monkeypatch):
        asyncio.run(use())
        asyncio.run(collect())


def test_stores_handed_one_engine_listen_to_it_once(database_url, namespace):
    """Stores made on one engine (one a request, say) note its connections with a single listener,
    not one more a store for the engine's lifetime."""
    from store import db

    engine = db.create_async_engine(database_url)
    before = len(engine.sync_engine.pool.dispatch.connect)
    stores = [AsyncConversationStore(engine=engine, namespace=namespace) for _ in range(5)]
    assert len(engine.sync_engine.pool.dispatch.connect) - before <= 1
    del stores
    asyncio.run(engine.dispose())


def test_a_memory_lock_works_from_every_loop():
    from store.integrations import LoopLock

    lock, inside, most = LoopLock(), [0], [0]

    async def work(_: int) -> None:
        for _ in range(20):
            async with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                await asyncio.sleep(0)
                inside[0] -= 1

    assert not _in_loops(4, work)
    assert most[0] <= 4  # one holder per loop at most
