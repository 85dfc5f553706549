"""store.integrations.openai_agents with the real openai-agents 0.24.0 (openai 3.x).

A real Agent, run by the SDK's Runner with a scripted Model (no network) and a real
function_tool, plays the scenario with ConvstoreSession as its session; then every
method of the Session protocol is checked on its own, side by side with the SDK's own
SQLiteSession on the same items. Runs in the int-openai-agents venv
(tests/test_integrations.py), on the database in CONVSTORE_TEST_URL.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.memory import Session, SessionABC, SessionSettings, SQLiteSession
from agents.models.interface import Model
from agents.run_internal.session_persistence import rewind_session_items
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

from store import AsyncConversationStore, ConversationStore, Message
from store.errors import DuplicateToolCallError, SchemaError
from store.integrations.openai_agents import ConvstoreSession
from store.model import UsageBlock

from . import scenario
from .scenario import with_store

URL = scenario.URL
CONFIG = RunConfig(tracing_disabled=True)  # the trace exporter would need OPENAI_API_KEY and the network
get_weather = function_tool(scenario.get_weather)


def key() -> str:
    return f"openai-agents-{uuid.uuid4().hex}"


class ScriptedModel(Model):
    """A model that answers each call with the next scripted output and records what it was sent."""

    def __init__(self, *outputs: list[Any]) -> None:
        self.outputs = list(outputs)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema,
                           handoffs, tracing, *, previous_response_id, conversation_id, prompt,
                           **kwargs) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    async def stream_response(self, system_instructions, input, model_settings, tools, output_schema,
                              handoffs, tracing, *, previous_response_id, conversation_id, prompt,
                              **kwargs) -> AsyncIterator[Any]:
        self.inputs.append(copy.deepcopy(input))
        # the runner builds its ModelResponse from the terminal event alone
        yield ResponseCompletedEvent(
            type="response.completed", sequence_number=0,
            response=Response(id="resp_scripted", created_at=time.time(), model="scripted",
                              object="response", output=self.outputs.pop(0), tool_choice="auto", tools=[],
                              parallel_tool_calls=False))


def call(call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{call_id}", call_id=call_id,
                                    name=scenario.TOOL, arguments=json.dumps(scenario.ARGUMENTS),
                                    status="completed")


def text(answer: str, id_: str = "msg_1") -> ResponseOutputMessage:
    part = ResponseOutputText(type="output_text", text=answer, annotations=[])
    return ResponseOutputMessage(type="message", id=id_, role="assistant", status="completed", content=[part])


def reasoning(id_: str, summary: str) -> ResponseReasoningItem:
    return ResponseReasoningItem(type="reasoning", id=id_,
                                 summary=[Summary(type="summary_text", text=summary)])


def scenario_model(thinking: bool = False, call_id: str | None = None) -> tuple[ScriptedModel, str]:
    """QUESTION -> get_weather(ARGUMENTS) -> ANSWER, optionally with reasoning items before each output."""
    call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
    first: list[Any] = [call(call_id)]
    second: list[Any] = [text(scenario.ANSWER)]
    if thinking:
        first.insert(0, reasoning("rs_1", "I need the weather tool."))
        second.insert(0, reasoning("rs_2", "The tool answered."))
    return ScriptedModel(first, second), call_id


def agent(model: Model, **kwargs: Any) -> Agent:
    return Agent(name="assistant", instructions="You answer weather questions.", model=model,
                 tools=[get_weather], **kwargs)


async def play(session: Session, thinking: bool = False, call_id: str | None = None,
               config: RunConfig = CONFIG) -> tuple[ScriptedModel, str]:
    """The scripted turn through a real Agent and Runner, with ``session`` as its memory."""
    model, call_id = scenario_model(thinking, call_id)
    result = await Runner.run(agent(model), scenario.QUESTION, session=session, run_config=config)
    assert result.final_output == scenario.ANSWER
    outputs = [i.raw_item for i in result.new_items if i.type == "tool_call_output_item"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [(call_id, scenario.RESULT)], outputs
    return model, call_id


def kind(item: dict[str, Any]) -> str:
    return item.get("type", "message") + (f":{item['role']}" if "role" in item else "")


def texts(items: list[dict[str, Any]]) -> list[str]:
    """Every text of the items: message contents, call outputs, reasoning summaries."""
    out: list[str] = []
    for item in items:
        for key_ in ("content", "output", "summary"):
            value = item.get(key_)
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out += [p.get("text") or p.get("refusal") or "" for p in value if isinstance(p, dict)]
    return out


def check_scenario_items(items: list[dict[str, Any]]) -> None:
    """The scripted turn, as Responses items: question, call, output, answer."""
    assert any(scenario.QUESTION in t for t in texts(items)), items
    assert any(scenario.ANSWER in t for t in texts(items)), items
    assert any(scenario.RESULT in t for t in texts(items)), items
    calls = [(i["name"], json.loads(i["arguments"])) for i in items if i.get("type") == "function_call"]
    assert calls == [(scenario.TOOL, scenario.ARGUMENTS)], calls
    [called] = [i["call_id"] for i in items if i.get("type") == "function_call"]
    assert [i["call_id"] for i in items if i.get("type") == "function_call_output"] == [called]


def batches() -> list[list[dict[str, Any]]]:
    """Item batches as the runner adds them (and a few it could): 20 items in 12 batches."""
    return [
        [{"content": "Weather in Paris and Rome?", "role": "user"}],
        [{"id": "rs_1", "summary": [{"text": "two cities", "type": "summary_text"}], "type": "reasoning"},
         {"arguments": '{"city": "Paris"}', "call_id": "c1", "name": "get_weather", "type": "function_call",
          "id": "fc_c1", "status": "completed"},
         {"arguments": '{"city": "Rome"}', "call_id": "c2", "name": "get_weather", "type": "function_call",
          "id": "fc_c2", "status": "completed"},
         {"call_id": "c1", "output": "Sunny, 21C", "type": "function_call_output"},
         {"call_id": "c2", "output": [{"type": "input_text", "text": "Rainy"}],
          "type": "function_call_output"}],
        [{"id": "rs_2", "summary": [], "type": "reasoning", "encrypted_content": "gAAAA-opaque",
          "content": [{"type": "reasoning_text", "text": "compare"}]},
         {"id": "msg_1", "role": "assistant", "status": "completed", "type": "message",
          "content": [{"annotations": [], "text": "Paris is sunny, Rome rainy.", "type": "output_text",
                       "logprobs": []}]}],
        [{"role": "user", "content": [{"type": "input_text", "text": "And this?"},
                                      {"type": "input_image", "image_url": "https://example.com/a.png",
                                       "detail": "auto"}]}],
        [{"role": "developer", "content": "Be brief."},
         {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "typed"}]}],
        [{"id": "msg_2", "role": "assistant", "status": "completed", "type": "message",
          "phase": "final_answer",
          "content": [{"annotations": [], "text": "A chart.", "type": "output_text"},
                      {"type": "refusal", "refusal": "No more."}]}],
        [{"arguments": '{"city": "Oslo"}', "call_id": "c3", "name": "get_weather", "type": "function_call",
          "id": "fc_c3", "status": "completed"}],  # a call stored before its output (an approval)
        [{"call_id": "c3", "output": "Snow", "type": "function_call_output"}],
        [{"type": "web_search_call", "id": "ws_1", "status": "completed",
          "action": {"type": "search", "query": "q"}}],
        [{"type": "custom_tool_call", "call_id": "c4", "name": "grep", "input": "foo", "id": "ctc_1"},
         {"type": "custom_tool_call_output", "call_id": "c4", "output": "bar"}],
        [{"role": "assistant", "content": "Done.", "id": "__fake_id__", "provider_data": {"model": "x"}}],
        [{"id": "rs_3", "summary": [{"text": "wrap up", "type": "summary_text"}], "type": "reasoning"},
         {"id": "msg_3", "role": "assistant", "status": "completed", "type": "message",
          "content": [{"annotations": [], "text": "Bye.", "type": "output_text"}]}],
    ]


def items() -> list[dict[str, Any]]:
    return [item for batch in batches() for item in batch]


async def fill(*sessions: Session) -> None:
    for batch in batches():
        for session in sessions:
            await session.add_items(copy.deepcopy(batch))


# --- a real agent ---------------------------------------------------------------------------


def test_agent_plays_scenario_and_remembers_it():
    session = key()

    async def body(store: AsyncConversationStore) -> tuple[ScriptedModel, ScriptedModel]:
        model, _ = await play(ConvstoreSession(store, session))
        # a later, streamed run on the same session (a new object, as after a restart) sees the turn
        later = ScriptedModel([text("You asked about Paris.", "msg_2")])
        streamed = Runner.run_streamed(agent(later), "What did I ask?",
                                       session=ConvstoreSession(store, session), run_config=CONFIG)
        async for _ in streamed.stream_events():
            pass
        assert streamed.final_output == "You asked about Paris."
        return model, later

    model, later = with_store(body)
    # the model's second call saw the call and its output, read back from the session
    assert [kind(i) for i in model.inputs[1]] == ["message:user", "function_call", "function_call_output"]
    sent = later.inputs[0]
    assert [kind(i) for i in sent] == ["message:user", "function_call", "function_call_output",
                                       "message:assistant", "message:user"]
    check_scenario_items(sent)
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)
        cid = store.conversation_for(session)
        assert store.info(cid).message_count == 6  # user, call, output, answer, user, answer
        last = store.load(cid, format="openai-responses")[-1]
        assert last["content"][0]["text"] == "You asked about Paris."


def test_agent_from_a_url_and_closed():
    session = key()

    async def body() -> None:
        memory = ConvstoreSession(URL, session)  # the session opens its own store
        await play(memory)
        await memory.close()

    asyncio.run(body())
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)


async def two_turns(memory: Session, config: RunConfig = CONFIG) -> tuple[list[Any], list[Any]]:
    """A reasoning model's scenario turn, then a question about it: what the model was sent
    on each call, and the session's items afterwards."""
    model, _ = await play(memory, thinking=True, call_id="call_fixed", config=config)
    later = ScriptedModel([reasoning("rs_3", "recall"), text("You asked about Paris.", "msg_2")])
    result = await Runner.run(agent(later), "What did I ask?", session=memory, run_config=config)
    assert result.final_output == "You asked about Paris."
    return [*model.inputs, *later.inputs], await memory.get_items()


