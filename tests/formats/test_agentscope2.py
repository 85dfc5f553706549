"""The AgentScope 2.x adapter on its own (no database)."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import agentscope2, read, write
from store.model import (
    AudioBlock,
    CodeBlock,
    DataBlock,
    ErrorBlock,
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

FIXTURE_PATH = Path(__file__).parents[1] / "fixtures" / "agentscope2.json"
FIXTURE = json.loads(FIXTURE_PATH.read_text(encoding="utf-8"))
NAME = "agentscope2"


def _fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def _msg(role: str, content: list[dict], **fields) -> dict:
    return {"name": fields.pop("name", "Friday"), "content": content, "role": role, **fields}


def _call(call_id: str, **fields) -> dict:
    return {"type": "tool_call", "id": call_id, "name": "f", "input": "{}", **fields}


def _data(url: str) -> dict:
    return {"type": "data", "source": {"type": "url", "url": url, "media_type": "image/png"}}


def _result(call_id: str, **fields) -> dict:
    return {"type": "tool_result", "id": call_id, "name": "f", "output": "ok", **fields}


def test_round_trip_is_exact():
    assert convert(_fixture(), from_=NAME, to=NAME) == FIXTURE


def test_looks_like():
    assert agentscope2.looks_like(FIXTURE)
    assert agentscope2.looks_like({"messages": FIXTURE})
    assert not agentscope2.looks_like(OPENAI_CHAT)
    assert not agentscope2.looks_like([])
    v1 = [{"id": "x", "name": "a", "role": "assistant", "timestamp": "2025-01-01 00:00:00",
           "content": [{"type": "tool_use", "id": "c", "name": "f", "input": {}}]}]
    assert not agentscope2.looks_like(v1)
    bare = [{"name": "a", "role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert not agentscope2.looks_like(bare)  # nothing only 2.x writes: could be 1.x
    assert agentscope2.looks_like([bare[0] | {"created_at": "2025-01-01T00:00:00"}])


# --- the canonical form ----------------------------------------------------------


def _split() -> list[Message]:
    return read(_fixture(), NAME)


def test_one_react_msg_becomes_its_turns_results_and_hints():
    msgs = _split()
    react = [m for m in msgs if m.external_id == "msg-react" or (m.extras.get(NAME, {}).get("part", 0) > 0
                                                                 and msgs.index(m) < 9)]
    assert [(m.role, m.extras[NAME]["part"]) for m in react] == [
        ("assistant", 0), ("tool", 1), ("user", 2), ("assistant", 3), ("tool", 4), ("user", 5),
        ("assistant", 6)]
    head, results, hint = react[0], react[1], react[2]
    assert head.name == "Friday" and head.created_at == datetime(2025, 3, 14, 9, 26, 34, 34417)
    assert head.usage == Usage(input_tokens=820, output_tokens=96,
                               extras={NAME: {"cache_input_tokens": 512, "cache_creation_input_tokens": 12}})
    assert head.metadata == {"trace_id": "t-42", "tags": ["weather"]}
    assert head.extras[NAME]["finished_reason"] == "completed"
    thinking = head.content[0]
    assert isinstance(thinking, ReasoningBlock) and thinking.signature == "sig-abc" and not thinking.redacted
    redacted = react[3].content[0]
    assert isinstance(redacted, ReasoningBlock) and redacted.redacted and redacted.data == "ENCRYPTED-PAYLOAD"
    calls = [b for b in head.content if isinstance(b, ToolCallBlock)]
    assert [(c.call_id, c.arguments) for c in calls] == [("call_kyoto", {"city": "Kyoto"}),
                                                        ("call_paris", {"city": "Paris", "unit": "C"})]
    assert calls[0].arguments_raw == '{"city": "Kyoto"}' and "state" not in calls[0].extras[NAME]  # derived
    assert results.name is None and results.created_at is not None
    kyoto, paris = results.content
    assert kyoto.output == "Sunny, 21C" and not kyoto.is_error and kyoto.name == "get_weather"
    assert isinstance(paris.output[1], ImageBlock) and paris.output[1].url == "https://example.com/radar.png"
    assert paris.extras[NAME]["metadata"] == {"provider": "meteo"}
    assert hint.name == "system" and hint.source_role == "assistant"
    assert hint.content == [TextBlock(text="The Paris radar image is five minutes old.")]
    assert react[5].name == "bob" and isinstance(react[5].content[1], ImageBlock)


def test_media_and_tool_states():
    msgs = _split()
    user = msgs[1]
    kinds = [type(b) for b in user.content]
    assert kinds == [TextBlock, ImageBlock, ImageBlock, AudioBlock, VideoBlock, FileBlock, FileBlock]
    assert user.content[1].data.startswith(b"\x89PNG") and user.content[1].media_type == "image/png"
    assert user.content[2].url == "https://example.com/map.png" and user.content[2].filename == "map.png"
    assert user.content[3].filename == "question.wav" and user.content[5].media_type == "application/pdf"
    odd = user.content[6]
    assert odd.data is None and odd.extras[NAME]["b64"] == "aGk=\n"  # decodable, not canonical: kept as given
    results = {b.call_id: b for m in msgs for b in m.content if isinstance(b, ToolResultBlock)}
    assert results["call_alerts"].is_error and NAME not in results["call_alerts"].extras
    assert results["call_search"].is_error and results["call_search"].extras[NAME]["state"] == "interrupted"
    assert results["call_book"].is_error and results["call_book"].extras[NAME]["state"] == "denied"
    assert not results["call_slow"].is_error and results["call_slow"].extras[NAME]["state"] == "running"
    calls = {b.call_id: b for m in msgs for b in m.content if isinstance(b, ToolCallBlock)}
    assert calls["call_search"].arguments is None and "not valid JSON" in calls["call_search"].parse_error
    assert calls["call_ask"].extras[NAME]["state"] == "asking"
    assert calls["call_ask"].extras[NAME]["suggested_rules"][0]["behavior"] == "ask"
    assert calls["call_team"].extras[NAME]["state"] == "submitted"
    assert "state" not in calls["call_pending"].extras[NAME]  # pending and unanswered: the derived state


def test_a_result_in_a_later_msg_opens_it_as_a_tool_message():
    msgs = _split()
    i = next(i for i, m in enumerate(msgs) if m.external_id == "msg-after-team")
    assert msgs[i].role == "tool" and msgs[i].content[0].call_id == "call_team"
    assert msgs[i].extras[NAME]["msg_name"] == "Friday" and msgs[i + 1].role == "assistant"
    error = next(m for m in msgs if m.external_id == "msg-error")
    assert error.content == [] and error.extras[NAME]["error"]["type"] == "rate_limit"
    structured = next(m for m in msgs if m.external_id == "msg-structured")
    assert structured.extras[NAME]["structured_output"] == {"city": "Kyoto", "temp_c": 21, "sunny": True}


def test_every_message_is_tagged():
    for m in _split():
        assert m.source_format == NAME and m.role in ("system", "user", "assistant", "tool")
        assert all(not isinstance(b, ToolResultBlock) for b in m.content) or m.role == "tool"


# --- other formats into 2.x --------------------------------------------------------


def test_openai_results_go_into_the_msg_of_their_calls():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    turn = value[3]
    assert turn["role"] == "assistant"
    assert [(b["type"], b["id"]) for b in turn["content"]] == [
        ("tool_call", "call_kyoto"), ("tool_call", "call_paris"), ("tool_result", "call_kyoto"),
        ("tool_result", "call_paris")]
    assert turn["content"][0]["input"] == '{"city": "Kyoto"}' and turn["content"][0]["state"] == "finished"
    assert value[-1]["content"][1]["state"] == "pending"
    assert all(m["role"] in ("system", "user", "assistant") for m in value)


def test_openai_there_and_back_is_exact():
    there = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    assert convert(there, from_=NAME, to="openai") == OPENAI_CHAT


def test_fixture_through_openai_keeps_calls_results_and_text():
    data = [m for m in _fixture() if m["id"] not in ("msg-react", "msg-error")]  # openai has no image results
    back = read(convert(convert(data, from_=NAME, to="openai"), from_="openai", to=NAME), NAME)
    calls = {(b.call_id, b.name, b.arguments_raw) for m in back for b in m.content
             if isinstance(b, ToolCallBlock)}
    before = read(data, NAME)
    assert calls == {(b.call_id, b.name, b.arguments_raw) for m in before for b in m.content
                     if isinstance(b, ToolCallBlock)}
    assert {b.call_id for m in back for b in m.content if isinstance(b, ToolResultBlock)} == {
        "call_book", "call_team", "call_slow"}


FOREIGN = [
    Message(role="system", source_role="developer", content=[TextBlock(text="Be brief.")], model="m-1"),
    Message(role="user", name="alice", content=[
        TextBlock(text="look", extras={"openai": {"fields": {"cache": True}}}),
        ImageBlock(url="https://example.com/a", extras={"openai": {"inner": {"detail": "low"}}}),
        FileBlock(file_id="file-1"),
        ImageBlock(data=b"\x89PNG", media_type=None),
        ReasoningBlock(text="a user cannot think in 2.x"),
    ], created_at=datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc), external_id="u1",
        source_type="UserMessage"),
    Message(role="assistant", content=[
        RefusalBlock(text="no"),
        ToolCallBlock(call_id="q1", name="calc", arguments={"x": 1}, call_id_synthesized=True),
        ToolCallBlock(call_id="q2", name="calc", arguments_raw="{bad", parse_error="bad"),
        CodeBlock(code="print(1)", language="python"),
    ], usage=Usage(input_tokens=3, total_tokens=9), name="bot"),
    Message(role="tool", name="runner", external_id="t1", created_at=datetime(2025, 1, 2, 3, 4, 6),
            content=[ToolResultBlock(call_id="q1", output="1", error={"code": 7})]),
    Message(role="tool", content=[ToolResultBlock(call_id="q2", name="calc", output=[
        TextBlock(text="2"), ReasoningBlock(text="not in a 2.x tool output")], is_error=True)],
        metadata={"k": "v"}),
    Message(role="tool", content=[ToolResultBlock(call_id="nowhere", output="orphan")]),
]


def test_what_2x_cannot_hold_is_carried_and_restored():
    value, losses = write(FOREIGN, NAME)
    assert [m["role"] for m in value] == ["system", "user", "assistant", "assistant"]
    assert [b["type"] for b in value[2]["content"]] == [
        "tool_call", "tool_call", "tool_result", "tool_result"]
    assert value[3]["content"] == []  # the orphan result is carried, not written unanswered
    assert all(loss.action == "carried" for loss in losses)
    fields = {(loss.index, loss.field) for loss in losses}
    assert {(0, "source_role"), (0, "model"), (1, "file"), (1, "reasoning"), (2, "refusal"), (2, "code"),
            (2, "usage"), (3, "name"), (3, "tool_result.error"), (5, "tool_result")} <= fields
    assert [m.model_copy(update={"source_format": None}) for m in read(value, NAME)] == FOREIGN
    assert write(FOREIGN, NAME, strict=True)[0] == value  # carried is no loss


def test_moving_a_result_before_a_later_message_is_reported():
    msgs = [Message(role="assistant", content=[ToolCallBlock(call_id="a", name="f", arguments={})]),
            Message(role="user", content=[TextBlock(text="meanwhile")]),
            Message(role="tool", content=[ToolResultBlock(call_id="a", output="done")])]
    value, losses = write(msgs, NAME)
    assert [b["type"] for b in value[0]["content"]] == ["tool_call", "tool_result"] and len(value) == 2
    assert [(loss.index, loss.action) for loss in losses] == [(2, "approximated")]
    with pytest.raises(LossError, match="message 2"):
        write(msgs, NAME, strict=True)


def test_a_result_without_an_earlier_call_is_carried():
    data = [_msg("assistant", [_result("c9", state="success"), _call("c9")])]
    value, losses = write(read(copy.deepcopy(data), NAME), NAME)
    assert value[0]["content"] == [] and [b["type"] for b in value[1]["content"]] == ["tool_call"]
    assert [(loss.field, loss.action) for loss in losses] == [("tool_result", "carried")]
    back = read(value, NAME)
    assert back[0].role == "tool" and back[0].content[0].call_id == "c9"


def test_foreign_data_in_2x_shape_only():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    for m in value:
        assert set(m) >= {"name", "content", "role", "metadata", "usage", "finished_at", "finished_reason",
                          "structured_output", "error"}
        for b in m["content"]:
            if b["type"] == "data":
                assert b["source"]["media_type"]
    assert value[2]["content"][2]["source"] == {"type": "url", "url": "https://example.com/map.png",
                                                "media_type": "image/png"}


# --- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([_msg("user", [{"type": "text", "text": "ok"}]), _msg("user", [_call("a")])], 1, "content[0].type"),
        ([_msg("system", [_data("https://e.com/")])], 0, "content[0].type"),
        ([_msg("user", [_data("no/scheme")])], 0, "content[0].source.url"),
        ([_msg("assistant", [{"type": "tool_call", "id": "a", "name": "f"}])], 0, "content[0].input"),
        ([_msg("assistant", [{"type": "data", "source": {"type": "base64", "data": "x"}}])], 0,
         "content[0].source.media_type"),
        ([_msg("assistant", [{"type": "nope"}])], 0, "content[0]"),
        ([_msg("assistant", "plain string")], 0, "content"),
        ([{"role": "user", "content": []}], 0, "name"),
        ([_msg("tool", [])], 0, "role"),
        ([_msg("assistant", [_result("a", state="done")])], 0, "content[0].state"),
        ([_msg("assistant", [], metadata={"convstore": {"blocks": [{"at": 0, "block": {"kind": "x"}}]}})], 0,
         "metadata.convstore"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, NAME)
    problem = info.value.problems[0]
    # startswith: _common._field_path still keeps a union tag equal to a field name ("url.url")
    assert problem[0] == index and (problem[1] == path or problem[1].startswith(path + "."))
    assert f"message {index}" in str(info.value) and NAME in str(info.value)


def test_not_a_list():
    with pytest.raises(SchemaError, match="expected a list"):
        read({"name": "x"}, NAME)


# --- property-based ------------------------------------------------------------------

text = st.text(max_size=12)
ids = st.text(alphabet="abcdef0123456789_", min_size=1, max_size=6)
stamps = st.none() | st.sampled_from(["2025-03-14T09:26:58.000417", "2025-03-14T09:26:58.000000",
                                      "2025-03-14T09:26:58+02:00", "yesterday"])


def _stamped(block: dict, stamp: str | None, bid: str | None, done: str | None) -> dict:
    extra = {"id": bid} if bid is not None else {}  # absent, never null: 2.x rejects a null id or time
    return block | extra | ({"created_at": stamp} if stamp is not None else {}) | {"finished_at": done}


def _block(strategy):
    return st.builds(_stamped, strategy, stamps, st.none() | ids, st.none() | stamps)


source = st.one_of(
    st.builds(lambda d, t: {"type": "base64", "data": d, "media_type": t},
              st.sampled_from([PNG, "aGk=\n", "", "UklGRg=="]),
              st.sampled_from(["image/png", "audio/wav", "x/y"])),
    st.builds(lambda u, t: {"type": "url", "url": u, "media_type": t},
              st.sampled_from(["https://example.com/a.png", "http://x"]),
              st.sampled_from(["video/mp4", "text/csv"])),
)
text_b = _block(st.builds(lambda t: {"type": "text", "text": t}, text))
data_b = _block(st.builds(lambda s, n: {"type": "data", "source": s, "name": n}, source, st.none() | text))
thinking_b = _block(st.builds(lambda t, x: {"type": "thinking", "thinking": t, **x}, text, st.sampled_from(
    [{}, {"signature": "s"}, {"redacted_thinking_data": "r"}, {"signature": 3, "other": [1]}])))
hint_b = _block(st.builds(lambda h, s: {"type": "hint", "hint": h, "source": s},
                          text | st.lists(text_b | data_b, max_size=2), st.none() | text))
call_ids = st.sampled_from(["c1", "c2", "c3"])
call_b = _block(st.builds(lambda i, a, s: {"type": "tool_call", "id": i, "name": "f", "input": a, "state": s,
                                                 "suggested_rules": []},
                          call_ids, st.sampled_from(['{"a": 1}', "{bad", "[]"]),
                          st.sampled_from(["pending", "asking", "allowed", "submitted", "finished"])))
result_b = _block(st.builds(lambda i, o, s, md: {"type": "tool_result", "id": i, "name": "f", "output": o,
                                                 "state": s, "metadata": md},
                            call_ids, text | st.lists(text_b | data_b, max_size=2),
                            st.sampled_from(["success", "error", "interrupted", "denied", "running"]),
                            st.sampled_from([{}, {"m": 1}])))
any_block = st.one_of(text_b, data_b, thinking_b, hint_b, call_b, result_b)
head = st.fixed_dictionaries({  # every key model_dump writes; only the factory defaults may be absent
    "name": text, "metadata": st.sampled_from([{}, {"k": [1]}]), "finished_at": stamps,
    "usage": st.sampled_from([None, {"input_tokens": 1, "output_tokens": 2, "cache_input_tokens": 3,
                                     "cache_creation_input_tokens": 0}]),
    "finished_reason": st.sampled_from([None, "error"]),
    "structured_output": st.sampled_from([None, {"a": 1}]),
    "error": st.sampled_from([None, {"type": "upstream", "message": "m"}]),
}, optional={"id": ids, "created_at": stamps.filter(bool)})
message = st.one_of(
    st.builds(lambda h, c: h | {"role": "user", "content": c}, head, st.lists(text_b | data_b, max_size=3)),
    st.builds(lambda h, c: h | {"role": "system", "content": c}, head, st.lists(text_b, max_size=2)),
    st.builds(lambda h, c: h | {"role": "assistant", "content": c}, head, st.lists(any_block, max_size=6)),
)


def _answerable(data: list[dict]) -> list[dict]:
    """Only results whose call came before them: 2.x's own ordering rule."""
    called: set[str] = set()
    for m in data:
        m["content"] = [b for b in m["content"] if b["type"] != "tool_result" or b["id"] in called]
        called |= {b["id"] for b in m["content"] if b["type"] == "tool_call"}
    return data


