"""The agent-framework adapter on its own (no database).

The fixture ``tests/fixtures/agent-framework.json`` is written by agent-framework-core
itself (``tests/conformance/make_agent_framework.py``).
"""

import copy
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import InputError, LossError, SchemaError
from store.formats import agent_framework as af
from store.formats import detect, read, read_marked, write
from store.model import (
    AudioBlock,
    CodeBlock,
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
    VideoBlock,
)

from ..samples import OPENAI_CHAT

NAME = "agent-framework"
FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "agent-framework.json").read_text())


def _msg(role, *contents, **fields):
    return {"type": "message", "role": role, "contents": list(contents), "additional_properties": {},
            **fields}


def _text(text, **fields):
    return {"type": "text", "text": text, "additional_properties": {}, **fields}


def test_fixture_round_trip_is_exact():
    assert convert(copy.deepcopy(FIXTURE), from_=NAME, to=NAME) == FIXTURE


def test_fixture_covers_every_kind():
    kinds = {c["type"] for m in FIXTURE for c in m["contents"]}
    assert kinds >= {"text", "text_reasoning", "data", "uri", "hosted_file", "function_call",
                     "function_result", "error", "usage", "function_approval_request",
                     "function_approval_response"}


def test_canonical_form():
    msgs = read(FIXTURE, NAME)
    assert all(m.source_format == NAME for m in msgs)
    assert msgs[1].name == "alice" and msgs[1].external_id == "m1" and msgs[1].metadata == {"channel": "web"}
    text, image, url, audio, video, hosted = msgs[1].content
    assert isinstance(text, TextBlock)
    assert text.extras[NAME]["fields"]["additional_properties"] == {"lang": "en"}
    assert isinstance(image, ImageBlock) and image.data.startswith(b"\x89PNG") and image.filename == "map.png"
    assert isinstance(url, ImageBlock) and url.url == "https://example.com/map.png"
    assert isinstance(audio, AudioBlock) and audio.data == b"RIFF"
    assert isinstance(video, VideoBlock) and video.filename == "tour.mp4"
    assert isinstance(hosted, FileBlock) and hosted.file_id == "file-9XyZ"
    assert hosted.media_type == "application/pdf"
    reasoning, kyoto, paris, usage = msgs[2].content
    assert isinstance(reasoning, ReasoningBlock) and reasoning.signature == "sig-1"
    assert kyoto.arguments == {"city": "Kyoto"} and kyoto.arguments_raw == '{"city": "Kyoto"}'
    assert paris.arguments == {"city": "Paris", "unit": "C"} and paris.arguments_raw is None
    assert isinstance(usage, UsageBlock) and usage.usage.total_tokens == 320
    assert usage.usage.extras[NAME]["counts"]["reasoning_output_token_count"] == 256
    first, second = msgs[3].content
    assert msgs[3].role == "tool" and first.output == "Sunny, 21C" and first.name == "get_weather"
    assert isinstance(second.output, list) and isinstance(second.output[1], ImageBlock)
    failed = msgs[7].content[0]
    assert isinstance(failed, ToolResultBlock) and failed.is_error
    assert failed.output == "Booking service unavailable"
    error, refusal = msgs[8].content
    assert isinstance(error, ErrorBlock) and (error.message, error.code, error.details) == (
        "Rate limit exceeded", "429", "retry after 20s")
    assert isinstance(refusal, RefusalBlock)
    request = msgs[10].content[0]
    assert isinstance(request, DataBlock) and request.data["type"] == "function_approval_request"
    redacted = msgs[14].content[0]
    assert isinstance(redacted, ReasoningBlock) and redacted.redacted
    assert redacted.data == '{"private": "opaque"}'


