"""The Qwen-Agent adapter on its own (no database)."""

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
from store.formats import qwen, read, write
from store.model import (
    AudioBlock,
    DataBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    VideoBlock,
)

from ..samples import OPENAI_CHAT, PNG

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "qwen.json").read_text(encoding="utf-8"))


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def calls(messages: list[Message]) -> list[ToolCallBlock]:
    return [b for m in messages for b in m.content if isinstance(b, ToolCallBlock)]


def results(messages: list[Message]) -> list[ToolResultBlock]:
    return [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]


# --- same format ------------------------------------------------------------------


def test_fixture_round_trip_is_exact():
    assert convert(fixture(), from_="qwen", to="qwen") == FIXTURE


def test_fixture_covers_every_kind():
    roles = {m["role"] for m in FIXTURE}
    items = {k for m in FIXTURE if isinstance(m["content"], list) for item in m["content"] for k in item}
    assert roles == {"system", "user", "assistant", "function"}
    assert items == {"text", "image", "file", "audio", "video"}
    assert any(isinstance(m.get("reasoning_content"), str) for m in FIXTURE)
    assert any(isinstance(m.get("reasoning_content"), list) for m in FIXTURE)
    assert any("function_id" in m.get("extra", {}) for m in FIXTURE if "function_call" in m)
    assert any("extra" not in m for m in FIXTURE if "function_call" in m)


def test_one_model_turn_becomes_one_assistant_message():
    msgs = read(fixture(), "qwen")
    turn = msgs[2]  # reasoning, text and two parallel calls: four Qwen messages
    assert turn.role == "assistant" and [b.kind for b in turn.content] == ["reasoning", "text", "tool_call", "tool_call"]
    assert turn.content[0].text.startswith("Two cities") and turn.content[1].text == "Let me check both cities."
    kyoto, paris = turn.content[2:]
    assert (kyoto.call_id, kyoto.name, kyoto.arguments) == ("call_kyoto", "get_weather", {"city": "Kyoto"})
    assert paris.arguments_raw == '{"city": "Paris", "unit": "C"}' and not paris.call_id_synthesized
    assert turn.extras == {}  # qwen-agent's own split: nothing to remember


def test_function_messages_become_tool_messages():
    msgs = read(fixture(), "qwen")
    first, second = msgs[3], msgs[4]
    assert first.role == "tool" and first.source_role is None and first.source_format == "qwen"
    assert first.content == [ToolResultBlock(call_id="call_kyoto", name="get_weather", output=FIXTURE[6]["content"])]
    output = second.content[0].output
    assert isinstance(output, list) and output[0] == TextBlock(text="Rain, 12C")
    assert output[1] == ImageBlock(url="https://example.com/radar.png")


def test_media_items_map_to_media_blocks():
    user = read(fixture(), "qwen")[1]
    assert user.name == "alice" and user.extras["qwen"]["extra"] == {"session": "s-42", "client": {"app": "web", "version": 3}}
    text, url, inline, file, audio, audio_url, frames, video = user.content
    assert isinstance(text, TextBlock) and url == ImageBlock(url="https://example.com/kyoto.jpg")
    assert isinstance(inline, ImageBlock) and inline.media_type == "image/png" and inline.data.startswith(b"\x89PNG")
    assert file == FileBlock(url="https://example.com/itinerary.pdf")
    assert isinstance(audio, AudioBlock) and audio.media_type == "audio/wav" and audio.data.startswith(b"RIFF")
    assert audio.extras == {"qwen": {"dict": {"format": "wav"}}}
    assert audio_url == AudioBlock(url="https://example.com/voice-note.mp3")
    assert isinstance(frames, VideoBlock) and frames.extras["qwen"]["raw"][0].endswith("frame1.jpg")
    assert video == VideoBlock(url="https://example.com/street.mp4")


def test_calls_without_ids_get_stable_ids_and_pair_by_name_and_order():
    msgs = read(fixture(), "qwen")
    convert_calls = [c for c in calls(msgs) if c.name == "convert"]
    assert all(c.call_id_synthesized for c in convert_calls)
    assert [c.call_id for c in convert_calls] == [c.call_id for c in calls(read(fixture(), "qwen")) if c.name == "convert"]
    answers = [r for r in results(msgs) if r.name == "convert"]
    assert [r.call_id for r in answers] == [c.call_id for c in convert_calls]
    assert [r.output for r in answers] == ["69.8F", "53.6F"]