conversation = st.lists(message, max_size=4).map(_answerable)


@settings(max_examples=100, deadline=None)
@given(conversation)
def test_any_valid_2x_conversation_round_trips(data):
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


@settings(max_examples=60, deadline=None)
@given(conversation)
def test_through_openai_keeps_call_ids(data):
    calls = [b for m in read(copy.deepcopy(data), NAME) for b in m.content if isinstance(b, ToolCallBlock)]
    try:
        there = read(convert(copy.deepcopy(data), from_=NAME, to="openai"), "openai")
    except SchemaError:  # the openai adapter's business: this test is about the return leg
        return
    value, _ = write(there, NAME)
    back = read(value, NAME)
    assert {c.call_id for c in calls} <= {b.call_id for m in back for b in m.content
                                          if isinstance(b, ToolCallBlock)}


junk = st.recursive(st.none() | st.booleans() | st.integers() | text | st.sampled_from(
    ["user", "assistant", "text", "tool_call", "tool_result", "hint", "data", "base64", "url"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["name", "role", "content", "type", "text", "id", "input", "output", "hint", "source", "metadata",
         "convstore", "data", "media_type", "url", "state", "splits", "joins", "parts", "unset", "as_role",
         "block_patch", "blocks", "at", "block", "kind"]), inner, max_size=4), max_leaves=12)