def test_agent_runs_as_with_sqlite_session():
    """ConvstoreSession and the SDK's SQLiteSession, on the same script: the model is sent
    the same input on every call, and the sessions end up holding the same items."""
    session = key()

    async def body(store: AsyncConversationStore) -> tuple[Any, Any]:
        return await two_turns(ConvstoreSession(store, session)), await two_turns(SQLiteSession(session))

    ours, theirs = with_store(body)
    assert ours == theirs
    sent, stored = ours
    assert [kind(i) for i in stored] == [
        "message:user", "reasoning", "function_call", "function_call_output", "reasoning",
        "message:assistant", "message:user", "reasoning", "message:assistant"]
    assert sent[-1] == [*stored[:-2]]
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)
        # a model turn's items are one stored message: reasoning + call, reasoning + answer
        assert store.info(store.conversation_for(session)).message_count == 6


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 7, 20])
def test_agent_with_a_session_limit_is_sent_what_sqlite_session_sends(limit):
    """SessionSettings(limit=N) (here in the RunConfig): the model sees the newest N items;
    where they cut a call from its output, the runner drops the orphan output, on both."""
    session = key()
    config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=limit))

    async def body(store: AsyncConversationStore) -> tuple[Any, Any]:
        return (await two_turns(ConvstoreSession(store, session), config),
                await two_turns(SQLiteSession(session), config))

    ours, theirs = with_store(body)
    assert ours == theirs
    assert len(ours[0][-1]) <= limit + 1  # history (orphans dropped) + the new question
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)  # the limit is what is shown, not what is stored


