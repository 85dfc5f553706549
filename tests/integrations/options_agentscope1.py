"""ConvstoreMemory under agentscope 1.0.21, option by option, against the MemoryBase base class
and the built-in InMemoryMemory: signatures, results, errors; four event loops.

Collected as part of suite_agentscope1.py (which imports these tests), in its venv.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from typing import Any

import pytest
from agentscope.memory import InMemoryMemory, MemoryBase
from agentscope.message import Msg

from store.integrations.agentscope import ConvstoreMemory

from .scenario import URL, in_event_loops, with_store

METHODS = ["add", "delete", "delete_by_mark", "size", "clear", "get_memory", "update_messages_mark",
           "update_compressed_summary", "state_dict", "load_state_dict"]


def key() -> str:
    return f"agentscope1-opt-{uuid.uuid4().hex}"


@pytest.mark.parametrize("name", METHODS)
def test_every_method_takes_the_built_ins_arguments(name):
    """Each MemoryBase/InMemoryMemory method: the same parameters, in the same order, with
    the same defaults (ours may take more, e.g. get_memory's last=)."""
    ours = inspect.signature(getattr(ConvstoreMemory, name)).parameters
    for builtin in (MemoryBase, InMemoryMemory):
        theirs = inspect.signature(getattr(builtin, name)).parameters
        named = [n for n, p in theirs.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        assert list(ours)[:len(named)] == named, (builtin, name)
        for n in named:
            assert ours[n].default == theirs[n].default, (builtin, name, n)
        if any(p.kind is p.VAR_KEYWORD for p in theirs.values()):
            assert any(p.kind is p.VAR_KEYWORD for p in ours.values()), (builtin, name)
    assert inspect.iscoroutinefunction(getattr(ConvstoreMemory, name)) == inspect.iscoroutinefunction(
        getattr(InMemoryMemory, name))


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"memories": Msg("user", "a", "user"), "marks": 5}),
    ("add", {"memories": Msg("user", "a", "user"), "marks": ["ok", 1]}),
    ("add", {"memories": Msg("user", "a", "user"), "marks": ("a", "b")}),
    ("delete_by_mark", {"mark": ["ok", 2]}),
    ("get_memory", {"mark": 1}),
    ("get_memory", {"exclude_mark": ["x"]}),
]


@pytest.mark.parametrize(("method", "kwargs"), CALLS, ids=[f"{m}-{i}" for i, (m, _) in enumerate(CALLS)])
def test_bad_marks_are_refused_as_in_memory(method, kwargs):
    """The same TypeError, in InMemoryMemory's words, and nothing written."""
    session = key()

    async def error(memory: Any) -> tuple[type, str]:
        with pytest.raises(TypeError) as caught:
            await getattr(memory, method)(**kwargs)
        assert await memory.size() == 0
        return type(caught.value), str(caught.value)

    async def body(store: Any) -> None:
        assert await error(ConvstoreMemory(store, session)) == await error(InMemoryMemory())

    with_store(body)


def test_marks_edits_count_and_leave_what_in_memory_does():
    """A run of add / update_messages_mark / delete_by_mark / delete with every combination
    of arguments: the same return values and the same messages and marks afterwards."""
    session = key()
    msgs = [Msg("user", f"m{i}", "user") for i in range(5)]
    steps: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("add", (msgs[:2],), {}), ("add", (msgs[2],), {"marks": "hint"}),
        ("add", (msgs[3:],), {"marks": ["hint", "x"]}), ("add", (msgs[0],), {}),  # a duplicate: skipped
        ("add", (msgs[0],), {"allow_duplicates": True}), ("add", (None,), {}),
        ("update_messages_mark", ("seen",), {"msg_ids": [msgs[1].id]}),
        ("update_messages_mark", ("y",), {"old_mark": "hint"}),
        ("update_messages_mark", (None,), {"old_mark": "x"}), ("update_messages_mark", (None,), {}),
        ("update_messages_mark", ("all",), {}), ("update_messages_mark", ("all",), {}),
        ("delete_by_mark", ("seen",), {}), ("delete_by_mark", (["y", "nope"],), {}),
        ("delete", ([msgs[0].id, "absent"],), {}),
    ]

    async def run(memory: Any) -> list[Any]:
        results = [await getattr(memory, name)(*args, **kwargs) for name, args, kwargs in steps]
        kept = [(m.id, m.get_text_content()) for m in await memory.get_memory()]
        filtered = [[m.id for m in await memory.get_memory(mark=mark, exclude_mark=exclude)]
                    for mark, exclude in (("all", None), (None, "all"), ("y", "x"))]
        return [results, kept, filtered, await memory.size()]

    async def body(store: Any) -> None:
        assert await run(ConvstoreMemory(store, session)) == await run(InMemoryMemory())

    with_store(body)


def test_compressed_summary_as_in_memory():
    session = key()

    async def run(memory: Any) -> list[Any]:
        await memory.add(Msg("user", "a", "user"))
        await memory.update_compressed_summary("earlier: b")
        with_summary = [m.get_text_content() for m in await memory.get_memory()]
        without = [m.get_text_content() for m in await memory.get_memory(prepend_summary=False)]
        return [with_summary, without, memory.state_dict()["_compressed_summary"]]

    async def body(store: Any) -> None:
        assert await run(ConvstoreMemory(store, session)) == await run(InMemoryMemory())

    with_store(body)


def test_one_memory_from_four_event_loops_in_four_threads():
    """Issue 16.2: nothing of the memory binds to the loop that first used it."""
    memory = ConvstoreMemory(URL, key())

    async def work(n: int) -> None:
        for r in range(3):
            await memory.add(Msg("user", f"{n}-{r}", "user"), allow_duplicates=True)
            await memory.size()

    in_event_loops(4, work)

    async def rest() -> list[str]:
        texts = [m.get_text_content() for m in await memory.get_memory()]
        await memory.close()
        return texts

    texts = asyncio.run(rest())
    assert sorted(texts) == sorted(f"{n}-{r}" for n in range(4) for r in range(3)), texts


__all__ = [name for name in list(globals()) if name.startswith("test_")]  # what the suite imports: the tests alone
