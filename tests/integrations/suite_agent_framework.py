"""store.integrations.agent_framework with the real agent-framework-core 1.23: an ``Agent``
driven by a scripted chat client (no network) and a real tool, with convstore as its
``HistoryProvider``; then every method of the provider, and the session state round trip.

Runs in the int-agent-framework venv (see README.md here); the database is CONVSTORE_TEST_URL.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from agent_framework import (Agent, AgentSession, BaseChatClient, ChatMiddlewareLayer, ChatResponse,
                             ChatResponseUpdate, Content, FunctionInvocationLayer, Message, tool)

from store import ConversationStore
from store.errors import DuplicateToolCallError
from store.aio import AsyncConversationStore
from store.integrations.agent_framework import FORMAT, ConvstoreHistoryProvider
from tests.integrations import scenario
from tests.integrations.scenario import ANSWER, ARGUMENTS, QUESTION, RESULT, TOOL, URL

FOLLOW_UP = "What did I ask you?"
RECALL = "You asked about the weather in Paris."


class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """A chat client that answers from a script and records what the model was shown.
    FunctionInvocationLayer (before BaseChatClient in the MRO) runs the tool loop, as in
    the framework's real clients."""

    def __init__(self, script: list[Message]) -> None:
        super().__init__()
        self.script = list(script)
        self.seen: list[list[Message]] = []

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any],
                            **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        reply = self.script.pop(0)
        if stream:
            async def updates():
                yield ChatResponseUpdate(role="assistant", contents=list(reply.contents))
            return self._build_response_stream(updates())

        async def response() -> ChatResponse:
            return ChatResponse(messages=[reply], response_id=f"resp-{len(self.seen)}")
        return response()


def script(call_id: str = "call_weather_1") -> list[Message]:
    """The scenario's model turns: call the tool, answer, then answer the follow-up."""
    return [
        Message("assistant", [Content.from_function_call(call_id, TOOL, arguments=json.dumps(ARGUMENTS))]),
        Message("assistant", [ANSWER]),
        Message("assistant", [RECALL]),
    ]


def new_agent(provider: ConvstoreHistoryProvider, client: ScriptedChatClient) -> Agent:
    return Agent(client=client, instructions="You answer weather questions.", name="weather",
                 tools=[tool(scenario.get_weather)], context_providers=[provider])


def new_key() -> str:
    return f"maf-{uuid.uuid4().hex}"


def scenario_messages(call_id: str = "call_weather_1") -> list[Message]:
    """The four messages one played scenario turn leaves, as the framework builds them."""
    return [
        Message("user", [QUESTION]),
        Message("assistant", [Content.from_function_call(call_id, TOOL, arguments=json.dumps(ARGUMENTS))],
                author_name="weather"),
        Message("tool", [Content.from_function_result(call_id, result=RESULT)], author_name="weather"),
        Message("assistant", [ANSWER], author_name="weather"),
    ]


def shown(messages: Sequence[Message]) -> list[tuple[str, list[str]]]:
    return [(m.role, [c.type for c in m.contents]) for m in messages]


def check_native(messages: Sequence[Message]) -> None:
    """Framework-native messages hold the scripted turn: texts, the call and its result."""
    texts = [m.text for m in messages]
    assert any(QUESTION in t for t in texts), texts
    assert any(ANSWER in t for t in texts), texts
    contents = [c for m in messages for c in m.contents]
    [call] = [c for c in contents if c.type == "function_call"]
    assert call.name == TOOL and call.parse_arguments() == ARGUMENTS
    [result] = [c for c in contents if c.type == "function_result"]
    assert result.call_id == call.call_id and RESULT in str(result.result)


async def play(provider: ConvstoreHistoryProvider, session: AgentSession, *, stream: bool = False) -> Any:
    """One scenario turn through a real Agent; returns the client (what the model saw)."""
    client = ScriptedChatClient(script())
    agent = new_agent(provider, client)
    if stream:
        run = agent.run(QUESTION, session=session, stream=True)
        async for _ in run:
            pass
        response = await run.get_final_response()
    else:
        response = await agent.run(QUESTION, session=session)
    assert response.text == ANSWER
    assert shown(client.seen[1]) == [("user", ["text"]), ("assistant", ["function_call"]),
                                     ("tool", ["function_result"])]
    return client