def test_agent_with_session_settings_on_the_session():
    session = key()

    async def body(store: AsyncConversationStore) -> list[Any]:
        await play(ConvstoreSession(store, session))
        later = ScriptedModel([text("Paris.", "msg_2")])
        memory = ConvstoreSession(store, session, session_settings={"limit": 2})
        await Runner.run(agent(later), "Where?", session=memory, run_config=CONFIG)
        return later.inputs[0]

    sent = with_store(body)
    # the newest two items were the output and the answer: the orphan output is dropped by the runner
    assert [kind(i) for i in sent] == ["message:assistant", "message:user"]


def test_agent_approval_stores_the_pending_call_then_its_output():
    """A tool that needs approval: the run stops with the call stored (pending in convstore),
    and the resumed run adds its output; as with SQLiteSession."""
    session = key()
    guarded = function_tool(scenario.get_weather, needs_approval=True)

    async def run(memory: Session, store: AsyncConversationStore | None) -> list[Any]:
        model, _ = scenario_model(call_id="call_approve")
        assistant = Agent(name="assistant", instructions="Ask first.", model=model, tools=[guarded])
        first = await Runner.run(assistant, scenario.QUESTION, session=memory, run_config=CONFIG)
        assert [kind(i) for i in await memory.get_items()] == ["message:user", "function_call"]
        if store is not None:
            record = await store.get_tool_call("call_approve", conversation_id=await memory.conversation_id())
            assert record.status == "pending"
        state = first.to_state()
        state.approve(first.interruptions[0])
        result = await Runner.run(assistant, state, session=memory, run_config=CONFIG)
        assert result.final_output == scenario.ANSWER
        return await memory.get_items()

    async def body(store: AsyncConversationStore) -> tuple[Any, Any]:
        return await run(ConvstoreSession(store, session), store), await run(SQLiteSession(session), None)

    ours, theirs = with_store(body)
    assert ours == theirs
    check_scenario_items(ours)
    with ConversationStore(URL) as store:
        scenario.check_stored(store, session)


