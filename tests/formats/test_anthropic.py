"""The Anthropic Messages adapter on its own (no database)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import anthropic, read, write
from store.model import (
    DataBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

from ..samples import OPENAI_CHAT, PNG

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "anthropic.json").read_text(encoding="utf-8"))


def fixture() -> dict:
    return copy.deepcopy(FIXTURE)


def round_trip(data):
    return convert(copy.deepcopy(data), from_="anthropic", to="anthropic")


def test_fixture_round_trip_is_exact():
    assert round_trip(FIXTURE) == FIXTURE
    assert convert(fixture(), from_="anthropic", to="anthropic", strict=True) == FIXTURE  # nothing reported


def test_canonical_form_of_the_fixture():
    msgs = read(fixture(), "anthropic")
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "user", "assistant", "tool",
                                      "assistant", "user", "assistant"]
    assert all(m.source_format == "anthropic" for m in msgs)
    system = msgs[0].content[0]
    assert system.text.startswith("You are a travel assistant") and system.extras["anthropic"]["fields"] == {
        "cache_control": {"type": "ephemeral", "ttl": "1h"}}

    user = msgs[1].content
    assert isinstance(user[1], ImageBlock) and user[1].media_type == "image/png" and user[1].data.startswith(b"\x89PNG")
    assert user[2].url == "https://example.com/kyoto-map.png" and user[3].file_id.startswith("file_")
    pdf, text, url, file = user[4:8]
    assert isinstance(pdf, FileBlock) and pdf.data.startswith(b"%PDF") and pdf.media_type == "application/pdf"
    assert pdf.filename == "kyoto-guide.pdf"
    assert pdf.extras["anthropic"]["fields"]["citations"] == {"enabled": True}
    assert text.data == b"Most temples open 8:30-17:00. Museums close on Mondays." and text.media_type == "text/plain"
    assert url.url.endswith("rainy-kyoto.pdf") and file.file_id.startswith("file_")

    thinking, _, weather, events = msgs[2].content
    assert isinstance(thinking, ReasoningBlock) and thinking.signature and thinking.text.startswith("Rain matters")
    assert isinstance(weather, ToolCallBlock) and weather.arguments == {"city": "Kyoto"} and weather.arguments_raw is None
    assert events.call_id == "toolu_01EventsKyoto" and events.arguments == {"city": "Kyoto", "indoor": True}

    first, second = msgs[3].content
    assert msgs[3].source_role == "user"
    assert isinstance(first, ToolResultBlock) and first.call_id == weather.call_id and first.name == "get_weather"
    assert first.output == "Rain all day, 14C" and not first.is_error
    assert [b.kind for b in second.output] == ["text", "image"] and second.name == "find_events"
    assert msgs[4].content == [TextBlock(text="Also check the travel advisory, please.")]

    redacted = msgs[5].content[0]
    assert redacted.redacted and redacted.data.startswith("Emw") and redacted.signature is None
    advisory = msgs[6].content[0]
    assert advisory.is_error and advisory.name == "check_advisory"
    assert msgs[7].content[0].extras["anthropic"]["fields"]["citations"][0]["type"] == "char_location"


def test_bare_list_with_inline_system_round_trips_as_a_list():
    data = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "hello"},
    ]
    msgs = read(copy.deepcopy(data), "anthropic")
    assert msgs[0].role == "system" and msgs[0].extras["anthropic"]["inline"]
    assert round_trip(data) == data


def test_request_keys_unknown_keys_and_odd_shapes_are_kept():
    data = {
        "model": "claude-sonnet-4-5", "max_tokens": 512, "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "system": "",
        "messages": [
            {"role": "user", "content": [], "x_trace": 7},
            {"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "document", "title": None, "source": {"type": "content", "content": [{"type": "text", "text": "c"}]}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG[:-2] + "\n=="}},
            ]},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "kyoto"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}, "cache_control": {"type": "ephemeral"}},
                {"type": "tool_use", "id": "t2", "name": "f", "input": {}},
                {"type": "tool_use", "id": "t3", "name": "f", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "", "is_error": False},
                {"type": "tool_result", "tool_use_id": "t3", "content": [], "cache_control": {"type": "ephemeral"}},
            ]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t9"},
                                         {"type": "text", "text": "y"}]},
            {"role": "assistant", "content": ""},
        ],
    }
    assert round_trip(data) == data
    msgs = read(copy.deepcopy(data), "anthropic")
    assert isinstance(msgs[3].content[0], DataBlock) and msgs[3].content[0].data["type"] == "server_tool_use"
    assert [m.role for m in msgs[5:9]] == ["user", "tool", "user", "assistant"]


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"type": "image"}]}], 1, "content[0].source"),
        ([{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}], 0, "content[0].signature"),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "{}"}]}], 0,
         "content[0].input"),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": None}]}], 0,
         "content[0].content"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], 0, "content[0]"),
        ({"messages": [{"role": "tool", "content": "x"}]}, 0, ""),
        ([{"content": "x"}], 0, ""),
        ({"system": [{"type": "text"}], "messages": []}, None, "system[0].text"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "anthropic")
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path
    assert "anthropic" in str(info.value)
    if index is not None:
        assert f"message {index}" in str(info.value)


def test_a_bad_type_names_the_choices():
    with pytest.raises(SchemaError, match="message 0, field content\\[0\\]: type is missing or not one of 'text'"):
        read([{"role": "user", "content": [{"type": "input_text", "text": "x"}]}], "anthropic")
    with pytest.raises(SchemaError, match="message 0: role is missing or not one of 'user', 'assistant', 'system'"):
        read([{"role": "tool", "content": "x"}], "anthropic")


def test_not_messages():
    for data in ("hello", {"system": "x"}, {"messages": "x"}):
        with pytest.raises(SchemaError, match="expected a list"):
            read(data, "anthropic")


def test_looks_like():
    assert anthropic.looks_like(FIXTURE)
    assert anthropic.looks_like(FIXTURE["messages"])
    assert anthropic.looks_like({"system": "x", "messages": [{"role": "user", "content": "hi"}]})
    assert not anthropic.looks_like(OPENAI_CHAT)
    assert not anthropic.looks_like({"messages": OPENAI_CHAT})
    assert not anthropic.looks_like([{"role": "user", "content": "hi"}])  # plain text: OpenAI's too
    assert not anthropic.looks_like([{"role": "user", "name": "a", "id": "1", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}])  # an AgentScope Msg
    assert not anthropic.looks_like([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])
    assert not anthropic.looks_like("text") and not anthropic.looks_like(None)


def test_openai_to_anthropic_and_back_keeps_tool_calls():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="anthropic")
    assert value["system"] == [{"type": "text", "text": "You are a weather agent."},
                               {"type": "text", "text": "Answer briefly."}]
    assert [m["role"] for m in value["messages"]] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    results = value["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["call_kyoto", "call_paris"]
    back = convert(value, from_="anthropic", to="openai")
    calls = {c["id"]: (c["function"]["name"], json.loads(c["function"]["arguments"]))
             for m in back if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    assert calls["call_kyoto"] == ("get_weather", {"city": "Kyoto"})
    assert calls["call_paris"] == ("get_weather", {"city": "Paris", "unit": "C"})
    assert [m["tool_call_id"] for m in back if m["role"] == "tool"] == ["call_kyoto", "call_paris"]


def test_anthropic_to_openai_and_back_keeps_what_openai_holds():
    data = fixture()
    del data["messages"][2]["content"][1]["content"][1]  # an image in a tool result: OpenAI's writer cannot yet
    back = convert(convert(data, from_="anthropic", to="openai"), from_="openai", to="anthropic")
    calls = [b for m in back["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
             for b in m["content"] if b["type"] == "tool_use"]
    assert [(c["id"], c["name"], c["input"]) for c in calls] == [
        ("toolu_01WeatherKyoto", "get_weather", {"city": "Kyoto"}),
        ("toolu_01EventsKyoto", "find_events", {"city": "Kyoto", "indoor": True}),
        ("toolu_01Advisory", "check_advisory", {"country": "JP"}),
    ]
    assert back["messages"][2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_01WeatherKyoto",
                                                 "content": "Rain all day, 14C"}
    assert back["messages"][-1] == FIXTURE["messages"][-1]


def test_losses_are_reported_and_strict_raises():
    msgs = [
        Message(role="user", name="alice", content=[TextBlock(text="hi")]),
        Message(role="assistant", name="bot", external_id="m1",
                content=[ReasoningBlock(text="unsigned"), TextBlock(text="hello")]),
    ]
    value, losses = write(msgs, "anthropic")
    assert value == {"messages": [{"role": "user", "content": "[alice] hi"},
                                  {"role": "assistant", "content": "[bot] hello"}]}
    assert {(l.index, l.field, l.action) for l in losses} == {
        (0, "name", "approximated"), (1, "name", "approximated"), (1, "reasoning", "dropped"), (1, "external_id", "dropped")}
    with pytest.raises(LossError, match="message 0"):
        write(msgs, "anthropic", strict=True)
    assert write([Message(role="user", content=[TextBlock(text="hi")])], "anthropic", strict=True)[0] == {
        "messages": [{"role": "user", "content": "hi"}]}


def test_export_regroups_for_the_api():
    msgs = [
        Message(role="assistant", content=[TextBlock(text=""), ToolCallBlock(call_id="call.1", name="f", arguments={"a": 1}),
                                           ToolCallBlock(call_id="c2", name="g", arguments="oops")]),
        Message(role="tool", content=[ToolResultBlock(call_id="call.1", output="42")]),
        Message(role="user", content=[TextBlock(text="and?")]),
        Message(role="user", content=[TextBlock(text="  ")]),
        Message(role="tool", content=[ToolResultBlock(call_id="zzz", output="stray")]),
        Message(role="system", content=[TextBlock(text="late rule")]),
        Message(role="assistant", content=[ImageBlock(url="https://x/y.png"), TextBlock(text="done")]),
        Message(role="assistant", content=[TextBlock(text="more")]),
    ]
    value, losses = write(msgs, "anthropic")
    safe = value["messages"][1]["content"][0]["id"]
    assert safe.startswith("call_1_") and len(safe) == len("call_1_") + 8
    assert value == {"system": "late rule", "messages": [
        {"role": "user", "content": "(conversation continues)"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": safe, "name": "f", "input": {"a": 1}},
                                          {"type": "tool_use", "id": "c2", "name": "g", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": safe, "content": "42"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "(no result was recorded)", "is_error": True},
            {"type": "text", "text": "and?"},
            {"type": "text", "text": "[result of tool call zzz] stray"},  # where it stood (issue 16.5c)
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}, {"type": "text", "text": "more"}]},
    ]}
    found = {(l.index, l.field, l.action) for l in losses}
    assert {(0, "role", "approximated"), (0, "call_id", "approximated"), (0, "tool_call.arguments", "approximated"),
            (3, "text", "dropped"), (4, "tool_result", "approximated"), (5, "role", "approximated"),
            (6, "image", "dropped"), (7, "role", "approximated")} <= found


@pytest.mark.parametrize("ids, answers, lossy", [
    (["a", "b"], ["a", "b"], False),  # each call answered in order, and nothing else: the short way
    (["a", "b"], ["b", "a"], False),  # another order: kept
    (["a", "a"], ["a", "a"], True),  # a call id twice: the second call and its result get one of their own
    (["a", "b"], ["a"], True),  # one unanswered
    (["a"], ["a", "z"], True),  # one answering nothing
])
def test_results_answer_the_calls_before_them(ids, answers, lossy):
    """A user turn of results is written the same, whether it takes the short way or the long one."""
    msgs = [Message(role="user", content=[TextBlock(text="go")]),
            Message(role="assistant", content=[ToolCallBlock(call_id=i, name="f", arguments={}) for i in ids]),
            *(Message(role="tool", content=[ToolResultBlock(call_id=a, output=f"out {a}")]) for a in answers)]
    value, losses = write(msgs, "anthropic")
    results = value["messages"][2]["content"]
    if ids == ["a", "a"]:  # as sent (test_a_call_id_used_twice_gets_one_of_its_own_with_its_result)
        ids, answers = ["a", "call_1_1"], ["a", "call_1_1"]
    answered = [p["tool_use_id"] for p in results if p["type"] == "tool_result" and not p.get("is_error")]
    assert answered == list(dict.fromkeys(a for a in answers if a in ids))  # each call once, as answered
    missing = [p["tool_use_id"] for p in results if p.get("is_error")]
    assert sorted(answered + missing) == sorted(set(ids))
    stray = [p["text"] for p in results if p["type"] == "text"]
    assert len(answered) + len(stray) == len(answers)
    assert bool(losses) == lossy


def test_media_export():
    jpeg = b"\xff\xd8\xff\xe0rest"
    msgs = [Message(role="user", content=[
        ImageBlock(data=jpeg),
        ImageBlock(data=b"BM..", media_type="image/bmp"),
        FileBlock(data=b"# notes", media_type="text/markdown", filename="n.md"),
        FileBlock(data=b"PK..", media_type="application/zip"),
        FileBlock(url="https://x/doc.pdf"),
    ])]
    value, losses = write(msgs, "anthropic")
    assert value["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4HJlc3Q="}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "# notes"}, "title": "n.md"},
        {"type": "document", "source": {"type": "url", "url": "https://x/doc.pdf"}},
    ]
    assert {(l.field, l.action) for l in losses} == {
        ("image", "dropped"), ("file.media_type", "approximated"), ("file", "dropped")}


# --- property-based ---------------------------------------------------------------

text = st.text(max_size=12)
json_value = st.recursive(st.none() | st.booleans() | st.integers(-1000, 1000) | text,
                          lambda inner: st.lists(inner, max_size=2) | st.dictionaries(text, inner, max_size=2),
                          max_leaves=4)
text_block = st.builds(lambda t: {"type": "text", "text": t}, text)
user_block = text_block | st.builds(lambda u: {"type": "image", "source": {"type": "url", "url": u}}, text)
thinking = st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, text, text)


@st.composite
def conversations(draw):
    messages = []
    for turn in range(draw(st.integers(0, 3))):
        user = draw(text | st.lists(user_block, min_size=1, max_size=2))
        if messages and isinstance(messages[-1]["content"], list):
            calls = [b["id"] for b in messages[-1]["content"] if b["type"] == "tool_use"]
            if calls:
                results = [{"type": "tool_result", "tool_use_id": c, **draw(st.sampled_from(
                    [{}, {"content": "ok"}, {"is_error": True, "content": [{"type": "text", "text": "no"}]}]))}
                    for c in calls]
                user = results + (user if isinstance(user, list) else [{"type": "text", "text": user}])
        messages.append({"role": "user", "content": user})
        calls = [{"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": draw(text),
                  "input": draw(st.dictionaries(text, json_value, max_size=2))} for i in range(draw(st.integers(0, 2)))]
        blocks = draw(st.lists(thinking, max_size=1)) + draw(st.lists(text_block, max_size=2)) + calls
        messages.append({"role": "assistant", "content": blocks or draw(text)})
    system = draw(st.none() | text | st.lists(text_block, max_size=2))
    return {"messages": messages} if system is None else {"system": system, "messages": messages}


@settings(max_examples=100, deadline=None)
@given(conversations())
def test_any_valid_anthropic_conversation_round_trips(data):
    assert round_trip(data) == data


keys = st.sampled_from(["role", "content", "type", "text", "source", "id", "input", "tool_use_id", "system", "messages"])
junk = st.recursive(json_value | st.sampled_from(["user", "assistant", "system", "text", "tool_use", "tool_result"]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4), max_leaves=10)


@settings(max_examples=100, deadline=None)
@given(junk)
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="anthropic", to="anthropic")
    except SchemaError:
        pass


def test_a_call_id_used_twice_gets_one_of_its_own_with_its_result():
    """OpenAI-compatible servers number each turn's calls from call_0: Anthropic refuses a tool_use id
    used twice. The later call gets an id made up from its place, and so does the result answering it
    (a result of that id once the first call is answered); both reported approximated."""
    from store import convert

    def turn(n):
        return [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": f'{{"c": {n}}}'}}]},
                {"role": "tool", "tool_call_id": "call_0", "content": f"r{n}"}]

    parallel = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": '{"c": 1}'}},
        {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": '{"c": 2}'}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "r1"}, {"role": "tool", "tool_call_id": "call_0", "content": "r2"}]
    for chat in (parallel, [{"role": "user", "content": "q"}, *turn(1), *turn(2)]):
        losses: list = []
        out = convert(chat, from_="openai", to="anthropic", on_loss=losses.append)
        uses = [b["id"] for m in out["messages"] for b in m["content"] if isinstance(b, dict) and b["type"] == "tool_use"]
        results = [b["tool_use_id"] for m in out["messages"] for b in m["content"]
                   if isinstance(b, dict) and b["type"] == "tool_result"]
        assert uses == results == ["call_0", "call_1_1" if chat is parallel else "call_3_0"]
        assert {(loss.field, loss.action) for loss in losses} == {("tool_call.call_id", "approximated"),
                                                                  ("tool_result.call_id", "approximated")}
    same = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": {}}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]}
    assert convert(same, from_="anthropic", to="anthropic") == same  # its own messages as they were
