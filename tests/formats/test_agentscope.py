"""The AgentScope 1.x adapter on its own (no database).

``tests/fixtures/agentscope.json`` is written by agentscope 1.0.21 itself
(``tests/conformance/make_agentscope.py``); ``tests/fixtures/agentscope-java.json`` is the
seed's Java JSON (upper-case roles, list content), written by hand after the seed and
the agentscope-java sources.
"""

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import agentscope as ags
from store.formats import detect, read, write
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

from ..samples import OPENAI_CHAT, PNG

NAME = "agentscope"
FIXTURES = Path(__file__).parents[1] / "fixtures"
FIXTURE = json.loads((FIXTURES / "agentscope.json").read_text())
JAVA = json.loads((FIXTURES / "agentscope-java.json").read_text())


def _msg(name, role, content, **fields):
    return {
        "id": fields.pop("id", "m"),
        "name": name,
        "role": role,
        "content": content,
        "metadata": {},
        "timestamp": "2025-03-14 09:26:54.000",
        **fields,
    }


def _result(call_id, output="ok", name="f"):
    return {"type": "tool_result", "id": call_id, "name": name, "output": output}


def _use(call_id, name="f", **args):
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def test_fixture_round_trip_is_exact():
    assert convert(copy.deepcopy(FIXTURE), from_=NAME, to=NAME) == FIXTURE


def test_fixture_covers_every_kind():
    kinds = {b["type"] for m in FIXTURE if isinstance(m["content"], list) for b in m["content"]}
    assert kinds == {"text", "thinking", "image", "audio", "video", "tool_use", "tool_result"}
    sources = {
        (b["type"], b["source"]["type"])
        for m in FIXTURE
        if isinstance(m["content"], list)
        for b in m["content"]
        if "source" in b
    }
    assert sources == {(k, s) for k in ("image", "audio", "video") for s in ("url", "base64")}
    assert any(isinstance(m["content"], str) for m in FIXTURE)


def test_canonical_form():
    msgs = read(FIXTURE, NAME)
    system, user, calls, kyoto, paris = msgs[:5]
    assert system.role == "system" and system.content == [TextBlock(text=system.content[0].text)]
    assert system.extras == {NAME: {"content": "str"}} and system.external_id == "sys0"
    assert user.name == "alice" and user.metadata == {"channel": "web"}
    assert user.created_at == datetime(2025, 3, 14, 9, 26, 1, 7000) and user.source_format == NAME
    image_url, image, audio, audio_url, video_url, video = user.content[1:]
    assert isinstance(image_url, ImageBlock) and image_url.url == "https://example.com/map.png"
    assert image.media_type == "image/png" and image.data.startswith(b"\x89PNG") and image.extras == {}
    assert isinstance(audio, AudioBlock) and audio.data == b"RIFF" and audio_url.url.endswith(".mp3")
    assert (
        isinstance(video_url, VideoBlock)
        and isinstance(video, VideoBlock)
        and video.media_type == "video/mp4"
    )
    thinking, text, kyoto_call, paris_call = calls.content
    assert isinstance(thinking, ReasoningBlock) and thinking.text.startswith("Two cities")
    assert kyoto_call == ToolCallBlock(
        call_id="call_kyoto",
        name="get_weather",
        arguments={"city": "Kyoto"},
        arguments_raw='{"city": "Kyoto"}',
    )
    assert paris_call.arguments == {"city": "Paris", "unit": "C"} and paris_call.arguments_raw is None
    assert (kyoto.role, kyoto.source_role, kyoto.name) == ("tool", "system", "system")
    assert kyoto.content == [
        ToolResultBlock(call_id="call_kyoto", name="get_weather", output=[TextBlock(text="Sunny, 21C")])
    ]
    assert [b.kind for b in paris.content[0].output] == ["text", "image"]
    assert msgs[5].metadata == {"structured_output": {"kyoto": "sunny", "paris": "rain"}}
    assert [m.name for m in msgs[7:9]] == ["AgentA", "AgentB"]
    assert msgs[9].content[0].output == "Error: the booking service is unavailable."


def test_java_json_is_read():
    msgs = read(JAVA, NAME)
    assert [(m.role, m.source_role) for m in msgs[:5]] == [
        ("system", "SYSTEM"),
        ("user", "USER"),
        ("user", "USER"),
        ("assistant", "ASSISTANT"),
        ("tool", "TOOL"),
    ]
    assert msgs[1].created_at == datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)
    assert msgs[1].content[1].url == "https://example.com/photo.jpg"
    assert msgs[2].content[2].extras[NAME]["source"] == {"mime_type": "audio/wav"}
    first, second = msgs[3].content[2:]
    assert first.arguments_raw == '{"city":"Beijing"}' and second.arguments == {"city": "Beijing", "days": 3}
    assert msgs[3].usage == Usage(input_tokens=120, output_tokens=40, total_tokens=160)
    ok, failed = msgs[4].content[0], msgs[5].content[0]
    assert (
        ok.call_id == "call_001" and not ok.is_error and ok.output == [TextBlock(text="Beijing: Sunny, 25°C")]
    )
    assert failed.call_id == "call_002" and failed.is_error and failed.name is None  # the seed's toolUseId