def test_agent_continues_a_conversation_stored_in_another_format():
    """History written as Chat Completions messages is what the agent's model is sent, as items."""
    session, call_id = key(), f"call_{uuid.uuid4().hex[:12]}"
    function = {"name": scenario.TOOL, "arguments": json.dumps(scenario.ARGUMENTS)}
    with ConversationStore(URL) as store:
        store.append(store.conversation_for(session), [
            {"role": "user", "content": scenario.QUESTION},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": call_id, "content": scenario.RESULT},
            {"role": "assistant", "content": scenario.ANSWER},
        ], format="openai")

    async def body(store: AsyncConversationStore) -> list[Any]:
        later = ScriptedModel([text("Paris.", "msg_2")])
        await Runner.run(agent(later), "Where?", session=ConvstoreSession(store, session), run_config=CONFIG)
        return later.inputs[0]

    sent = with_store(body)
    assert sent[:-1] == [
        {"role": "user", "content": scenario.QUESTION},
        {"type": "function_call", "call_id": call_id, "name": scenario.TOOL,
         "arguments": function["arguments"]},
        {"type": "function_call_output", "call_id": call_id, "output": scenario.RESULT},
        {"role": "assistant", "content": scenario.ANSWER},
    ]
    assert sent[-1] == {"role": "user", "content": "Where?"}


# --- the Session protocol ----------------------------------------------------------------------


def test_is_a_session():
    memory = ConvstoreSession(URL, "s-1", session_settings=SessionSettings(limit=3))
    assert isinstance(memory, Session) and isinstance(memory, SessionABC)
    assert memory.session_id == "s-1"
    assert memory.session_settings == SessionSettings(limit=3)
    from_dict = ConvstoreSession(URL, "s-1", session_settings={"limit": 4})
    assert from_dict.session_settings == SessionSettings(limit=4)
    assert ConvstoreSession(URL, "s-1").session_settings == SessionSettings()


