"""The autogen-core LLM message adapter on its own (no database)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import autogen_core, read, write
from store.model import (
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

from ..samples import OPENAI_CHAT, PNG

FIXTURE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "autogen-core.json").read_text(encoding="utf-8")
)
AGENTCHAT = json.loads((Path(__file__).parents[1] / "fixtures" / "autogen.json").read_text(encoding="utf-8"))


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def test_fixture_round_trip_is_exact():
    assert convert(fixture(), from_="autogen-core", to="autogen-core") == FIXTURE


def test_model_context_state_is_read():
    assert read({"messages": fixture()}, "autogen-core") == read(fixture(), "autogen-core")


def test_fixture_covers_every_message_type():
    assert {m["type"] for m in FIXTURE} == autogen_core.TYPES
    assert any(
        m["type"] == "AssistantMessage" and m["thought"] and isinstance(m["content"], list) for m in FIXTURE
    )


def test_canonical_form():
    msgs = read(fixture(), "autogen-core")
    assert msgs[0].role == "system" and msgs[0].content == [
        TextBlock(text="You are a helpful weather assistant.")
    ]
    assert msgs[1].role == "user" and msgs[1].name == "user" and msgs[1].source_type == "UserMessage"
    _text, image = msgs[2].content
    assert (
        isinstance(image, ImageBlock)
        and image.media_type == "image/png"
        and image.data.startswith(b"\x89PNG")
    )
    thought, *calls = msgs[3].content
    assert thought == ReasoningBlock(text="I will look both cities up.")
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_kyoto", "get_weather", {"city": "Kyoto"}),
        ("call_paris", "get_weather", {"city": "Paris", "unit": "C"}),
    ]
    assert msgs[4].role == "tool" and all(isinstance(b, ToolResultBlock) for b in msgs[4].content)
    assert [b.is_error for b in msgs[4].content] == [False, True]
    assert [type(b) for b in msgs[6].content] == [ReasoningBlock, TextBlock]
    assert all(m.external_id is None and m.created_at is None for m in msgs)


def test_defaults_left_out_and_unknown_keys_round_trip():
    data = [
        {"content": "hi", "source": "u", "type": "UserMessage", "x": 1},
        {
            "content": [{"id": "c", "arguments": "{}", "name": "f", "extra": True}],
            "source": "a",
            "type": "AssistantMessage",
        },
        {
            "content": [{"content": "r", "name": "f", "call_id": "c"}],
            "type": "FunctionExecutionResultMessage",
        },
        {"content": [], "thought": None, "source": "a", "type": "AssistantMessage"},
        {"content": [], "source": "u", "type": "UserMessage"},
        {"content": "", "thought": "only thinking", "source": "a", "type": "AssistantMessage"},
        {"content": [{"data": PNG[:-2] + "\n=="}], "source": "u", "type": "UserMessage"},
    ]
    assert convert(copy.deepcopy(data), from_="autogen-core", to="autogen-core") == data


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([{"content": "x", "type": "SystemMessage"}, {"content": "x", "type": "UserMessage"}], 1, "source"),
        ([{"content": "x", "type": "ToolMessage"}], 0, "type"),
        ([{"content": "x"}], 0, "type"),
        (
            [{"content": [{"id": "a", "name": "f"}], "source": "a", "type": "AssistantMessage"}],
            0,
            "content[0].arguments",
        ),
        (
            [{"content": [{"content": "r", "name": "f"}], "type": "FunctionExecutionResultMessage"}],
            0,
            "content[0].call_id",
        ),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "autogen-core")
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path, info.value.problems
    assert f"message {index}" in str(info.value) and "autogen-core" in str(info.value)


def test_looks_like():
    assert autogen_core.looks_like(FIXTURE) and autogen_core.looks_like({"messages": FIXTURE})
    assert not autogen_core.looks_like(OPENAI_CHAT)
    assert not autogen_core.looks_like(AGENTCHAT)
    assert not autogen_core.looks_like([])


def test_openai_into_autogen_core():
    value, losses = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "autogen-core")
    assert [m["type"] for m in value] == [
        "SystemMessage",
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "FunctionExecutionResultMessage",  # both results, as autogen writes them (issue 16.5a)
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "AssistantMessage",
    ]
    assert [r["call_id"] for r in value[4]["content"]] == ["call_kyoto", "call_paris"]
    assert [(c["id"], c["name"], c["arguments"]) for c in value[3]["content"]] == [
        ("call_kyoto", "get_weather", '{"city": "Kyoto"}'),
        ("call_paris", "get_weather", '{"city": "Paris", "unit": "C"}'),
    ]
    assert value[2]["content"][1] == {"data": PNG}
    assert value[2]["content"][2] == "[image: https://example.com/map.png]"  # no URL images in autogen
    fields = {(loss.index, loss.field) for loss in losses}
    assert {(0, "name"), (2, "image"), (2, "audio"), (2, "file")} <= fields
    back = read(convert(value, from_="autogen-core", to="openai"), "openai")
    calls = [
        (b.call_id, b.name, b.arguments_raw) for m in back for b in m.content if isinstance(b, ToolCallBlock)
    ]
    assert calls == [
        ("call_kyoto", "get_weather", '{"city": "Kyoto"}'),
        ("call_paris", "get_weather", '{"city": "Paris", "unit": "C"}'),
        ("call_bad", "search", "{not json"),
    ]
    with pytest.raises(LossError):
        write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "autogen-core", strict=True)


def test_calls_are_answered_before_the_next_message():
    msgs = [
        Message(
            role="assistant",
            content=[ToolCallBlock(call_id="a", name="f"), ToolCallBlock(call_id="b", name="g")],
        ),
        Message(role="user", content=[TextBlock(text="meanwhile")]),
        Message(role="tool", content=[ToolResultBlock(call_id="a", output="A")]),
        Message(role="tool", content=[ToolResultBlock(call_id="zzz", output="stray")]),
    ]
    value, losses = write(msgs, "autogen-core")
    assert [m["type"] for m in value] == [
        "AssistantMessage",
        "FunctionExecutionResultMessage",
        "UserMessage",
        "UserMessage",
    ]
    assert value[1]["content"] == [
        {"content": "A", "name": "f", "call_id": "a", "is_error": False},
        {"content": autogen_core.NO_RESULT, "name": "g", "call_id": "b", "is_error": True},
    ]
    assert value[3]["content"] == "[tool result of call (zzz): stray]"
    assert [(loss.index, loss.field, loss.action) for loss in losses] == [
        (0, "tool_result", "approximated"),
        (0, "tool_result", "approximated"),
        (3, "tool_result", "approximated"),
    ]


def test_text_beside_calls_becomes_the_thought():
    msgs = [
        Message(
            role="assistant",
            content=[
                ReasoningBlock(text="think"),
                TextBlock(text="calling"),
                ToolCallBlock(call_id="a", name="f", arguments={"x": 1}),
            ],
        )
    ]
    value, losses = write(msgs, "autogen-core")
    assert value == [
        {
            "content": [{"id": "a", "arguments": '{"x":1}', "name": "f"}],
            "thought": "think\ncalling",
            "source": "assistant",
            "type": "AssistantMessage",
        }
    ]
    assert [(loss.field, loss.action) for loss in losses] == [("text", "approximated")]


def test_agentchat_events_that_are_no_model_input_are_dropped_and_reported():
    value, losses = write(read(copy.deepcopy(AGENTCHAT), "autogen"), "autogen-core")
    dropped = {loss.index for loss in losses if loss.field == "message"}
    kinds = {AGENTCHAT[i]["type"] for i in dropped}
    assert kinds == {"ModelClientStreamingChunkEvent", "UserInputRequestedEvent", "SelectSpeakerEvent"}
    assert len(value) == len(AGENTCHAT) - len(dropped)


# --- property-based ------------------------------------------------------------------------

text = st.text(max_size=12)
ids = st.text(alphabet="abcdef_0123456789", min_size=1, max_size=6)
call = st.builds(
    lambda i, n, a: {"id": i, "arguments": a, "name": n}, ids, ids, st.sampled_from(['{"a": 1}', "{x"])
)
system = st.builds(lambda c: {"content": c, "type": "SystemMessage"}, text)
user = st.builds(
    lambda c, s: {"content": c, "source": s, "type": "UserMessage"},
    text | st.lists(text | st.just({"data": PNG}), max_size=3),
    ids,
)
assistant = st.builds(
    lambda c, t, s: {"content": c, "thought": t, "source": s, "type": "AssistantMessage"},
    text,
    st.none() | text,
    ids,
)


@st.composite
def conversations(draw):
    """Valid contexts: every call answered right after the message that makes it."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        out.append(draw(st.one_of(system, user, assistant)))
        calls = draw(st.lists(call, max_size=2, unique_by=lambda c: c["id"]))
        if calls:
            out.append(
                {
                    "content": calls,
                    "thought": draw(st.none() | text),
                    "source": "a",
                    "type": "AssistantMessage",
                }
            )
            results = [
                {
                    "content": draw(text),
                    "name": c["name"],
                    "call_id": c["id"],
                    "is_error": draw(st.booleans()),
                }
                for c in calls
            ]
            out.append({"content": results, "type": "FunctionExecutionResultMessage"})
    return out


@settings(max_examples=80, deadline=None)
@given(conversations())
def test_any_valid_context_round_trips(data):
    assert convert(copy.deepcopy(data), from_="autogen-core", to="autogen-core") == data


junk = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["type", "source", "content", "thought"]),
            junk | st.sampled_from(sorted(autogen_core.TYPES)),
            max_size=4,
        ),
        max_size=3,
    )
)
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="autogen-core", to="autogen-core")
    except SchemaError:
        pass