def test_java_json_is_written_as_python_1x_and_reads_back_the_same():
    value, losses = write(read(JAVA, NAME), NAME)
    assert {m["role"] for m in value} == {"system", "user", "assistant"}
    assert all(set(m) <= {"id", "name", "role", "content", "metadata", "timestamp"} for m in value)
    assert value[3]["content"][2] == {
        "type": "tool_use",
        "id": "call_001",
        "name": "get_weather",
        "input": {"city": "Beijing"},
        "raw_input": '{"city":"Beijing"}',
    }
    assert value[5]["content"][0]["name"] == "get_forecast"  # the result names the tool it answers
    assert {loss.action for loss in losses} == {"carried"}
    assert read(value, NAME) == read(JAVA, NAME)
    assert convert(value, from_=NAME, to=NAME) == value


def test_unknown_keys_nulls_and_shapes_are_kept():
    data = [
        _msg(
            "a",
            "user",
            [
                {"type": "text", "text": "x", "cache": True},
                {"type": "image", "source": {"type": "url", "url": "data:image/png;base64," + PNG}},
                {"type": "audio", "source": {"type": "base64", "media_type": "audio/wav", "data": "UklGRg"}},
            ],
            invocation_id="inv-1",
        ),
        {"name": "b", "role": "assistant", "content": "no metadata, id or timestamp"},
        _msg("c", "user", "odd time", timestamp="2025-03-14T09:26:54", metadata=None, id=None),
        _msg("d", "assistant", [{"type": "text", "text": "not a string"}], timestamp="yesterday"),
    ]
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data
    msgs = read(data, NAME)
    assert msgs[0].content[1].data.startswith(b"\x89PNG") and msgs[0].content[2].data is None
    assert msgs[2].created_at == datetime(2025, 3, 14, 9, 26, 54) and msgs[3].created_at is None


def test_results_beside_other_blocks_are_split_and_regrouped():
    data = [
        _msg("bot", "assistant", [_use("t1", q=1), _result("t1"), {"type": "text", "text": "done"}]),
        _msg("system", "system", [_result("t2"), _result("t3")]),
    ]
    msgs = read(data, NAME)
    assert [(m.role, [b.kind for b in m.content]) for m in msgs] == [
        ("assistant", ["tool_call"]),
        ("tool", ["tool_result"]),
        ("assistant", ["text"]),
        ("tool", ["tool_result", "tool_result"]),
    ]
    assert msgs[1].extras[NAME] == {"continues": True} and msgs[1].source_role == "assistant"
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


def test_several_results_of_one_canonical_message_become_messages_of_their_own():
    msgs = [
        Message(
            role="assistant",
            content=[
                ToolCallBlock(call_id="a", name="f", arguments={}),
                ToolCallBlock(call_id="b", name="g", arguments={"x": 1}),
            ],
        ),
        Message(
            role="tool",
            content=[
                ToolResultBlock(call_id="a", output="1"),
                ToolResultBlock(call_id="b", name="g", output="2", is_error=True),
            ],
        ),
    ]
    value, losses = write(msgs, NAME)
    assert [(m["role"], m["name"], [b["type"] for b in m["content"]]) for m in value] == [
        ("assistant", "assistant", ["tool_use", "tool_use"]),
        ("system", "system", ["tool_result"]),
        ("system", "system", ["tool_result"]),
    ]
    assert value[1]["content"][0]["name"] == "f" and value[2]["metadata"]["convstore"]["continues"]
    assert {(loss.field, loss.action) for loss in losses} >= {
        ("content[0].name", "carried"),
        ("content[1].is_error", "carried"),
    }
    back = read(value, NAME)
    assert [m.model_dump(exclude={"source_format"}) for m in back] == [
        m.model_dump(exclude={"source_format"}) for m in msgs
    ]


