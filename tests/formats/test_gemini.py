"""The Gemini contents adapter on its own (no database, no google-genai)."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import FORMATS, detect, gemini, read, write
from store.model import (
    AudioBlock, CodeBlock, CodeResultBlock, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock,
    ToolResultBlock, VideoBlock,
)

from ..samples import OPENAI_CHAT

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "gemini.json").read_text(encoding="utf-8"))


def fixture() -> dict:
    return copy.deepcopy(FIXTURE)


def round_trip(data, strict: bool = False):
    return convert(copy.deepcopy(data), from_="gemini", to="gemini", strict=strict)


def test_fixture_round_trip_is_exact_and_reports_nothing():
    assert round_trip(FIXTURE, strict=True) == FIXTURE
    assert round_trip(FIXTURE["contents"]) == FIXTURE["contents"]  # the bare list stays a list


def test_canonical_form_of_the_fixture():
    msgs = read(fixture(), "gemini")
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                                      "tool", "assistant"]
    user = msgs[1].content
    assert isinstance(user[1], ImageBlock) and user[1].data.startswith(b"\x89PNG")
    assert isinstance(user[2], AudioBlock) and user[2].data.startswith(b"RIFF")
    assert isinstance(user[3], FileBlock) and user[3].url.endswith("kyoto-guide-pdf")
    assert isinstance(user[4], VideoBlock) and user[4].extras["gemini"]["fields"]["video_metadata"]
    thought, weather, museums = msgs[2].content
    assert isinstance(thought, ReasoningBlock) and thought.signature and thought.text.startswith("The user")
    assert weather.call_id == "call_weather_01" and weather.arguments == {"city": "Kyoto", "unit": "celsius"}
    assert "thought_signature" in weather.extras["gemini"]["fields"]  # Gemini 3 signs the first call
    ok, failed = msgs[3].content
    assert (ok.call_id, ok.name, ok.is_error) == ("call_weather_01", "get_weather", False)
    assert json.loads(ok.output) == {"condition": "rain", "temp_c": 11, "wind_kmh": 14.5}
    assert failed.is_error and failed.output == "museum service timed out after 30s"
    code, result, _ = msgs[4].content
    assert isinstance(code, CodeBlock) and code.language == "python"
    assert isinstance(result, CodeResultBlock) and result.exit_code == 0
    anonymous = msgs[6].content[0]
    assert anonymous.call_id_synthesized and msgs[7].content[0].call_id == anonymous.call_id  # paired by order
    assert msgs[8].content[-1].call_id == "call_places_03"  # pending


def test_detection_of_both_shapes_and_no_other_format_claims_them():
    assert detect(fixture()) == "gemini" and detect(FIXTURE["contents"]) == "gemini"
    bare = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}]
    assert detect(bare) == "gemini"
    assert [name for name, f in FORMATS.items() if f.looks_like(bare)] == ["gemini"]
    assert not gemini.looks_like([{"role": "user", "content": "hi"}])
    assert not gemini.looks_like([{"role": "user", "parts": [{"text": "hi"}], "kind": "request"}])
    assert not gemini.looks_like([])


def test_schema_errors_name_the_content_and_field():
    with pytest.raises(SchemaError) as err:
        read([{"role": "user", "parts": [{"function_call": {"args": {}}}]}], "gemini")
    assert "function_call.name" in str(err.value)


def test_calls_without_ids_pair_by_name_and_order_and_stay_without_ids():
    contents = [
        {"role": "model", "parts": [{"function_call": {"name": "a", "args": {"x": 1}}},
                                    {"function_call": {"name": "b", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "b", "response": {"output": "B"}}},
                                   {"function_response": {"name": "a", "response": {"output": "A"}}}]},
    ]
    msgs = read(copy.deepcopy(contents), "gemini")
    a, b = msgs[0].content
    rb, ra = msgs[1].content
    assert (ra.call_id, rb.call_id) == (a.call_id, b.call_id)
    assert round_trip(contents) == contents
    # to OpenAI the made-up ids hold the pair together; back to Gemini they are left out again
    there = convert(copy.deepcopy(contents), from_="gemini", to="openai")
    assert [m["tool_call_id"] for m in there[1:]] == [b.call_id, a.call_id]


def test_openai_conversation_becomes_api_ready_contents():
    value, losses = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "gemini")
    assert "system_instruction" in value and all(c["role"] in ("user", "model") for c in value["contents"])
    for n, content in enumerate(value["contents"]):
        calls = [p["function_call"] for p in content["parts"] if "function_call" in p]
        if calls and n + 1 < len(value["contents"]):
            after = value["contents"][n + 1]
            responses = [p["function_response"] for p in after["parts"] if "function_response" in p]
            assert [r["id"] for r in responses] == [c["id"] for c in calls]
            assert [r["name"] for r in responses] == [c["name"] for c in calls]
    assert any(loss.field == "name" for loss in losses)  # speaker names are reported dropped


def test_a_missing_response_is_answered_with_an_error_and_reported():
    openai = [{"role": "user", "content": "go"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
              {"role": "user", "content": "never mind"}]
    losses = []
    value = convert(openai, from_="openai", to="gemini", on_loss=losses.append)
    answer = value["contents"][2]["parts"][0]["function_response"]
    assert answer == {"name": "f", "id": "c1", "response": {"error": "(no result was recorded)"}}
    assert [(loss.field, loss.action) for loss in losses] == [("tool_result", "approximated")]
    with pytest.raises(LossError):
        convert(openai, from_="openai", to="gemini", strict=True)


def test_errors_and_json_results_keep_their_response_shape():
    msgs = read([{"role": "user", "parts": [
        {"function_response": {"id": "1", "name": "f", "response": {"error": {"code": 3}}}},
        {"function_response": {"id": "2", "name": "g", "response": {"temp": 1, "unit": "C"}}},
        {"function_response": {"id": "3", "name": "h"}},
    ]}], "gemini")
    err, plain, empty = msgs[0].content
    assert err.is_error and json.loads(err.output) == {"code": 3}
    assert not plain.is_error and json.loads(plain.output) == {"temp": 1, "unit": "C"}
    assert empty.output == ""
    result = ToolResultBlock(call_id="x", name="f", output="boom", is_error=True)
    value, _ = write([Message(role="tool", content=[result])], "gemini")
    assert value["contents"][0]["parts"][0]["function_response"]["response"] == {"error": "boom"}


def test_standard_base64_and_odd_parts_come_back_as_they_were():
    contents = [{"role": "user", "parts": [
        {"inline_data": {"data": base64.b64encode(b"\xfb\xff\xfe").decode(), "mime_type": "image/png"}},
        {"inline_data": {"data": "not base64!", "mime_type": "image/png"}},
        {"thought_signature": "c2ln"},
        {"text": "", "thought": True, "thought_signature": "c2ln"},
        {"text": "x", "function_call": {"name": "f"}},
        {"tool_call": {"id": "t"}},
    ]}]
    assert round_trip(contents) == contents
    blocks = read(copy.deepcopy(contents), "gemini")[0].content
    assert blocks[0].data == b"\xfb\xff\xfe" and isinstance(blocks[2], DataBlock) and isinstance(blocks[4], DataBlock)


def test_foreign_blocks_gemini_cannot_hold_are_reported():
    anthropic = [{"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "file_1"}},
                                              {"type": "text", "text": "look"}]}]
    losses = []
    value = convert(anthropic, from_="anthropic", to="gemini", on_loss=losses.append)
    assert value == {"contents": [{"role": "user", "parts": [{"text": "look"}]}]}
    assert [(loss.field, loss.action) for loss in losses] == [("image", "dropped")]


def test_streaming_reader_matches_the_whole_read():
    contents = FIXTURE["contents"]
    whole = read(copy.deepcopy(contents), "gemini")
    chunks = [copy.deepcopy(contents[i:i + 2]) for i in range(0, len(contents), 2)]
    assert [m for chunk in gemini.to_canonical_stream(chunks) for m in chunk] == whole


# --- any Gemini contents round-trip exactly ---------------------------------------------

_text = st.text(max_size=20)
_b64 = st.binary(max_size=12).map(lambda b: base64.urlsafe_b64encode(b).decode())
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=6)
_id = st.none() | st.text(min_size=1, max_size=8)


def _with_id(d: dict, call_id: str | None) -> dict:
    return d if call_id is None else {**d, "id": call_id}


_part = st.one_of(
    st.builds(lambda t: {"text": t}, _text),
    st.builds(lambda t, s: {"text": t, "thought": True, **({"thought_signature": s} if s else {})}, _text, _b64),
    st.builds(lambda d, m: {"inline_data": {"data": d, "mime_type": m}}, _b64,
              st.sampled_from(["image/png", "audio/wav", "video/mp4", "application/pdf"])),
    st.builds(lambda u, m: {"file_data": {"file_uri": u, "mime_type": m}}, _text, st.sampled_from(["image/jpeg", "text/plain"])),
    st.builds(lambda n, a, i, s: {"function_call": _with_id({"name": n, "args": a}, i),
                                  **({"thought_signature": s} if s else {})},
              _text, st.dictionaries(_text, _json, max_size=3), _id, _b64),
    st.builds(lambda n, k, v, i: {"function_response": _with_id({"name": n, "response": {k: v} if k else {"x": v}}, i)},
              _text, st.sampled_from(["output", "error", None]), _json, _id),
    st.builds(lambda c: {"executable_code": {"code": c, "language": "PYTHON"}}, _text),
    st.builds(lambda o, r: {"code_execution_result": {"outcome": o, "output": r}},
              st.sampled_from(["OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"]), _text),
)
_contents = st.lists(st.builds(lambda r, p: {"role": r, "parts": p}, st.sampled_from(["user", "model"]),
                               st.lists(_part, max_size=4)), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_contents, st.one_of(st.none(), _text))
def test_any_contents_round_trip_exactly(contents, system):
    data = contents if system is None else {"system_instruction": {"parts": [{"text": system}]}, "contents": contents}
    assert round_trip(data) == data


def test_a_content_without_role_is_a_users():
    """google-genai's ``Content.role`` is optional ("can be empty", a user's): such a Content is read as a
    user turn and written back without its role (or with its null), the same-format round trip exact."""
    from store import convert

    data = {"contents": [{"parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]},
                         {"role": None, "parts": [{"text": "x"}]}]}
    assert convert(data, from_="gemini", to="gemini") == data
    losses: list = []
    assert convert(data, from_="gemini", to="openai", on_loss=losses.append) == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "x"}]
    assert losses == []
