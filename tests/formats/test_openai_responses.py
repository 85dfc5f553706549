"""The OpenAI Responses input items adapter on its own (no database)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import detect, openai_responses, read, write
from store.lean import Plain, Result, canonical
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
    UsageBlock,
    VideoBlock,
)

from ..samples import OPENAI_CHAT, PNG

NAME = "openai-responses"
ROOT = Path(__file__).parents[2]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / f"{NAME}.json").read_text(encoding="utf-8"))
SAMPLE = json.loads((ROOT / "store" / "samples" / f"{NAME}.json").read_text(encoding="utf-8"))
FAKE_ID = "__fake_id__"


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def calls(messages: list[Message]) -> list[ToolCallBlock]:
    return [b for m in messages for b in m.content if isinstance(b, ToolCallBlock)]


def results(messages: list[Message]) -> list[ToolResultBlock]:
    return [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]


def texts(messages: list[Message]) -> list[str]:
    return [b.text for m in messages for b in m.content if isinstance(b, TextBlock)]


# --- same format ------------------------------------------------------------------


@pytest.mark.parametrize("data", [FIXTURE, SAMPLE], ids=["fixture", "sample"])
def test_round_trip_is_exact(data):
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


def test_fixture_covers_every_kind():
    kinds = {item.get("type", "easy") for item in FIXTURE}
    parts = {p["type"] for item in FIXTURE for key in ("content", "output")
             if isinstance(item.get(key), list) for p in item[key]}
    assert kinds == {"easy", "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                     "custom_tool_call_output", "web_search_call", "file_search_call", "item_reference"}
    assert parts >= {"input_text", "input_image", "input_file", "output_text", "refusal"}
    assert {item["role"] for item in FIXTURE if "role" in item} == {"developer", "system", "user", "assistant"}
    assert any(isinstance(item.get("output"), list) for item in FIXTURE)
    assert any(item.get("encrypted_content") for item in FIXTURE)


def test_one_model_turn_becomes_one_assistant_message():
    msgs = read(fixture(), NAME)
    turn = msgs[3]  # reasoning, an output message and two parallel calls: four items
    assert turn.role == "assistant" and [b.kind for b in turn.content] == ["reasoning", "text", "tool_call", "tool_call"]
    reasoning, text, kyoto, paris = turn.content
    assert reasoning.text == "**Checking the weather**\n\nRain decides the plan.\n\nTwo cities: call the tool twice."
    assert reasoning.data == "gAAAAABoFixtureEncryptedReasoning0001==" and not reasoning.redacted
    assert text.text == "Let me check both cities."
    assert (kyoto.call_id, kyoto.name, kyoto.arguments) == ("call_kyoto", "get_weather", {"city": "Kyoto"})
    assert paris.arguments_raw == '{"city": "Paris", "unit": "C"}' and turn.source_format == NAME


def test_outputs_become_tool_messages_named_after_their_call():
    msgs = read(fixture(), NAME)
    first, second = msgs[4], msgs[5]
    assert first.role == "tool" and first.content[0].call_id == "call_kyoto"
    assert first.content[0].name == "get_weather" and first.content[0].output == "Rain all day, 14C"
    text, image = second.content[0].output
    assert text == TextBlock(text="Sunny, 21C. Radar:")
    assert isinstance(image, ImageBlock) and image.media_type == "image/png" and image.data.startswith(b"\x89PNG")


def test_input_parts_map_to_media_blocks():
    msgs = read(fixture(), NAME)
    assert msgs[0].role == "system" and msgs[0].source_role == "developer"
    assert msgs[1].role == "system" and msgs[1].source_role is None
    text, inline, url, by_id, pdf, file_id, file_url = msgs[2].content
    assert isinstance(text, TextBlock)
    assert isinstance(inline, ImageBlock) and inline.data.startswith(b"\x89PNG")
    assert inline.extras[NAME]["fields"] == {"detail": "low"}
    assert url.url == "https://example.com/kyoto-map.png" and by_id.file_id == "file-photo"
    assert isinstance(pdf, FileBlock) and pdf.media_type == "application/pdf" and pdf.filename == "guide.pdf"
    assert pdf.data.startswith(b"%PDF")
    assert file_id == FileBlock(file_id="file-itinerary") and file_url == FileBlock(url="https://example.com/rainy-kyoto.pdf")


def test_other_item_types_are_kept_whole():
    msgs = read(fixture(), NAME)
    search, files, answer = msgs[6].content
    assert isinstance(search, DataBlock) and search.data["type"] == "web_search_call"
    assert search.data == FIXTURE[9] and files.data == FIXTURE[10]
    assert answer.text.startswith("Kyoto: rain") and answer.extras[NAME]["fields"]["annotations"][0]["type"] == "url_citation"
    reference = msgs[-1].content[0]
    assert reference == DataBlock(data={"type": "item_reference", "id": "msg_0002"}, extras={NAME: {"item": True}})


def test_refusals_custom_calls_and_raw_reasoning():
    msgs = read(fixture(), NAME)
    assert [b.kind for b in msgs[8].content] == ["text", "refusal"]
    assert msgs[8].content[1] == RefusalBlock(text="but I cannot book flights.")
    reasoning, patch = msgs[10].content
    assert reasoning.text == "The user wants a patch to the itinerary file."  # no summary: the raw text
    assert patch.name == "apply_patch" and patch.arguments_raw.startswith("*** Begin Patch")
    assert patch.parse_error and patch.extras[NAME]["type"] == "custom"
    assert msgs[11].content[0].output == "Done: 1 line added" and msgs[11].content[0].name == "apply_patch"
    bad = msgs[12].content[0]
    assert bad.arguments is None and bad.arguments_raw == "{not json" and "not valid JSON" in bad.parse_error


def test_unknown_keys_nulls_and_odd_shapes_are_kept():
    data = [
        {"role": "user", "content": [], "x_trace": 7},
        {"role": "user", "content": [{"type": "input_text", "text": "hi", "prompt_cache_breakpoint": {"mode": "explicit"}}]},
        {"role": "user", "content": "plain", "type": "message", "status": None},
        {"role": "system", "content": [{"type": "refusal", "refusal": "odd"}, {"type": "output_text", "text": "x"}]},
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed", "content": []},
        {"role": "assistant", "content": [{"type": "input_text", "text": "as input"}]},
        {"role": "assistant", "content": "one", "phase": "commentary"},
        {"role": "assistant", "content": "two"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a", "x": 1}], "encrypted_content": None,
         "content": None},
        {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "opaque"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "provider_data": {"model": "m"}},
        {"type": "function_call_output", "call_id": "c1", "output": [], "name": None},
        {"type": "function_call_output", "call_id": "c9", "output": "orphan", "name": "g"},
        {"type": "function_call_output", "call_id": "c8", "output": "orphan, no name"},
        {"role": "user", "content": [
            {"type": "input_image", "image_url": "data:;base64,AAAA"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG[:-2]}\n=="},
            {"type": "input_file", "file_data": "JVBERi0="},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": "not base64!", "format": "wav"}},
        ]},
        {"id": "msg_0001"},
        {"type": "compaction_trigger"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "{\"a\": 1}"},
        {"type": "function_call_output", "call_id": "c2", "output": "answered as a function output"},
    ]
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


def test_audio_from_this_format_comes_back_and_from_elsewhere_is_a_stand_in():
    audio = read([{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg==",
                                                                                        "format": "wav"}}]}], NAME)
    assert isinstance(audio[0].content[0], AudioBlock) and audio[0].content[0].data == b"RIFF"
    value, losses = write([Message(role="user", content=[AudioBlock(data=b"RIFF", media_type="audio/wav")])], NAME)
    assert value == [{"role": "user", "content": "[audio audio/wav: 4 bytes inline]"}]
    assert [(loss.field, loss.action) for loss in losses] == [("audio", "approximated")]


# --- bad input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"type": "input_text"}]}], 1, "content[0].text"),
        ([{"role": "wizard", "content": "x"}], 0, "role"),
        ([{"role": "user"}], 0, "content"),
        ([{"role": "user", "content": [{"type": "input_video", "url": "v"}]}], 0, "content[0]"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}}], 0, "arguments"),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], 0, "call_id"),
        ([{"type": "function_call_output", "call_id": "c", "output": 5}], 0, "output"),
        ([{"type": "function_call_output", "call_id": "c", "output": [{"type": "refusal", "refusal": "x"}]}], 0,
         "output[0]"),
        ([{"type": "reasoning", "summary": [{"type": "summary_text"}]}], 0, "summary[0].text"),
        ([{"type": "web_search_call", "id": "ws"}, {"type": 7}], 1, "type"),
        ([{"x": 1}], 0, "id"),
        ([{"role": "user", "content": "x"}, "hello"], 1, ""),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, NAME)
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path
    assert f"message {index}" in str(info.value) and NAME in str(info.value)


def test_not_a_list():
    with pytest.raises(SchemaError, match="expected a list"):
        read("hello", NAME)


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
junk_keys = st.sampled_from(["role", "content", "type", "id", "call_id", "name", "arguments", "output", "summary",
                             "text", "input"])
junk_values = json_value | st.sampled_from(["user", "assistant", "message", "function_call", "function_call_output",
                                            "reasoning", "custom_tool_call", "input_text", "output_text"])
junk_item = st.dictionaries(junk_keys, junk_values | st.lists(st.dictionaries(junk_keys, junk_values, max_size=3),
                                                              max_size=2), max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.lists(junk_item, max_size=4) | json_value)
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_=NAME, to=NAME)
    except SchemaError:
        pass


# --- detection ----------------------------------------------------------------------


def test_looks_like():
    assert openai_responses.looks_like(FIXTURE) and detect(fixture()) == NAME
    assert openai_responses.looks_like([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}])
    assert openai_responses.looks_like([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
    assert not openai_responses.looks_like(OPENAI_CHAT)
    assert not openai_responses.looks_like([{"role": "user", "content": "hi"}])  # plain chat: left to openai
    assert not openai_responses.looks_like([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert not openai_responses.looks_like([{"type": "message", "role": "user", "contents": []}])  # agent-framework
    assert not openai_responses.looks_like("hello") and not openai_responses.looks_like([])


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "fixtures").glob("*.json")), ids=lambda p: p.stem)
def test_no_other_fixture_looks_like_responses(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert openai_responses.looks_like(data) == path.stem.startswith(NAME)


# --- other formats ---------------------------------------------------------------------


def test_openai_chat_to_responses_keeps_call_ids_arguments_and_text():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    fcs = [i for i in value if i.get("type") == "function_call"]
    assert [(c["call_id"], c["name"], c["arguments"]) for c in fcs] == [
        ("call_kyoto", "get_weather", '{"city": "Kyoto"}'), ("call_paris", "get_weather", '{"city": "Paris", "unit": "C"}'),
        ("call_bad", "search", "{not json")]
    outputs = [i for i in value if i.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        ("call_kyoto", "Sunny, 21C"), ("call_paris", [{"type": "input_text", "text": "Rain, 12C"}])]
    assert value[0] == {"role": "developer", "content": "You are a weather agent."}
    assert {"role": "assistant", "content": "Kyoto is sunny (21C); Paris has rain (12C)."} in value
    refusal = next(i for i in value if i.get("type") == "message")
    assert refusal == {"type": "message", "role": "assistant", "id": FAKE_ID, "status": "completed",
                       "content": [{"type": "refusal", "refusal": "I cannot book flights."}]}
    image = value[2]["content"][1]
    assert image == {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "low"} or \
        image["image_url"].startswith("data:image/png;base64,")


def test_openai_chat_there_and_back_keeps_calls_results_and_text():
    before = read(copy.deepcopy(OPENAI_CHAT), "openai")
    after = read(convert(convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME), from_=NAME, to="openai"),
                 "openai")
    key = lambda c: (c.call_id, c.name, c.arguments_raw)  # noqa: E731
    assert [key(c) for c in calls(after)] == [key(c) for c in calls(before)]
    assert [r.call_id for r in results(after)] == [r.call_id for r in results(before)]
    assert {t for t in texts(before) if t} <= set(texts(after))


def test_responses_to_openai_chat_and_back_keeps_calls_and_text():
    before = read(fixture(), NAME)
    chat = convert(fixture(), from_=NAME, to="openai")
    assert [c["id"] for m in chat for c in m.get("tool_calls") or []] == ["call_kyoto", "call_paris", "call_patch",
                                                                          "call_search"]
    assert [m["tool_call_id"] for m in chat if m["role"] == "tool"] == ["call_kyoto", "call_paris", "call_patch",
                                                                        "call_search"]
    after = read(convert(chat, from_="openai", to=NAME), NAME)
    key = lambda c: (c.call_id, c.name, c.arguments_raw)  # noqa: E731
    assert [key(c) for c in calls(after)] == [key(c) for c in calls(before)]
    assert [(r.call_id, r.name) for r in results(after)] == [(r.call_id, r.name) for r in results(before)]
    assert set(texts(before)) - set(texts(after)) == set()


def test_chat_custom_tool_calls_stay_custom():
    data = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "custom", "custom": {"name": "patch", "input": "+ line"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    value = convert(copy.deepcopy(data), from_="openai", to=NAME)
    assert value == [{"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "+ line"},
                     {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"}]


def test_outputs_are_moved_after_their_call():
    msgs = [
        Message(role="user", content=[ToolResultBlock(call_id="t1", output="42"), TextBlock(text="and now?")]),
        Message(role="assistant", content=[ToolCallBlock(call_id="t1", name="f", arguments={"a": 1}),
                                           ToolCallBlock(call_id="t2", name="g", arguments={})]),
        Message(role="assistant", content=[TextBlock(text="done")]),
    ]
    value, losses = write(msgs, NAME)
    assert value == [
        {"role": "user", "content": "and now?"},
        {"type": "function_call", "call_id": "t1", "name": "f", "arguments": '{"a":1}'},
        {"type": "function_call", "call_id": "t2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "t1", "output": "42"},
        {"role": "assistant", "content": "done"},
    ]
    assert not list(losses)


def test_reasoning_goes_before_the_output_it_follows():
    msgs = [Message(role="assistant", content=[TextBlock(text="a"), ReasoningBlock(text="why"),
                                               ToolCallBlock(call_id="t", name="f", arguments={}),
                                               ReasoningBlock(text="after")])]
    value, _ = write(msgs, NAME)
    assert [i.get("type", i.get("role")) for i in value] == ["assistant", "reasoning", "reasoning", "function_call"]
    assert value[1] == {"type": "reasoning", "summary": [{"type": "summary_text", "text": "why"}], "id": FAKE_ID}


def test_assistant_text_from_elsewhere_is_easy_messages():
    msgs = [Message(role="assistant", content=[TextBlock(text="one"), TextBlock(text="two"),
                                               ImageBlock(url="https://e.com/x.png"), UsageBlock(usage=Usage())])]
    value, losses = write(msgs, NAME)
    assert value == [{"role": "assistant", "content": "one"}, {"role": "assistant", "content": "two"},
                     {"role": "assistant", "content": "[image: https://e.com/x.png]"}]
    assert [(loss.field, loss.action) for loss in losses] == [("image", "approximated"), ("usage", "dropped")]
    back = read(value, NAME)
    assert len(back) == 1 and texts(back) == ["one", "two", "[image: https://e.com/x.png]"]


def test_what_items_cannot_express_is_reported_and_strict_raises():
    msgs = [
        Message(role="user", name="bob", external_id="m1", metadata={"k": "v"},
                content=[TextBlock(text="see"), VideoBlock(url="https://e.com/v.mp4"), DataBlock(data={"a": [1]})]),
        Message(role="assistant", model="gpt", content=[ReasoningBlock(text="hm", signature="sig", data="opaque"),
                                                        ToolCallBlock(call_id="t", name="f", arguments={})]),
        Message(role="tool", content=[ToolResultBlock(call_id="t", output="boom", is_error=True), TextBlock(text="n")]),
    ]
    value, losses = write(msgs, NAME)
    assert {(loss.index, loss.field, loss.action) for loss in losses} == {
        (0, "name", "dropped"), (0, "external_id", "dropped"), (0, "metadata", "dropped"),
        (0, "video", "approximated"), (0, "data", "approximated"), (1, "model", "dropped"),
        (1, "reasoning.data", "dropped"), (1, "reasoning.signature", "dropped"),
        (2, "tool_result.is_error", "approximated"), (2, "content", "approximated"),
    }
    assert value[0]["content"][2] == {"type": "input_text", "text": '{"a":[1]}'}
    assert value[-1] == {"role": "user", "content": "n"} and value[-2]["output"] == "boom"
    with pytest.raises(LossError, match="message 0"):
        write(msgs, NAME, strict=True)


def test_any_canonical_input_is_written():
    """Other code may put anything in the notes of ``extras["openai-responses"]`` (an object: the model
    says so): what does not fit is ignored."""
    msgs = [
        Message(role="assistant", extras={NAME: {"x": "junk"}}, content=[
            TextBlock(text="a", extras={NAME: {"fields": 5, "type": 1, "item": "x"}}),
            ReasoningBlock(text="r", extras={NAME: {"summary": "no", "fields": []}}),
            ToolCallBlock(call_id="x", name="f", extras={NAME: {}}), DataBlock(data=[1], extras={NAME: {"item": True}}),
        ]),
        Message(role="user", extras={NAME: {"fields": "x", "content": 3}}, content=[
            ImageBlock(extras={NAME: {"fields": None}}), FileBlock(extras={NAME: {"file_data": 5}}),
            AudioBlock(extras={NAME: {"audio": "yes"}})]),
        Message(role="tool", content=[ToolResultBlock(call_id="x", output=[TextBlock(text="ok")],
                                                      extras={NAME: {"fields": [1], "type": 9}})]),
        Message(role="tool"),
    ]
    value, _ = write(msgs, NAME)
    json.dumps(value)
    assert [i.get("type", i.get("role")) for i in value] == ["assistant", "reasoning", "function_call", "assistant",
                                                             "user", "function_call_output"]
    read(value, NAME)


# --- property: any valid Responses item list round trips ----------------------------------

text = st.text(max_size=10)
ids = st.sampled_from(["c1", "c2", "c3"])
detail = st.sampled_from([{}, {"detail": "low"}, {"detail": "auto"}])
input_part = st.one_of(
    st.builds(lambda t: {"type": "input_text", "text": t}, text),
    st.builds(lambda u, d: {"type": "input_image", "image_url": u, **d},
              st.sampled_from(["https://e.com/a.png", f"data:image/png;base64,{PNG}", "data:image/png;base64,AA=\n"]),
              detail),
    st.builds(lambda d: {"type": "input_image", "file_id": "file-1", **d}, detail),
    st.builds(lambda f: {"type": "input_file", **f}, st.sampled_from([
        {"file_id": "file-2"}, {"file_url": "https://e.com/a.pdf"},
        {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}])),
)
output_part = st.one_of(
    st.builds(lambda t, a: {"type": "output_text", "text": t, **a}, text,
              st.sampled_from([{}, {"annotations": []}, {"annotations": [], "logprobs": []}])),
    st.builds(lambda t: {"type": "refusal", "refusal": t}, text),
)
input_message = st.builds(
    lambda r, c, typed: {"role": r, "content": c, **({"type": "message"} if typed else {})},
    st.sampled_from(["user", "system", "developer"]), text | st.lists(input_part, max_size=3), st.booleans())
assistant_message = st.one_of(
    st.builds(lambda c: {"role": "assistant", "content": c}, text),
    st.builds(lambda n, c, p: {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                               "content": c, **p},
              st.integers(0, 9), st.lists(output_part, max_size=3), st.sampled_from([{}, {"phase": "commentary"}])),
)
function_call = st.builds(
    lambda i, n, a, extra: {"type": "function_call", "call_id": i, "name": n, "arguments": a, **extra},
    ids, st.sampled_from(["f", "g"]), st.sampled_from(['{"a": 1}', "{}", "nope", "[1, 2]"]),
    st.sampled_from([{}, {"id": "fc_1", "status": "completed"}]))
custom_call = st.builds(lambda i, t: {"type": "custom_tool_call", "call_id": i, "name": "patch", "input": t}, ids, text)
call_output = st.builds(
    lambda kind, i, o: {"type": kind, "call_id": i, "output": o},
    st.sampled_from(["function_call_output", "custom_tool_call_output"]), ids, text | st.lists(input_part, max_size=2))
reasoning = st.builds(
    lambda s, c, e: {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": t} for t in s],
                     **({"content": [{"type": "reasoning_text", "text": t} for t in c]} if c is not None else {}),
                     **({"encrypted_content": e} if e is not None else {})},
    st.lists(text, max_size=2), st.none() | st.lists(text, max_size=2), st.none() | st.sampled_from(["gAAA", ""]))
other = st.sampled_from([
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
    {"type": "item_reference", "id": "msg_1"}, {"id": "msg_2"},
    {"type": "computer_call_output", "call_id": "cc", "output": {"type": "computer_screenshot", "file_id": "f"}},
])
item = st.one_of(input_message, assistant_message, function_call, custom_call, call_output, reasoning, other)


def _valid_order(items: list[dict]) -> list[dict]:
    """Outputs only after their call (the writer moves an output that comes first)."""
    seen: set[str] = set()
    kept = []
    for it in items:
        if it.get("type") in ("function_call", "custom_tool_call"):
            seen.add(it["call_id"])
        if it.get("type") in ("function_call_output", "custom_tool_call_output") and it["call_id"] not in seen:
            continue
        kept.append(it)
    return kept


@settings(max_examples=200, deadline=None)
@given(st.lists(item, max_size=8).map(_valid_order))
def test_any_valid_item_list_round_trips(data):
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


def _kind_notes(items: list[dict]) -> list[object]:
    return [b.extras.get(NAME, {}).get("type") for m in read(copy.deepcopy(items), NAME) for b in m.content
            if b.kind == "tool_result"]


def test_an_outputs_kind_is_noted_where_its_call_does_not_tell_it():
    """A text output of a function call read before it is a plain result (no note); a function output of a
    custom call, a custom output, an output read without its call (an append of results alone) and a list
    output keep their kind."""
    call = {"type": "function_call", "call_id": "f1", "name": "f", "arguments": "{}"}
    custom = {"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "+"}
    items = [call, custom, {"type": "function_call_output", "call_id": "f1", "output": "ok"},
             {"type": "function_call_output", "call_id": "c1", "output": "odd"},
             {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
             {"type": "function_call_output", "call_id": "f1", "output": [{"type": "input_text", "text": "ok"}]}]
    assert _kind_notes(items) == [None, "function", "custom", "function"]
    assert _kind_notes(items[2:]) == ["function", "function", "custom", "function"]
    assert convert(copy.deepcopy(items), from_=NAME, to=NAME) == items
    # written without their calls (a session's popped item): each as it was, no name added
    outputs = read(copy.deepcopy(items), NAME)[1:]  # the calls are one turn
    assert [write([msg], NAME)[0] for msg in outputs] == [[item] for item in items[2:]]
    plain = Plain("tool", "ok", NAME, (Result("f1"),), "f")  # as a load reads its rows
    assert write([plain], NAME)[0] == write(canonical([plain]), NAME)[0] == [items[2]]


@pytest.mark.parametrize("first, second", [("custom", "function"), ("function", "custom")])
def test_an_output_answers_the_latest_call_of_its_id(first, second):
    """Two calls of one id: an output without a note is written as the kind of the later one, as it was read."""
    calls = {"function": {"type": "function_call", "call_id": "x", "name": "f", "arguments": "{}"},
             "custom": {"type": "custom_tool_call", "call_id": "x", "name": "patch", "input": "+"}}
    for output in ("function_call_output", "custom_tool_call_output"):
        items = [calls[first], calls[second], {"type": output, "call_id": "x", "output": "ok"}]
        assert convert(copy.deepcopy(items), from_=NAME, to=NAME) == items


def test_outputs_appended_without_their_calls_load_as_they_were(sqlite_store):
    """An agent's session appends a call, then its output alone: the output's kind survives the store."""
    items = [{"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "+"},
             {"type": "function_call", "call_id": "f1", "name": "f", "arguments": "{}"}]
    outputs = [{"type": "function_call_output", "call_id": "c1", "output": "odd"},
               {"type": "function_call_output", "call_id": "f1", "output": "ok"}]
    cid = sqlite_store.save(copy.deepcopy(items), format=NAME)
    for output in outputs:
        sqlite_store.append(cid, [copy.deepcopy(output)], format=NAME)
    assert sqlite_store.load(cid, format=NAME) == items + outputs
    assert sqlite_store.load(cid, format=NAME, last=1) == items + outputs  # the window keeps the calls' turn
