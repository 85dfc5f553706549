"""ConvstoreHistoryProvider's options, option by option, against the built-in
InMemoryHistoryProvider of agent-framework-core 1.23 (and the HistoryProvider base).

Collected as part of suite_agent_framework.py (which imports these tests), in its venv.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from agent_framework import AgentSession, HistoryProvider, InMemoryHistoryProvider, Message
from agent_framework._compaction import set_excluded

from store.integrations.agent_framework import ConvstoreHistoryProvider

from .scenario import URL, in_event_loops
from .suite_agent_framework import (FOLLOW_UP, RECALL, ScriptedChatClient, new_agent, new_key, play, script,
                                    scenario_messages)

OURS_ONLY = {"store", "session_id", "max_messages"}


def parameters(cls: type) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(cls.__init__).parameters.items() if n not in ("self",)}


@pytest.mark.parametrize("builtin", [InMemoryHistoryProvider, HistoryProvider])
def test_every_option_of_the_built_in_is_accepted_with_its_default(builtin):
    """Every keyword the built-in provider (and the base class) takes, ours takes, with the
    same default; source_id's default is each provider's own DEFAULT_SOURCE_ID (None: it)."""
    ours, theirs = parameters(ConvstoreHistoryProvider), parameters(builtin)
    assert set(theirs) <= set(ours), set(theirs) - set(ours)
    for name, param in theirs.items():
        if name == "source_id":
            continue
        assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert ours[name].default == param.default, name
    assert set(ours) - set(parameters(InMemoryHistoryProvider)) == OURS_ONLY


def test_source_id_none_or_empty_is_the_default():
    for source_id in (None, ""):
        assert ConvstoreHistoryProvider(URL, source_id=source_id).source_id == "convstore"
        assert InMemoryHistoryProvider(source_id=source_id).source_id == "in_memory"
    provider = ConvstoreHistoryProvider(URL, source_id="history")
    assert provider.source_id == "history"


def test_flags_are_the_base_class_attributes():
    flags = dict(load_messages=False, store_inputs=False, store_context_messages=True,
                 store_context_from={"rag"}, store_outputs=False, skip_excluded=True)
    ours, theirs = ConvstoreHistoryProvider(URL, **flags), InMemoryHistoryProvider(**flags)
    for name in flags:
        assert getattr(ours, name) == getattr(theirs, name) == flags[name], name


def excluded_history() -> list[Message]:
    messages = scenario_messages()
    set_excluded(messages[0], excluded=True, reason="summarized")  # as a CompactionProvider marks them
    set_excluded(messages[1], excluded=True, reason="summarized")
    set_excluded(messages[2], excluded=False)  # marked, but not excluded
    return messages


@pytest.mark.parametrize("skip", [False, True])
def test_skip_excluded_as_in_memory(skip):
    """skip_excluded=True: get_messages leaves out what compaction excluded (it stays stored)."""
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL, skip_excluded=skip) as ours:
            theirs, state = InMemoryHistoryProvider(skip_excluded=skip), {}
            await ours.save_messages(key, excluded_history())
            await theirs.save_messages(key, excluded_history(), state=state)
            got = await ours.get_messages(key)
            assert [m.to_dict() for m in got] == [m.to_dict() for m in await theirs.get_messages(key, state=state)]
            assert len(got) == (2 if skip else 4)
            assert await ours.count(key) == 4
            # the window counts stored messages; the excluded ones of it are then left out
            assert len(await ours.get_messages(key, last=1)) == 1
            assert len(await ours.get_messages(key, last=4)) == (2 if skip else 4)

    asyncio.run(main())


def test_skip_excluded_is_what_the_agent_loads():
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL, key, skip_excluded=True) as provider:
            await provider.save_messages(None, excluded_history())
            client = ScriptedChatClient(script()[2:])
            await new_agent(provider, client).run(FOLLOW_UP, session=AgentSession())
            assert [m.role for m in client.seen[0]] == ["tool", "assistant", "user"]

    asyncio.run(main())


async def saved_twice(provider: Any, key: str, first: list[Message], second: list[Message]) -> list[Message]:
    state: dict[str, Any] = {}
    await provider.save_messages(key, first, state=state)
    await provider.save_messages(key, second, state=state)
    return await provider.get_messages(key, state=state)


@pytest.mark.parametrize("case", ["replay", "replay-and-more", "overlap", "same-question-again",
                                  "same-turn-again", "new"])
def test_save_adds_only_what_is_new_as_in_memory(case):
    """A batch that repeats the stored history (or its end) adds only what follows; a user
    asking the same again (no message id) is kept; as InMemoryHistoryProvider saves."""
    turn = scenario_messages()
    more = [Message("user", [FOLLOW_UP]), Message("assistant", [RECALL])]
    first, second = {
        "replay": (turn, turn),
        "replay-and-more": (turn, [*turn, *more]),
        "overlap": (turn, [*turn[2:], *more]),
        "same-question-again": (turn[:1], turn[:1]),
        "same-turn-again": ([*turn, *more], more),
        "new": (turn[:1], more),
    }[case]

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as ours:
            got = await saved_twice(ours, new_key(), first, second)
            expected = await saved_twice(InMemoryHistoryProvider(), "k", first, second)
            assert [m.to_dict() for m in got] == [m.to_dict() for m in expected]

    asyncio.run(main())


def test_an_agent_given_the_whole_transcript_stores_it_once():
    """A caller that replays the whole conversation as input (its call ids already stored)."""
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL, key, load_messages=False) as provider:
            await play(provider, AgentSession())
            history = await provider.get_messages(None)
            client = ScriptedChatClient(script()[2:])
            await new_agent(provider, client).run([*history, Message("user", [FOLLOW_UP])], session=AgentSession())
            assert [m.text for m in await provider.get_messages(None)] == [m.text for m in history] + [
                FOLLOW_UP, RECALL]

    asyncio.run(main())


def test_one_provider_from_four_event_loops_in_four_threads():
    """Issue 16.2: nothing of the provider binds to the loop that first used it."""
    key = new_key()
    provider = ConvstoreHistoryProvider(URL)

    async def work(n: int) -> None:
        for r in range(3):
            await provider.save_messages(key, [Message("user", [f"{n}-{r}"])])
            await provider.get_messages(key, last=2)

    in_event_loops(4, work)

    async def rest() -> list[str]:
        texts = [m.text for m in await provider.get_messages(key)]
        await provider.close()
        return texts

    assert sorted(asyncio.run(rest())) == sorted(f"{n}-{r}" for n in range(4) for r in range(3))


__all__ = [name for name in list(globals()) if name.startswith("test_")]  # what the suite imports: the tests alone