def test_seed_shape_is_read_and_release_shape_written():
    seed = [
        {"type": "chat_message", "role": "assistant", "author": "planner", "message_id": "x1", "contents": [
            {"text": "hi"},
            {"type": "FunctionCallContent", "call_id": "c1", "name": "f", "arguments": {"a": 1}},
            {"message": "boom", "error_code": "E1", "details": "stack"},
            {"type": "usage", "details": {"input_token_count": 1, "additional_counts": {"cached": 2}}},
            {"type": "data", "data": "UklGRg==", "media_type": "audio/wav"},
        ]},
        {"role": "tool", "contents": [{"call_id": "c1", "result": {"ok": True}}, "plain text"]},
        {"role": "user", "contents": "a lone string"},
    ]
    msgs = read(seed, NAME)
    assert msgs[0].name == "planner" and msgs[0].content[2].details == "stack"
    assert msgs[0].content[3].usage.extras[NAME]["counts"] == {"cached": 2}
    assert msgs[0].content[4].data == b"RIFF"
    assert msgs[1].content[0].output == '{"ok": true}' and msgs[1].content[1].text == "plain text"
    assert msgs[2].content == [TextBlock(text="a lone string")]
    out = convert(seed, from_=NAME, to=NAME)
    assert out[0]["type"] == "message" and out[0]["author_name"] == "planner" and "author" not in out[0]
    assert out[0]["contents"][2]["error_details"] == "stack"
    assert out[0]["contents"][3]["usage_details"] == {"input_token_count": 1, "cached": 2}
    assert out[1]["contents"][0]["items"] == [_text('{"ok": true}')]
    assert convert(out, from_=NAME, to=NAME) == out


def test_rarer_keys_and_roles_are_kept():
    data = [_msg("critic", _text("x", merge_mode="append"), author_name="crit")]
    msgs = read(data, NAME)
    assert msgs[0].role == "user" and msgs[0].source_role == "critic"
    assert convert(data, from_=NAME, to=NAME) == data


def test_keys_agent_framework_refuses_are_refused_by_index_and_path():
    """Message.from_dict / Content.from_dict raise TypeError on them (issue 16.5e)."""
    data = [_msg("user", _text("x")),
            _msg("critic", _text("x", x_trace=1), {"type": "function_result", "call_id": "c", "items": [
                _text("y", foo=2)], "additional_properties": {}}, x_meta={"k": 1}),
            {"type": "message", "role": "user", "text": "hi"}]
    with pytest.raises(SchemaError) as info:
        read(data, NAME)
    assert info.value.problems == [
        (1, "x_meta", "agent-framework messages have no such key (text goes in contents)"),
        (1, "contents[0].x_trace", "agent-framework contents have no such key"),
        (1, "contents[1].items[0].foo", "agent-framework contents have no such key"),
        (2, "text", "agent-framework messages have no such key (text goes in contents)"),
    ]


def test_seed_contents_without_type_are_read_as_an_older_shape():
    """The seed's MEAI-shaped contents (no ``type``: told by their fields) are read and written
    in the release's shape; keys the package refuses are refused there too (issue 16.5e)."""
    data = [{"role": "user", "contents": [{"text": "hi"}, {"call_id": "c1", "name": "f", "arguments": "{}"}]}]
    assert convert(data, from_=NAME, to=NAME)[0]["contents"][0] == {
        "type": "text", "text": "hi", "additional_properties": {}}
    with pytest.raises(SchemaError, match=r"message 0, field contents\[0\].x_note"):
        read([{"role": "user", "contents": [{"text": "hi", "x_note": 1}]}], NAME)