def test_speakers_split_turns_and_reasoning_items():
    msgs = read(fixture(), "qwen")
    router = next(m for m in msgs if m.name == "router")
    planner = msgs[msgs.index(router) + 1]  # a new speaker: a new message, though both are assistants
    assert router.content == [TextBlock(text="Call: planner\nReply:")]
    assert planner.name == "planner"
    assert [b.kind for b in planner.content] == ["reasoning", "text", "image", "tool_call"]
    bad = planner.content[-1]
    assert bad.arguments is None and bad.parse_error and bad.arguments_raw == "{from: 'KIX'"


def test_unknown_keys_and_nulls_are_kept():
    data = [
        {"role": "user", "content": None, "x_trace": 7, "name": None},
        {"role": "assistant", "content": [], "reasoning_content": "", "extra": {}},
        {"role": "assistant", "content": "a", "function_call": {"name": "f", "arguments": "{}", "x": 1},
         "extra": {"function_id": "c1", "k": "v"}},
        {"role": "function", "content": None, "extra": {"function_id": "c1"}},
        {"role": "function", "name": "f", "content": "orphan"},
    ]
    assert convert(copy.deepcopy(data), from_="qwen", to="qwen") == data


def test_a_qwen_agent_prompt_turn_round_trips():
    """The nous function-call template writes calls with ``content: []`` and counter ids."""
    data = [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"text": "thinking aloud"}]},
        {"role": "assistant", "content": [], "function_call": {"name": "f", "arguments": "{}"}, "extra": {"function_id": "1"}},
        {"role": "assistant", "content": [{"text": "and more"}]},
        {"role": "assistant", "content": [], "function_call": {"name": "f", "arguments": "{}"}, "extra": {"function_id": "2"}},
        {"role": "function", "name": "f", "content": [{"text": "r1"}], "extra": {"function_id": "1"}},
        {"role": "function", "name": "f", "content": [{"text": "r2"}], "extra": {"function_id": "2"}},
    ]
    msgs = read(copy.deepcopy(data), "qwen")
    assert [b.kind for b in msgs[1].content] == ["text", "tool_call", "text", "tool_call"]
    assert convert(copy.deepcopy(data), from_="qwen", to="qwen") == data


# --- bad input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"text": "a", "image": "b"}]}], 1, "content[0]"),
        ([{"role": "user", "content": [{"image": ""}]}], 0, "content[0]"),
        ([{"role": "user"}], 0, "content"),
        ([{"role": "tool", "content": "x"}], 0, "role"),
        ([{"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": {"a": 1}}}], 0,
         "function_call.arguments"),
        ([{"role": "user", "content": "x", "extra": {"convstore": {"patch": "no"}}}], 0, "extra.convstore.patch"),
        ([{"role": "user", "content": "x", "extra": {"convstore": {"created_at": "soon"}}}], 0, "extra.convstore"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "qwen")
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path
    assert f"message {index}" in str(info.value) and "qwen" in str(info.value)


@pytest.mark.parametrize("data, path", [
    ([{"role": "user", "content": "x"}, 5], ""),
    ([{"role": "user", "content": ["x"]}], "content[0]"),
    ([{"role": "assistant", "content": "", "reasoning_content": [None]}], "reasoning_content[0]"),
    ([{"role": "assistant", "content": "", "function_call": "f()"}], "function_call"),
    ([{"role": "user", "content": "x", "extra": "e"}], "extra"),
])
def test_values_that_are_no_object_are_refused_where_they_are(data, path):
    """A message, an item, a call or ``extra`` that is no object: refused, naming its message and field."""
    with pytest.raises(SchemaError) as info:
        read(data, "qwen")
    index = 1 if len(data) == 2 else 0
    assert info.value.problems[0] == (index, path, "Input should be a valid dictionary")


def test_malformed_carried_fields_name_their_message():
    """Carried fields are restored after every message is read and validated: the error still names its
    message, not the first."""
    data = [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "a"},
            {"role": "user", "content": "x", "extra": {"convstore": {"created_at": "soon"}}}]
    with pytest.raises(SchemaError, match=r"message 2, field extra\.convstore: "):
        read(data, "qwen")


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
keys = st.sampled_from(["role", "content", "reasoning_content", "name", "function_call", "extra", "text", "image"])
junk_message = st.dictionaries(keys, json_value | st.sampled_from(["user", "assistant", "function", "system"]), max_size=5)


@settings(max_examples=100, deadline=None)
@given(st.lists(junk_message, max_size=4) | json_value)
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="qwen", to="qwen")
    except SchemaError:
        pass


# --- detection and other formats --------------------------------------------------


