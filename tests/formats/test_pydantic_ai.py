"""The Pydantic AI adapter on its own (no database).

The fixture ``tests/fixtures/pydantic-ai.json`` is written by pydantic-ai-slim's own
classes and ``ModelMessagesTypeAdapter`` (``tests/conformance/make_pydantic_ai.py``);
``tests/conformance`` checks that pydantic-ai loads every export.
"""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import detect, get_format, pydantic_ai, read, write
from store.model import ImageBlock, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock

from ..conformance import envs
from .test_fidelity import ORDINARY_OPENAI

FIXTURE = envs.load_fixture(envs.FIXTURES / "pydantic-ai.json")


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def test_the_fixture_round_trips_exactly_and_is_detected() -> None:
    assert convert(fixture(), from_="pydantic-ai", to="pydantic-ai") == FIXTURE
    assert detect(fixture()) == "pydantic-ai"
    assert pydantic_ai.looks_like({"messages": fixture()})
    assert not pydantic_ai.looks_like(ORDINARY_OPENAI)
    assert not pydantic_ai.looks_like([{"kind": "request", "parts": [{"type": "text"}]}])


@pytest.mark.parametrize("stamp", ["", "yesterday", None])
def test_a_timestamp_that_is_no_time_is_written_back_as_read(stamp) -> None:
    """An empty or unparsable timestamp (no created_at) comes back as it was (an empty one
    raised AttributeError from the writer)."""
    messages = fixture()
    messages[0]["timestamp"] = stamp
    assert convert(messages, from_="pydantic-ai", to="pydantic-ai") == messages


def test_messages_split_by_role_and_the_pieces_are_marked_joined() -> None:
    messages = read(fixture(), "pydantic-ai")
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant",
                                          "tool", "user", "assistant", "tool", "assistant"]
    joined = [i for i, m in enumerate(messages) if m.extras.get("pydantic-ai", {}).get("joined")]
    assert joined == [1, 8, 10, 11]
    response = messages[2]
    assert response.model == "claude-sonnet-4-5" and response.usage.input_tokens == 812
    assert response.external_id == "msg_01Fixture0001" and response.created_at.minute == 1
    thinking, redacted = response.content[:2]
    assert isinstance(thinking, ReasoningBlock) and thinking.signature == "EqQBCkYIBxgCKkA="
    assert redacted.redacted and redacted.data.startswith("EmwK")
    calls = [b for b in response.content if isinstance(b, ToolCallBlock)]
    assert [(c.call_id, c.arguments) for c in calls] == [("call_w1", {"city": "Kyoto"}), ("call_w2", {"city": "Osaka"})]
    assert calls[1].arguments_raw == '{"city": "Osaka"}'