@settings(max_examples=100, deadline=None)
@given(st.lists(junk, max_size=3))
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_=NAME, to=NAME)
    except SchemaError:
        pass


# canonical messages as any adapter may produce them, normal form or not
opt = st.none().__or__
c_extras = st.sampled_from([{}, {"openai": {"x": 1}}, {"qwen": {"y": [1]}}])
media_kw = dict(
    url=opt(st.sampled_from(["https://e.com/a.png", "https://e.com/x", "rel/path",
                             "data:image/png;base64,aGk="])),
    data=opt(st.sampled_from([b"", b"\x89PNG", b"hi"])),
    media_type=opt(st.sampled_from(["image/png", "text/plain", "audio/wav"])),
    filename=opt(st.sampled_from(["a.pdf", "b.png"])), file_id=opt(st.just("file-1")), extras=c_extras,
)
c_inner = st.one_of(st.builds(TextBlock, text=text, extras=c_extras), st.builds(ImageBlock, **media_kw),
                    st.builds(ReasoningBlock, text=text))
c_block = st.one_of(
    st.builds(TextBlock, text=text, extras=c_extras), st.builds(RefusalBlock, text=text),
    st.builds(ReasoningBlock, text=text, signature=opt(text), redacted=st.booleans(), data=opt(text),
              extras=c_extras),
    st.builds(ImageBlock, **media_kw), st.builds(AudioBlock, **media_kw), st.builds(VideoBlock, **media_kw),
    st.builds(FileBlock, **media_kw),
    st.builds(ToolCallBlock, call_id=call_ids, name=st.sampled_from(["f", "g"]),
              arguments=st.sampled_from([None, {"x": 1}, [1], {}, {"x": 1.0}, {"n": 12345678901234567890123}, "s",
                                         {"x": -0.0, "y": [None, {"z": "\u00e9"}]}]),
              arguments_raw=opt(st.sampled_from(['{"x": 1}', "{bad"])), call_id_synthesized=st.booleans(),
              parse_error=opt(st.just("Expecting value")),
              extras=c_extras),
    st.builds(ToolResultBlock, call_id=call_ids, name=opt(st.sampled_from(["f", "g"])),
              output=text | st.lists(c_inner, max_size=2), is_error=st.booleans(),
              error=opt(st.just({"code": 1})), extras=c_extras),
    st.builds(ErrorBlock, message=text), st.builds(DataBlock, data=st.just({"a": 1})),
    st.builds(UsageBlock, usage=st.builds(Usage, input_tokens=opt(st.integers(0, 9)))),
)
c_message = st.builds(
    Message, role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.lists(c_block, max_size=4),
    source_role=opt(st.sampled_from(["developer", "function", "assistant"])), name=opt(text),
    source_type=opt(st.just("T")), external_id=opt(st.just("m1")), model=opt(st.just("gpt")),
    created_at=opt(st.sampled_from([datetime(2025, 1, 2, 3, 4, 5),
                                    datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)])),
    usage=opt(st.builds(Usage, input_tokens=opt(st.integers(0, 9)), output_tokens=opt(st.integers(0, 9)),
                        total_tokens=opt(st.integers(0, 9)))),
    metadata=st.sampled_from([{}, {"k": 1}]), extras=c_extras)