def test_add_and_get_items_round_trip_exactly():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        assert await memory.get_items() == []
        await fill(memory)
        assert await memory.get_items() == items()
        assert await ConvstoreSession(store, session).get_items() == items()  # read from the database
        # stored in the openai-responses format, one write per batch, the calls found by id
        cid = await memory.conversation_id()
        assert await store.load(cid, format="openai-responses") == items()
        assert (await store.info(cid)).message_count == 16  # a model turn's items are one message
        for call_id in ("c1", "c2", "c3", "c4"):
            record = await store.get_tool_call(call_id, conversation_id=cid)
            assert (record.status, record.conversation_id) == ("answered", cid)
        assert (await store.get_tool_call("c3", conversation_id=cid)).result == "Snow"  # a later batch

    with_store(body)


def test_add_items_is_one_write_all_or_nothing():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        await memory.add_items([])
        await memory.add_items(batches()[0])
        with pytest.raises(SchemaError):  # a function_call without call_id or arguments
            await memory.add_items([{"role": "user", "content": "fine"},
                                    {"type": "function_call", "name": "x"}])
        assert await memory.get_items() == batches()[0]  # nothing of the refused batch

    with_store(body)


def test_a_reused_call_id_is_refused_whole():
    """convstore links a call to its output by id, so an id is used once per session (the SDK's
    SQLiteSession would keep both): a batch that reuses one is refused, nothing of it written."""
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        await memory.add_items(batches()[1])
        again = [{"role": "user", "content": "once more"}, batches()[1][1]]
        with pytest.raises(DuplicateToolCallError):
            await memory.add_items(again)
        assert await memory.get_items() == batches()[1]

    with_store(body)


def test_get_items_limit_is_sqlite_sessions():
    """Every limit, None, 0 and negative ones: the same items as SQLiteSession, the newest ones
    in chronological order; and session_settings.limit where none is given."""
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        ours, theirs = ConvstoreSession(store, session), SQLiteSession(session)
        await fill(ours, theirs)
        everything = items()
        for limit in [None, -1, -5, *range(len(everything) + 3)]:
            got = await ours.get_items(limit)
            assert got == await theirs.get_items(limit), limit
            start = 0 if limit is None or limit < 0 else max(len(everything) - limit, 0)
            assert got == everything[start:]
        for limit in (1, 4, 9):
            settings = SessionSettings(limit=limit)
            limited = ConvstoreSession(store, session, session_settings=settings)
            theirs.session_settings = settings
            assert await limited.get_items() == await theirs.get_items()
            assert await limited.get_items() == everything[-limit:]
            assert await limited.get_items(limit + 1) == everything[-limit - 1:]  # an explicit limit wins

    with_store(body)