def test_results_outside_tool_messages_are_split_and_regrouped():
    data = [
        _msg("assistant", {"type": "function_call", "call_id": "h1", "name": "search", "hosted": True,
                           "additional_properties": {}},
             {"type": "function_result", "call_id": "h1", "result": "found", "items": [_text("found")],
              "additional_properties": {}},
             _text("Here it is.")),
    ]
    msgs = read(data, NAME)
    assert [m.role for m in msgs] == ["assistant", "tool"]
    assert isinstance(msgs[1].content[0], ToolResultBlock) and msgs[1].content[0].name == "search"
    assert convert(data, from_=NAME, to=NAME) == data
    openai = convert(data, from_=NAME, to="openai")
    assert [m["role"] for m in openai] == ["assistant", "tool"]


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([_msg("user", _text("ok")), _msg("assistant", {"type": "function_call", "name": "f"})], 1,
         "contents[0].call_id"),
        ([_msg("tool", {"type": "function_result"})], 0, "contents[0].call_id"),
        ([_msg("user", {"type": "hosted_file"})], 0, "contents[0].file_id"),
        ([_msg("user", {"type": "image", "uri": "https://x"})], 0, "contents[0]"),
        ([_msg("user", {"type": "data", "media_type": "image/png"})], 0, "contents[0].uri"),
        ([{"type": "message", "contents": []}], 0, "role"),
        ([{"type": "chat", "role": "user", "contents": []}], 0, "type"),
        ([_msg("user", _text(5))], 0, "contents[0].text"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, NAME)
    problem = info.value.problems[0]
    assert (problem[0], problem[1]) == (index, path)
    assert f"message {index}" in str(info.value) and NAME in str(info.value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "role", "contents", "text", "call_id", "name", "uri", "items", "result",
                         "additional_properties", "media_type", "arguments", "usage_details", "file_id"]),
        inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_values, max_size=3) | json_values)
def test_junk_raises_only_schema_errors(value):
    try:
        msgs = read(value, NAME)
    except SchemaError:
        return
    write(msgs, NAME)


def test_looks_like():
    assert af.looks_like(FIXTURE) and af.looks_like({"messages": FIXTURE})
    assert not af.looks_like(OPENAI_CHAT) and not af.looks_like([]) and not af.looks_like("x")
    assert detect(FIXTURE) == NAME


def test_openai_through_agent_framework_keeps_tool_calls():
    out = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    calls = [c for m in out for c in m["contents"] if c["type"] == "function_call"]
    assert [(c["call_id"], c["name"], c["arguments"]) for c in calls] == [
        ("call_kyoto", "get_weather", '{"city": "Kyoto"}'),
        ("call_paris", "get_weather", '{"city": "Paris", "unit": "C"}'),
        ("call_bad", "search", "{not json"),
    ]
    results = [(m["role"], c["call_id"]) for m in out for c in m["contents"]
               if c["type"] == "function_result"]
    assert results == [("tool", "call_kyoto"), ("tool", "call_paris")]
    assert convert(out, from_=NAME, to="openai") == OPENAI_CHAT


def test_agent_framework_through_openai_keeps_calls_and_reports_the_rest():
    losses = []
    out = convert(copy.deepcopy(FIXTURE), from_=NAME, to="openai", on_loss=losses.append)
    back = convert(out, from_="openai", to=NAME)
    calls = [(c["call_id"], c["name"]) for m in back for c in m["contents"] if c["type"] == "function_call"]
    assert calls == [("call_kyoto", "get_weather"), ("call_paris", "get_weather"),
                     ("call_book", "book_flight"), ("call_del", "delete_file")]
    assert [c["call_id"] for m in back for c in m["contents"] if c["type"] == "function_result"] == [
        "call_kyoto", "call_paris", "call_book", "call_del"]
    found = {(loss.index, loss.field) for loss in losses}
    assert found >= {(0, "external_id"), (2, "reasoning"), (2, "usage")}


