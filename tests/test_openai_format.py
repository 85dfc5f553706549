"""The OpenAI Chat Completions adapter on its own (no database)."""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError, UnknownFormatError
from store.formats import read, write
from store.model import ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock

from .samples import OPENAI_CHAT, PNG


def test_round_trip_is_exact():
    assert convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="openai") == OPENAI_CHAT


def test_canonical_form():
    msgs = read(OPENAI_CHAT, "openai")
    assert msgs[0].role == "system" and msgs[0].source_role == "developer" and msgs[0].name == "ops"
    image = msgs[2].content[1]
    assert isinstance(image, ImageBlock) and image.media_type == "image/png" and image.data.startswith(b"\x89PNG")
    assert msgs[2].content[2].url == "https://example.com/map.png"
    calls = [b for b in msgs[3].content if isinstance(b, ToolCallBlock)]
    assert [c.arguments for c in calls] == [{"city": "Kyoto"}, {"city": "Paris", "unit": "C"}]
    bad = msgs[-1].content[-1]
    assert bad.arguments is None and bad.arguments_raw == "{not json" and "not valid JSON" in bad.parse_error
    assert msgs[4].role == "tool" and msgs[4].content[0].name == "get_weather"


def test_unknown_keys_are_kept():
    data = [{"role": "user", "content": [{"type": "text", "text": "x", "prompt_cache_breakpoint": True}],
             "x_trace": {"id": 7}}]
    assert convert(data, from_="openai", to="openai") == data


def test_non_canonical_base64_is_kept_as_given():
    url = "data:image/png;base64," + PNG[:-2] + "\n=="  # a line break: decodable, not canonical
    data = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    assert convert(data, from_="openai", to="openai") == data


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"type": "image_url"}]}], 1, "content[0].image_url"),
        ([{"role": "tool", "content": "x"}], 0, "tool_call_id"),
        ([{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f"}}]}], 0,
         "tool_calls[0].function.arguments"),
        ([{"role": "wizard", "content": "x"}], 0, ""),
        ([{"content": "x"}], 0, "role"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "openai")
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path
    assert f"message {index}" in str(info.value) and "openai" in str(info.value)


def test_not_a_list():
    with pytest.raises(SchemaError, match="expected a list"):
        read("hello", "openai")


def test_unknown_format():
    with pytest.raises(UnknownFormatError, match="known formats: .*openai"):
        convert([], from_="autogenn", to="openai")


def test_losses_are_reported_and_strict_raises():
    msgs = [Message(role="assistant", name="bot", external_id="m1",
                    content=[ReasoningBlock(text="think", signature="sig"), TextBlock(text="hi")])]
    value, losses = write(msgs, "openai")
    assert value == [{"role": "assistant", "content": "hi", "name": "bot"}]
    assert {(l.index, l.field) for l in losses} == {(0, "reasoning"), (0, "external_id")}
    with pytest.raises(LossError, match="message 0"):
        write(msgs, "openai", strict=True)


def test_a_loss_is_a_frozen_value():
    import dataclasses

    from store import Loss

    loss = Loss(2, "reasoning", "dropped")
    assert loss == Loss(2, "reasoning", "dropped", "") and hash(loss) == hash(Loss(2, "reasoning", "dropped"))
    assert dataclasses.asdict(loss) == {"index": 2, "field": "reasoning", "action": "dropped", "detail": ""}
    assert dataclasses.replace(loss, index=5) == Loss(5, "reasoning", "dropped")
    assert str(Loss(0, "name", "carried", "kept")) == "message 0: name carried (kept)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        loss.index = 3  # type: ignore[misc]


def test_results_in_a_user_message_come_first_as_tool_messages():
    from store.model import ToolResultBlock
    msgs = [
        Message(role="assistant", content=[ToolCallBlock(call_id="t1", name="f", arguments={"a": 1})]),
        Message(role="user", content=[ToolResultBlock(call_id="t1", output="42"), TextBlock(text="and now?")]),
    ]
    value, _ = write(msgs, "openai")
    assert value == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "42"},
        {"role": "user", "content": "and now?"},
    ]


