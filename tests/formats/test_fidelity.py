"""Fidelity gaps found converting real conversations (issue 16, item 5).

Strict mode passes what real frameworks write wherever the target can express it, loss
reports name the field that is lost, parallel results stay grouped as AutoGen groups
them, empty call ids get ids where the target needs them, and a result that answers no
call keeps its place.
"""

from __future__ import annotations

import copy

import pytest

from store import FORMATS, convert
from store.errors import LossError
from store.formats import NEEDS_CALL_IDS, read, write
from store.model import ToolCallBlock, ToolResultBlock

from ..conformance import envs

# An OpenAI conversation as the SDK writes it: ChatCompletionMessage.model_dump() replayed
# (content null beside tool calls, refusal/audio/function_call null, annotations empty), and
# an assistant tool-call message with no content key at all.
ORDINARY_OPENAI = [
    {"role": "system", "content": "You are a weather agent."},
    {"role": "user", "content": "Weather in Kyoto and Paris?"},
    {"role": "assistant", "content": None, "refusal": None, "annotations": [], "audio": None,
     "function_call": None, "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Kyoto"}'}},
         {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21C"},
    {"role": "tool", "tool_call_id": "call_2", "content": "Rain, 12C"},
    {"role": "assistant", "tool_calls": [
        {"id": "call_3", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_3", "content": "09:00"},
    {"role": "assistant", "content": "Kyoto is sunny, Paris rainy; it is 9.", "refusal": None},
]

# Fixtures written by the real package (tests/conformance/make_<mod>.py), and the targets
# that keep everything (carried in their extension field) and so must pass strict mode.
REAL_FIXTURES = sorted(fid for fid, fmt, path in envs.fixtures(set(FORMATS))
                       if (envs.HERE / f"make_{fmt.replace('-', '_')}.py").exists() and fid == fmt)
CARRYING = ("qwen", "autogen", "agentscope", "agentscope2", "agent-framework")


# --- d) strict mode and extras -------------------------------------------------------------


@pytest.mark.parametrize("target", sorted(FORMATS))
def test_ordinary_openai_messages_pass_strict_mode_everywhere(target: str) -> None:
    convert(copy.deepcopy(ORDINARY_OPENAI), from_="openai", to=target, strict=True)


def test_real_fixtures_are_the_packages_own() -> None:
    assert {"anthropic", "autogen", "qwen", "agentscope2", "agent-framework"} <= set(REAL_FIXTURES)


@pytest.mark.parametrize("target", CARRYING)
@pytest.mark.parametrize("fixture_id", REAL_FIXTURES)
def test_real_fixtures_pass_strict_mode_to_targets_that_carry_everything(fixture_id: str, target: str) -> None:
    fmt, path = next((f, p) for i, f, p in envs.fixtures(set(FORMATS)) if i == fixture_id)
    convert(envs.load_fixture(path), from_=fmt, to=target, strict=True)


def test_a_loss_of_extras_names_the_field() -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello", "audio": {"id": "audio_1"}, "refusal": None}]
    losses = []
    convert(messages, from_="openai", to="anthropic", on_loss=losses.append)
    assert [(loss.index, loss.field, loss.action) for loss in losses] == [(1, "extras.openai.audio", "dropped")]


def test_spelling_of_another_format_is_no_loss_but_its_information_is() -> None:
    qwen = [{"role": "user", "content": [{"text": "hi"}], "extra": {"session": "s-1"}},
            {"role": "assistant", "content": "hello"}]
    losses = []
    convert(qwen, from_="qwen", to="openai", on_loss=losses.append)
    assert [(loss.index, loss.field) for loss in losses] == [(0, "extras.qwen.extra")]
    qwen[0].pop("extra")
    convert(qwen, from_="qwen", to="openai", strict=True)  # list content: how it was written, no more


# --- a) parallel results grouped as AutoGen groups them -------------------------------------


def test_separate_results_of_parallel_calls_become_one_autogen_core_result_message() -> None:
    out = convert(copy.deepcopy(ORDINARY_OPENAI), from_="openai", to="autogen-core", strict=True)
    assert [m["type"] for m in out] == ["SystemMessage", "UserMessage", "AssistantMessage",
                                        "FunctionExecutionResultMessage", "AssistantMessage",
                                        "FunctionExecutionResultMessage", "AssistantMessage"]
    assert [r["call_id"] for r in out[3]["content"]] == ["call_1", "call_2"]
    assert convert(out, from_="autogen-core", to="openai")[3:5] == ORDINARY_OPENAI[3:5]


def test_a_result_missing_from_a_parallel_turn_joins_the_same_result_message() -> None:
    messages = copy.deepcopy(ORDINARY_OPENAI[:4]) + [{"role": "user", "content": "and?"}]
    out = convert(messages, from_="openai", to="autogen-core")
    assert [r["call_id"] for r in out[3]["content"]] == ["call_1", "call_2"]
    assert out[3]["content"][1]["is_error"] is True


def test_autogen_core_result_messages_stay_as_they_came() -> None:
    core = [{"content": [{"id": "a", "arguments": "{}", "name": "f"}, {"id": "b", "arguments": "{}", "name": "f"}],
             "thought": None, "source": "assistant", "type": "AssistantMessage"},
            {"content": [{"content": "1", "name": "f", "call_id": "a", "is_error": False}],
             "type": "FunctionExecutionResultMessage"},
            {"content": [{"content": "2", "name": "f", "call_id": "b", "is_error": False}],
             "type": "FunctionExecutionResultMessage"}]
    assert convert(copy.deepcopy(core), from_="autogen-core", to="autogen-core") == core


def test_separate_results_of_parallel_calls_become_one_tool_call_execution_event() -> None:
    out = convert(copy.deepcopy(ORDINARY_OPENAI), from_="openai", to="autogen", strict=True)
    assert [m["type"] for m in out][2:6] == ["ToolCallRequestEvent", "ToolCallExecutionEvent",
                                             "ToolCallRequestEvent", "ToolCallExecutionEvent"]
    assert [r["call_id"] for r in out[3]["content"]] == ["call_1", "call_2"]
    assert convert(out, from_="autogen", to="openai") == ORDINARY_OPENAI


def test_tool_messages_with_fields_of_their_own_are_not_joined() -> None:
    messages = copy.deepcopy(ORDINARY_OPENAI[:5])
    messages[4]["x_trace"] = "t-2"  # an unknown key: kept for the way back, so the message stays
    out = convert(messages, from_="openai", to="autogen")
    assert [m["type"] for m in out][3:] == ["ToolCallExecutionEvent", "ToolCallExecutionEvent"]
    assert convert(out, from_="autogen", to="openai") == messages


# --- b) empty call ids ---------------------------------------------------------------------

# autogen allows empty call ids (some models send none); these calls and results have them.
EMPTY_IDS = [
    {"content": "Weather and time?", "source": "user", "type": "UserMessage"},
    {"content": [{"id": "", "arguments": '{"city": "Kyoto"}', "name": "get_weather"},
                 {"id": "", "arguments": "{}", "name": "get_time"}],
     "thought": None, "source": "assistant", "type": "AssistantMessage"},
    {"content": [{"content": "09:00", "name": "get_time", "call_id": "", "is_error": False},
                 {"content": "Sunny", "name": "get_weather", "call_id": "", "is_error": False}],
     "type": "FunctionExecutionResultMessage"},
    {"content": "Sunny; it is 9.", "thought": None, "source": "assistant", "type": "AssistantMessage"},
]


@pytest.mark.parametrize("target", sorted(NEEDS_CALL_IDS))
def test_empty_call_ids_get_one_their_results_share_and_the_report_names(target: str) -> None:
    losses = []
    value = convert(copy.deepcopy(EMPTY_IDS), from_="autogen-core", to=target, on_loss=losses.append)
    assert value == convert(copy.deepcopy(EMPTY_IDS), from_="autogen-core", to=target)  # deterministic
    back = read(value, target)
    calls = {b.name: b.call_id for m in back for b in m.content if isinstance(b, ToolCallBlock)}
    results = {b.output if isinstance(b.output, str) else b.output[0].text: b.call_id
               for m in back for b in m.content if isinstance(b, ToolResultBlock)}
    assert calls == {"get_weather": "call_1_0", "get_time": "call_1_1"}
    assert results == {"Sunny": "call_1_0", "09:00": "call_1_1"}  # paired by tool name
    named = [(loss.index, loss.field, loss.action) for loss in losses if loss.field.endswith("call_id")]
    assert named == [(1, "tool_call.call_id", "approximated")] * 2 + [(2, "tool_result.call_id", "approximated")] * 2
    with pytest.raises(LossError, match="tool_call.call_id"):
        convert(copy.deepcopy(EMPTY_IDS), from_="autogen-core", to=target, strict=True)


def test_made_up_ids_count_messages_in_the_whole_conversation_and_avoid_ids_in_use() -> None:
    messages = read(copy.deepcopy(EMPTY_IDS), "autogen-core")
    value, _ = write(messages, "openai", first=10)
    assert [c["id"] for c in value[1]["tool_calls"]] == ["call_11_0", "call_11_1"]
    taken = copy.deepcopy(EMPTY_IDS)
    taken[3] = {"content": [{"id": "call_1_0", "arguments": "{}", "name": "f"}], "thought": None,
                "source": "assistant", "type": "AssistantMessage"}
    value = convert(taken, from_="autogen-core", to="openai")
    assert [c["id"] for c in value[1]["tool_calls"]] == ["call_1_0_2", "call_1_1"]


def test_targets_that_link_otherwise_keep_empty_ids() -> None:
    out = convert(copy.deepcopy(EMPTY_IDS), from_="autogen-core", to="autogen", strict=True)
    assert [c["id"] for c in out[1]["content"]] == ["", ""]


# --- c) a result that answers no call -----------------------------------------------------


def test_a_result_answering_no_call_keeps_its_place_in_anthropic_and_is_reported() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
        {"role": "user", "content": "And this?"},
        {"role": "tool", "tool_call_id": "call_9", "content": "stray output"},
        {"role": "assistant", "content": "Sunny."},
    ]
    losses = []
    value = convert(messages, from_="openai", to="anthropic", on_loss=losses.append)
    assert value["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "Sunny"},
        {"type": "text", "text": "And this?"},
        {"type": "text", "text": "[result of tool call call_9] stray output"},
    ]}
    assert [(loss.index, loss.field, loss.action) for loss in losses] == [(4, "tool_result", "approximated")]
    assert "answers no tool_use" in losses[0].detail


# --- e) inputs the real packages reject ---------------------------------------------------


@pytest.mark.parametrize(("fmt", "data", "path"), [
    ("autogen-core", [{"content": ["see", {"data": "aGVsbG8gd29ybGQ="}], "source": "user", "type": "UserMessage"}],
     "content[1].data"),
    ("autogen", [{"source": "user", "content": "hi", "type": "TextMessage"},
                 {"source": "user", "content": [{"data": "not base64!"}], "type": "MultiModalMessage"}],
     "content[0].data"),
])
def test_an_autogen_image_that_is_no_image_is_refused_by_index_and_path(fmt, data, path) -> None:
    from store.errors import SchemaError

    with pytest.raises(SchemaError) as info:
        read(data, fmt)
    index, where, why = info.value.problems[0]
    assert (index, where) == (len(data) - 1, path) and "autogen image must be an image" in why
