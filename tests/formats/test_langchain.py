"""The ``langchain`` format (issue 13): LangChain messages in its three serialized shapes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import detect, get_format, read, write
from store.model import DataBlock, Message, ReasoningBlock, ToolCallBlock, ToolResultBlock, VideoBlock

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "langchain.json").read_text())


def _roundtrip(data):
    return convert(copy.deepcopy(data), from_="langchain", to="langchain", strict=True)


# What langchain-core 1.8.3 writes: dumpd(AIMessage(...)) and ToolMessage(...).model_dump().
DUMPD = [
    {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
     "kwargs": {"content": "Weather in Kyoto?", "type": "human"}},
    {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
     "kwargs": {"content": "", "response_metadata": {"model_name": "gpt"}, "type": "ai", "id": "run-1",
                "tool_calls": [{"name": "f", "args": {"a": 1}, "id": "c1", "type": "tool_call"}],
                "invalid_tool_calls": [{"type": "invalid_tool_call", "id": "c2", "name": "g", "args": "{bad",
                                        "error": "oops"}],
                "usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}},
    {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
     "kwargs": {"content": "res", "type": "tool", "tool_call_id": "c1", "artifact": {"x": 1}, "status": "error"}},
]
BARE = [
    {"content": "hi", "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": None, "id": None},
    {"content": "", "additional_kwargs": {}, "response_metadata": {}, "type": "ai", "name": None, "id": None,
     "tool_calls": [{"name": "f", "args": {}, "id": "c1", "type": "tool_call"}], "invalid_tool_calls": [],
     "usage_metadata": None},
    {"content": "ok", "additional_kwargs": {}, "response_metadata": {}, "type": "tool", "name": "f", "id": None,
     "tool_call_id": "c1", "artifact": None, "status": "success"},
]


def test_fixture_round_trips_exactly_and_is_detected():
    assert detect(FIXTURE) == "langchain"
    assert _roundtrip(FIXTURE) == FIXTURE


@pytest.mark.parametrize("data", [DUMPD, BARE], ids=["dumpd", "bare"])
def test_dumpd_and_bare_dicts_are_read_and_written_back_in_their_shape(data):
    assert detect(data) == "langchain"
    assert _roundtrip(data) == data
    messages = read(copy.deepcopy(data), "langchain")
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    calls = [b for b in messages[1].content if isinstance(b, ToolCallBlock)]
    assert calls[0].call_id == "c1" and isinstance(calls[0].arguments, dict)


def test_the_fixture_maps_to_canonical_blocks():
    messages = read(copy.deepcopy(FIXTURE), "langchain")
    v1 = messages[2]
    assert [b.kind for b in v1.content] == ["reasoning", "text", "tool_call", "tool_call"]  # one call, not two
    assert isinstance(v1.content[0], ReasoningBlock) and v1.content[0].signature == "sig-abc"
    assert v1.model == "gpt-5" and v1.usage.input_tokens == 412 and v1.external_id == "run-a1"
    error = next(b for m in messages for b in m.content if isinstance(b, ToolResultBlock) and b.call_id == "call_flight")
    assert error.is_error
    invalid = next(b for m in messages for b in m.content if isinstance(b, ToolCallBlock) and b.call_id == "call_bad")
    assert invalid.arguments_raw == "{city: 'Kyoto'" and invalid.parse_error
    server = [b for b in messages[8].content if isinstance(b, DataBlock)]
    assert [b.data["type"] for b in server] == ["server_tool_call", "server_tool_result"]
    legacy = [b for b in messages[11].content if isinstance(b, ToolCallBlock)]
    function_result = messages[12].content[0]
    assert legacy[0].call_id == function_result.call_id and legacy[0].call_id_synthesized
    assert messages[6].source_role == "critic"


def test_stream_reader_gives_what_the_whole_list_gives():
    fmt = get_format("langchain")
    chunks = [copy.deepcopy(FIXTURE[i:i + 4]) for i in range(0, len(FIXTURE), 4)]
    streamed = [m for chunk in fmt.to_canonical_stream(chunks) for m in chunk]
    assert streamed == read(copy.deepcopy(FIXTURE), "langchain")


def test_a_bad_message_is_refused_by_index_and_field():
    data = copy.deepcopy(FIXTURE)
    data[3]["data"].pop("tool_call_id")
    with pytest.raises(SchemaError) as info:
        read(data, "langchain")
    assert info.value.problems[0][0] == 3 and "tool_call_id" in info.value.problems[0][1]


def test_losses_name_the_field():
    losses = []
    convert(copy.deepcopy(FIXTURE), from_="langchain", to="anthropic", on_loss=losses.append)
    assert (3, "extras.langchain.artifact", "dropped") in {(x.index, x.field, x.action) for x in losses}
    msgs = [Message(role="user", content=[VideoBlock(url="https://example.com/v.mp4")], metadata={"k": 1})]
    value, report = write(msgs, "langchain")
    assert value[0]["data"]["content"] == "[video: https://example.com/v.mp4]"
    assert {(x.field, x.action) for x in report} == {("video", "approximated"), ("metadata", "dropped")}
    with pytest.raises(LossError):
        write(msgs, "langchain", strict=True)


def test_arguments_that_are_no_object_become_an_invalid_tool_call():
    msgs = [Message(role="assistant", content=[ToolCallBlock(call_id="c", name="f", arguments=[1, 2])])]
    value, report = write(msgs, "langchain")
    assert value[0]["data"]["invalid_tool_calls"] == [
        {"type": "invalid_tool_call", "id": "c", "name": "f", "args": "[1,2]", "error": "arguments are not a JSON object"}]
    assert [(x.field, x.action) for x in report] == [("tool_call.arguments", "approximated")]


def test_other_formats_do_not_claim_langchain_input_and_langchain_claims_none_of_theirs():
    for data in (FIXTURE, DUMPD, BARE):
        assert detect(data) == "langchain"
    assert not get_format("langchain").looks_like([{"role": "user", "content": "hi"}])
    assert not get_format("langchain").looks_like([{"type": "human", "content": "hi"}])  # too little to tell


# --- hypothesis: any messages_to_dict list of these kinds round-trips exactly ----------------------

text = st.text(max_size=20)
json_scalar = st.none() | st.booleans() | st.integers(-10**6, 10**6) | text
args = st.dictionaries(st.text(min_size=1, max_size=5), json_scalar, max_size=3)
ident = st.none() | st.text(min_size=1, max_size=8)


def _data(kind, content, **more):
    return {"type": kind, "data": {"content": content, "additional_kwargs": {}, "response_metadata": {},
                                   "type": kind, "name": None, "id": None, **more}}


content = text | st.lists(text.map(lambda t: {"type": "text", "text": t}) | text, max_size=3)
human = st.builds(lambda c, n: {**_data("human", c), "data": {**_data("human", c)["data"], "name": n}}, content, ident)
system = st.builds(lambda c: _data("system", c), content)
call = st.builds(lambda n, a, i: {"name": n, "args": a, "id": i, "type": "tool_call"}, st.text(max_size=8), args,
                 st.text(min_size=1, max_size=8))
ai = st.builds(lambda c, calls, i: _data("ai", c, id=i, tool_calls=calls, invalid_tool_calls=[], usage_metadata=None),
               content, st.lists(call, max_size=3, unique_by=lambda c: c["id"]), ident)
tool = st.builds(lambda c, i, s: _data("tool", c, tool_call_id=i, artifact=None, status=s), content,
                 st.text(max_size=8), st.sampled_from(["success", "error"]))
chat = st.builds(lambda c, r: _data("chat", c, role=r), content, st.text(max_size=8))


@settings(max_examples=150, deadline=None)
@given(st.lists(human | system | ai | tool | chat, min_size=1, max_size=6))
def test_any_langchain_list_round_trips_exactly(data):
    assert _roundtrip(data) == data


def test_a_developer_message_keeps_its_role_as_langchain_openai_marks_it():
    """An OpenAI developer message is a SystemMessage marked ``additional_kwargs.__openai_role__``
    (langchain-openai's mark), and one so marked reads back as a developer message: the role went
    without a word (system, reported lossless)."""
    from store import convert

    chat = [{"role": "developer", "content": "be brief"}, {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"}]
    losses: list = []
    messages = convert(chat, from_="openai", to="langchain", on_loss=losses.append)
    assert losses == []
    assert [m["data"]["additional_kwargs"] for m in messages[:2]] == [{"__openai_role__": "developer"}, {}]
    assert convert(messages, from_="langchain", to="openai") == chat
    assert convert(messages, from_="langchain", to="langchain") == messages


def test_a_bad_usage_count_is_named_where_it_is():
    """A count the canonical usage takes is checked with the input: its error names message 2 and the
    field (it named message 0 of the canonical list, in pydantic's words)."""
    from store import convert
    from store.errors import SchemaError

    def item(kind, **data):
        return {"type": kind, "data": {"content": "x", "additional_kwargs": {}, "response_metadata": {}, "type": kind,
                                       "name": None, "id": None, **data}}

    bad = [item("system"), item("human"), item("ai", tool_calls=[], invalid_tool_calls=[],
                                               usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 1.5})]
    with pytest.raises(SchemaError, match=r"message 2, field usage_metadata\.total_tokens"):
        convert(bad, from_="langchain", to="openai")