c_results = st.builds(  # an assistant's call, then tool messages of results in its Msg
    lambda call, results: [Message(role="assistant", content=[call])]
    + [Message(role="tool", content=[r.model_copy(update={"call_id": call.call_id})]) for r in results],
    st.builds(ToolCallBlock, call_id=call_ids, name=st.just("f"), arguments=st.just({})),
    st.lists(st.builds(ToolResultBlock, call_id=call_ids, name=opt(st.sampled_from(["f", "g"])),
                       output=st.lists(st.builds(TextBlock, text=text) | st.builds(ImageBlock, **media_kw)
                                       | st.builds(FileBlock, **media_kw) | c_inner, max_size=3),
                       is_error=st.booleans(), extras=c_extras), min_size=1, max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(c_message, max_size=5) | c_results)
def test_any_canonical_input_comes_back_unless_reported(msgs):
    value, losses = write(msgs, NAME)
    json.dumps(value)
    back = read(copy.deepcopy(value), NAME)
    if all(loss.action == "carried" for loss in losses):
        assert [m.model_copy(update={"source_format": None}) for m in back] == msgs
    assert write(back, NAME)[0] == value  # and a second pass changes nothing


@settings(max_examples=300, deadline=None)
@given(st.lists(c_message, max_size=5) | c_results)
@example([Message(role="assistant", content=[ToolCallBlock(call_id="c1", name="f", arguments={})]),
          Message(role="tool", content=[ToolResultBlock(call_id="c1", output=[ImageBlock(url="https://e.com/a")])])])
def test_patches_known_without_reading_back_are_those_reading_back_gives(msgs):
    from store.formats import _agentscope2_write

    fast = write(msgs, NAME)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_agentscope2_write, "_known_patch", lambda block, d: None)
        slow = write(msgs, NAME)
    assert fast[0] == slow[0] and list(fast[1]) == list(slow[1])
