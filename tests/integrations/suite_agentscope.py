"""store.integrations.agentscope with the real agentscope 2.0.11.

An ``Agent`` with a scripted ``ChatModelBase`` (no network) and a real tool in a
``Toolkit`` plays the scenario with ConvstoreMemory as its middleware; a second agent
on the same session sees the history; a reply parked for a user's confirmation is
resumed by a new agent. Then every memory method is checked on its own, with the
store calls each one makes. Runs in the int-agentscope venv (tests/test_integrations.py),
on the database in CONVSTORE_TEST_URL.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from functools import partial
from typing import Any

import pytest
from agentscope.agent import Agent
from agentscope.credential import CredentialBase
from agentscope.event import ConfirmResult, UserConfirmResultEvent
from agentscope.formatter import OpenAIChatFormatter
from agentscope.message import AssistantMsg, Msg, TextBlock, ToolCallBlock, ToolResultBlock, UserMsg
from agentscope.model import ChatModelBase, ChatResponse
from agentscope.state import AgentState
from agentscope.tool import FunctionTool, Toolkit
from pydantic import BaseModel

from store import AsyncConversationStore, ConversationStore
from store.integrations.agentscope import FORMAT, MARKS_KEY, SUMMARY_KEY, ConvstoreMemory

from . import scenario

URL = scenario.URL
FOLLOW_UP = "What did I ask you?"
RECALL = "You asked about the weather in Paris."


def key() -> str:
    return f"agentscope-{uuid.uuid4().hex}"


CountingStore = scenario.CountingStore
with_store = partial(scenario.with_store, store_class=CountingStore)


def stored(session: str) -> list[dict[str, Any]]:
    s = ConversationStore(URL)
    return s.load(s.conversation_for(session), format=FORMAT)


# --- a real agent with a scripted model -------------------------------------------------


class _Credential(CredentialBase):
    pass


class ScriptedModel(ChatModelBase):
    """Answers with the next scripted response; records the messages it was shown."""

    class Parameters(BaseModel):
        pass

    def __init__(self, *script: ChatResponse) -> None:
        super().__init__(credential=_Credential(), model="scripted", parameters=self.Parameters(),
                         stream=False)
        self.formatter = OpenAIChatFormatter()  # the agent reads its supported media types
        self.script = list(script)
        self.seen: list[list[Msg]] = []

    async def _call_api(self, model_name: str, messages: list[Msg], tools: Any = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse:
        self.seen.append([m.model_copy(deep=True) for m in messages])
        return self.script.pop(0)


def scenario_model() -> ScriptedModel:
    call = ToolCallBlock(id=f"call_{uuid.uuid4().hex[:8]}", name=scenario.TOOL,
                         input=json.dumps(scenario.ARGUMENTS))
    return ScriptedModel(ChatResponse(content=[call], is_last=True),
                         ChatResponse(content=[TextBlock(text=scenario.ANSWER)], is_last=True))


def agent(model: ChatModelBase, memory: ConvstoreMemory, *, read_only: bool = True, **kwargs: Any) -> Agent:
    # read-only: allowed at once; otherwise the agent parks the reply until the user confirms
    toolkit = Toolkit(tools=[FunctionTool(scenario.get_weather, is_read_only=read_only)])
    return Agent(name="Friday", system_prompt="You are helpful.", model=model, toolkit=toolkit,
                 middlewares=[memory], **kwargs)


async def play(store: AsyncConversationStore | str, session: str) -> Msg:
    """The scenario, played by an agent whose memory is ConvstoreMemory."""
    memory = ConvstoreMemory(store, session)
    reply = await agent(scenario_model(), memory).reply(UserMsg("user", scenario.QUESTION))
    assert reply.get_text_content() == scenario.ANSWER
    return reply


def text_of(msgs: list[Msg]) -> list[str | None]:
    return [m.get_text_content() for m in msgs]


def block_texts(msgs: list[Msg]) -> list[str]:
    out = []
    for m in msgs:
        for b in m.content:
            if b.type == "text":
                out.append(b.text)
            elif b.type == "tool_result":
                out.append(b.output if isinstance(b.output, str) else " ".join(
                    p.text for p in b.output if p.type == "text"))
    return out


def check_native(msgs: list[Msg]) -> None:
    """AgentScope messages hold the whole scripted turn."""
    texts = block_texts(msgs)
    assert any(scenario.QUESTION in t for t in texts), texts
    assert any(scenario.ANSWER in t for t in texts), texts
    assert any(scenario.RESULT in t for t in texts), texts
    calls = [b for m in msgs for b in m.content if b.type == "tool_call"]
    assert [(c.name, json.loads(c.input)) for c in calls] == [(scenario.TOOL, scenario.ARGUMENTS)]


def test_agent_plays_the_scenario_and_a_second_agent_sees_it():
    session = key()

    async def body(store: CountingStore) -> None:
        await play(store, session)
        # the stored history is read once, when the agent first replies; the turn is one append
        assert store.take() == {"load": 1, "append": 1}
        check_native([Msg.model_validate(d) for d in stored(session)])
        scenario.check_stored(ConversationStore(URL), session)

        # a new agent (as after a restart) on the same session: the model is shown the history
        model = ScriptedModel(ChatResponse(content=[TextBlock(text=RECALL)], is_last=True))
        reply = await agent(model, ConvstoreMemory(store, session)).reply(UserMsg("user", FOLLOW_UP))
        assert reply.get_text_content() == RECALL
        check_native(model.seen[0])
        assert block_texts(model.seen[0])[-1] == FOLLOW_UP
        assert store.take() == {"load": 1, "append": 1}
        s = ConversationStore(URL)
        assert scenario.texts(s.load_messages(s.conversation_for(session)))[-2:] == [FOLLOW_UP, RECALL]

    with_store(body)


def test_a_parked_reply_is_saved_and_resumed_by_a_new_agent():
    session = key()

    async def body(store: CountingStore) -> None:
        parked = await agent(scenario_model(), ConvstoreMemory(store, session), read_only=False).reply(
            UserMsg("user", scenario.QUESTION))
        assert parked.finished_reason is None  # waiting for the user's confirmation
        s = ConversationStore(URL)
        [call] = s.find_tool_calls(conversation_id=s.conversation_for(session))
        assert call.status == "pending"

        # another agent, with only the store to go on, receives the confirmation
        memory = ConvstoreMemory(store, session)
        state = await memory.load_state()
        [asking] = state.get_awaiting_tool_calls("Friday")
        store.take()
        resumed = agent(ScriptedModel(ChatResponse(content=[TextBlock(text=scenario.ANSWER)], is_last=True)),
                        memory, read_only=False, state=state)
        event = UserConfirmResultEvent(reply_id=state.reply_id,
                                       confirm_results=[ConfirmResult(confirmed=True, tool_call=asking)])
        reply = await resumed.reply(event)
        assert reply.get_text_content() == scenario.ANSWER
        # the parked message was completed in place: one atomic replace
        assert store.take() == {"replace": 1}
        scenario.check_stored(ConversationStore(URL), session)
        msgs = [Msg.model_validate(d) for d in stored(session)]
        assert [m.role for m in msgs] == ["user", "assistant"]  # call, result and answer in one Msg
        check_native(msgs)

    with_store(body)


# --- the memory methods -------------------------------------------------------------------


def test_add_get_memory_size():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        assert await memory.get_memory() == [] and await memory.size() == 0
        first, second, third = UserMsg("user", "one"), AssistantMsg("Friday", "two"), UserMsg("user", "three")
        store.take()
        await memory.add(first)
        await memory.add([second, third])
        assert store.take() == {"load": 2, "append": 2}  # the load: ids already stored are skipped
        got = await memory.get_memory()
        assert [m.model_dump() for m in got] == [m.model_dump() for m in (first, second, third)]
        assert await memory.size() == 3

        await memory.add([first, UserMsg("user", "four")])  # first is already there
        assert [m.get_text_content() for m in await memory.get_memory()] == ["one", "two", "three", "four"]
        await memory.add(first, allow_duplicates=True)
        await memory.add(None)
        await memory.add([])
        assert await memory.size() == 5
        store.take()
        await memory.add(UserMsg("user", "five"), allow_duplicates=True)
        assert store.take() == {"append": 1}

    with_store(body)


def test_marks_are_kept_in_message_metadata():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        a, b, c = UserMsg("user", "a"), AssistantMsg("Friday", "b"), UserMsg("user", "c")
        await memory.add(a)
        await memory.add(b, marks="hint")
        await memory.add(c, marks=["hint", "important"])
        marks = [d["metadata"].get(MARKS_KEY) for d in stored(session)]
        assert marks == [None, ["hint"], ["hint", "important"]]
        assert text_of(await memory.get_memory(mark="hint")) == ["b", "c"]
        assert text_of(await memory.get_memory(exclude_mark="important")) == ["a", "b"]
        assert text_of(await memory.get_memory(mark="hint", exclude_mark="important")) == ["b"]
        assert all(MARKS_KEY not in m.metadata for m in await memory.get_memory())  # hidden from callers

        assert await memory.update_messages_mark("seen", msg_ids=[a.id]) == 1
        assert await memory.update_messages_mark("old", old_mark="hint") == 2  # hint -> old
        assert await memory.update_messages_mark(None, old_mark="important") == 1
        assert await memory.update_messages_mark("seen", msg_ids=[a.id]) == 0  # already there
        assert [d["metadata"].get(MARKS_KEY) for d in stored(session)] == [["seen"], ["old"], ["old"]]
        store.take()
        assert await memory.delete_by_mark(["old", "absent"]) == 2
        assert store.take() == {"load": 1, "replace": 1}
        assert text_of(await memory.get_memory()) == ["a"]
        assert await memory.delete_by_mark("absent") == 0
        with pytest.raises(TypeError):
            await memory.delete_by_mark(42)  # type: ignore[arg-type]

    with_store(body)


def test_delete_by_id_is_one_atomic_replace():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        msgs = [UserMsg("user", f"m{i}") for i in range(4)]
        await memory.add(msgs)
        store.take()
        assert await memory.delete([msgs[1].id, msgs[3].id, "no-such-id"]) == 2
        assert store.take() == {"load": 1, "replace": 1}
        assert [m.id for m in await memory.get_memory()] == [msgs[0].id, msgs[2].id]
        store.take()
        assert await memory.delete(["no-such-id"]) == 0
        assert store.take() == {"load": 1}  # nothing to change: no write

    with_store(body)


def test_clear_empties_the_conversation():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        await memory.add([UserMsg("user", "x"), AssistantMsg("Friday", "y")])
        cid = await memory.conversation_id()
        store.take()
        await memory.clear()
        assert store.take() == {"truncate": 1}
        assert await memory.size() == 0
        assert ConversationStore(URL).conversation_for(session) == cid  # the conversation stays

    with_store(body)


def tool_turn(call_id: str) -> list[Msg]:
    """A question and the 2.x reply that holds the call, its result and the answer."""
    call = ToolCallBlock(id=call_id, name=scenario.TOOL, input=json.dumps(scenario.ARGUMENTS),
                         state="finished")
    result = ToolResultBlock(id=call_id, name=scenario.TOOL, output=scenario.RESULT, state="success")
    return [UserMsg("user", scenario.QUESTION),
            Msg(name="Friday", role="assistant", content=[call, result, TextBlock(text=scenario.ANSWER)])]


def test_window_keeps_tool_calls_with_their_results():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        await memory.add(tool_turn("call_w1") + [UserMsg("user", FOLLOW_UP)])
        # stored: question, call, result, answer, follow-up (a 2.x reply is split at its results)
        assert (await store.info(await memory.conversation_id())).message_count == 5
        store.take()
        [last] = await memory.get_memory(last=1)
        assert last.get_text_content() == FOLLOW_UP
        assert store.take() == {"load": 1}
        window = await memory.get_memory(last=3)  # result, answer, follow-up: widened to the call
        blocks = [b.type for m in window for b in m.content]
        assert blocks == ["tool_call", "tool_result", "text", "text"]
        check_native(await memory.get_memory(last=5))

    with_store(body)


def test_state_dict_round_trip():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        await memory.add(UserMsg("user", "remember me"))
        state = memory.state_dict()
        assert state == {"session_id": session}
        assert json.loads(json.dumps(state)) == state

        other = ConvstoreMemory(store, key())
        assert await other.size() == 0
        other.load_state_dict(state)
        assert [m.get_text_content() for m in await other.get_memory()] == ["remember me"]
        with pytest.raises(KeyError):
            other.load_state_dict({})
        other.load_state_dict({}, strict=False)
        assert other.session_id == session

    with_store(body)


def test_agent_state_save_and_load():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        state = await memory.load_state()
        assert (state.session_id, state.context, state.summary) == (session, [], "")
        state.context.extend(tool_turn("call_s1"))
        store.take()
        await memory.save_state()
        assert store.take() == {"append": 1}
        await memory.save_state()
        assert store.take() == {}  # nothing changed

        state.context[-1].content.append(TextBlock(text="One more thing."))  # edited in place
        await memory.save_state()
        assert store.take() == {"replace": 1}

        # compression: a summary and the recent context only
        state.summary, state.context = "The user asked about Paris.", state.context[-1:]
        await memory.save_state()
        assert store.take() == {"replace": 1}
        head = stored(session)[0]
        assert (head["role"], head["metadata"][SUMMARY_KEY]) == ("user", "str")
        state.context.append(UserMsg("user", FOLLOW_UP))
        await memory.save_state()
        assert store.take() == {"append": 1}  # the stored summary is reused as it was

        again = await ConvstoreMemory(store, session).load_state()
        assert again.summary == "The user asked about Paris."
        assert [m.model_dump() for m in again.context] == [m.model_dump() for m in state.context]
        assert await memory.size() == 2
        got = await memory.get_memory()
        assert got[0].get_text_content() == "The user asked about Paris." and len(got) == 3
        assert len(await memory.get_memory(prepend_summary=False)) == 2

        # a summary of blocks keeps its blocks
        state.summary = [TextBlock(text="block summary")]
        await memory.save_state()
        again = await ConvstoreMemory(store, session).load_state(AgentState(session_id="mine"))
        assert again.session_id == "mine"
        assert [b.model_dump() for b in again.summary] == [b.model_dump() for b in state.summary]

    with_store(body)


def test_memory_methods_reach_the_attached_agent():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        await play(store, session)  # another memory wrote the first turn
        model = ScriptedModel(ChatResponse(content=[TextBlock(text=RECALL)], is_last=True),
                              ChatResponse(content=[TextBlock(text="Nothing.")], is_last=True))
        friday = agent(model, memory)
        await friday.reply(UserMsg("user", FOLLOW_UP))
        assert len(friday.state.context) == 4

        question = friday.state.context[0]
        assert await memory.delete([question.id]) == 1
        assert question.id not in [m.id for m in friday.state.context]
        await memory.add(UserMsg("user", "added"), marks="note")
        assert friday.state.context[-1].get_text_content() == "added"
        await friday.reply(UserMsg("user", "Anything else?"))
        assert scenario.QUESTION not in block_texts(model.seen[-1])
        assert "added" in block_texts(model.seen[-1])
        assert [m.id for m in await memory.get_memory()] == [m.id for m in friday.state.context]
        await memory.clear()
        assert friday.state.context == []

    with_store(body)


def test_observed_messages_are_kept_and_a_session_switch_starts_afresh():
    session, other = key(), key()

    async def body(store: CountingStore) -> None:
        await ConvstoreMemory(store, other).add(UserMsg("user", "in the other session"))
        await play(store, session)
        memory = ConvstoreMemory(store, session)
        model = ScriptedModel(ChatResponse(content=[TextBlock(text=RECALL)], is_last=True),
                              ChatResponse(content=[TextBlock(text="Hello again.")], is_last=True))
        friday = agent(model, memory)
        await friday.observe(UserMsg("user", "observed before the first reply"))
        await friday.reply(UserMsg("user", FOLLOW_UP))
        texts = block_texts(model.seen[0])
        assert scenario.QUESTION in texts  # the stored history, then what the agent already had
        assert texts.index(scenario.QUESTION) < texts.index("observed before the first reply")
        assert "observed before the first reply" in scenario.texts(
            ConversationStore(URL).load_messages(ConversationStore(URL).conversation_for(session)))

        memory.load_state_dict({"session_id": other})  # the agent's context belongs to the old session
        await friday.reply(UserMsg("user", "Hi"))
        assert block_texts(model.seen[1]) == ["You are helpful.", "in the other session", "Hi"]
        assert text_of([Msg.model_validate(d) for d in stored(other)])[:2] == ["in the other session", "Hi"]

    with_store(body)


def test_a_conversation_written_in_another_format_is_continued_without_rewriting():
    session = key()
    openai = [{"role": "user", "content": scenario.QUESTION},
              {"role": "assistant", "content": None, "tool_calls": [{
                  "id": "call_o1", "type": "function",
                  "function": {"name": scenario.TOOL, "arguments": json.dumps(scenario.ARGUMENTS)}}]},
              {"role": "tool", "tool_call_id": "call_o1", "content": scenario.RESULT},
              {"role": "assistant", "content": scenario.ANSWER}]
    s = ConversationStore(URL)
    s.append(s.conversation_for(session), openai, format="openai")

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session)
        state = await memory.load_state()
        check_native(state.context)
        store.take()
        await memory.save_state()
        assert store.take() == {}
        model = ScriptedModel(ChatResponse(content=[TextBlock(text=RECALL)], is_last=True))
        await agent(model, memory, state=state).reply(UserMsg("user", FOLLOW_UP))
        check_native(model.seen[0])
        assert store.take() == {"append": 1}
        assert s.load(s.conversation_for(session), format="openai")[:4] == openai

    with_store(body)


def test_a_url_and_a_namespace():
    session = key()

    async def body() -> None:
        memory = ConvstoreMemory(URL, session, namespace="agentscope-tests")
        await memory.add(UserMsg("user", "scoped"))
        assert await memory.size() == 1
        assert await ConvstoreMemory(URL, session).size() == 0  # the default namespace has none
        await memory.close()

    asyncio.run(body())


# --- hand-over to and from another framework's backend ----------------------------------


@pytest.mark.shared
def test_write_shared():
    scenario.require_shared_key()
    with_store(lambda store: play(store, scenario.SHARED_KEY))
    scenario.check_stored(ConversationStore(URL), scenario.SHARED_KEY)


@pytest.mark.shared
def test_read_shared():
    scenario.require_shared_key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, scenario.SHARED_KEY)
        check_native(await memory.get_memory())
        state = await memory.load_state()
        check_native(state.context)

    with_store(body)
    scenario.check_stored(ConversationStore(URL), scenario.SHARED_KEY)


# --- InMemoryMemory 1.x's error words, four event loops (a module of their own) ----------------

from .options_agentscope import *  # noqa: E402,F403 - collected here, in this suite's venv
