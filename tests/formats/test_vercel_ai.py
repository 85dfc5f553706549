"""The AI SDK UIMessage adapter on its own (no database, no node)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import FORMATS, detect, read, vercel_ai, write
from store.model import DataBlock, ErrorBlock, ImageBlock, Message, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock

from .test_fidelity import ORDINARY_OPENAI

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "vercel-ai.json").read_text(encoding="utf-8"))


def round_trip(data, strict: bool = False):
    return convert(copy.deepcopy(data), from_="vercel-ai", to="vercel-ai", strict=strict)


def test_fixture_round_trip_is_exact_and_reports_nothing():
    assert round_trip(FIXTURE, strict=True) == FIXTURE
    wrapped = {"id": "chat_1", "trigger": "submit-message", "messages": FIXTURE}  # a useChat request body
    assert round_trip(wrapped) == wrapped


def test_a_multi_step_turn_is_split_into_calls_and_results_in_order():
    msgs = read(copy.deepcopy(FIXTURE), "vercel-ai")
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool",
                                      "assistant", "user", "assistant"]
    first = msgs[2]
    assert first.external_id == "msg_a1" and first.metadata["model"] == "gpt-5-mini"
    calls = [b for b in first.content if isinstance(b, ToolCallBlock)]
    assert [(c.call_id, c.name, c.arguments["city"]) for c in calls] == [
        ("call_weather_1", "get_weather", "Kyoto"), ("call_weather_2", "get_weather", "Atlantis")]
    ok, failed = msgs[3].content[0], msgs[4].content[0]
    assert (ok.call_id, ok.is_error, json.loads(ok.output)) == ("call_weather_1", False, {"condition": "rain", "tempC": 11})
    assert (failed.call_id, failed.is_error, failed.output) == ("call_weather_2", True, "unknown city: Atlantis")
    dynamic = msgs[5].content[0]
    assert dynamic.name == "lookup_museum" and dynamic.extras["vercel-ai"]["dynamic"]
    assert msgs[6].content[0].output == "Kyoto National Museum: open 9-17"
    assert all(m.external_id is None and m.extras["vercel-ai"]["joined"] for m in msgs[3:8])
    assert isinstance(msgs[1].content[1], ImageBlock) and msgs[1].content[1].data.startswith(b"\x89PNG")
    source, document, weather = msgs[5].content[1:]
    assert source.extras["vercel-ai"]["part"] and source.data["type"] == "source-url"
    assert weather.data == {"city": "Kyoto", "condition": "rain", "tempC": 11}
    pending = msgs[9].content[-1]
    assert pending.call_id == "call_book_1" and not any(isinstance(b, ToolResultBlock) for m in msgs[9:] for b in m.content)


def test_openai_tool_turns_merge_into_one_ui_message_per_turn_with_steps():
    value = convert(copy.deepcopy(ORDINARY_OPENAI), from_="openai", to="vercel-ai", strict=True)
    assert [m["role"] for m in value] == ["system", "user", "assistant"]
    parts = value[2]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "tool-get_weather", "tool-get_weather", "step-start",
                                          "tool-get_time", "step-start", "text"]
    assert parts[1] == {"type": "tool-get_weather", "toolCallId": "call_1", "state": "output-available",
                        "input": {"city": "Kyoto"}, "output": "Sunny, 21C"}
    assert len({m["id"] for m in value}) == 3  # made up where the source has none, each its own
    back = convert(value, from_="vercel-ai", to="openai")
    assert [(m["role"], m.get("tool_call_id"), [c["id"] for c in m.get("tool_calls", [])]) for m in back] == [
        (m["role"], m.get("tool_call_id"), [c["id"] for c in m.get("tool_calls") or []]) for m in ORDINARY_OPENAI]


def test_detection_and_no_other_format_claims_ui_messages():
    assert detect(copy.deepcopy(FIXTURE)) == "vercel-ai"
    assert detect({"messages": copy.deepcopy(FIXTURE)}) == "vercel-ai"
    assert [n for n, f in FORMATS.items() if f.looks_like(FIXTURE)] == ["vercel-ai"]
    assert not vercel_ai.looks_like([{"role": "user", "parts": [{"text": "hi"}]}])  # Gemini
    assert not vercel_ai.looks_like([])


def test_schema_errors_name_the_message_and_field():
    with pytest.raises(SchemaError) as err:
        read([{"id": "a", "role": "assistant", "parts": [{"type": "tool-x", "state": "input-available"}]}], "vercel-ai")
    assert "toolCallId" in str(err.value)
    with pytest.raises(SchemaError):
        read([{"id": "a", "role": "tool", "parts": []}], "vercel-ai")


def test_blocks_without_a_part_are_carried_and_come_back():
    msgs = [Message(role="assistant", content=[TextBlock(text="x"), RefusalBlock(text="no"),
                                               ErrorBlock(message="boom", code="E1")])]
    value, losses = write(msgs, "vercel-ai")
    assert [(l.field, l.action) for l in losses] == [("refusal", "carried"), ("error", "carried")]
    assert value[0]["parts"][2]["type"] == "data-convstore"
    back = read(value, "vercel-ai")[0].content
    assert isinstance(back[1], RefusalBlock) and isinstance(back[2], ErrorBlock) and back[2].code == "E1"


def test_losses_name_the_field():
    msgs = [Message(role="user", name="ann", model="m", content=[ImageBlock(file_id="file_1")]),
            Message(role="assistant", content=[ToolCallBlock(call_id="c1", name="f", arguments_raw="{oops",
                                                             parse_error="bad")]),
            Message(role="tool", external_id="t1", content=[ToolResultBlock(call_id="c1", output="r",
                                                                            error={"type": "x"})]),
            Message(role="tool", content=[ToolResultBlock(call_id="nowhere", name="g", output="?")])]
    value, losses = write(msgs, "vercel-ai")
    assert {(l.index, l.field, l.action) for l in losses} == {
        (0, "name", "dropped"), (0, "model", "dropped"), (0, "image", "dropped"),
        (1, "tool_call.arguments", "approximated"), (2, "external_id", "dropped"),
        (2, "tool_result.error", "dropped"), (3, "tool_result", "approximated")}
    assert value[1]["parts"][1]["input"] == "{oops" and value[1]["parts"][2]["toolCallId"] == "nowhere"
    with pytest.raises(LossError):
        write(msgs, "vercel-ai", strict=True)


def test_results_stay_json_and_denied_calls_keep_their_approval():
    ui = [{"id": "a", "role": "assistant", "parts": [
        {"type": "tool-f", "toolCallId": "c1", "state": "output-available", "input": None, "output": [1, {"a": None}],
         "preliminary": False},
        {"type": "tool-g", "toolCallId": "c2", "state": "output-denied", "input": {},
         "approval": {"id": "ap1", "approved": False, "reason": "not now"}},
        {"type": "dynamic-tool", "toolName": "h", "toolCallId": "c3", "state": "output-error", "errorText": "x",
         "rawInput": "{"}]}]
    msgs = read(copy.deepcopy(ui), "vercel-ai")
    assert [r.content[0].output for r in msgs[1:]] == ['[1,{"a":null}]', "not now", "x"]
    assert round_trip(ui, strict=True) == ui


_text = st.text(max_size=12)
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=6)
_id = st.text(min_size=1, max_size=6)
_state = st.sampled_from(["input-streaming", "input-available", "output-available", "output-error"])


def _tool(kind: str, name: str, call_id: str, state: str, args, out) -> dict:
    part = ({"type": "dynamic-tool", "toolName": name} if kind == "dynamic" else {"type": f"tool-{name}"})
    part.update(toolCallId=call_id, state=state)
    if state != "input-streaming" or args is not None:
        part["input"] = args
    if state == "output-available":
        part["output"] = out
    if state == "output-error":
        part["errorText"] = out if isinstance(out, str) else "failed"
    return part


_part = st.one_of(
    st.builds(lambda t, s: {"type": "text", "text": t, **({"state": s} if s else {})}, _text,
              st.sampled_from([None, "done", "streaming"])),
    st.builds(lambda t: {"type": "reasoning", "text": t, "providerMetadata": {"x": {"sig": "s"}}}, _text),
    st.builds(lambda m, u: {"type": "file", "mediaType": m, "url": u}, st.sampled_from(["image/png", "application/pdf"]),
              st.sampled_from(["https://x.test/a", "data:image/png;base64,iVBORw0K", "data:text/plain;base64,aGk="])),
    st.just({"type": "step-start"}),
    st.builds(_tool, st.sampled_from(["static", "dynamic"]), _text, _id, _state, _json, _json),
    st.builds(lambda n, d, i: {"type": f"data-{n}", "data": d, **({"id": i} if i else {})}, _text, _json,
              st.none() | _id),
    st.builds(lambda u: {"type": "source-url", "sourceId": "s", "url": u}, _text),
)
_message = st.builds(lambda i, r, p, m: {"id": i, "role": r, "parts": p, **m}, _id,
                     st.sampled_from(["system", "user", "assistant"]), st.lists(_part, max_size=6),
                     st.sampled_from([{}, {"metadata": {}}, {"metadata": None}, {"metadata": {"k": 1}},
                                      {"metadata": "x"}]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_message, min_size=1, max_size=5))
def test_any_ui_messages_round_trip_exactly(messages):
    assert round_trip(messages, strict=True) == messages


def test_empty_and_foreign_assistant_messages():
    assert round_trip([{"id": "a", "role": "assistant", "parts": []}]) == [{"id": "a", "role": "assistant", "parts": []}]
    value = convert([{"role": "assistant", "content": "hi"}, {"role": "assistant", "content": "again"}],
                    from_="openai", to="vercel-ai")
    assert [m["parts"] for m in value] == [[{"type": "step-start"}, {"type": "text", "text": "hi"}],
                                           [{"type": "step-start"}, {"type": "text", "text": "again"}]]
    assert isinstance(read(value, "vercel-ai")[0].content[0], TextBlock)
    assert not any(isinstance(b, DataBlock) for m in read(value, "vercel-ai") for b in m.content)


def test_stream_reader_reads_chunk_by_chunk_as_the_whole():
    import json
    from pathlib import Path

    from store.errors import SchemaError
    from store.formats import vercel_ai

    data = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "vercel-ai.json").read_text())
    items = data["messages"] if isinstance(data, dict) else data
    whole = vercel_ai.to_canonical(items)
    for size in (1, 2, 5):
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        assert [m for chunk in vercel_ai.to_canonical_stream(chunks) for m in chunk] == whole
    bad = [*items[:3], {"id": "x", "role": "robot", "parts": []}]
    try:
        list(vercel_ai.to_canonical_stream([bad[:2], bad[2:]]))
    except SchemaError as exc:
        assert any(i == 3 for i, *_ in exc.problems)
    else:
        raise AssertionError("a bad role was read")