async def follow_up(provider: ConvstoreHistoryProvider, session: AgentSession) -> list[Message]:
    """A second turn on the session; returns what the model was shown."""
    client = ScriptedChatClient(script()[2:])
    response = await new_agent(provider, client).run(FOLLOW_UP, session=session)
    assert response.text == RECALL
    return client.seen[0]


# --- (a) a real agent -------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["run", "stream"])
def test_agent_plays_the_scenario(stream):
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await play(provider, AgentSession(session_id=key), stream=stream)
            # A new session object with the same id: the history comes from the database.
            seen = await follow_up(provider, AgentSession(session_id=key))
            assert shown(seen) == [("user", ["text"]), ("assistant", ["function_call"]),
                                   ("tool", ["function_result"]), ("assistant", ["text"]), ("user", ["text"])]
            check_native(seen)
            assert await provider.count(key) == 6

    asyncio.run(main())
    scenario.check_stored(ConversationStore(URL), key)


def test_a_new_provider_sees_the_history():
    """What one process stored, another (a new store, a new provider) continues."""
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await play(provider, AgentSession(session_id=key))
        store = AsyncConversationStore(URL)
        try:
            seen = await follow_up(ConvstoreHistoryProvider(store), AgentSession(session_id=key))
        finally:
            await store.close()
        check_native(seen)
        assert seen[-1].text == FOLLOW_UP

    asyncio.run(main())


def test_session_state_round_trip():
    """AgentSession.to_dict() / from_dict() (the thread state) through JSON: the restored
    session continues the stored conversation, and its state names that conversation."""
    key = new_key()

    async def main() -> dict[str, Any]:
        async with ConvstoreHistoryProvider(URL) as provider:
            session = AgentSession(session_id=key)
            await play(provider, session)
            saved = json.loads(json.dumps(session.to_dict()))
            restored = AgentSession.from_dict(saved)
            assert restored.session_id == key
            seen = await follow_up(provider, restored)
            assert len(seen) == 5
            check_native(seen)
            assert restored.state == session.state
            return saved

    saved = asyncio.run(main())
    assert saved["state"]["convstore"]["conversation_id"] == ConversationStore(URL).conversation_for(key)


def test_max_messages_window_keeps_the_call_with_its_result():
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await play(provider, AgentSession(session_id=key))
        # Two messages back is the tool result: the window widens to its call.
        async with ConvstoreHistoryProvider(URL, max_messages=2) as windowed:
            seen = await follow_up(windowed, AgentSession(session_id=key))
        assert shown(seen) == [("assistant", ["function_call"]), ("tool", ["function_result"]),
                               ("assistant", ["text"]), ("user", ["text"])]

    asyncio.run(main())


def test_pinned_session_id_and_write_only():
    """session_id= pins every AgentSession to one key; load_messages=False only records."""
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL, key, load_messages=False) as recorder:
            await play(recorder, AgentSession())          # a random session id: still stored under key
            client = ScriptedChatClient(script()[2:])
            await new_agent(recorder, client).run(FOLLOW_UP, session=AgentSession())
            assert shown(client.seen[0]) == [("user", ["text"])]  # nothing loaded
            assert await recorder.count() == 6

    asyncio.run(main())
    scenario.check_stored(ConversationStore(URL), key)


# --- (b) the provider's methods ------------------------------------------------------------


def test_save_and_get_round_trip_exactly():
    key = new_key()
    written = scenario_messages()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            assert await provider.get_messages(key) == []
            await provider.save_messages(key, written[:1])
            await provider.save_messages(key, written[1:])
            await provider.save_messages(key, [])         # nothing to do
            state: dict[str, Any] = {}
            read = await provider.get_messages(key, state=state)
            assert [m.to_dict() for m in read] == [m.to_dict() for m in written]
            assert state == {"conversation_id": await provider.conversation_id(key)}
            assert await provider.count(key) == 4

    asyncio.run(main())
    store = ConversationStore(URL)
    scenario.check_stored(store, key)
    assert store.load(store.conversation_for(key), format=FORMAT) == [m.to_dict() for m in written]


