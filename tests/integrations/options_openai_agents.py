"""ConvstoreSession's constructor options and error behaviour, option by option, against the
SDK's own sessions (openai-agents 0.24.0); and one session shared by four event loops.

Collected as part of suite_openai_agents.py (which imports these tests), in its venv.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from agents.memory import SessionSettings, SQLiteSession
from pydantic import ValidationError

from store import AsyncConversationStore, ConversationStore
from store.integrations.openai_agents import ConvstoreSession

from . import scenario
from .scenario import in_event_loops, with_store

URL = scenario.URL


def key() -> str:
    return f"openai-agents-opt-{uuid.uuid4().hex}"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def raised(make: Any) -> tuple[type[BaseException], str]:
    try:
        make()
    except Exception as exc:  # noqa: BLE001 - the very exception is what is compared
        return type(exc), str(exc)
    raise AssertionError("nothing raised")


@pytest.mark.parametrize("settings", [
    {"limit": 2, "max_items": 3},  # an unknown key beside a known one
    {"bogus": 1, "another": None},  # several: named sorted, as the SDK names them
    {"Limit": 2},  # keys are exact
    5, "limit=2", [("limit", 2)],  # neither SessionSettings nor a dict
])
def test_session_settings_refused_as_the_sdk_refuses_them(settings):
    """Not SessionSettings(**value) (a pydantic dataclass would ignore unknown keys): the
    SDK's TypeError, word for word, e.g. "Unknown session settings: max_items"."""
    ours = raised(lambda: ConvstoreSession(URL, "s-1", session_settings=settings))
    theirs = raised(lambda: SQLiteSession("s-1", session_settings=settings))
    assert ours == theirs
    assert ours[0] is TypeError
    if isinstance(settings, dict):
        assert ours[1].startswith("Unknown session settings: ")


def test_session_settings_of_a_wrong_type_refused_as_the_sdk_refuses_them():
    with pytest.raises(ValidationError):
        ConvstoreSession(URL, "s-1", session_settings={"limit": "many"})
    with pytest.raises(ValidationError):
        SQLiteSession("s-1", session_settings={"limit": "many"})


@pytest.mark.parametrize("settings", [None, {}, {"limit": None}, {"limit": 3}, {"limit": "3"},
                                      SessionSettings(limit=2)])
def test_session_settings_accepted_as_the_sdk_accepts_them(settings):
    ours = ConvstoreSession(URL, "s-1", session_settings=settings)
    theirs = SQLiteSession("s-1", session_settings=settings)
    assert ours.session_settings == theirs.session_settings
    assert isinstance(ours.session_settings, SessionSettings)
    if isinstance(settings, SessionSettings):
        assert ours.session_settings is settings  # kept, as the SDK keeps a typed instance


def test_session_settings_assigned_later():
    """session_settings is a plain attribute (the Session protocol's): a SessionSettings or a
    dict set afterwards is what get_items() uses, resolved as the SDK resolves it."""
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        ours, theirs = ConvstoreSession(store, session), SQLiteSession(session)
        for memory in (ours, theirs):
            await memory.add_items([user(str(n)) for n in range(5)])
        for settings in (SessionSettings(limit=2), {"limit": 3}, {"limit": 0}, {"limit": -1}, None):
            ours.session_settings = theirs.session_settings = settings
            assert await ours.get_items() == await theirs.get_items(), settings
            assert await ours.get_items(1) == await theirs.get_items(1) == [user("4")]  # explicit wins
        ours.session_settings = theirs.session_settings = {"limit": 2, "unknown": 1}
        with pytest.raises(TypeError, match="Unknown session settings: unknown"):
            await theirs.get_items()
        with pytest.raises(TypeError, match="Unknown session settings: unknown"):
            await ours.get_items()

    with_store(body)


def test_from_url_as_sqlalchemy_session_from_url():
    session = key()

    async def body() -> None:
        memory = ConvstoreSession.from_url(session, url=URL, session_settings={"limit": 1})
        assert (memory.session_id, memory.session_settings) == (session, SessionSettings(limit=1))
        await memory.add_items([user("a"), user("b")])
        assert await memory.get_items() == [user("b")]
        await memory.close()
        other = ConvstoreSession.from_url(session, url=URL, namespace="tenant-b")
        assert await other.get_items() == []
        await other.close()
        with pytest.raises(TypeError):  # keyword-only, as in the SDK
            ConvstoreSession.from_url(session, URL)  # type: ignore[misc]

    asyncio.run(body())


@pytest.mark.parametrize("method", ["add_items", "pop_item", "clear_session"])
def test_a_cancelled_write_finishes_then_cancels_as_in_the_sdk(method):
    """Cancelling the caller mid-write: the write still happens whole, then the caller gets
    its CancelledError (the SDK's sessions wait their writes out the same way)."""
    session = key()

    async def cancelled(memory: Any) -> list[Any]:
        await memory.add_items([user("a"), user("b")])
        args = ([user("c")],) if method == "add_items" else ()
        task = asyncio.ensure_future(getattr(memory, method)(*args))
        await asyncio.sleep(0)  # the write has begun
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await memory.get_items()

    async def body(store: AsyncConversationStore) -> None:
        ours, theirs = await cancelled(ConvstoreSession(store, session)), await cancelled(SQLiteSession(session))
        assert ours == theirs == {"add_items": [user("a"), user("b"), user("c")],
                                  "pop_item": [user("a")], "clear_session": []}[method]

    with_store(body)


@pytest.mark.parametrize("shared_store", [False, True], ids=["own-store", "shared-store"])
def test_one_session_from_four_event_loops_in_four_threads(shared_store):
    """Issue 16.2: nothing of a session binds to the loop that first used it. One session
    object, four threads each running their own loop, writing, reading and popping at once."""
    session, threads, rounds = key(), 4, 5
    store = AsyncConversationStore(URL) if shared_store else None
    memory = ConvstoreSession(store if store is not None else URL, session)

    async def work(n: int) -> None:
        for r in range(rounds):
            await memory.add_items([user(f"{n}-{r}"), user(f"{n}-{r}-extra")])
            assert await memory.get_items(1)  # someone's newest item
            await memory.get_items()

    in_event_loops(threads, work)
    written = asyncio.run(memory.get_items())
    texts = [item["content"] for item in written]
    assert sorted(texts) == sorted(f"{n}-{r}{extra}" for n in range(threads) for r in range(rounds)
                                   for extra in ("", "-extra"))
    for n in range(threads):  # each thread's items in its order, each batch whole
        mine = [t for t in texts if t.startswith(f"{n}-")]
        assert mine == [f"{n}-{r}{extra}" for r in range(rounds) for extra in ("", "-extra")]
        assert all(texts[texts.index(f"{n}-{r}") + 1] == f"{n}-{r}-extra" for r in range(rounds))

    popped: list[Any] = []

    async def pop(_: int) -> None:
        popped.append(await memory.pop_item())

    in_event_loops(threads, pop)  # four pops at once, from four loops: each item popped once

    async def rest() -> list[Any]:
        items = await memory.get_items()
        await memory.close()
        if store is not None:
            await store.close()
        return items

    assert asyncio.run(rest()) == written[:-threads]
    assert sorted(p["content"] for p in popped) == sorted(texts[-threads:])
    with ConversationStore(URL) as sync:
        assert sync.info(sync.conversation_for(session)).message_count == threads * (rounds * 2 - 1)


__all__ = [name for name in list(globals()) if name.startswith("test_")]  # what the suite imports: the tests alone