def test_looks_like():
    assert qwen.looks_like(FIXTURE)
    assert not qwen.looks_like(OPENAI_CHAT)
    assert not qwen.looks_like([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert not qwen.looks_like("hello") and not qwen.looks_like([])


def test_openai_to_qwen_writes_one_call_per_message_and_named_results():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="qwen")
    turn = [m for m in value if "function_call" in m]
    assert [(m["content"], m["function_call"]["name"], m["extra"]["function_id"]) for m in turn] == [
        ("", "get_weather", "call_kyoto"), ("", "get_weather", "call_paris"), ("", "search", "call_bad")]
    answers = [m for m in value if m["role"] == "function"]
    assert [(m["name"], m["extra"]["function_id"]) for m in answers] == [
        ("get_weather", "call_kyoto"), ("get_weather", "call_paris")]
    assert all(m["role"] in ("system", "user", "assistant", "function") for m in value)


def test_openai_to_qwen_and_back_keeps_tool_calls_and_links():
    before = read(copy.deepcopy(OPENAI_CHAT), "openai")
    after = read(convert(convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="qwen"), from_="qwen", to="openai"),
                 "openai")
    key = lambda c: (c.call_id, c.name, c.arguments_raw)  # noqa: E731
    assert [key(c) for c in calls(after)] == [key(c) for c in calls(before)]
    assert [r.call_id for r in results(after)] == [r.call_id for r in results(before)]


def test_openai_to_qwen_and_back_is_exact():
    """Everything OpenAI has that Qwen has not (a developer role, a refusal, a file id, ``detail``) is carried."""
    there = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="qwen")
    assert convert(there, from_="qwen", to="openai") == OPENAI_CHAT


