"""The AutoGen AgentChat adapter on its own (no database)."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import autogen, read, write
from store.model import (
    CodeBlock,
    CodeResultBlock,
    DataBlock,
    ErrorBlock,
    FileBlock,
    HandoffBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    UsageBlock,
)

from ..samples import OPENAI_CHAT, PNG

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "autogen.json").read_text(encoding="utf-8"))
CORE_FIXTURE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "autogen-core.json").read_text(encoding="utf-8")
)


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def by_type(msgs: list[Message], kind: str) -> list[Message]:
    return [m for m in msgs if m.source_type == kind]


def test_fixture_round_trip_is_exact():
    assert convert(fixture(), from_="autogen", to="autogen") == FIXTURE


def test_fixture_covers_every_message_and_event_type():
    types = {m["type"] for m in FIXTURE}
    assert autogen.TYPES <= types
    assert any(t.startswith("StructuredMessage[") for t in types)


def test_common_fields():
    msgs = read(fixture(), "autogen")
    first = msgs[0]
    assert first.role == "user" and first.name == "user" and first.source_format == "autogen"
    assert first.external_id == "00000000-0000-4000-8000-000000000000"
    assert first.created_at == datetime(2025, 3, 14, 9, 26, 54, tzinfo=timezone.utc)
    assert first.metadata == {"channel": "web"} and first.source_type == "TextMessage"
    request = by_type(msgs, "ToolCallRequestEvent")[0]
    assert request.usage == Usage(input_tokens=120, output_tokens=31)
    assert all(m.role == "assistant" for m in by_type(msgs, "ThoughtEvent"))


def test_chat_messages_map_to_blocks():
    msgs = read(fixture(), "autogen")
    multi = by_type(msgs, "MultiModalMessage")[0]
    assert isinstance(multi.content[0], TextBlock)
    image = multi.content[1]
    assert (
        isinstance(image, ImageBlock)
        and image.media_type == "image/png"
        and image.data.startswith(b"\x89PNG")
    )
    summary = by_type(msgs, "ToolCallSummaryMessage")[0]
    # its calls and results repeat the events before it: kept aside, not as a second set of calls
    assert [type(b) for b in summary.content] == [TextBlock]
    assert summary.extras["autogen"]["tool_calls"][0]["id"] == "call_kyoto"
    handoff = by_type(msgs, "HandoffMessage")[0]
    text, block = handoff.content
    assert isinstance(text, TextBlock) and isinstance(block, HandoffBlock) and block.target == "planner"
    context = [Message.model_validate(m) for m in block.context]
    assert [m.source_type for m in context][:2] == ["UserMessage", "AssistantMessage"]
    assert any(isinstance(b, ToolCallBlock) and b.call_id == "call_kyoto" for b in context[1].content)
    structured = next(m for m in msgs if (m.source_type or "").startswith("StructuredMessage"))
    assert structured.source_type == "StructuredMessage[WeatherReport]"
    assert structured.content == [
        DataBlock(data={"city": "Kyoto", "temperature_c": 21.0, "conditions": "sunny"})
    ]
    stop = by_type(msgs, "StopMessage")[0]
    assert stop.content == [TextBlock(text="TERMINATE")] and stop.metadata == {"reason": "done"}


def test_events_map_to_blocks():
    msgs = read(fixture(), "autogen")
    calls = by_type(msgs, "ToolCallRequestEvent")[0].content
    assert [(c.call_id, c.arguments) for c in calls] == [
        ("call_kyoto", {"city": "Kyoto"}),
        ("call_paris", {"city": "Paris", "unit": "C"}),
    ]
    results = by_type(msgs, "ToolCallExecutionEvent")[0]
    assert results.role == "tool"
    assert [(r.call_id, r.name, r.is_error) for r in results.content] == [
        ("call_kyoto", "get_weather", False),
        ("call_paris", "get_weather", True),
    ]
    assert isinstance(by_type(msgs, "ThoughtEvent")[0].content[0], ReasoningBlock)
    memory = by_type(msgs, "MemoryQueryEvent")[0].content
    assert [(b.data, b.media_type) for b in memory] == [
        ("The user prefers Celsius.", "text/plain"),
        ({"home": "Kyoto"}, "application/json"),
    ]
    chunk = by_type(msgs, "ModelClientStreamingChunkEvent")[0]
    assert chunk.content == [TextBlock(text="Kyoto is sunny")] and chunk.extras["autogen"]["chunk"]
    assert by_type(msgs, "SelectSpeakerEvent")[0].content == [DataBlock(data=["coder"])]
    code = by_type(msgs, "CodeGenerationEvent")[0].content
    assert isinstance(code[0], TextBlock) and code[1] == CodeBlock(
        code="print(21 * 9 / 5 + 32)", language="python"
    )
    assert by_type(msgs, "CodeExecutionEvent")[0].content == [CodeResultBlock(output="69.8\n", exit_code=0)]
    asked = by_type(msgs, "UserInputRequestedEvent")[0]
    assert asked.content == [TextBlock(text="")] and asked.extras["autogen"]["request_id"] == "request-1"


def test_seed_shape_without_ids_and_new_fields_round_trips():
    data = [
        {"source": "user", "content": "hi", "type": "TextMessage"},
        {
            "source": "a",
            "models_usage": None,
            "metadata": {},
            "content": "done",
            "type": "ToolCallSummaryMessage",
        },
        {
            "source": "a",
            "content": "```py\nx\n```",
            "code_blocks": [{"code": "x", "language": "py"}],
            "type": "CodeGenerationEvent",
        },
        {
            "source": "a",
            "content": [{"id": "c", "arguments": "{}", "name": "f"}],
            "type": "ToolCallRequestEvent",
        },
        {
            "source": "a",
            "content": [{"content": "r", "name": "f", "call_id": "c"}],
            "type": "ToolCallExecutionEvent",
        },
        {"source": "a", "content": "go", "target": "b", "type": "HandoffMessage"},
    ]
    msgs = read(copy.deepcopy(data), "autogen")
    assert msgs[0].external_id is None and msgs[0].created_at is None
    assert convert(copy.deepcopy(data), from_="autogen", to="autogen") == data


def test_timestamps_and_unknown_keys_are_kept_as_written():
    data = [
        {
            "id": "m1",
            "source": "bot",
            "models_usage": {"prompt_tokens": 1, "completion_tokens": 2, "cached": 0},
            "metadata": {},
            "created_at": "2025-03-14T09:26:54+00:00",
            "content": "x",
            "type": "TextMessage",
            "x_trace": {"id": 7},
        }
    ]
    msgs = read(copy.deepcopy(data), "autogen")
    assert msgs[0].created_at == datetime(2025, 3, 14, 9, 26, 54, tzinfo=timezone.utc)
    assert convert(copy.deepcopy(data), from_="autogen", to="autogen") == data


def test_non_canonical_image_base64_is_kept_as_given():
    data = [{"source": "user", "content": [{"data": PNG[:-2] + "\n=="}], "type": "MultiModalMessage"}]
    assert convert(copy.deepcopy(data), from_="autogen", to="autogen") == data


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        (
            [
                {"source": "u", "content": "ok", "type": "TextMessage"},
                {"content": "x", "type": "TextMessage"},
            ],
            1,
            "source",
        ),
        ([{"source": "u", "content": "x", "type": "Nope"}], 0, "type"),
        ([{"source": "u", "content": "x"}], 0, "type"),
        ([{"source": "u", "content": "x", "metadata": {"k": 1}, "type": "TextMessage"}], 0, "metadata.k"),
        (
            [{"source": "u", "content": [{"id": "a", "name": "f"}], "type": "ToolCallRequestEvent"}],
            0,
            "content[0].arguments",
        ),
        (
            [
                {
                    "source": "u",
                    "content": "x",
                    "target": "b",
                    "context": [{"content": "y", "type": "UserMessage"}],
                    "type": "HandoffMessage",
                }
            ],
            0,
            "context[0].source",
        ),
        ([{"source": "u", "content": 3, "type": "StructuredMessage[X]"}], 0, "content"),
        (
            [{"source": "u", "request_id": "r", "content": "not empty", "type": "UserInputRequestedEvent"}],
            0,
            "content",
        ),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "autogen")
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path, info.value.problems
    assert f"message {index}" in str(info.value) and "autogen" in str(info.value)


def test_looks_like():
    assert autogen.looks_like(FIXTURE)
    assert not autogen.looks_like(OPENAI_CHAT)
    assert not autogen.looks_like(CORE_FIXTURE)
    assert not autogen.looks_like([])


def test_openai_through_autogen_and_back_is_exact():
    there, losses = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "autogen")
    assert {loss.action for loss in losses} == {"carried"}  # AgentChat metadata keeps the rest
    calls = [c for m in there if m["type"] == "ToolCallRequestEvent" for c in m["content"]]
    assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [
        ("call_kyoto", "get_weather", '{"city": "Kyoto"}'),
        ("call_paris", "get_weather", '{"city": "Paris", "unit": "C"}'),
        ("call_bad", "search", "{not json"),
    ]
    results = [r["call_id"] for m in there if m["type"] == "ToolCallExecutionEvent" for r in m["content"]]
    assert results == ["call_kyoto", "call_paris"]
    assert all(isinstance(v, str) for m in there for v in m["metadata"].values())
    assert convert(there, from_="autogen", to="openai") == OPENAI_CHAT


def test_image_url_is_a_text_stand_in_and_carried():
    msgs = [Message(role="user", content=[TextBlock(text="see"), ImageBlock(url="https://x/y.png")])]
    value, losses = write(msgs, "autogen")
    assert (
        value[0]["content"] == ["see", "[image: https://x/y.png]"] and value[0]["type"] == "MultiModalMessage"
    )
    assert [(loss.field, loss.action) for loss in losses] == [("image", "carried")]
    assert read(value, "autogen")[0].content == msgs[0].content


def test_what_agentchat_lacks_travels_in_metadata():
    msgs = [
        Message(role="system", content=[TextBlock(text="be brief")], metadata={"n": 1}, model="gpt"),
        Message(
            role="assistant",
            name="bot",
            usage=Usage(input_tokens=3, output_tokens=4, total_tokens=7),
            content=[
                ReasoningBlock(text="hm", signature="sig"),
                RefusalBlock(text="no"),
                UsageBlock(usage=Usage(input_tokens=1)),
                FileBlock(data=b"%PDF", media_type="application/pdf"),
                ErrorBlock(message="boom"),
                DataBlock(data=[1, 2]),
            ],
        ),
        Message(
            role="assistant",
            content=[TextBlock(text="calling"), ToolCallBlock(call_id="c1", name="f", arguments={"a": 1})],
        ),
        Message(
            role="tool",
            content=[
                ToolResultBlock(call_id="c1", output=[TextBlock(text="42")], error={"x": 1}),
                ToolResultBlock(call_id="nobody", output="orphan"),
            ],
        ),
        Message(role="assistant", content=[CodeBlock(code="x"), HandoffBlock(target="b")]),
    ]
    value, losses = write(msgs, "autogen", strict=True)  # all carried: strict mode does not object
    assert value[0]["source"] == "system" and value[0]["type"] == "TextMessage"
    assert [m["type"] for m in value[1:4]] == ["ThoughtEvent", "MultiModalMessage", "TextMessage"]
    assert value[4]["type"] == "ToolCallRequestEvent" and value[4]["metadata"]["convstore"]
    ignore = {"source_format", "source_type", "extras"}
    assert [m.model_dump(exclude=ignore) for m in read(value, "autogen")] == [
        m.model_dump(exclude=ignore) for m in msgs
    ]
    assert {loss.action for loss in losses} == {"carried"}


def test_handoff_context_losses_are_reported_and_strict_raises():
    context = [Message(role="user", content=[TextBlock(text="hi")], external_id="x").model_dump(mode="json")]
    msgs = [Message(role="assistant", name="a", content=[HandoffBlock(target="b", context=context)])]
    value, losses = write(msgs, "autogen")
    assert value[0]["context"] == [{"content": "hi", "source": "user", "type": "UserMessage"}]
    assert [loss.field for loss in losses] == ["handoff.context[0].external_id"]
    with pytest.raises(LossError, match="message 0"):
        write(msgs, "autogen", strict=True)


def test_autogen_through_other_formats_keeps_tool_calls():
    for target in ("openai", "autogen-core"):
        back = read(
            convert(convert(fixture(), from_="autogen", to=target), from_=target, to="autogen"), "autogen"
        )
        calls = {b.call_id: b.arguments for m in back for b in m.content if isinstance(b, ToolCallBlock)}
        assert calls == {
            "call_kyoto": {"city": "Kyoto"},
            "call_paris": {"city": "Paris", "unit": "C"},
            "call_transfer": {},
        }


# --- property-based ------------------------------------------------------------------------

text = st.text(max_size=12)
ids = st.text(alphabet="abcdef_0123456789", min_size=1, max_size=6)
source = st.sampled_from(["user", "assistant", "coder"])
call = st.builds(
    lambda i, n, a: {"id": i, "arguments": a, "name": n}, ids, ids, st.sampled_from(['{"a": 1}', "{x"])
)
base = st.fixed_dictionaries(
    {"source": source},
    optional={
        "id": ids,
        "models_usage": st.none()
        | st.builds(
            lambda p, c: {"prompt_tokens": p, "completion_tokens": c}, st.integers(0, 99), st.integers(0, 99)
        ),
        "metadata": st.dictionaries(ids, text, max_size=2),
        "created_at": st.sampled_from(
            ["2025-01-02T03:04:05Z", "2025-01-02T03:04:05.123000Z", "2025-01-02T03:04:05"]
        ),
    },
)
bodies = st.one_of(
    st.builds(lambda c: {"content": c, "type": "TextMessage"}, text),
    st.builds(lambda c: {"content": c, "type": "StopMessage"}, text),
    st.builds(lambda c: {"content": c, "type": "ThoughtEvent"}, text),
    st.builds(
        lambda c: {"content": c, "type": "MultiModalMessage"},
        st.lists(text | st.just({"data": PNG}), max_size=3),
    ),
    st.builds(lambda c: {"content": c, "type": "ToolCallRequestEvent"}, st.lists(call, max_size=2)),
    st.builds(lambda c, t: {"content": c, "target": t, "context": [], "type": "HandoffMessage"}, text, ids),
    st.builds(
        lambda c: {"content": c, "format_string": None, "type": "StructuredMessage[M]"},
        st.dictionaries(ids, text, max_size=2),
    ),
    st.builds(lambda c: {"content": c, "type": "SelectSpeakerEvent"}, st.lists(ids, max_size=2)),
)
messages = st.lists(st.builds(lambda b, body: {**b, **body}, base, bodies), max_size=5)


@settings(max_examples=80, deadline=None)
@given(messages)
def test_any_valid_agentchat_transcript_round_trips(data):
    assert convert(copy.deepcopy(data), from_="autogen", to="autogen") == data


junk = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["type", "source", "content", "metadata", "context", "id"]),
            junk | st.sampled_from(sorted(autogen.TYPES)),
            max_size=5,
        ),
        max_size=3,
    )
)
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="autogen", to="autogen")
    except SchemaError:
        pass


def test_a_result_without_its_request_keeps_what_its_report_says_it_carries():
    """An execution event with no request before it (MessageFactory loads one) is a text stand-in
    whose result is carried: the payload is written although the event had no ``metadata`` key (the
    key's absence, a spelling note, dropped it with the payload in it, while the report said carried)."""
    event = [{"type": "ToolCallExecutionEvent", "source": "a",
              "content": [{"content": "r1", "name": "f", "call_id": "x", "is_error": True}]}]
    losses: list = []
    out = convert(event, from_="autogen", to="autogen", on_loss=losses.append)
    assert {(loss.field, loss.action) for loss in losses} == {("tool_result", "carried"), ("role", "carried")}
    assert "convstore" in out[0]["metadata"]
    assert read(out, "autogen")[0].content == read(event, "autogen")[0].content
    assert convert(out, from_="autogen", to="openai") == [{"role": "tool", "tool_call_id": "x", "content": "r1"}]