def test_everything_canonical_is_carried_and_restored():
    msgs = [
        Message(
            role="assistant",
            name=None,
            source_role="model",
            source_type="AssistantMessage",
            model="gpt-x",
            usage=Usage(input_tokens=3, output_tokens=4),
            created_at=datetime(2025, 1, 2, 3, 4, 5, 678901, timezone.utc),
            metadata={"k": [1]},
            extras={"openai": {"fields": {"x": 1}}},
            content=[
                ReasoningBlock(text="", redacted=True, data="opaque", signature="sig"),
                RefusalBlock(text="no"),
                FileBlock(url="https://x/a.pdf", media_type="application/pdf", filename="a.pdf"),
                ImageBlock(file_id="file-1"),
                ImageBlock(url="https://x/i.png", media_type="image/png", filename="i.png"),
                ErrorBlock(message="boom", code="E1"),
                DataBlock(data={"a": 1}),
                CodeBlock(code="print(1)", language="py"),
                HandoffBlock(target="b", context=[{"role": "user"}]),
                UsageBlock(usage=Usage(total_tokens=9)),
                ToolCallBlock(
                    call_id="c1", name="f", arguments=[1], arguments_raw="[1]", call_id_synthesized=True
                ),
                ToolCallBlock(call_id="c2", name="g", arguments_raw="{bad", parse_error="not JSON"),
            ],
        )
    ]
    value, losses = write(msgs, NAME, strict=True)  # nothing is lost: everything is carried
    assert {loss.action for loss in losses} == {"carried"}
    texts = [b.get("text") for b in value[0]["content"] if b["type"] == "text"]
    assert texts == [
        "no",
        "[file: a.pdf]",
        "[image: file-1]",
        "[error E1] boom",
        '[data] {"a":1}',
        "```py\nprint(1)\n```",
        "[handoff to b]",
    ]
    assert value[0]["timestamp"] == "2025-01-02 03:04:05.678" and value[0]["name"] == "assistant"
    back = read(json.loads(json.dumps(value)), NAME)
    assert back[0].model_dump(exclude={"source_format"}) == msgs[0].model_dump(exclude={"source_format"})


def test_a_tool_message_without_results_is_approximated():
    msgs = [Message(role="tool", content=[TextBlock(text="stray")])]
    value, losses = write(msgs, NAME)
    assert value[0]["role"] == "system"
    assert [(loss.field, loss.action) for loss in losses if loss.action != "carried"] == [
        ("role", "approximated")
    ]
    with pytest.raises(LossError, match="message 0"):
        write(msgs, NAME, strict=True)


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        ([_msg("a", "user", "ok"), _msg("b", "user", [{"type": "image"}])], 1, "content[0].source"),
        ([_msg("a", "tool", "x")], 0, "role"),
        ([{"role": "user", "content": "x"}], 0, "name"),
        ([_msg("a", "assistant", [{"type": "tool_use", "id": "x", "name": "f"}])], 0, "content[0].input"),
        ([_msg("a", "system", [{"type": "tool_result", "name": "f", "output": "x"}])], 0, "content[0].id"),
        (
            [_msg("a", "system", [_result("c", [{"type": "thinking", "thinking": "x"}])])],
            0,
            "content[0].output[0]",
        ),
        (
            [_msg("a", "user", [{"type": "image", "source": {"type": "file", "url": "x"}}])],
            0,
            "content[0].source",
        ),
        ([_msg("a", "user", [{"text": "x"}])], 0, "content[0].type"),
        (
            [_msg("a", "user", "x", metadata={"convstore": {"patch": [{"at": 5, "set": {}}]}})],
            0,
            "metadata.convstore.patch",
        ),
        (
            [_msg("a", "user", "x", metadata={"convstore": {"created_at": "yesterday"}})],
            0,
            "metadata.convstore",
        ),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, NAME)
    problem = info.value.problems[0]
    assert problem[0] == index and problem[1] == path
    assert f"message {index}" in str(info.value) and NAME in str(info.value)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.sampled_from(["user", "system", "TOOL", "text", "tool_result", "url", "convstore", "patch"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "role",
                    "content",
                    "type",
                    "text",
                    "id",
                    "source",
                    "output",
                    "metadata",
                    "convstore",
                    "patch",
                    "at",
                    "set",
                    "block",
                    "continues",
                    "kind",
                    "url",
                    "input",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_values, max_size=3) | json_values)
def test_junk_raises_only_schema_errors(value):
    try:
        read(value, NAME)
    except SchemaError:
        pass