def test_legacy_function_call_pairs_by_name():
    data = [
        {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": "{\"x\": 2}"}},
        {"role": "function", "name": "calc", "content": "4"},
        {"role": "function", "name": "calc", "content": None},
    ]
    msgs = read(data, "openai")
    assert msgs[0].content[0].call_id_synthesized and msgs[1].content[0].call_id == msgs[0].content[0].call_id
    assert convert(data, from_="openai", to="openai") == data


# --- property-based round trip -------------------------------------------------

text = st.text(max_size=20)
ids = st.text(alphabet="abcdefghij_0123456789", min_size=1, max_size=8)
json_args = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
text_part = st.builds(lambda t: {"type": "text", "text": t}, text)
content = text | st.lists(text_part, min_size=1, max_size=3)
system = st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["system", "developer"]), content)
user = st.builds(lambda c: {"role": "user", "content": c}, content)
tool_call = st.builds(
    lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
    ids, ids, st.one_of(json_args.map(lambda v: __import__("json").dumps(v)), text),
)
assistant = st.builds(
    lambda c, calls: {"role": "assistant", "content": c, **({"tool_calls": calls} if calls else {})},
    st.none() | content, st.lists(tool_call, max_size=2),
)
tool = st.builds(lambda i, c: {"role": "tool", "tool_call_id": i, "content": c}, ids, content)
messages = st.lists(st.one_of(system, user, assistant, tool), max_size=6)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_any_valid_openai_conversation_round_trips(data):
    assert convert(copy.deepcopy(data), from_="openai", to="openai") == data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["role", "content", "tool_calls", "name", "tool_call_id"]),
                                json_args | st.sampled_from(["user", "tool", "assistant"]), max_size=4), max_size=4))
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="openai", to="openai")
    except SchemaError:
        pass


def test_a_tool_messages_own_fields_are_reported_when_dropped():
    from datetime import datetime, timezone

    from store.formats import write
    from store.model import Message, ToolCallBlock, ToolResultBlock

    messages = [
        Message(role="assistant", content=[ToolCallBlock(call_id="c1", name="f", arguments={})]),
        Message(role="tool", content=[ToolResultBlock(call_id="c1", output="ok")], external_id="m-7",
                created_at=datetime(2026, 1, 1, tzinfo=timezone.utc), metadata={"k": 1},
                extras={"langchain": {"artifact": [1, 2]}}),
    ]
    value, losses = write(messages, "openai")
    assert value[1] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    lost = {(loss.index, loss.field) for loss in losses}
    assert {(1, "external_id"), (1, "created_at"), (1, "metadata"), (1, "extras.langchain.artifact")} <= lost


def test_a_result_of_another_format_goes_right_after_its_call():
    """AgentChat lets another agent speak between a call and its execution; OpenAI refuses any message
    between an assistant's tool calls and their tool messages: the results move up, reported approximated.
    OpenAI's own messages are written where they stood (a same-format round trip is exact)."""
    events = [{"type": "ToolCallRequestEvent", "source": "a", "content": [
                  {"id": "c1", "arguments": "{}", "name": "f"}, {"id": "c2", "arguments": "{}", "name": "f"}]},
              {"type": "TextMessage", "source": "b", "content": "interjection"},
              {"type": "ToolCallExecutionEvent", "source": "a",
               "content": [{"content": "r1", "name": "f", "call_id": "c1", "is_error": False}]},
              {"type": "ToolCallExecutionEvent", "source": "a",
               "content": [{"content": "r2", "name": "f", "call_id": "c2", "is_error": False}]}]
    losses: list = []
    out = convert(events, from_="autogen", to="openai", on_loss=losses.append)
    assert [(m["role"], m.get("tool_call_id"), m.get("content")) for m in out] == [
        ("assistant", None, None), ("tool", "c1", "r1"), ("tool", "c2", "r2"), ("assistant", None, "interjection")]
    assert [(loss.index, loss.field, loss.action) for loss in losses if loss.field == "tool_result"] == [
        (2, "tool_result", "approximated"), (3, "tool_result", "approximated")]
    as_they_stood = convert(events, from_="autogen", to="openai", on_loss=lambda _: None)
    assert convert(as_they_stood[:1] + as_they_stood[3:] + as_they_stood[1:3], from_="openai", to="openai") == \
        as_they_stood[:1] + as_they_stood[3:] + as_they_stood[1:3]
