"""The Docent adapter on its own (no database).

The fixture ``tests/fixtures/docent.json`` is made with the real package by
``tests/conformance/make_docent.py``. The last test runs the real package's checker
(``check_docent.py``, Docent's own ``check_messages()``) on the reshaped exports
when the conformance venv is there.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
from datetime import datetime, timezone
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import convert
from store.errors import LossError, SchemaError
from store.formats import detect, docent, read, write
from store.model import (
    DataBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    UsageBlock,
)

from ..conformance import envs
from ..samples import OPENAI_CHAT

FIXTURE = envs.load_fixture(envs.FIXTURES / "docent.json")


def fixture() -> list[dict]:
    return copy.deepcopy(FIXTURE)


def dumped(messages: list[Message]) -> list[dict]:
    return [m.model_dump(mode="json", exclude_defaults=True, exclude={"source_format"}) for m in messages]


def there_and_back(messages: list[Message]) -> list[Message]:
    value, _ = write(messages, "docent")
    return read(json.loads(json.dumps(value)), "docent")


# --- same-format round trip and canonical form ----------------------------------------


def test_fixture_round_trip_is_exact():
    assert convert(fixture(), from_="docent", to="docent") == FIXTURE


def test_text_beside_a_tool_result_is_carried_and_read_back():
    """A tool message holds its result alone in Docent: a text, refusal or reasoning beside it is
    carried in metadata and read back in place (a text there raised KeyError from the writer)."""
    msgs = [Message(role="assistant", content=[ToolCallBlock(call_id="c1", name="f", arguments={})]),
            Message(role="tool", content=[ToolResultBlock(call_id="c1", output="ok"), TextBlock(text="note"),
                                          RefusalBlock(text="no"), ReasoningBlock(text="hm")])]
    out, losses = write(msgs, "docent")
    assert [(loss.index, loss.field, loss.action) for loss in losses] == [
        (1, "text", "carried"), (1, "refusal", "carried"), (1, "reasoning", "carried")]
    assert read(out, "docent")[1].content == msgs[1].content


def test_every_kind_maps_to_canonical_blocks():
    msgs = read(fixture(), "docent")
    assert [m.role for m in msgs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert msgs[0].external_id == "msg-sys" and msgs[0].metadata == {"source": "fixture", "prompt_version": 3}
    reasoning, text, kyoto, paris = msgs[2].content
    assert isinstance(reasoning, ReasoningBlock) and reasoning.signature == "sig-EqQBCkYIBxgCKkD"
    assert isinstance(text, TextBlock) and msgs[2].model == "claude-sonnet-4-5-20250929"
    assert (
        isinstance(kyoto, ToolCallBlock)
        and kyoto.call_id == "toolu_01"
        and kyoto.arguments == {"city": "Kyoto"}
    )
    assert kyoto.extras["docent"]["view"]["content"] == "**Kyoto**" and kyoto.arguments_raw is None
    assert paris.extras["docent"] == {"google_thought_signature": "Z3RzLTAx"}
    ok, failed = msgs[3].content[0], msgs[4].content[0]
    assert isinstance(ok, ToolResultBlock) and ok.call_id == "toolu_01" and ok.name == "get_weather"
    assert not ok.is_error and ok.output == "Sunny, 21C"
    assert failed.is_error and failed.error == {"type": "timeout", "message": "weather service timed out"}
    assert isinstance(failed.output, list) and failed.output[0].text == "Service unavailable"
    redacted = msgs[5].content[0]
    assert redacted.redacted and redacted.data == "ENCRYPTED-BLOB" and redacted.signature is None
    assert redacted.extras["docent"] == {"summary": "Compared the two results."}
    assert msgs[6].extras["docent"]["tool_call_id"] == ["toolu_02"]
    assert isinstance(msgs[7].content[0], RefusalBlock)
    bad = msgs[9].content[0]
    assert bad.parse_error.startswith("arguments are not valid JSON") and bad.arguments == {}
    assert msgs[9].content == [bad]  # "" content is no text block
    assert all(m.source_format == "docent" for m in msgs)


def test_seed_shape_without_metadata_reads_and_writes_the_release_shape():
    seed = [
        {"role": "user", "content": "What is the capital of France?"},
        {
            "role": "assistant",
            "content": "I'll look.",
            "tool_calls": [
                {
                    "id": "call_123",
                    "function": "calculator",
                    "arguments": {"a": 5},
                    "view": {"format": "markdown", "content": "5 + 3"},
                }
            ],
        },
        {"role": "tool", "content": "8", "tool_call_id": "call_123", "function": "calculator"},
    ]
    out = convert(copy.deepcopy(seed), from_="docent", to="docent")
    assert out[0] == {
        "id": None,
        "content": "What is the capital of France?",
        "role": "user",
        "metadata": None,
        "tool_call_id": None,
    }
    assert out[1]["tool_calls"][0] == {
        "id": "call_123",
        "function": "calculator",
        "arguments": {"a": 5},
        "type": None,
        "parse_error": None,
        "google_thought_signature": None,
        "view": {"title": None, "format": "markdown", "content": "5 + 3"},
    }
    assert out[2]["error"] is None and out[2]["metadata"] is None


def test_unknown_keys_and_odd_shapes_are_kept():
    data = fixture()
    data[1]["x_trace"] = {"id": 7}
    data[1]["content"][0]["lang"] = "en"
    data[2]["tool_calls"][0]["x"] = 1
    data[3]["metadata"] = {}
    data[7]["content"] = [{"type": "text", "text": "No.", "refusal": False}]
    data[8]["content"] = [{"type": "text", "text": "Then search for flights.", "refusal": None}]
    data[11]["tool_calls"] = []
    assert convert(copy.deepcopy(data), from_="docent", to="docent") == data


def test_docent_input_with_warnings_is_written_back_as_it_came():
    data = [
        {"role": "tool", "content": "", "tool_call_id": "x"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": "f", "arguments": {}}]},
        {"role": "user", "content": "  "},
        {"role": "system", "content": "late"},
        {"role": "tool", "content": "r", "function": "f"},  # no tool_call_id: paired with c1 by name
    ]
    msgs = read(copy.deepcopy(data), "docent")
    assert msgs[5].content[0].call_id == "c1"
    value, losses = write(msgs, "docent")
    assert [m["content"] for m in value] == [m["content"] for m in data] and not list(losses)
    assert value[5]["tool_call_id"] is None


# --- errors and detection ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "index", "path"),
    [
        (
            [
                {"role": "user", "content": "ok"},
                {
                    "role": "assistant",
                    "content": "x",
                    "tool_calls": [{"id": "a", "function": "f", "arguments": '{"a": 1}'}],
                },
            ],
            1,
            "tool_calls[0].arguments",
        ),
        ([{"role": "user", "content": [{"type": "text"}]}], 0, "content[0].text"),
        ([{"role": "user", "content": [{"type": "image", "image": "x"}]}], 0, "content[0]"),
        ([{"role": "tool", "content": "x", "error": "boom"}], 0, "error"),
        ([{"role": "system"}], 0, "content"),
        ([{"content": "x"}], 0, "role"),
    ],
)
def test_schema_errors_name_index_and_path(data, index, path):
    with pytest.raises(SchemaError) as info:
        read(data, "docent")
    assert info.value.problems[0][:2] == (index, path)
    assert f"message {index}" in str(info.value) and "docent" in str(info.value)


def test_malformed_convstore_notes_are_schema_errors():
    for marks in (
        {"merged": "x"},
        {"merged": [{"n": "a"}]},
        {"standins": 5},
        {"pad": {"no": 1}},
        {"blocks": [{"at": 0, "block": {"kind": "nope"}}]},
        {"role": "wizard"},
        {"parts": {"0": 3}},
    ):
        data = [{"role": "user", "content": "hi", "metadata": {"convstore": marks}}]
        with pytest.raises(SchemaError, match="message 0"):
            read(data, "docent")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["convstore", "merged", "n", "pad", "was", "text", "type"]), inner, max_size=3
        )
    ),
    max_leaves=8,
)
junk_message = st.dictionaries(
    st.sampled_from(["role", "content", "tool_calls", "tool_call_id", "metadata", "function", "error", "id"]),
    json_values | st.sampled_from(["user", "assistant", "tool", "system"]),
    max_size=5,
)


@settings(max_examples=100, deadline=None)
@given(st.lists(junk_message, max_size=4))
def test_random_input_only_ever_raises_schema_errors(data):
    try:
        convert(data, from_="docent", to="docent")
    except SchemaError:
        pass


def test_looks_like():
    assert docent.looks_like(FIXTURE) and detect(FIXTURE) == "docent"
    assert docent.looks_like({"messages": FIXTURE})
    assert not docent.looks_like(OPENAI_CHAT)
    assert not docent.looks_like([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert not docent.looks_like([{"role": "user", "content": "hi", "name": "x", "metadata": {}}])
    assert not docent.looks_like("docent")


# --- to and from other formats ----------------------------------------------------------


def test_openai_there_and_back_is_exact():
    value, losses = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "docent")
    assert convert(copy.deepcopy(value), from_="docent", to="openai") == OPENAI_CHAT
    calls = [c for m in value for c in m.get("tool_calls") or []]
    assert [(c["id"], c["function"], c["arguments"]) for c in calls] == [
        ("call_kyoto", "get_weather", {"city": "Kyoto"}),
        ("call_paris", "get_weather", {"city": "Paris", "unit": "C"}),
        ("call_bad", "search", {}),
    ]
    assert value[2]["content"][1]["text"] == "[image: 70 bytes (image/png)]"  # a stand-in
    assert {(l.field, l.action) for l in losses if l.index == 2} == {
        ("image", "carried"),
        ("audio", "carried"),
        ("file", "carried"),
        ("name", "carried"),
        ("extras.openai", "carried"),
    }
    assert convert(copy.deepcopy(value), from_="docent", to="docent") == value  # a Docent file of convstore's


def test_docent_through_openai_keeps_calls_results_and_text():
    back = read(
        convert(convert(fixture(), from_="docent", to="openai"), from_="openai", to="docent"), "docent"
    )
    calls = [b for m in back for b in m.content if isinstance(b, ToolCallBlock)]
    assert [(c.call_id, c.name) for c in calls] == [
        ("toolu_01", "get_weather"),
        ("toolu_02", "get_weather"),
        ("call_bad", "search"),
    ]
    results = [b.call_id for m in back for b in m.content if isinstance(b, ToolResultBlock)]
    assert results == ["toolu_01", "toolu_02", "call_bad"]


def test_what_docent_lacks_is_carried_and_restored():
    at = datetime(2025, 3, 14, 9, 26, tzinfo=timezone.utc)
    msgs = [
        Message(role="system", source_role="developer", content=[TextBlock(text="Be brief.")]),
        Message(
            role="user",
            name="alice",
            created_at=at,
            metadata={"k": 1},
            content=[
                TextBlock(text="Look:", extras={"anthropic": {"cache_control": {"type": "ephemeral"}}}),
                ImageBlock(data=b"\x89PNG", media_type="image/png"),
                ImageBlock(url="https://example.com/a.png"),
            ],
        ),
        Message(
            role="assistant",
            name="bot",
            model="m1",
            usage=Usage(input_tokens=3, output_tokens=4),
            source_type="ToolCallRequestEvent",
            extras={"autogen": {"x": 1}},
            content=[
                ToolCallBlock(call_id="c1", name="f", arguments={"a": 1}),
                TextBlock(text="calling"),
                ReasoningBlock(redacted=True, data="blob", signature="sig"),
                ToolCallBlock(
                    call_id="c2", name="g", arguments=[1, 2], arguments_raw="[1, 2]", call_id_synthesized=True
                ),
                UsageBlock(usage=Usage(total_tokens=7)),
            ],
        ),
        Message(
            role="tool",
            name="tools",
            content=[
                ToolResultBlock(
                    call_id="c1", name="f", output=[TextBlock(text="ok"), DataBlock(data={"v": 1})]
                ),
                ToolResultBlock(call_id="c2", name="g", output="", is_error=True),
            ],
        ),
        Message(role="assistant", content=[RefusalBlock(text="no")]),
    ]
    value, losses = write(msgs, "docent")
    assert [m["role"] for m in value] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert value[1]["content"][1]["text"] == "[image: 4 bytes (image/png)]"
    assert value[2]["tool_calls"][1]["arguments"] == {}
    assert value[4]["error"] == {"type": "unknown", "message": "the tool call failed"}
    assert value[3]["content"][1]["text"] == '[data: {"v":1}]'
    assert all(l.action == "carried" for l in losses)
    assert dumped(there_and_back(msgs)) == dumped(msgs)


def test_strict_raises_on_reshaping_but_not_on_carrying():
    with pytest.raises(LossError, match="message 9"):
        convert(copy.deepcopy(OPENAI_CHAT), from_="openai", to="docent", strict=True)
    carried_only = [Message(role="user", name="alice", content=[TextBlock(text="hi"), ImageBlock(url="u")])]
    write(carried_only, "docent", strict=True)


# --- Docent's ordering rules ------------------------------------------------------------


def call(call_id: str, text: str | None = None) -> Message:
    return Message(
        role="assistant",
        content=[
            *([TextBlock(text=text)] if text else []),
            ToolCallBlock(call_id=call_id, name="f", arguments={}),
        ],
    )


def result(*call_ids: str) -> Message:
    return Message(
        role="tool", content=[ToolResultBlock(call_id=c, name="f", output=f"r {c}") for c in call_ids]
    )


def say(role: str, text: str) -> Message:
    return Message(role=role, content=[TextBlock(text=text)])


RESHAPED = {
    "consecutive": [
        say("user", "q"),
        say("user", "more"),
        say("assistant", "a"),
        call("c1", "b"),
        result("c1"),
        say("assistant", "done"),
    ],
    "interrupted": [say("user", "q"), call("c1"), say("user", "hurry"), result("c1"), say("assistant", "ok")],
    "unanswered": [say("user", "q"), call("c1"), say("user", "next"), say("assistant", "ok"), call("c2")],
    "late_system": [say("system", "s"), say("user", "q"), say("system", "new rules"), say("assistant", "a")],
    "orphan": [result("zz"), say("user", "q"), say("assistant", "a"), result("c9")],
    "empty": [
        say("user", "q"),
        Message(role="assistant", content=[UsageBlock(usage=Usage(total_tokens=1))]),
        say("user", " "),
        Message(role="assistant", content=[TextBlock(text="")]),
    ],
    "grouped": [
        say("user", "q"),
        Message(
            role="assistant",
            content=[ToolCallBlock(call_id="c1", name="f"), ToolCallBlock(call_id="c2", name="f")],
        ),
        result("c1", "c2"),
        say("assistant", "a"),
    ],
    "results_elsewhere": [
        say("user", "q"),
        call("c1"),
        Message(role="user", content=[ToolResultBlock(call_id="c1", output="r"), TextBlock(text="and?")]),
        Message(
            role="assistant",
            content=[
                ToolCallBlock(call_id="c2", name="g"),
                ToolResultBlock(call_id="c2", output="r2"),
                TextBlock(text="x"),
            ],
        ),
    ],
}


@pytest.mark.parametrize("case", sorted(RESHAPED))
def test_reshaped_exports_come_back(case):
    msgs = RESHAPED[case]
    value, losses = write(msgs, "docent")
    for a, b in pairwise(value):
        assert not (a["role"] == b["role"] and a["role"] in ("user", "assistant")), value
    if case not in ("results_elsewhere", "interrupted"):  # regrouped or moved: not restored
        assert dumped(read(json.loads(json.dumps(value)), "docent")) == dumped(msgs)
    again, _ = write(read(copy.deepcopy(value), "docent"), "docent")
    assert again == value
    reshaped = case not in ("grouped", "results_elsewhere")
    assert reshaped == any(l.action == "approximated" for l in losses)


def test_reshaping_details():
    value, losses = write(RESHAPED["interrupted"], "docent")
    assert [m["role"] for m in value] == ["user", "assistant", "tool", "user", "assistant"]
    assert any(l.field == "tool_result" and "moved" in l.detail for l in losses)
    value, _ = write(RESHAPED["unanswered"], "docent")
    assert value[2]["metadata"] == {"convstore": {"synthetic": True}} and value[2]["tool_call_id"] == "c1"
    assert value[-1]["tool_call_id"] == "c2"
    value, _ = write(RESHAPED["late_system"], "docent")
    assert [m["role"] for m in value] == ["system", "user", "assistant"]  # relabelled, then merged
    assert [p["text"] for p in value[1]["content"]] == ["q", "[system]\nnew rules"]
    value, _ = write(RESHAPED["empty"], "docent")
    assert value[1]["content"] == "(empty assistant message)"
    value, _ = write(RESHAPED["grouped"], "docent")
    assert [m["role"] for m in value] == ["user", "assistant", "tool", "tool", "assistant"]
    value, _ = write(RESHAPED["results_elsewhere"], "docent")
    assert [(m["role"], m.get("tool_call_id")) for m in value] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("user", None),
        ("assistant", None),
        ("tool", "c2"),
    ]


def _docent_python():
    """The isolated docent venv, built if missing; CI fails where it cannot be built."""
    try:
        return envs.ensure_env("conf-docent")
    except envs.EnvBuildError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(str(exc), pytrace=False)
        pytest.skip(str(exc))


def test_the_real_package_accepts_the_reshaped_exports():
    cases = {case: write(msgs, "docent")[0] for case, msgs in RESHAPED.items()}
    cases["carried"] = write(read(copy.deepcopy(OPENAI_CHAT), "openai"), "docent")[0]
    cases["fixture"] = FIXTURE
    done = subprocess.run(
        [str(_docent_python()), str(envs.HERE / "check_docent.py")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(done.stdout) == {case: [] for case in cases}


def random_conversation(rng: random.Random) -> list[Message]:
    """Canonical messages in any order: late system messages, calls answered late, twice or
    never, results for unknown calls, empty messages, media, calls where Docent has none."""
    out, calls = [], []
    for _ in range(rng.randint(1, 9)):
        kind = rng.choice(
            ["system", "user", "user", "assistant", "assistant", "call", "result", "result", "odd"]
        )
        if kind == "call":
            ids = [f"c{len(calls) + k}" for k in range(rng.randint(1, 3))]
            calls += ids
            out.append(
                Message(
                    role="assistant",
                    content=[
                        *([TextBlock(text="let me see")] if rng.random() < 0.5 else []),
                        *(ToolCallBlock(call_id=i, name="f") for i in ids),
                    ],
                )
            )
        elif kind == "result":
            pool = calls + ["nobody"]
            out.append(result(*rng.sample(pool, rng.randint(1, min(2, len(pool))))))
        elif kind == "odd":
            out.append(
                rng.choice(
                    [
                        Message(role="user", content=[]),
                        Message(role="assistant", content=[TextBlock(text=" ")]),
                        Message(role="user", content=[ImageBlock(url="https://example.com/x.png")]),
                        Message(role="tool", content=[TextBlock(text="a tool message without results")]),
                        Message(role="user", content=[ToolCallBlock(call_id=f"u{len(out)}", name="g")]),
                    ]
                )
            )
        else:
            out.append(say(kind, rng.choice(["hi", "", "more"])))
    return out


def test_random_conversations_are_accepted_and_come_back():
    rng = random.Random(20250314)
    cases, originals = {}, {}
    for n in range(150):
        msgs = random_conversation(rng)
        value, losses = write(msgs, "docent")
        cases[str(n)] = value
        if not any(l.field == "tool_result" and "moved" in l.detail for l in losses):
            originals[str(n)] = msgs
    done = subprocess.run(
        [str(_docent_python()), str(envs.HERE / "check_docent.py")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    verdict = json.loads(done.stdout)
    assert {case: errors for case, errors in verdict.items() if errors} == {}
    for case, msgs in originals.items():
        assert dumped(read(copy.deepcopy(cases[case]), "docent")) == dumped(msgs), case


# --- property-based round trip ----------------------------------------------------------

text = st.text(max_size=12)
ids = st.text(alphabet="abcdef0123456789_", min_size=1, max_size=6)
text_part = st.builds(
    lambda t, r: {"type": "text", "text": t, "refusal": r}, text, st.sampled_from([None, True, False])
)
reasoning_part = st.builds(
    lambda t, s, sig, red: {
        "type": "reasoning",
        "reasoning": t,
        "summary": s,
        "signature": sig,
        "redacted": red,
    },
    text,
    st.none() | text,
    st.none() | text,
    st.booleans(),
)
content = text | st.lists(text_part | reasoning_part, max_size=3)
metadata = st.none() | st.dictionaries(st.sampled_from(["a", "usage"]), st.integers(0, 3), max_size=2)
tool_call = st.builds(
    lambda i, f, a, p: {
        "id": i,
        "function": f,
        "arguments": a,
        "type": None,
        "parse_error": p,
        "view": None,
        "google_thought_signature": None,
    },
    ids,
    ids,
    st.dictionaries(ids, st.integers() | text, max_size=2),
    st.none() | text,
)
base = st.fixed_dictionaries({"id": st.none() | ids, "content": content, "metadata": metadata})
system = base.map(lambda b: {**b, "role": "system"})
user = st.builds(
    lambda b, t: {**b, "role": "user", "tool_call_id": t}, base, st.none() | st.lists(ids, max_size=2)
)
assistant = st.builds(
    lambda b, m, c: {**b, "role": "assistant", "model": m, "tool_calls": c},
    base,
    st.none() | ids,
    st.none() | st.lists(tool_call, max_size=2),
)
tool = st.builds(
    lambda b, i, f, e: {**b, "role": "tool", "tool_call_id": i, "function": f, "error": e},
    base,
    ids,
    st.none() | ids,
    st.none() | st.just({"type": "unknown", "message": "x"}),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(system, user, assistant, tool), max_size=6))
def test_any_valid_docent_conversation_round_trips(data):
    assert convert(copy.deepcopy(data), from_="docent", to="docent") == data


def test_a_docent_file_with_its_own_warts_and_convstore_reshaping_is_stable():
    own = read([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "docent")
    other = read([{"role": "user", "content": "q"}, {"role": "user", "content": "more"}], "openai")
    value, _ = write(own + other, "docent")
    assert [m["role"] for m in value] == ["assistant", "assistant", "user"]
    again, _ = write(read(copy.deepcopy(value), "docent"), "docent")
    assert again == value


@pytest.mark.parametrize("notes", [{"role": "wizard"}, {"parts": {"0": {"kind": 5}}}, {"result": 3}])
def test_malformed_convstore_notes_name_their_message(notes) -> None:
    """Notes a hand edit broke are the input's fault, located at their message (the reader validates the
    canonical fields of every message in one call, after reading them all)."""
    data = [{"role": "user", "content": "ok"},
            {"role": "assistant" if "result" not in notes else "tool", "content": "x",
             "metadata": {"convstore": notes}}]
    with pytest.raises(SchemaError, match=r"message 1, field metadata\.convstore: malformed convstore notes"):
        read(data, "docent")