text = st.text(max_size=12)
ids = st.text(alphabet="abcdefghij_0123456789", min_size=1, max_size=6)
blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, text),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, text),
    st.builds(
        lambda k, u: {"type": k, "source": {"type": "url", "url": u}},
        st.sampled_from(["image", "video"]),
        text,
    ),
    st.builds(
        lambda k, d: {"type": k, "source": {"type": "base64", "media_type": "x/y", "data": d}},
        st.sampled_from(["audio", "image"]),
        st.sampled_from([PNG, "UklGRg==", "not base64"]),
    ),
    st.builds(
        lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a},
        ids,
        text,
        st.dictionaries(text, st.integers() | text, max_size=2),
    ),
    st.builds(
        lambda i, o: _result(i, o),
        ids,
        text | st.lists(st.builds(lambda t: {"type": "text", "text": t}, text), max_size=2),
    ),
)
messages = st.builds(
    lambda n, r, c, meta, ts, i: {
        "id": i,
        "name": n,
        "role": r,
        "content": c,
        "metadata": meta,
        "timestamp": ts,
    },
    text,
    st.sampled_from(["user", "assistant", "system"]),
    text | st.lists(blocks, max_size=4),
    st.dictionaries(text, st.integers(), max_size=2),
    st.sampled_from(
        ["2025-03-14 09:26:54.000", "2025-03-14 09:26:54.123456", "2024-01-15T10:30:00Z", "soon"]
    ),
    ids,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, max_size=5))
def test_round_trip_is_exact_for_generated_messages(data):
    assert convert(copy.deepcopy(data), from_=NAME, to=NAME) == data


def test_looks_like():
    assert ags.looks_like(FIXTURE) and ags.looks_like(JAVA) and ags.looks_like({"messages": FIXTURE})
    assert detect(FIXTURE) == NAME and detect(JAVA) == NAME
    assert not ags.looks_like(OPENAI_CHAT)
    assert not ags.looks_like([{"role": "user", "name": "alice", "content": "hi"}])  # OpenAI with a name
    assert not ags.looks_like([{"role": "user", "content": "hi", "extra": {}, "name": "a"}])  # qwen
    assert not ags.looks_like([{"type": "message", "role": "user", "contents": []}])  # agent-framework
    assert not ags.looks_like(
        [{"id": None, "content": "x", "role": "user", "metadata": None}]
    )  # docent: no name
    assert not ags.looks_like([])


def test_openai_through_agentscope_keeps_tool_calls_and_comes_back():
    value = convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to=NAME)
    uses = [b for m in value for b in m["content"] if b["type"] == "tool_use"]
    assert [(u["id"], u["name"], u["input"]) for u in uses] == [
        ("call_kyoto", "get_weather", {"city": "Kyoto"}),
        ("call_paris", "get_weather", {"city": "Paris", "unit": "C"}),
        ("call_bad", "search", {}),
    ]
    results = [(m["role"], m["content"][0]["id"]) for m in value if m["content"][0]["type"] == "tool_result"]
    assert results == [("system", "call_kyoto"), ("system", "call_paris")]
    assert convert(value, from_=NAME, to="openai") == OPENAI_CHAT  # everything carried comes back


def test_agentscope_through_openai_keeps_calls_names_and_text():
    data = copy.deepcopy(FIXTURE)
    there = convert(copy.deepcopy(data), from_=NAME, to="openai")
    back = read(convert(there, from_="openai", to=NAME), NAME)
    before = read(data, NAME)
    calls = [
        (b.call_id, b.name, b.arguments) for m in back for b in m.content if isinstance(b, ToolCallBlock)
    ]
    assert calls == [
        (b.call_id, b.name, b.arguments) for m in before for b in m.content if isinstance(b, ToolCallBlock)
    ]
    assert [m.name for m in back if m.role != "tool"][1:] == [m.name for m in before if m.role != "tool"][1:]
    with pytest.raises(LossError):  # OpenAI has no ids, timestamps or metadata
        convert(data, from_=NAME, to="openai", strict=True)


def test_speed():
    """Conversion is not the bottleneck: the same order as the OpenAI adapter."""
    import time

    data = FIXTURE * 200
    started = time.perf_counter()
    msgs = read(data, NAME)
    write(msgs, NAME)
    assert time.perf_counter() - started < 20


OTHER_FIXTURES = sorted(
    p.stem for p in FIXTURES.glob("*.json") if p.stem != NAME and not p.stem.startswith(NAME + "-")
)


@pytest.mark.parametrize("fixture_id", OTHER_FIXTURES)
def test_other_formats_come_back_exactly_through_agentscope(fixture_id):
    """X -> agentscope -> X gives what X -> X gives: what AgentScope cannot hold is carried."""
    from store import FORMATS

    fmt = fixture_id if fixture_id in FORMATS else fixture_id.rsplit("-", 1)[0]
    if fmt not in FORMATS:
        pytest.skip(f"{fmt} is not registered")
    data = json.loads((FIXTURES / f"{fixture_id}.json").read_text())
    there = convert(copy.deepcopy(data), from_=fmt, to=NAME, strict=True)  # carried only, nothing lost
    assert convert(there, from_=NAME, to=fmt) == convert(copy.deepcopy(data), from_=fmt, to=fmt)