def test_openai_legacy_function_calls_come_back():
    data = [
        {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": '{"x": 2}'}},
        {"role": "function", "name": "calc", "content": "4"},
    ]
    there = convert(copy.deepcopy(data), from_="openai", to="qwen")
    assert "function_id" not in there[0]["extra"] and there[1]["name"] == "calc"
    assert convert(there, from_="qwen", to="openai") == data


def test_any_canonical_input_is_written():
    """Other code may put anything in the notes of ``extras["qwen"]`` (an object: the model says so): what
    does not fit is ignored."""
    msgs = [
        Message(role="assistant", extras={"qwen": {"junk": 1}}, content=[
            TextBlock(text="a", extras={"qwen": {"fields": 5, "reasoning": 1}}),
            ImageBlock(url="u", extras={"qwen": {"dict": 3}}), ToolCallBlock(call_id="x", name="f", extras={"qwen": {}}),
        ]),
        Message(role="assistant", extras={"qwen": {"parts": [{"n": "2"}], "fields": "x", "extra": 3}},
                content=[TextBlock(text="b")]),
        Message(role="tool", content=[ToolResultBlock(call_id="x", extras={"qwen": {"fields": [1], "extra": "s"}})]),
        Message(role="tool"),
    ]
    value, losses = write(msgs, "qwen")
    assert [m["role"] for m in value] == ["assistant", "assistant", "assistant", "function"]
    assert value[0]["content"] == [{"text": "a"}, {"image": "u"}] and not list(losses)
    assert [b.kind for b in read(value, "qwen")[0].content] == ["text", "image", "tool_call"]


def test_synthesized_ids_stay_out_and_results_get_the_call_name():
    msgs = [
        Message(role="assistant", content=[ToolCallBlock(call_id="x1", name="calc", arguments={"a": 1},
                                                         call_id_synthesized=True)]),
        Message(role="tool", content=[ToolResultBlock(call_id="x1", output="2")]),
    ]
    value, losses = write(msgs, "qwen")
    assert value == [
        {"role": "assistant", "content": "", "function_call": {"name": "calc", "arguments": '{"a":1}'}},
        {"role": "function", "content": "2", "name": "calc"},
    ]
    assert not list(losses)


def test_what_qwen_cannot_express_is_carried_and_restored():
    msgs = [
        Message(role="user", name="bob", external_id="m1", created_at=datetime(2025, 1, 2, tzinfo=timezone.utc),
                metadata={"k": "v"}, extras={"docent": {"id": "m1"}},
                content=[TextBlock(text="see"), ImageBlock(file_id="file-9"), DataBlock(data={"a": [1]})]),
        Message(role="assistant", model="qwen-max", usage=Usage(input_tokens=3, output_tokens=4),
                content=[ReasoningBlock(text="hm", signature="sig"), RefusalBlock(text="no"),
                         ToolCallBlock(call_id="t1", name="f", arguments={}, extras={"x": {"y": 1}}),
                         # Qwen arguments are a string: one comes back where there was none
                         ToolCallBlock(call_id="t2", name="g", arguments={"b": 2}, arguments_raw='{"b":2}')]),
        Message(role="tool", source_role="tool", content=[
            ToolResultBlock(call_id="t1", name="f", output="boom", is_error=True),
            ToolResultBlock(call_id="t2", output=[TextBlock(text="ok"), ImageBlock(url="u", media_type="image/png")]),
        ]),
        Message(role="assistant", content=[TextBlock(text="a")]),
        Message(role="assistant", content=[TextBlock(text="b")]),
    ]
    value, losses = write(msgs, "qwen", strict=True)
    assert {loss.action for loss in losses} == {"carried"}
    assert {(loss.index, loss.field) for loss in losses} >= {(0, "external_id"), (0, "created_at"), (0, "metadata"),
                                                             (0, "extras.docent"), (1, "usage"), (1, "reasoning")}
    assert [m["role"] for m in value] == ["user", "assistant", "assistant", "assistant", "function", "function",
                                          "assistant", "assistant"]
    back = read(json.loads(json.dumps(value)), "qwen")
    assert [m.model_dump(exclude={"source_format"}) for m in back] == [m.model_dump(exclude={"source_format"})
                                                                       for m in msgs]


def test_strict_raises_where_something_is_approximated():
    msgs = [Message(role="tool", content=[ToolResultBlock(call_id="t", name="f", output="r"), TextBlock(text="note")])]
    value, losses = write(msgs, "qwen")
    assert value[-1] == {"role": "user", "content": "note"}
    assert [loss.action for loss in losses] == ["approximated"]
    with pytest.raises(LossError, match="message 0"):
        write(msgs, "qwen", strict=True)


def test_results_in_a_user_message_come_first():
    msgs = [
        Message(role="assistant", content=[ToolCallBlock(call_id="t1", name="f", arguments={})]),
        Message(role="user", content=[ToolResultBlock(call_id="t1", output="42"), TextBlock(text="and now?")]),
    ]
    value, _ = write(msgs, "qwen")
    assert [m["role"] for m in value] == ["assistant", "function", "user"]
    assert value[1] == {"role": "function", "content": "42", "name": "f", "extra": {"function_id": "t1"}}


# --- property: any valid Qwen conversation round trips ------------------------------

text = st.text(max_size=12)
uri = st.sampled_from(["https://e.com/a.png", f"data:image/png;base64,{PNG}", "data:image/png;base64,AAA=\n", "/tmp/x"])
item = st.one_of(
    st.builds(lambda t: {"text": t}, text),
    st.builds(lambda u: {"image": u}, uri),
    st.builds(lambda u: {"file": u}, uri),
    st.builds(lambda u: {"audio": u}, uri),
    st.builds(lambda u: {"audio": {"data": u, "format": "wav"}}, uri),
    st.builds(lambda u: {"video": [u, u]}, uri),
)
content = text | st.lists(item, max_size=3)
names = st.sampled_from([None, "a", "b"])
ids = st.sampled_from([None, "1", "2", "c"])


def _msg(role, body, reasoning, name, extra):
    out = {"role": role, **body}
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    if name is not None:
        out["name"] = name
    if extra is not None:
        out["extra"] = extra
    return out


def _call(name, fid, args):
    return {"content": "", "function_call": {"name": name, "arguments": args},
            **({"extra": {"function_id": fid}} if fid else {})}


plain = st.builds(lambda r, c, rc, n, e: _msg(r, {"content": c}, rc, n, e), st.sampled_from(["system", "user", "assistant"]),
                  content, st.none() | content, names, st.none() | st.dictionaries(st.sampled_from(["k", "z"]), text))
call = st.builds(lambda n, fid, a, who: {"role": "assistant", **_call(n, fid, a), **({"name": who} if who else {})},
                 st.sampled_from(["f", "g"]), ids, st.sampled_from(['{"a": 1}', "{}", "nope"]), names)
result = st.builds(lambda n, fid, c: {"role": "function", "name": n, "content": c,
                                      **({"extra": {"function_id": fid}} if fid else {})},
                   st.sampled_from(["f", "g"]), ids, content)


@settings(max_examples=100, deadline=None)
@given(st.lists(plain | call | result, max_size=8))
def test_any_valid_qwen_conversation_round_trips(data):
    assert convert(copy.deepcopy(data), from_="qwen", to="qwen") == data