def test_get_messages_window():
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await provider.save_messages(key, scenario_messages())
            assert [m.text for m in await provider.get_messages(key, last=1)] == [ANSWER]
            # The last two would start at the tool result: its call comes too.
            assert shown(await provider.get_messages(key, last=2)) == [
                ("assistant", ["function_call"]), ("tool", ["function_result"]), ("assistant", ["text"])]
            assert len(await provider.get_messages(key, last=100)) == 4
        async with ConvstoreHistoryProvider(URL, max_messages=3) as windowed:
            assert len(await windowed.get_messages(key)) == 3
            assert len(await windowed.get_messages(key, last=4)) == 4

    asyncio.run(main())
    with pytest.raises(ValueError):
        ConvstoreHistoryProvider(URL, max_messages=0)


def test_count_pop_set_clear_delete():
    key = new_key()

    async def main() -> None:
        store = AsyncConversationStore(URL)
        provider = ConvstoreHistoryProvider(store, key)
        try:
            await provider.save_messages(None, scenario_messages())
            popped = await provider.pop(2)
            assert shown(popped) == [("tool", ["function_result"]), ("assistant", ["text"])]
            assert await provider.count() == 2
            await provider.save_messages(None, popped)
            check_native(await provider.get_messages(None))

            summary = [Message("user", [QUESTION]), Message("assistant", [ANSWER])]
            await provider.set_messages(summary)
            assert [m.text for m in await provider.get_messages(None)] == [QUESTION, ANSWER]

            cid = await provider.conversation_id()
            await provider.clear()
            assert await provider.get_messages(None) == [] and await provider.count() == 0
            assert await provider.conversation_id() == cid == await store.conversation_for(key)

            await provider.save_messages(None, summary)
            await provider.delete()
            assert all(c.id != cid for c in await store.list_conversations())
            assert await provider.get_messages(None) == []   # a new, empty conversation
            assert await provider.conversation_id() != cid
            await provider.close()  # a store it was given is not its to close
            assert (await store.info(await store.conversation_for(key))).message_count == 0
        finally:
            await store.close()

    asyncio.run(main())


def test_save_is_all_or_nothing():
    """A batch the store refuses (a function call id already used) leaves the history as it was."""
    key = new_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await provider.save_messages(key, scenario_messages())
            with pytest.raises(DuplicateToolCallError):
                await provider.save_messages(key, [Message("user", ["again"]), *scenario_messages()[1:3]])
            assert await provider.count(key) == 4

    asyncio.run(main())


def test_a_session_id_is_needed():
    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            with pytest.raises(ValueError, match="session"):
                await provider.get_messages(None)

    asyncio.run(main())


# --- (c) the hand-over between frameworks (tests/test_integrations.py) --------------------------


@pytest.mark.shared
def test_write_shared():
    scenario.require_shared_key()

    async def main() -> None:
        async with ConvstoreHistoryProvider(URL) as provider:
            await play(provider, AgentSession(session_id=scenario.SHARED_KEY))

    asyncio.run(main())
    scenario.check_stored(ConversationStore(URL), scenario.SHARED_KEY)


@pytest.mark.shared
def test_read_shared():
    scenario.require_shared_key()

    async def main() -> list[Message]:
        async with ConvstoreHistoryProvider(URL) as provider:
            return await provider.get_messages(scenario.SHARED_KEY)

    check_native(asyncio.run(main()))
    scenario.check_stored(ConversationStore(URL), scenario.SHARED_KEY)


# --- the options of the built-in providers, four event loops (a module of their own) ---------

from .options_agent_framework import *  # noqa: E402,F403 - collected here, in this suite's venv
