"""store.integrations.autogen with the real autogen-agentchat / autogen-core 0.7.5.

An AssistantAgent with a ReplayChatCompletionClient (scripted, no network) and a real
tool plays the scenario with ConvstoreChatCompletionContext as its model context; then
every method of the ChatCompletionContext interface is checked on its own. Runs in the
int-autogen venv (tests/test_integrations.py), on the database in CONVSTORE_TEST_URL.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import uuid
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage, ToolCallExecutionEvent, ToolCallRequestEvent
from autogen_core import FunctionCall, Image
from autogen_core.model_context import (
    BufferedChatCompletionContext,
    ChatCompletionContext,
    UnboundedChatCompletionContext,
)
from autogen_core.models import (
    AssistantMessage,
    CreateResult,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelFamily,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from autogen_ext.models.replay import ReplayChatCompletionClient
from PIL import Image as PILImage

from store import AsyncConversationStore, ConversationStore
from store.integrations.autogen import ConvstoreChatCompletionContext

from . import scenario
from .scenario import with_store

URL = scenario.URL
USAGE = RequestUsage(prompt_tokens=0, completion_tokens=0)
MODEL_INFO = ModelInfo(vision=True, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                       structured_output=False)


def key() -> str:
    return f"autogen-{uuid.uuid4().hex}"


def replies(*results: str | list[FunctionCall]) -> ReplayChatCompletionClient:
    """A scripted model: each result is a text answer or a list of tool calls."""
    return ReplayChatCompletionClient(
        [CreateResult(finish_reason="stop" if isinstance(r, str) else "function_calls", content=r,
                      usage=USAGE, cached=False) for r in results],
        model_info=MODEL_INFO)


def scenario_client() -> tuple[ReplayChatCompletionClient, str]:
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    call = FunctionCall(id=call_id, name=scenario.TOOL, arguments=json.dumps(scenario.ARGUMENTS))
    return replies([call], scenario.ANSWER), call_id


def agent(client: ReplayChatCompletionClient, context: ChatCompletionContext) -> AssistantAgent:
    return AssistantAgent("assistant", model_client=client, model_context=context,
                          tools=[scenario.get_weather], reflect_on_tool_use=True,
                          system_message="You answer weather questions.")


async def play(store: AsyncConversationStore | str, session: str,
               **kwargs: Any) -> ReplayChatCompletionClient:
    """The scripted turn through a real AssistantAgent whose model context is convstore."""
    client, call_id = scenario_client()
    context = ConvstoreChatCompletionContext(store, session, **kwargs)
    result = await agent(client, context).run(task=scenario.QUESTION)
    kinds = [type(m) for m in result.messages]
    assert kinds == [TextMessage, ToolCallRequestEvent, ToolCallExecutionEvent, TextMessage], kinds
    assert result.messages[2].content[0].call_id == call_id
    assert result.messages[2].content[0].content == scenario.RESULT
    assert result.messages[-1].content == scenario.ANSWER
    await context.close()
    return client


def texts(messages: list[LLMMessage]) -> list[str]:
    out = []
    for m in messages:
        content = m.content if isinstance(m.content, list) else [m.content]
        out += [c if isinstance(c, str) else c.content for c in content
                if isinstance(c, (str, FunctionExecutionResult))]
    return out


def calls(messages: list[LLMMessage]) -> list[FunctionCall]:
    return [c for m in messages if isinstance(m, AssistantMessage) and isinstance(m.content, list)
            for c in m.content]


def check_scenario_messages(messages: list[LLMMessage]) -> None:
    """The scripted turn, as autogen-core messages: question, call, result, answer."""
    assert any(scenario.QUESTION in t for t in texts(messages)), messages
    assert any(scenario.ANSWER in t for t in texts(messages)), messages
    assert any(scenario.RESULT in t for t in texts(messages)), messages
    played = [(c.name, json.loads(c.arguments)) for c in calls(messages)]
    assert played == [(scenario.TOOL, scenario.ARGUMENTS)], played


def dumped(messages: list[LLMMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def png() -> Image:
    buffer = io.BytesIO()
    PILImage.new("RGB", (2, 2), (255, 0, 0)).save(buffer, format="PNG")
    return Image.from_base64(base64.b64encode(buffer.getvalue()).decode())


def turn(call_ids: list[str], results: list[str] | None = None) -> list[LLMMessage]:
    """An assistant message calling tools, then one message with their results."""
    results = results or [f"result of {c}" for c in call_ids]
    return [
        AssistantMessage(content=[FunctionCall(id=c, name="lookup", arguments=json.dumps({"q": c}))
                                  for c in call_ids], thought="looking up", source="assistant"),
        FunctionExecutionResultMessage(content=[FunctionExecutionResult(content=r, name="lookup", call_id=c,
                                                                        is_error=r.startswith("error"))
                                                for c, r in zip(call_ids, results)]),
    ]


def history() -> list[LLMMessage]:
    return [
        SystemMessage(content="Be brief."),
        UserMessage(content=["Look at this", png()], source="user"),
        *turn(["c1", "c2"], ["one", "error: no such thing"]),
        AssistantMessage(content="Found one.", source="assistant"),
        UserMessage(content="And c3?", source="user"),
        *turn(["c3"]),
        AssistantMessage(content="Done.", thought="easy", source="assistant"),
    ]


# --- a real agent ---------------------------------------------------------------------------


def test_agent_plays_scenario_and_remembers_it():
    session = key()

    async def body(store: AsyncConversationStore) -> ReplayChatCompletionClient:
        await play(store, session)
        # a later run on the same session (new context, as after a restart) sees the turn
        client = replies("You asked about Paris.")
        context = ConvstoreChatCompletionContext(store, session)
        result = await agent(client, context).run(task="What did I ask?")
        assert result.messages[-1].content == "You asked about Paris."
        return client

    client = with_store(body)
    sent = client.create_calls[0]["messages"]
    assert [type(m).__name__ for m in sent] == [
        "SystemMessage", "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage",
        "AssistantMessage", "UserMessage"]
    check_scenario_messages(sent)
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)
        cid = store.conversation_for(session)
        assert store.info(cid).message_count == 6
        assert store.load(cid, format="autogen-core")[-1] == {
            "content": "You asked about Paris.", "thought": None, "source": "assistant",
            "type": "AssistantMessage"}


def test_agent_from_a_url_and_tool_result_sent_to_model():
    session = key()
    client = asyncio.run(play(URL, session))  # the context opens (and closes) its own store
    second = client.create_calls[1]["messages"]  # the reflection call sees the call and its result
    assert [type(m).__name__ for m in second] == ["SystemMessage", "UserMessage", "AssistantMessage",
                                                 "FunctionExecutionResultMessage"]
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)


def test_agent_with_a_window_keeps_the_call_with_its_result():
    session = key()
    client = with_store(lambda store: play(store, session, buffer_size=1))
    # with buffer_size=1 AutoGen's BufferedChatCompletionContext would show no message at all
    # (it drops the orphan result); convstore's window widens to the call
    second = client.create_calls[1]["messages"]
    assert [type(m).__name__ for m in second] == ["SystemMessage", "AssistantMessage",
                                                 "FunctionExecutionResultMessage"]
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)  # the window limits what is shown, not what is stored


def test_agent_state_reset_and_component():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        await play(store, session)
        context = ConvstoreChatCompletionContext(store, session)
        assistant = agent(replies("unused"), context)
        state = await assistant.save_state()
        assert [m["type"] for m in state["llm_context"]["messages"]] == [
            "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage", "AssistantMessage"]
        json.dumps(state)  # JSON-ready
        await assistant.on_reset(None)  # clears the model context
        assert await context.get_messages() == []
        await assistant.load_state(state)
        check_scenario_messages(await context.get_messages())
        spec = assistant.dump_component().config["model_context"]
        assert spec["provider"] == "store.integrations.autogen.ConvstoreChatCompletionContext"
        loaded = ChatCompletionContext.load_component(spec)
        assert isinstance(loaded, ConvstoreChatCompletionContext)
        assert dumped(await loaded.get_messages()) == dumped(await context.get_messages())
        await loaded.close()

    with_store(body)
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)


# --- the ChatCompletionContext interface ---------------------------------------------------


def test_add_and_get_messages_round_trip_exactly():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        context = ConvstoreChatCompletionContext(store, session)
        assert await context.get_messages() == []
        for message in history():
            await context.add_message(message)
        got = await context.get_messages()
        assert dumped(got) == dumped(history())
        assert [type(m) for m in got] == [type(m) for m in history()]
        assert isinstance(got[1].content[1], Image)
        # stored in the autogen-core format: as AutoGen dumps it, and found by tool-call id
        cid = await context.conversation_id()
        assert await store.load(cid, format="autogen-core") == dumped(history())
        record = await store.get_tool_call("c2", conversation_id=cid)
        assert (record.name, record.arguments, record.status) == ("lookup", {"q": "c2"}, "error")
        assert (await store.get_tool_call("c3", conversation_id=cid)).status == "answered"

    with_store(body)


def test_add_messages_is_one_write():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        context = ConvstoreChatCompletionContext(store, session)
        await context.add_messages(history())
        await context.add_messages([])
        assert dumped(await context.get_messages()) == dumped(history())
        assert (await store.info(await context.conversation_id())).message_count == len(history())

    with_store(body)


@pytest.mark.parametrize("size, first", [(1, 8), (2, 6), (3, 6), (4, 5), (5, 4), (6, 2), (9, 0), (20, 0)])
def test_window_keeps_tool_calls_with_their_results(size, first):
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        await ConvstoreChatCompletionContext(store, session).add_messages(history())
        window = await ConvstoreChatCompletionContext(store, session, buffer_size=size).get_messages()
        assert dumped(window) == dumped(history()[first:])
        answered = {r.call_id for m in window if isinstance(m, FunctionExecutionResultMessage)
                    for r in m.content}
        assert {c.id for c in calls(window)} == answered  # never a call without its result, nor the reverse
        # AutoGen's own buffer cuts instead (dropping a result whose call fell out): a tail of ours
        theirs = BufferedChatCompletionContext(size, initial_messages=history())
        buffered = dumped(await theirs.get_messages())
        assert len(buffered) <= min(size, len(window))
        assert dumped(window)[len(window) - len(buffered):] == buffered

    with_store(body)


def test_reads_a_conversation_stored_in_another_format():
    session, call_id = key(), f"call_{uuid.uuid4().hex[:12]}"
    function = {"name": scenario.TOOL, "arguments": json.dumps(scenario.ARGUMENTS)}
    openai = [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": scenario.QUESTION},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": call_id, "type": "function", "function": function}]},
        {"role": "tool", "tool_call_id": call_id, "content": scenario.RESULT},
        {"role": "assistant", "content": scenario.ANSWER},
    ]
    with ConversationStore(URL) as store:
        store.append(store.conversation_for(session), openai, format="openai")

    async def body(store: AsyncConversationStore) -> list[LLMMessage]:
        return await ConvstoreChatCompletionContext(store, session).get_messages()

    messages = with_store(body)
    assert [type(m) for m in messages] == [SystemMessage, UserMessage, AssistantMessage,
                                           FunctionExecutionResultMessage, AssistantMessage]
    check_scenario_messages(messages)
    assert messages[3].content[0].call_id == call_id and messages[3].content[0].name == scenario.TOOL


def test_window_size_must_be_positive():
    with pytest.raises(ValueError):
        ConvstoreChatCompletionContext(URL, key(), buffer_size=0)


def test_clear():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        context = ConvstoreChatCompletionContext(store, session)
        await context.add_messages(history())
        cid = await context.conversation_id()
        await context.clear()
        assert await context.get_messages() == []
        assert (await store.info(cid)).message_count == 0
        await context.add_message(UserMessage(content="again", source="user"))
        assert texts(await ConvstoreChatCompletionContext(store, session).get_messages()) == ["again"]
        assert await store.conversation_for(session) == cid  # the same conversation, emptied

    with_store(body)


def test_save_and_load_state_round_trip():
    session, other = key(), key()

    async def body(store: AsyncConversationStore) -> None:
        context = ConvstoreChatCompletionContext(store, session, buffer_size=2)
        await context.add_messages(history())
        state = await context.save_state()
        assert json.loads(json.dumps(state)) == {"messages": dumped(history())}  # all of it, not the window
        # into AutoGen's own context and back: the same state shape
        plain = UnboundedChatCompletionContext()
        await plain.load_state(state)
        assert dumped(await plain.get_messages()) == dumped(history())
        target = ConvstoreChatCompletionContext(store, other)
        await target.add_message(UserMessage(content="to be replaced", source="user"))
        await target.load_state(await plain.save_state())  # models rather than JSON: accepted too
        assert dumped(await target.get_messages()) == dumped(history())
        await target.load_state({"messages": []})
        assert await target.get_messages() == []

    with_store(body)


def test_initial_messages_seed_a_new_session_once():
    session = key()
    seed = [SystemMessage(content="You are terse."), UserMessage(content="Hi", source="user")]

    async def body(store: AsyncConversationStore) -> None:
        first = ConvstoreChatCompletionContext(store, session, initial_messages=seed)
        await first.add_message(AssistantMessage(content="Hello.", source="assistant"))
        again = ConvstoreChatCompletionContext(store, session, initial_messages=seed, buffer_size=2)
        assert texts(await again.get_messages()) == ["Hi", "Hello."]  # not seeded twice, windowed
        assert texts(await ConvstoreChatCompletionContext(store, session).get_messages()) == [
            "You are terse.", "Hi", "Hello."]

    with_store(body)


def test_namespaces_keep_sessions_apart():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        await ConvstoreChatCompletionContext(store, session).add_message(UserMessage(content="a", source="u"))
        other = ConvstoreChatCompletionContext(URL, session, namespace="tenant-b")
        assert await other.get_messages() == []
        await other.add_message(UserMessage(content="b", source="u"))
        assert texts(await other.get_messages()) == ["b"]
        assert other._to_config().namespace == "tenant-b"
        await other.close()
        assert texts(await ConvstoreChatCompletionContext(store, session).get_messages()) == ["a"]

    with_store(body)


def test_component_config_round_trip_keeps_the_password_secret():
    context = ConvstoreChatCompletionContext("postgresql://app:s3cret@db.example:5432/agents", "s-1",
                                             namespace="acme", buffer_size=5,
                                             initial_messages=[SystemMessage(content="Be brief.")])
    model = context.dump_component()
    assert model.provider == "store.integrations.autogen.ConvstoreChatCompletionContext"
    assert "s3cret" not in model.model_dump_json() and "s3cret" not in model.config["url"]
    loaded = ConvstoreChatCompletionContext.load_component(model)  # no connection is made yet
    assert loaded.store.engine.url.password == "s3cret"
    assert loaded.store.engine.url.host == "db.example"
    assert (loaded.session_id, loaded.store.namespace, loaded.buffer_size) == ("s-1", "acme", 5)
    assert loaded._to_config() == context._to_config()


def test_component_from_json_on_the_test_database():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        context = ConvstoreChatCompletionContext(store, session)
        await context.add_messages(history())
        spec = json.loads(context.dump_component().model_dump_json())
        if spec["config"].get("password"):  # masked in JSON, as AutoGen masks API keys
            spec["config"]["password"] = store.engine.url.password
        loaded = ChatCompletionContext.load_component(spec)
        assert dumped(await loaded.get_messages()) == dumped(history())
        await loaded.close()

    with_store(body)


# --- the hand-over between frameworks (tests/test_integrations.py) ------------------------


@pytest.mark.shared
def test_write_shared():
    scenario.require_shared_key()
    with_store(lambda store: play(store, scenario.SHARED_KEY))
    with ConversationStore(URL) as store:
        scenario.check_stored(store, scenario.SHARED_KEY)


@pytest.mark.shared
def test_read_shared():
    scenario.require_shared_key()

    async def body(store: AsyncConversationStore) -> list[LLMMessage]:
        return await ConvstoreChatCompletionContext(store, scenario.SHARED_KEY).get_messages()

    messages = with_store(body)
    check_scenario_messages(messages)
    assert [c.name for c in calls(messages)] == [scenario.TOOL]
    with ConversationStore(URL) as store:
        scenario.check_stored(store, scenario.SHARED_KEY)


# --- the options of the built-in contexts, four event loops (a module of their own) ----------

from .options_autogen import *  # noqa: E402,F403 - collected here, in this suite's venv
