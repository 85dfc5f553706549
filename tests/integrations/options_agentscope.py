"""ConvstoreMemory under agentscope 2.0.11: 2.x has no memory class to compare with, so its
1.x MemoryBase methods refuse bad arguments in InMemoryMemory 1.x's words (checked against
InMemoryMemory itself in options_agentscope1.py); and one memory from four event loops.

Collected as part of suite_agentscope.py (which imports these tests), in its venv.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from agentscope.message import UserMsg

from store.integrations.agentscope import ConvstoreMemory

from .scenario import URL, in_event_loops, with_store

ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("add", {"memories": UserMsg("user", "a"), "marks": 5},
     "The mark should be a string, a list of strings, or None, but got <class 'int'>."),
    ("delete_by_mark", {"mark": ["ok", 2]},
     "The mark should be a string or a list of strings, but got <class 'list'> with elements of types "
     "[<class 'str'>, <class 'int'>]."),
    ("get_memory", {"mark": 1}, "The mark should be a string or None, but got <class 'int'>."),
    ("get_memory", {"exclude_mark": ["x"]}, "The exclude_mark should be a string or None, but got <class 'list'>."),
]


@pytest.mark.parametrize(("method", "kwargs", "words"), ERRORS, ids=[e[0] + str(i) for i, e in enumerate(ERRORS)])
def test_bad_marks_are_refused_in_in_memory_memorys_words(method, kwargs, words):
    async def body(store: Any) -> None:
        memory = ConvstoreMemory(store, f"agentscope-opt-{uuid.uuid4().hex}")
        with pytest.raises(TypeError) as caught:
            await getattr(memory, method)(**kwargs)
        assert str(caught.value) == words
        assert await memory.size() == 0

    with_store(body)


def test_one_memory_from_four_event_loops_in_four_threads():
    """Issue 16.2: nothing of the memory binds to the loop that first used it."""
    memory = ConvstoreMemory(URL, f"agentscope-opt-{uuid.uuid4().hex}")

    async def work(n: int) -> None:
        for r in range(3):
            await memory.add(UserMsg("user", f"{n}-{r}"), allow_duplicates=True)
            await memory.size()

    in_event_loops(4, work)

    async def rest() -> list[str]:
        texts = [m.get_text_content() for m in await memory.get_memory()]
        await memory.close()
        return texts

    texts = asyncio.run(rest())
    assert sorted(texts) == sorted(f"{n}-{r}" for n in range(4) for r in range(3)), texts


__all__ = [name for name in list(globals()) if name.startswith("test_")]  # what the suite imports: the tests alone
