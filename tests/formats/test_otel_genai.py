"""The OpenTelemetry GenAI adapter on its own (no database, no jsonschema)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import FORMATS, detect, otel_genai, read, write
from store.model import (
    AudioBlock, CodeBlock, CodeResultBlock, DataBlock, ImageBlock, Message, ReasoningBlock, ToolCallBlock,
    ToolResultBlock,
)

from ..samples import OPENAI_CHAT

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "otel-genai.json").read_text(encoding="utf-8"))


def fixture() -> dict:
    return copy.deepcopy(FIXTURE)


def round_trip(data, strict: bool = False):
    return convert(copy.deepcopy(data), from_="otel-genai", to="otel-genai", strict=strict)


def test_fixture_round_trip_is_exact_and_reports_nothing():
    assert round_trip(FIXTURE, strict=True) == FIXTURE
    bare = FIXTURE["input_messages"]
    assert round_trip(bare) == bare  # the bare list stays a list


def test_canonical_form_of_the_fixture():
    msgs = read(fixture(), "otel-genai")
    assert [m.role for m in msgs] == ["system", "system", "user", "assistant", "tool", "assistant", "user",
                                      "assistant", "tool", "assistant"]
    assert msgs[0].extras["otel-genai"] == {"instructions": True} and msgs[2].name == "alice"
    image, uri, audio = msgs[2].content[1:]
    assert isinstance(image, ImageBlock) and image.data.startswith(b"\x89PNG")
    assert isinstance(uri, ImageBlock) and uri.url.endswith(".jpg")
    assert isinstance(audio, AudioBlock) and audio.file_id == "file-voice-note-7"
    thought, weather, museums = msgs[3].content
    assert isinstance(thought, ReasoningBlock) and weather.arguments == {"city": "Kyoto", "unit": "celsius"}
    ok, failed = msgs[4].content
    assert (ok.call_id, failed.call_id) == ("call_weather_01", "call_museums_02")
    assert json.loads(failed.output) == {"error": "museum service timed out after 30s"}  # no error flag
    code, logs, search, found, _ = msgs[5].content
    assert isinstance(code, CodeBlock) and isinstance(logs, CodeResultBlock) and logs.output == "4800\n"
    assert isinstance(search, DataBlock) and isinstance(found, DataBlock)  # other server tools as they are
    assert msgs[5].extras["otel-genai"] == {"finish_reason": "stop"}
    assert msgs[8].content[0].call_id == "call_museums_03"  # no id: answers the oldest open call
    assert msgs[9].extras["otel-genai"] == {"finish_reason": "tool_call", "output": True}


def test_detection_of_both_shapes_and_no_other_format_claims_them():
    assert detect(fixture()) == "otel-genai" and detect(FIXTURE["input_messages"]) == "otel-genai"
    bare = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    assert [name for name, f in FORMATS.items() if f.looks_like(bare)] == ["otel-genai"]
    assert not otel_genai.looks_like([{"role": "user", "parts": [{"text": "hi"}]}])  # Gemini's
    assert not otel_genai.looks_like([{"id": "1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}])
    assert not otel_genai.looks_like([]) and not otel_genai.looks_like({"messages": []})


def test_schema_errors_name_the_message_and_field():
    with pytest.raises(SchemaError) as err:
        read({"input_messages": [{"role": "user", "parts": [{"type": "blob", "content": "eA=="}]}]}, "otel-genai")
    assert "modality" in str(err.value)
    with pytest.raises(SchemaError) as err:  # an output message needs its finish_reason
        read({"output_messages": [{"role": "assistant", "parts": []}]}, "otel-genai")
    assert "finish_reason" in str(err.value)


def test_openai_conversation_splits_into_instructions_input_and_output():
    value, losses = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "otel-genai")
    assert set(value) == {"input_messages", "output_messages"}  # the first system message is named: kept a message
    assert value["input_messages"][0] == {"role": "system", "name": "ops",
                                          "parts": [{"type": "text", "content": "You are a weather agent."}]}
    unnamed, _ = write(read(copy.deepcopy(OPENAI_CHAT[1:]), "openai"), "otel-genai")
    assert unnamed["system_instructions"] == [{"type": "text", "content": "Answer briefly."}]
    replies = value["output_messages"]
    assert replies and all(m["role"] == "assistant" and m["finish_reason"] in ("stop", "tool_call") for m in replies)
    calls = {p["id"] for m in value["input_messages"] for p in m["parts"] if p["type"] == "tool_call"}
    answers = [p["id"] for m in value["input_messages"] for p in m["parts"] if p["type"] == "tool_call_response"]
    assert answers and set(answers) <= calls


def test_output_messages_are_the_trailing_replies():
    msgs = [Message(role="user", content=[]), Message(role="assistant", content=[
        ToolCallBlock(call_id="c1", name="f", arguments={})])]
    value, _ = write(msgs, "otel-genai")
    assert value["input_messages"] == [{"role": "user", "parts": []}]
    assert value["output_messages"][0]["finish_reason"] == "tool_call"
    msgs.append(Message(role="tool", content=[ToolResultBlock(call_id="c1", output="ok")]))
    value, _ = write(msgs, "otel-genai")
    assert value["output_messages"] == [] and value["input_messages"][-1]["role"] == "tool"


def test_what_the_schema_cannot_hold_is_reported_by_name():
    msgs = [Message(role="assistant", content=[
        ReasoningBlock(text="hm", signature="sig"),
        ImageBlock(url="https://x/y.png", filename="y.png"),
        ToolCallBlock(call_id="c1", name="f", arguments={}),
    ], model="gpt-x"), Message(role="tool", content=[ToolResultBlock(call_id="c1", output="boom", is_error=True)])]
    value, report = write(msgs, "otel-genai")
    assert {(loss.field, loss.action) for loss in report} == {
        ("reasoning.signature", "dropped"), ("image.filename", "dropped"), ("model", "dropped"),
        ("tool_result.is_error", "approximated")}
    with pytest.raises(LossError):
        write(msgs, "otel-genai", strict=True)
    assert value["input_messages"][0]["parts"][1] == {"type": "uri", "modality": "image", "uri": "https://x/y.png"}


def test_data_uris_become_blobs_and_string_arguments_stay_text():
    msgs = [Message(role="user", content=[ImageBlock(url="data:image/png;base64,eA==")])]
    value, losses = write(msgs, "otel-genai")
    assert value["input_messages"][0]["parts"] == [
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "eA=="}]
    assert not list(losses)
    data = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "1", "name": "f", "arguments": '{"a": 1}'},
                                            {"type": "tool_call", "name": "g", "arguments": "not json"}]}]
    call, bad = read(copy.deepcopy(data), "otel-genai")[0].content
    assert call.arguments == {"a": 1} and bad.parse_error and bad.call_id_synthesized
    assert round_trip(data) == data


def test_streaming_reader_matches_the_whole_read():
    bare = FIXTURE["input_messages"]
    whole = read(copy.deepcopy(bare), "otel-genai")
    chunks = [copy.deepcopy(bare[i:i + 3]) for i in range(0, len(bare), 3)]
    assert [m for chunk in otel_genai.to_canonical_stream(chunks) for m in chunk] == whole


# --- any OTel GenAI attributes round-trip exactly -------------------------------------------

_text = st.text(max_size=12)
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False,
                     allow_infinity=False) | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=6)
_id = st.none() | st.just(None).map(lambda _: "null") | st.text(min_size=1, max_size=6)


def _with_id(part: dict, call_id: str | None) -> dict:
    return part if call_id is None else {**part, "id": None if call_id == "null" else call_id}


_MEDIA_KEY = {"blob": "content", "file": "file_id", "uri": "uri"}
_media = st.builds(lambda kind, value, modality, mime: {"type": kind, "modality": modality, _MEDIA_KEY[kind]: value,
                                                        **({"mime_type": mime} if mime != "-" else {})},
                   st.sampled_from(sorted(_MEDIA_KEY)), _text | st.just("eA=="),
                   st.sampled_from(["image", "audio", "video", "document", "other"]),
                   st.sampled_from(["-", None, "image/png", "application/pdf"]))
_content_part = st.one_of(
    st.builds(lambda t, k: {"type": k, "content": t}, _text, st.sampled_from(["text", "reasoning"])),
    _media,
)
_part = st.one_of(
    _content_part,
    st.builds(lambda t: {"type": "text", "content": t, "extra": 1}, _text),
    st.builds(lambda n, a, i: _with_id({"type": "tool_call", "name": n, "arguments": a}, i), _text,
              _json | st.just('{"a": 1}'), _id),
    st.builds(lambda r, i: _with_id({"type": "tool_call_response", "response": r}, i), _json | _text, _id),
    st.builds(lambda ps, i: _with_id({"type": "tool_call_response", "response": ps}, i),
              st.lists(_content_part, min_size=1, max_size=2), _id),
    st.builds(lambda c, i: _with_id({"type": "server_tool_call", "name": "code_interpreter",
                                     "server_tool_call": {"type": "code_interpreter", "code": c}}, i), _text, _id),
    st.builds(lambda o, i: _with_id({"type": "server_tool_call_response", "server_tool_call_response": {
        "type": "code_interpreter", "outputs": [{"type": "logs", "logs": o}]}}, i), _text, _id),
    st.builds(lambda v: {"type": "custom", "value": v}, _json),
    st.builds(lambda v: {"type": "server_tool_call", "name": "web_search",
                         "server_tool_call": {"type": "web_search", "query": v}}, _json),
)
_roles = st.sampled_from(["system", "user", "assistant", "tool", "developer"])


def _message(role, parts, name, reason):
    out = {"role": role, "parts": parts}
    if name is not None:
        out["name"] = None if name == "null" else name
    if reason is not None:
        out["finish_reason"] = reason
    return out


_input = st.builds(_message, _roles, st.lists(_part, max_size=3), st.none() | st.just("null") | _text,
                   st.none() | st.just("stop"))
_output = st.builds(_message, _roles, st.lists(_part, max_size=3), st.none() | _text,
                    st.sampled_from(["stop", "length", "tool_call", "custom"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_input, min_size=1, max_size=4), st.none() | st.lists(_output, max_size=2),
       st.none() | st.lists(_content_part, max_size=2), st.booleans())
def test_any_attributes_round_trip_exactly(inputs, outputs, system, bare):
    data: object
    if bare:
        data = inputs
    else:
        data = {"input_messages": inputs}
        if outputs is not None:
            data["output_messages"] = outputs
        if system is not None:
            data["system_instructions"] = system
    assert round_trip(data) == data