def test_messages_that_are_no_items():
    """A conversation written elsewhere may hold messages that are no Responses item at all
    (an empty assistant message, usage alone): limits still count items, pops skip them."""
    session = key()
    nothing = [Message(role="assistant"),
               Message(role="assistant", content=[UsageBlock(usage={"input_tokens": 1})])]
    with ConversationStore(URL) as store:
        cid = store.conversation_for(session)
        store.append(cid, [{"role": "user", "content": "one"}], format="openai")
        store.append(cid, nothing * 2, format="canonical")
        store.append(cid, [{"role": "user", "content": "two"}], format="openai")

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        one, two = {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
        assert await memory.get_items() == [one, two]
        assert await memory.get_items(1) == [two]
        assert await memory.get_items(2) == await memory.get_items(3) == [one, two]
        assert await memory.pop_item() == two
        assert await memory.pop_item() == one
        assert await memory.pop_item() is None
        assert (await store.info(await memory.conversation_id())).message_count == 0

    with_store(body)


def test_pop_item_is_sqlite_sessions():
    """Popping every item, one by one: the same items as SQLiteSession pops, also out of a
    model turn stored as one message (reasoning + answer), then None."""
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        ours, theirs = ConvstoreSession(store, session), SQLiteSession(session)
        await fill(ours, theirs)
        cid = await ours.conversation_id()
        left = items()
        while left:
            popped = await ours.pop_item()
            assert popped == await theirs.pop_item() == left.pop()
            assert await ours.get_items() == left
        assert await ours.pop_item() is None and await theirs.pop_item() is None
        assert (await store.info(cid)).message_count == 0

    with_store(body)


def test_pop_item_then_add_back():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        await fill(memory)
        cid = await memory.conversation_id()
        last = [await memory.pop_item() for _ in range(3)]
        assert last == items()[:-4:-1]  # msg_3, rs_3, "Done."
        assert (await store.info(cid)).message_count == 14  # msg_3 and rs_3 were one message
        await memory.add_items(last[::-1])
        assert await memory.get_items() == items()
        # a popped output makes its call pending again; adding it back answers it
        outputs = [await memory.pop_item() for _ in range(7)]
        assert outputs[-1] == {"call_id": "c3", "output": "Snow", "type": "function_call_output"}
        assert (await store.get_tool_call("c3", conversation_id=cid)).status == "pending"
        await memory.add_items(outputs[::-1])
        assert await memory.get_items() == items()
        assert (await store.get_tool_call("c3", conversation_id=cid)).status == "answered"

    with_store(body)


def test_sdk_rewinds_the_last_items():
    """The runner's own rewind (on a conversation retry) pops the tail it compared, item by item."""
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        ours, theirs = ConvstoreSession(store, session), SQLiteSession(session)
        await fill(ours, theirs)
        for memory in (ours, theirs):
            await rewind_session_items(memory, items()[-3:])
            assert await memory.get_items() == items()[:-3]
            await rewind_session_items(memory, [{"role": "user", "content": "not the tail"}])  # refused
            assert await memory.get_items() == items()[:-3]

    with_store(body)


def test_clear_session():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        memory = ConvstoreSession(store, session)
        await fill(memory)
        cid = await memory.conversation_id()
        await memory.clear_session()
        assert await memory.get_items() == []
        assert await memory.pop_item() is None
        assert (await store.info(cid)).message_count == 0
        assert await store.find_tool_calls(conversation_id=cid) == []
        await memory.add_items([{"role": "user", "content": "again"}])
        assert await ConvstoreSession(store, session).get_items() == [{"role": "user", "content": "again"}]
        assert await store.conversation_for(session) == cid  # the same conversation, emptied

    with_store(body)


def test_namespaces_keep_sessions_apart():
    session = key()

    async def body(store: AsyncConversationStore) -> None:
        await ConvstoreSession(store, session).add_items([{"role": "user", "content": "a"}])
        other = ConvstoreSession(URL, session, namespace="tenant-b")
        assert await other.get_items() == []
        await other.add_items([{"role": "user", "content": "b"}])
        assert await other.get_items() == [{"role": "user", "content": "b"}]
        await other.close()
        assert await ConvstoreSession(store, session).get_items() == [{"role": "user", "content": "a"}]
        with pytest.raises(ValueError):
            ConvstoreSession(store, session, namespace="tenant-b")

    with_store(body)


# --- the hand-over between frameworks (tests/test_integrations.py) ------------------------


@pytest.mark.shared
def test_write_shared():
    scenario.require_shared_key()
    with_store(lambda store: play(ConvstoreSession(store, scenario.SHARED_KEY)))
    with ConversationStore(URL) as store:
        scenario.check_stored(store, scenario.SHARED_KEY)


@pytest.mark.shared
def test_read_shared():
    scenario.require_shared_key()

    async def body(store: AsyncConversationStore) -> tuple[list[Any], list[Any]]:
        history = await ConvstoreSession(store, scenario.SHARED_KEY).get_items()
        # the SDK takes them as model input (without writing to the shared session)
        later = ScriptedModel([text("Paris.", "msg_2")])
        await Runner.run(agent(later), [*history, {"role": "user", "content": "Where?"}], run_config=CONFIG)
        return history, later.inputs[0]

    history, sent = with_store(body)
    check_scenario_items(history)
    assert [i["name"] for i in history if i.get("type") == "function_call"] == [scenario.TOOL]
    check_scenario_items(sent)
    with ConversationStore(URL) as store:
        scenario.check_stored(store, scenario.SHARED_KEY)


# --- the constructor's options, cancelled writes, four event loops (a module of their own) --

from .options_openai_agents import *  # noqa: E402,F403 - collected here, in this suite's venv