def test_canonical_through_agent_framework_restores_carried():
    msgs = [
        Message(role="assistant", name="bot", external_id="m1", created_at="2025-01-02T03:04:05Z",
                model="gpt-x", source_type="ToolCallRequestEvent",
                usage=Usage(input_tokens=3, output_tokens=4), metadata={"trace": "t1"},
                extras={"autogen": {"id": "a1"}},
                content=[TextBlock(text="hi", extras={"qwen": {"k": 1}}),
                         ToolCallBlock(call_id="q1", name="f", arguments={"a": 1},
                                       call_id_synthesized=True)]),
        Message(role="tool", source_role="function", content=[
            ToolResultBlock(call_id="q1", name="f", output="ok", error={"type": "unknown", "message": "m"},
                            is_error=True)]),
        Message(role="assistant", content=[
            ImageBlock(url="https://x/y"), CodeBlock(code="print(1)", language="python"),
            HandoffBlock(target="writer", context=[{"role": "user"}]), DataBlock(data={"a": [1, 2]}),
            ReasoningBlock(redacted=True, data="opaque"), RefusalBlock(text="no")]),
    ]
    out, losses = write(msgs, NAME)
    assert out[0]["additional_properties"]["trace"] == "t1"
    assert out[0]["contents"][-1]["type"] == "usage"
    assert {loss.action for loss in losses} == {"carried"}
    assert read(out, NAME) == [m.model_copy(update={"source_format": NAME}) for m in msgs]
    assert convert(out, from_=NAME, to=NAME) == out


def test_strict_raises_on_approximation():
    msgs = [Message(role="assistant", content=[ToolCallBlock(call_id="c", name="f", arguments=[1, 2])])]
    out, losses = write(msgs, NAME)
    assert out[0]["contents"][0]["arguments"] == "[1,2]"
    assert [(loss.field, loss.action) for loss in losses] == [("tool_call.arguments", "approximated")]
    with pytest.raises(LossError, match="tool_call.arguments"):
        write(msgs, NAME, strict=True)
    write(read(FIXTURE, NAME), NAME, strict=True)  # its own output loses nothing


def test_speed():
    data = [m for _ in range(200) for m in FIXTURE]
    started = time.process_time()  # CPU time: other processes on a shared machine do not count
    msgs = read(data, NAME)
    write(msgs, NAME)
    rate = len(data) / (time.process_time() - started)
    assert rate > 2_000, f"{rate:.0f} messages/s"  # a guard against blow-ups, far below the measured rate


@pytest.mark.parametrize("bag", ["metadata", "extras"])
def test_carried_fields_of_null_bags_are_not_a_traceback(bag) -> None:
    """Hand-edited convstore notes whose metadata or extras is null: where the message has its own, it wins
    (a payload never wins over the target's own fields), else the notes are refused with our error; they
    once raised a TypeError (found by the junk property test of tests/test_lean_read.py)."""
    items = convert([{"role": "tool", "tool_call_id": "c1", "content": ""}], from_="openai",
                    to="agent-framework")
    items[0]["additional_properties"] = {"role": None,
                                         "convstore": {"role": None, "content": None, bag: None}}
    for target in ("openai", "qwen", "agentscope2"):
        if bag == "metadata":  # the message's own: {"role": None}
            assert convert(copy.deepcopy(items), from_="agent-framework", to=target)
        else:
            with pytest.raises(InputError, match="extras"):
                convert(copy.deepcopy(items), from_="agent-framework", to=target)


@pytest.mark.parametrize("lean", [False, True])
def test_malformed_convstore_notes_name_their_message_and_content(lean) -> None:
    """Notes a hand edit broke are the input's fault: refused naming the message (the first such one) and,
    for a content's, the content (they were a bare validation error, or a TypeError, with no message)."""
    ok = {"role": "user", "contents": [{"type": "text", "text": "ok"}]}
    on_message = {"role": "user", "contents": [{"type": "text", "text": "x"}],
                  "additional_properties": {"convstore": {"created_at": "soon"}}}
    on_content = {"role": "user", "contents": [{"type": "text", "text": "y"}, {
        "type": "text", "text": "x", "additional_properties": {"convstore": {"kind": 5}}}]}
    cases = [([ok, on_message, on_content], "message 1, field additional_properties.convstore"),
             ([ok, on_content, on_message],
              "message 1, field contents\\[1\\].additional_properties.convstore"),
             ([ok, ok, on_content], "message 2, field contents\\[1\\]")]
    for data, where in cases:
        with pytest.raises(SchemaError, match=f"{where}.*malformed convstore notes"):
            read_marked(copy.deepcopy(data), NAME, None, lean=lean)