def test_results_errors_retries_builtin_calls_and_the_pending_call() -> None:
    messages = read(fixture(), "pydantic-ai")
    results = {b.call_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    assert results["call_w1"].output == "Rain, 14C" and not results["call_w1"].is_error
    assert results["call_w2"].is_error and results["call_w2"].output == '{"error":"unknown city"}'
    assert results["call_w3"].is_error and "Kyoto-shi" in results["call_w3"].output  # legacy retry-prompt
    assert messages[8].content[0].text == "Please keep the plan under 100 words."  # retry feedback
    assert results["srvtoolu_01"].name == "web_search" and messages[10].role == "tool"
    calls = {b.call_id for m in messages for b in m.content if isinstance(b, ToolCallBlock)}
    assert calls - set(results) == {"call_b1"}  # still pending
    image = next(b for b in messages[11].content if isinstance(b, ImageBlock))
    assert image.data.startswith(b"\x89PNG")


def test_streaming_reads_the_same_messages() -> None:
    stream = get_format("pydantic-ai").to_canonical_stream
    chunks = [fixture()[:3], fixture()[3:5], fixture()[5:]]
    assert [m for part in stream(chunks) for m in part] == read(fixture(), "pydantic-ai")


def test_bad_input_names_message_and_field() -> None:
    data = fixture()
    data[2]["parts"][0]["tool_name"] = 5
    with pytest.raises(SchemaError) as info:
        read(data, "pydantic-ai")
    assert info.value.problems[0][:2] == (2, "parts[0].tool_name")
    with pytest.raises(SchemaError):
        read([{"kind": "request", "parts": [{"part_kind": "nonsense"}]}], "pydantic-ai")


def test_lost_fields_are_named() -> None:
    losses = []
    convert(fixture(), from_="pydantic-ai", to="openai", on_loss=losses.append)
    fields = {loss.field for loss in losses}
    assert {"extras.pydantic-ai.instructions", "extras.pydantic-ai.run_id", "model", "usage"} <= fields
    assert not any(f.startswith("extras.pydantic-ai.defaults") or f == "extras.pydantic-ai.kind" for f in fields)


def test_ordinary_openai_messages_become_one_request_per_turn_and_pass_strict_mode() -> None:
    out = convert(copy.deepcopy(ORDINARY_OPENAI), from_="openai", to="pydantic-ai", strict=True)
    assert [m["kind"] for m in out] == ["request", "response", "request", "response", "request", "response"]
    assert [p["part_kind"] for p in out[0]["parts"]] == ["system-prompt", "user-prompt"]
    assert [(p["tool_name"], p["tool_call_id"]) for p in out[2]["parts"]] == [("get_weather", "call_1"),
                                                                              ("get_weather", "call_2")]
    back = convert(out, from_="pydantic-ai", to="openai")
    assert [(m["role"], m.get("content"), m.get("tool_call_id")) for m in back] == [
        (m["role"], m.get("content"), m.get("tool_call_id")) for m in ORDINARY_OPENAI]


def test_text_the_target_cannot_hold_is_reported() -> None:
    messages = [{"role": "assistant", "content": None, "refusal": "I can't help with that."}]
    losses = []
    out = convert(messages, from_="openai", to="pydantic-ai", on_loss=losses.append)
    assert out[0]["parts"] == [{"content": "I can't help with that.", "part_kind": "text"}]
    assert [(loss.field, loss.action) for loss in losses] == [("refusal", "approximated")]
    with pytest.raises(LossError):
        convert(messages, from_="openai", to="pydantic-ai", strict=True)


def test_the_core_package_never_imports_pydantic_ai() -> None:
    code = ("import sys, store, store.formats.pydantic_ai, store.cli;"
            "print(any(m == 'pydantic_ai' or m.startswith('pydantic_ai.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


# --- any valid history round-trips ------------------------------------------------------

text = st.text(max_size=12)
stamp = st.sampled_from(["2025-06-01T09:00:00Z", "2025-06-01T09:00:00.123456+02:00"])
call_id = st.sampled_from(["c1", "c2", "c3"])
item = st.one_of(
    text,
    st.builds(lambda u, k: {"url": u, "kind": k, "force_download": False, "vendor_metadata": None},
              st.sampled_from(["https://x.test/a.png", "https://x.test/b.pdf"]),
              st.sampled_from(["image-url", "document-url", "audio-url", "video-url"])),
    st.builds(lambda d, m: {"data": d, "media_type": m, "kind": "binary", "identifier": "x"},
              st.sampled_from(["iVBORw0KGgo=", "AAEC_-8=", "AA+/"]), st.sampled_from(["image/png", "application/pdf"])),
    st.builds(lambda t: {"content": t, "metadata": None, "kind": "text-content"}, text),
    st.just({"kind": "cache-point", "ttl": "5m"}),
)
request_part = st.one_of(
    st.builds(lambda c, t: {"content": c, "timestamp": t, "part_kind": "system-prompt"}, text, stamp),
    st.builds(lambda c, t: {"content": c, "timestamp": t, "part_kind": "user-prompt"},
              st.one_of(text, st.lists(item, max_size=3)), stamp),
    st.builds(lambda n, c, i, o: {"tool_name": n, "content": c, "tool_call_id": i, "outcome": o,
                                  "part_kind": "tool-return"},
              text, st.one_of(text, st.dictionaries(text, st.integers(), max_size=2)), call_id,
              st.sampled_from(["success", "failed", "denied"])),
    st.builds(lambda c, n, i: {"content": c, "tool_name": n, "tool_call_id": i, "part_kind": "retry-prompt"},
              text, st.one_of(st.none(), text), call_id),
    st.builds(lambda c: {"content": c, "retry": {"cause": "model_retry"}, "part_kind": "retry-feedback"}, text),
    st.builds(lambda c: {"content": c, "part_kind": "compaction"}, st.one_of(st.none(), text)),
)
response_part = st.one_of(
    st.builds(lambda c, i: {"content": c, "id": i, "part_kind": "text"}, text, st.one_of(st.none(), text)),
    st.builds(lambda c, s: {"content": c, "signature": s, "part_kind": "thinking"}, text, st.one_of(st.none(), text)),
    st.builds(lambda s: {"content": "", "id": "redacted_thinking", "signature": s, "part_kind": "thinking"}, text),
    st.builds(lambda n, a, i, k: {"tool_name": n, "args": a, "tool_call_id": i, "part_kind": k},
              text, st.one_of(st.none(), st.just('{"a": 1}'), st.just("not json"), st.dictionaries(text, text, max_size=2)),
              call_id, st.sampled_from(["tool-call", "builtin-tool-call"])),
    st.builds(lambda n, c, i: {"tool_name": n, "content": c, "tool_call_id": i, "part_kind": "builtin-tool-return"},
              text, st.one_of(text, st.lists(text, max_size=2)), call_id),
    st.builds(lambda d: {"content": {"data": d, "media_type": "image/png", "kind": "binary"}, "part_kind": "file"},
              st.sampled_from(["iVBORw0KGgo=", "AAEC"])),
)
message = st.one_of(
    st.builds(lambda p, t, r: {"parts": p, "timestamp": t, "instructions": None, "kind": "request", "run_id": r},
              st.lists(request_part, max_size=4), st.one_of(st.none(), stamp), st.one_of(st.none(), text)),
    st.builds(lambda p, t, m, u: {"parts": p, "timestamp": t, "model_name": m, "kind": "response",
                                  "usage": {"input_tokens": u, "output_tokens": 1, "details": {}}, "state": "complete"},
              st.lists(response_part, max_size=4), stamp, st.one_of(st.none(), text), st.integers(0, 9)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(message, max_size=5))
def test_any_valid_history_round_trips(data) -> None:
    assert convert(copy.deepcopy(data), from_="pydantic-ai", to="pydantic-ai") == data


@settings(max_examples=60, deadline=None)
@given(st.lists(message, max_size=4))
def test_any_history_survives_a_trip_through_openai_with_its_text(data) -> None:
    messages = read(copy.deepcopy(data), "pydantic-ai")
    there, losses = write(messages, "openai")
    back, _ = write(read(there, "openai"), "pydantic-ai")
    after = "\n".join(b.text for m in read(back, "pydantic-ai") for b in m.content if isinstance(b, TextBlock))
    after += "\n".join(b.output for m in read(back, "pydantic-ai") for b in m.content
                       if isinstance(b, ToolResultBlock) and isinstance(b.output, str))
    excused = {loss.index for loss in losses if loss.action != "carried"}
    for i, m in enumerate(messages):
        for b in m.content:
            if isinstance(b, TextBlock) and b.text.strip() and i not in excused:
                assert b.text in after


plain_part = st.one_of(
    st.builds(lambda k, c: {"content": c, "part_kind": k}, st.sampled_from(["system-prompt", "user-prompt"]), text),
    st.builds(lambda c, i: {"tool_name": "f", "content": c, "part_kind": "tool-return", "tool_call_id": i},
              st.one_of(text, st.just({"a": [1]})), call_id),
)
plain_response_part = st.one_of(
    st.builds(lambda c: {"content": c, "part_kind": "text"}, text),
    st.builds(lambda a, i: {"tool_name": "f", "part_kind": "tool-call", "args": a, "tool_call_id": i},
              st.sampled_from(['{"a": 1}', "{}", "not json", '{"a":1}']) | st.just({"a": 1}), call_id),
)
plain_history = st.lists(st.builds(lambda k, request, response: {"parts": request if k == "request" else response,
                                                                 "kind": k},
                                   st.sampled_from(["request", "response"]), st.lists(plain_part, max_size=4),
                                   st.lists(plain_response_part, max_size=4)), max_size=6)


_RETURN = {"tool_name": "f", "content": {"a": [1]}, "part_kind": "tool-return", "tool_call_id": "c1"}


@settings(max_examples=200, deadline=None)
@given(plain_history)
@example([{"parts": [{"tool_name": "f", "part_kind": "tool-call", "args": '{"a": 1}', "tool_call_id": "c1"}],
           "kind": "response"}, {"parts": [], "kind": "request"},
          {"parts": [_RETURN], "kind": "request"}, {"parts": [_RETURN], "kind": "request"}])
def test_a_history_of_plain_parts_round_trips_with_the_notes_it_needs_only(data) -> None:
    """Parts the writer writes anyway (a system prompt, a response's text, a call, a return, a message's
    first user prompt) carry no note, nor a message that no request before it would join: such a history
    round trips all the same, directly, in chunks, and through the formats that carry notes."""
    assert convert(copy.deepcopy(data), from_="pydantic-ai", to="pydantic-ai") == data
    whole = read(copy.deepcopy(data), "pydantic-ai")
    chunked = [m for chunk in pydantic_ai.to_canonical_stream([data[:2], data[2:3], data[3:]]) for m in chunk]
    assert chunked == whole
    if any(isinstance(p.get("args"), dict) for m in data for p in m["parts"]):
        return  # arguments given as an object come back as their JSON text from a format that holds text only
    for via in ("qwen", "agentscope", "autogen"):  # (Docent moves a result to its call: no exact trip)
        assert convert(convert(copy.deepcopy(data), from_="pydantic-ai", to=via), from_=via, to="pydantic-ai") == data


def test_notes_are_kept_where_the_writer_needs_them() -> None:
    """Two user prompts of one request stay two parts; a request after a request stays a message of its own;
    an agent's messages need no notes but a piece's ``joined``."""
    data = [{"parts": [{"content": "s", "part_kind": "system-prompt"}, {"content": "a", "part_kind": "user-prompt"},
                       {"content": "b", "part_kind": "user-prompt"}], "kind": "request"},
            {"parts": [{"content": "c", "part_kind": "user-prompt"}], "kind": "request"},
            {"parts": [{"content": "t", "part_kind": "text"},
                       {"tool_name": "f", "part_kind": "tool-call", "args": "{}", "tool_call_id": "c1"}],
             "kind": "response"},
            {"parts": [{"tool_name": "f", "content": "r", "part_kind": "tool-return", "tool_call_id": "c1"}],
             "kind": "request"}]
    messages = read(copy.deepcopy(data), "pydantic-ai")
    assert [m.extras for m in messages] == [{"pydantic-ai": {"kind": "request"}}, {"pydantic-ai": {"joined": True}},
                                            {"pydantic-ai": {"kind": "request"}}, {}, {}]
    assert [[b.extras for b in m.content] for m in messages] == [
        [{}], [{}, {"pydantic-ai": {"part": {"part_kind": "user-prompt"}}}], [{}], [{}, {}], [{}]]
    assert write(messages, "pydantic-ai")[0] == data


def test_a_bad_url_media_type_is_named_where_it_is():
    from store import convert
    from store.errors import SchemaError

    bad = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": [
        "read this", {"kind": "document-url", "url": "https://example.com/a.pdf", "media_type": []}]}]}]
    with pytest.raises(SchemaError, match=r"message 0, field parts\[0\]\.content\[1\]\.media_type"):
        convert(bad, from_="pydantic-ai", to="openai")
