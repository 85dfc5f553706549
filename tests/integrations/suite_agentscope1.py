"""store.integrations.agentscope with the real agentscope 1.0.21 (the ``MemoryBase`` API).

Under agentscope 1.x ``ConvstoreMemory`` is a ``MemoryBase`` storing ``Msg.to_dict()``
messages (format ``agentscope``). A ``ReActAgent`` with a scripted ``ChatModelBase`` (no
network) and a real tool in a ``Toolkit`` plays the scenario with it as its memory; a
second agent on the same session sees the history; a structured-output reply leaves no
hint behind. Then every ``MemoryBase`` method is checked on its own, with the store calls
each one makes. Runs in the int-agentscope1 venv (tests/test_integrations.py), on the
database in CONVSTORE_TEST_URL. The hand-over ring uses the 2.x suite, not this one.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from functools import partial
from typing import Any

import pytest
from agentscope.agent import ReActAgent
from agentscope.agent._react_agent import _MemoryMark  # the marks ReActAgent passes (a str Enum)
from agentscope.formatter import OpenAIChatFormatter
from agentscope.memory import MemoryBase
from agentscope.message import Msg, TextBlock, ToolResultBlock, ToolUseBlock
from agentscope.model import ChatModelBase, ChatResponse
from agentscope.token import TokenCounterBase
from agentscope.tool import Toolkit, ToolResponse
from pydantic import BaseModel

from store import AsyncConversationStore, ConversationStore
from store.integrations.agentscope import FORMAT, MARKS_KEY, ConvstoreMemory

from . import scenario

URL = scenario.URL
FOLLOW_UP = "What did I ask you?"
RECALL = "You asked about the weather in Paris."


def key() -> str:
    return f"agentscope1-{uuid.uuid4().hex}"


CountingStore = scenario.CountingStore
with_store = partial(scenario.with_store, store_class=CountingStore)


def stored(session: str) -> list[dict[str, Any]]:
    s = ConversationStore(URL)
    return s.load(s.conversation_for(session), format=FORMAT)


# --- a real agent with a scripted model -------------------------------------------------


class ScriptedModel(ChatModelBase):
    """Answers with the next scripted response; records the (OpenAI-formatted) prompts."""

    def __init__(self, *script: ChatResponse) -> None:
        super().__init__(model_name="scripted", stream=False)
        self.script = list(script)
        self.seen: list[list[dict[str, Any]]] = []

    async def __call__(self, messages: list[dict[str, Any]], tools: Any = None, tool_choice: Any = None,
                       **kwargs: Any) -> ChatResponse:
        self.seen.append(json.loads(json.dumps(messages)))
        return self.script.pop(0)


async def get_weather(city: str) -> ToolResponse:
    """Get the weather of a city.

    Args:
        city (str): The city name.
    """
    return ToolResponse(content=[TextBlock(type="text", text=scenario.get_weather(city))])


def scenario_model() -> ScriptedModel:
    call = ToolUseBlock(type="tool_use", id=f"call_{uuid.uuid4().hex[:8]}", name=scenario.TOOL,
                        input=dict(scenario.ARGUMENTS))
    return ScriptedModel(ChatResponse(content=[call]),
                         ChatResponse(content=[TextBlock(type="text", text=scenario.ANSWER)]))


def agent(model: ChatModelBase, memory: ConvstoreMemory, **kwargs: Any) -> ReActAgent:
    toolkit = Toolkit()
    toolkit.register_tool_function(get_weather)
    friday = ReActAgent(name="Friday", sys_prompt="You are helpful.", model=model,
                        formatter=OpenAIChatFormatter(), toolkit=toolkit, memory=memory, **kwargs)
    friday.set_console_output_enabled(False)
    return friday


async def play(store: AsyncConversationStore | str, session: str) -> Msg:
    """The scenario, played by a ReActAgent whose memory is ConvstoreMemory."""
    memory = ConvstoreMemory(store, session_id=session)
    try:
        reply = await agent(scenario_model(), memory)(Msg("user", scenario.QUESTION, "user"))
    finally:
        await memory.close()
    assert reply.get_text_content() == scenario.ANSWER
    return reply


def text_of(msgs: list[Msg]) -> list[str | None]:
    return [m.get_text_content() for m in msgs]


def block_texts(msgs: list[Msg]) -> list[str]:
    out = []
    for m in msgs:
        blocks = [{"type": "text", "text": m.content}] if isinstance(m.content, str) else m.content
        for b in blocks:
            if b["type"] == "text":
                out.append(b["text"])
            elif b["type"] == "tool_result":
                out.append(b["output"] if isinstance(b["output"], str) else " ".join(
                    p["text"] for p in b["output"] if p["type"] == "text"))
    return out


def check_native(msgs: list[Msg]) -> None:
    """AgentScope 1.x messages hold the whole scripted turn, the call linked to its result."""
    texts = block_texts(msgs)
    assert any(scenario.QUESTION in t for t in texts), texts
    assert any(scenario.ANSWER in t for t in texts), texts
    assert any(scenario.RESULT in t for t in texts), texts
    calls = [b for m in msgs for b in m.get_content_blocks("tool_use")]
    assert [(c["name"], c["input"]) for c in calls] == [(scenario.TOOL, scenario.ARGUMENTS)]
    results = [b for m in msgs for b in m.get_content_blocks("tool_result")]
    assert [r["id"] for r in results] == [calls[0]["id"]]


def prompt_texts(prompt: list[dict[str, Any]]) -> list[str]:
    """The texts in an OpenAI-formatted prompt, tool results included."""
    out = []
    for m in prompt:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p["text"] for p in content if p.get("type") == "text")
    return out


def test_it_is_a_memory_base():
    memory = ConvstoreMemory(URL, session_id=key())
    assert isinstance(memory, MemoryBase)
    assert FORMAT == "agentscope"
    asyncio.run(memory.close())


def test_agent_plays_the_scenario_and_a_second_agent_sees_it():
    session = key()
    asyncio.run(play(URL, session))
    msgs = [Msg.from_dict(d) for d in stored(session)]
    # the agent's own shape: question, call, result (a system message), answer
    assert [(m.role, m.name) for m in msgs] == [("user", "user"), ("assistant", "Friday"),
                                                ("system", "system"), ("assistant", "Friday")]
    check_native(msgs)
    scenario.check_stored(ConversationStore(URL), session)

    async def body(store: CountingStore) -> None:
        # a new agent (as after a restart) on the same session: the model is shown the history
        model = ScriptedModel(ChatResponse(content=[TextBlock(type="text", text=RECALL)]))
        reply = await agent(model, ConvstoreMemory(store, session_id=session))(Msg("user", FOLLOW_UP, "user"))
        assert reply.get_text_content() == RECALL
        [prompt] = model.seen
        assert [m["role"] for m in prompt] == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert prompt[2]["tool_calls"][0]["function"]["name"] == scenario.TOOL
        assert json.loads(prompt[2]["tool_calls"][0]["function"]["arguments"]) == scenario.ARGUMENTS
        assert scenario.RESULT in json.dumps(prompt[3])
        assert prompt_texts(prompt)[-1] == FOLLOW_UP
        # add(user) and add(answer): a load (ids already stored are skipped) and an append each;
        # get_memory and delete_by_mark (no hint stored: nothing written) one load each
        assert store.take() == {"load": 4, "append": 2}
        s = ConversationStore(URL)
        assert scenario.texts(s.load_messages(s.conversation_for(session)))[-2:] == [FOLLOW_UP, RECALL]
        check_native(await ConvstoreMemory(store, session_id=session).get_memory())

    with_store(body)


class Where(BaseModel):
    city: str


def test_a_structured_reply_leaves_no_hint_behind():
    session = key()

    async def body(store: CountingStore) -> None:
        # the model fills the structured output first; the agent adds a hint (marked "hint")
        # asking for a text reply, shows it to the model once, then deletes it by its mark
        model = ScriptedModel(
            ChatResponse(content=[ToolUseBlock(type="tool_use", id="call_s1", name="generate_response",
                                               input={"city": "Paris"})]),
            ChatResponse(content=[TextBlock(type="text", text=scenario.ANSWER)]))
        friday = agent(model, ConvstoreMemory(store, session_id=session))
        reply = await friday(Msg("user", scenario.QUESTION, "user"), structured_model=Where)
        assert reply.metadata == {"city": "Paris"}
        assert any("<system-hint>" in t for t in prompt_texts(model.seen[1]))
        texts = block_texts([Msg.from_dict(d) for d in stored(session)])
        assert texts[0] == scenario.QUESTION and texts[-1] == scenario.ANSWER
        assert not any("<system-hint>" in t for t in texts)
        assert all(MARKS_KEY not in d["metadata"] for d in stored(session))
        assert store.calls["replace"] == 1  # the hint's deletion

    with_store(body)


class Overflowing(TokenCounterBase):
    """A token counter by which every prompt is too long: the agent always compresses."""

    async def count(self, messages: list[dict], **kwargs: Any) -> int:
        return 10**6


SUMMARY = {"task_overview": "Weather in Paris", "current_state": "answered: sunny, 21C",
           "important_discoveries": "-", "next_steps": "-", "context_to_preserve": "-"}


def test_the_agent_compresses_by_marking_messages():
    session = key()

    async def body(store: CountingStore) -> None:
        await play(store, session)
        memory = ConvstoreMemory(store, session_id=session)
        summarizer = ScriptedModel(ChatResponse(content=[], metadata=SUMMARY))
        model = ScriptedModel(ChatResponse(content=[TextBlock(type="text", text=RECALL)]))
        config = ReActAgent.CompressionConfig(enable=True, agent_token_counter=Overflowing(),
                                              trigger_threshold=0, keep_recent=1,
                                              compression_model=summarizer)
        await agent(model, memory, compression_config=config)(Msg("user", FOLLOW_UP, "user"))
        # the model saw the summary and the follow-up, not the compressed turn
        [prompt] = model.seen
        assert [m["role"] for m in prompt] == ["system", "user", "user"]
        texts = prompt_texts(prompt)
        assert "answered: sunny, 21C" in texts[1] and texts[2] == FOLLOW_UP
        assert scenario.QUESTION not in texts
        # the compressed messages are kept, marked: the whole turn is still in the store
        assert [d["metadata"].get(MARKS_KEY) for d in stored(session)] == [["compressed"]] * 4 + [None, None]
        scenario.check_stored(ConversationStore(URL), session)
        assert text_of(await memory.get_memory(exclude_mark="compressed", prepend_summary=False)) == [
            FOLLOW_UP, RECALL]
        # the summary is the memory object's state (as in InMemoryMemory): it travels in state_dict
        assert "answered: sunny, 21C" in memory.state_dict()["_compressed_summary"]

    with_store(body)


# --- the MemoryBase methods ------------------------------------------------------------------


def test_add_get_memory_size():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        assert await memory.get_memory() == [] and await memory.size() == 0
        first = Msg("user", "one", "user")
        second = Msg("Friday", [TextBlock(type="text", text="two")], "assistant", metadata={"k": [1, 2]})
        third = Msg("user", "three", "user")
        store.take()
        await memory.add(first)
        await memory.add([second, third])
        assert store.take() == {"load": 2, "append": 2}  # the load: ids already stored are skipped
        got = await memory.get_memory()
        assert [m.to_dict() for m in got] == [m.to_dict() for m in (first, second, third)]
        assert await memory.size() == 3

        await memory.add([first, Msg("user", "four", "user")])  # first is already there
        assert text_of(await memory.get_memory()) == ["one", "two", "three", "four"]
        await memory.add(first, allow_duplicates=True)
        await memory.add(None)
        await memory.add([])
        assert await memory.size() == 5
        assert text_of(await memory.get_memory()) == ["one", "two", "three", "four", "one"]
        store.take()
        await memory.add(Msg("user", "five", "user"), allow_duplicates=True)
        assert store.take() == {"append": 1}
        got[0].content = "changed"  # what get_memory returns is a copy
        assert text_of(await memory.get_memory())[0] == "one"

    with_store(body)


def test_marks_are_kept_in_message_metadata():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        a, b, c = Msg("user", "a", "user"), Msg("Friday", "b", "assistant"), Msg("user", "c", "user")
        await memory.add(a)
        await memory.add(b, marks=_MemoryMark.HINT)  # as ReActAgent passes them
        await memory.add(c, marks=["hint", "important"])
        marks = [d["metadata"].get(MARKS_KEY) for d in stored(session)]
        assert marks == [None, ["hint"], ["hint", "important"]]
        assert all(type(m) is str for m in marks[1])  # stored as plain strings
        assert text_of(await memory.get_memory(mark="hint")) == ["b", "c"]
        assert text_of(await memory.get_memory(mark=_MemoryMark.HINT)) == ["b", "c"]
        assert text_of(await memory.get_memory(exclude_mark="important")) == ["a", "b"]
        assert text_of(await memory.get_memory(mark="hint", exclude_mark="important")) == ["b"]
        assert all(MARKS_KEY not in m.metadata for m in await memory.get_memory())  # hidden from callers
        assert await memory.size() == 3

        store.take()
        assert await memory.update_messages_mark("seen", msg_ids=[a.id]) == 1
        assert store.take() == {"load": 1, "replace": 1}
        assert await memory.update_messages_mark(_MemoryMark.COMPRESSED, old_mark="hint") == 2  # hint -> compressed
        assert await memory.update_messages_mark(None, old_mark="important") == 1
        assert await memory.update_messages_mark("seen", msg_ids=[a.id]) == 0  # already there
        assert await memory.update_messages_mark(None, old_mark="absent") == 0
        assert [d["metadata"].get(MARKS_KEY) for d in stored(session)] == [
            ["seen"], ["compressed"], ["compressed"]]
        assert text_of(await memory.get_memory(exclude_mark=_MemoryMark.COMPRESSED)) == ["a"]
        assert await memory.update_messages_mark(None, old_mark="seen") == 1
        assert stored(session)[0]["metadata"] == {}  # the last mark gone: no empty list left

        store.take()
        assert await memory.delete_by_mark([_MemoryMark.COMPRESSED, "absent"]) == 2
        assert store.take() == {"load": 1, "replace": 1}
        assert text_of(await memory.get_memory()) == ["a"]
        store.take()
        assert await memory.delete_by_mark(_MemoryMark.HINT) == 0
        assert store.take() == {"load": 1}  # nothing to change: no write
        with pytest.raises(TypeError):
            await memory.delete_by_mark(42)  # type: ignore[arg-type]

    with_store(body)


def test_delete_by_id_is_one_atomic_replace():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        msgs = [Msg("user", f"m{i}", "user") for i in range(4)]
        await memory.add(msgs)
        store.take()
        assert await memory.delete([msgs[1].id, msgs[3].id, "no-such-id"]) == 2
        assert store.take() == {"load": 1, "replace": 1}
        assert [m.id for m in await memory.get_memory()] == [msgs[0].id, msgs[2].id]
        store.take()
        assert await memory.delete(["no-such-id"]) == 0
        assert store.take() == {"load": 1}

    with_store(body)


def test_clear_empties_the_conversation():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        await memory.add([Msg("user", "x", "user"), Msg("Friday", "y", "assistant")])
        cid = await memory.conversation_id()
        store.take()
        await memory.clear()
        assert store.take() == {"truncate": 1}
        assert await memory.size() == 0 and await memory.get_memory() == []
        assert ConversationStore(URL).conversation_for(session) == cid  # the conversation stays
        await memory.add(Msg("user", "again", "user"))
        assert text_of(await memory.get_memory()) == ["again"]

    with_store(body)


def tool_turn(call_id: str) -> list[Msg]:
    """The 1.x shape of a tool round trip: question, call, result (a system message), answer."""
    return [Msg("user", scenario.QUESTION, "user"),
            Msg("Friday", [ToolUseBlock(type="tool_use", id=call_id, name=scenario.TOOL,
                                        input=dict(scenario.ARGUMENTS))], "assistant"),
            Msg("system", [ToolResultBlock(type="tool_result", id=call_id, name=scenario.TOOL,
                                           output=[TextBlock(type="text", text=scenario.RESULT)])], "system"),
            Msg("Friday", [TextBlock(type="text", text=scenario.ANSWER)], "assistant")]


def test_window_keeps_tool_calls_with_their_results():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        turn = tool_turn("call_w1")
        await memory.add(turn + [Msg("user", FOLLOW_UP, "user")])
        scenario.check_stored(ConversationStore(URL), session)
        store.take()
        [last] = await memory.get_memory(last=1)
        assert last.get_text_content() == FOLLOW_UP
        assert store.take() == {"load": 1}
        window = await memory.get_memory(last=3)  # result, answer, follow-up: widened to the call
        assert [m.id for m in window] == [m.id for m in turn[1:]] + [window[-1].id]
        assert [(m.role, m.name) for m in window[:2]] == [("assistant", "Friday"), ("system", "system")]
        assert [m.to_dict() for m in window[:3]] == [m.to_dict() for m in turn[1:]]
        check_native(await memory.get_memory(last=5))
        assert len(await memory.get_memory(last=2)) == 2  # answer and follow-up: no call to keep

    with_store(body)


def test_state_dict_round_trip():
    session = key()

    async def body(store: CountingStore) -> None:
        memory = ConvstoreMemory(store, session_id=session)
        await memory.add(Msg("user", "remember me", "user"))
        await memory.update_compressed_summary("The user wants to be remembered.")
        state = memory.state_dict()
        assert state == {"_compressed_summary": "The user wants to be remembered.", "session_id": session}
        assert json.loads(json.dumps(state)) == state
        # the summary (the object's, as in InMemoryMemory) comes first, unless asked not to
        assert text_of(await memory.get_memory()) == ["The user wants to be remembered.", "remember me"]
        assert text_of(await memory.get_memory(prepend_summary=False)) == ["remember me"]
        assert await memory.size() == 1

        other = ConvstoreMemory(store, session_id=key())
        assert await other.size() == 0
        other.load_state_dict(state)
        assert other.session_id == session
        assert text_of(await other.get_memory()) == ["The user wants to be remembered.", "remember me"]
        await other.add(Msg("user", "added after the switch", "user"))
        assert text_of(await memory.get_memory(prepend_summary=False)) == ["remember me", "added after the switch"]
        with pytest.raises(KeyError):
            other.load_state_dict({"_compressed_summary": ""})
        other.load_state_dict({"_compressed_summary": ""}, strict=False)
        assert other.session_id == session

    with_store(body)


def test_the_agent_state_dict_holds_the_session():
    session = key()

    async def body(store: CountingStore) -> None:
        await play(store, session)
        friday = agent(ScriptedModel(), ConvstoreMemory(store, session_id=session))
        state = friday.state_dict()
        assert state["memory"] == {"_compressed_summary": "", "session_id": session}

        # another agent restored from that state dict continues the same conversation
        model = ScriptedModel(ChatResponse(content=[TextBlock(type="text", text=RECALL)]))
        restored = agent(model, ConvstoreMemory(store, session_id=key()))
        restored.load_state_dict(json.loads(json.dumps(state)))
        await restored(Msg("user", FOLLOW_UP, "user"))
        assert scenario.QUESTION in prompt_texts(model.seen[0])
        assert text_of([Msg.from_dict(d) for d in stored(session)])[-2:] == [FOLLOW_UP, RECALL]

    with_store(body)


def test_a_conversation_written_in_another_format_is_read_and_edited():
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
        memory = ConvstoreMemory(store, session_id=session)
        check_native(await memory.get_memory())
        model = ScriptedModel(ChatResponse(content=[TextBlock(type="text", text=RECALL)]))
        await agent(model, memory)(Msg("user", FOLLOW_UP, "user"))
        assert scenario.RESULT in json.dumps(model.seen[0])
        assert s.load(s.conversation_for(session), format="openai")[:4] == openai

        # its messages have no AgentScope ids: each gets one that is the same on every load,
        # so the edits by id (the agent's compression marks by id) find them
        ids = [m.id for m in await memory.get_memory()]
        assert ids == [m.id for m in await memory.get_memory()] and len(set(ids)) == 6
        assert await memory.update_messages_mark("compressed", msg_ids=ids[:4]) == 4
        assert [m.id for m in await memory.get_memory()] == ids  # now stored with them
        assert text_of(await memory.get_memory(exclude_mark="compressed")) == [FOLLOW_UP, RECALL]
        assert await memory.delete([ids[0]]) == 1
        assert [m.id for m in await memory.get_memory()] == ids[1:]

    with_store(body)


def test_a_url_and_a_namespace():
    session = key()

    async def body() -> None:
        memory = ConvstoreMemory(URL, session_id=session, namespace="agentscope1-tests")
        await memory.add(Msg("user", "scoped", "user"))
        assert await memory.size() == 1
        default = ConvstoreMemory(URL, session_id=session)
        assert await default.size() == 0  # the default namespace has none
        await memory.close()
        await default.close()

    asyncio.run(body())


# --- InMemoryMemory's arguments, results and errors, four event loops (a module of their own) -

from .options_agentscope1 import *  # noqa: E402,F403 - collected here, in this suite's venv
