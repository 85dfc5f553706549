"""A load reads plain rows as ``lean.Plain``, not canonical messages, and a conversion from OpenAI reads
plain items so; every format's writer takes them (store.lean): the very same output, and the very same
losses, as the canonical path gives."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from store import fetch, holes
from store.errors import ConvstoreError
from store.formats import FORMATS, Loss, convert, read, write
from store.lean import Call, Plain, Result, canonical
from tests.samples import OPENAI_CHAT, chat
from tests.test_lean import _conversation as _openai_items

TAKERS = [name for name, fmt in FORMATS.items() if fmt.takes_plain]


def both_paths(store: Any, cid: str, target: str) -> tuple[Any, Any]:
    """(output, losses) of a load, and of the canonical messages written in the target."""
    losses: list[Loss] = []
    lean = store.load(cid, target, on_loss=losses.append)
    value, expected = write(store.load_messages(cid), target)
    return (lean, losses), (value, list(expected))


_text = st.one_of(st.text(max_size=40), st.sampled_from(["", "  ", "\n", "hi", "x" * 200]))
_id = st.one_of(st.sampled_from(["call_1", "call_2", "call 3", "a/b", ""]), st.text(min_size=1, max_size=4))
_raw = st.sampled_from(["{}", '{"a": 1}', "[1, 2]", "null", "7", '""', '{"a": {"b": [1.5, null]}}'])
_extras = st.sampled_from([
    {}, {"openai": {"content": "null"}}, {"openai": {"fields": {"reasoning_content": "thinking"}}},
    {"autogen": {"created_at": "2020-01-01"}}, {"anthropic": {"joined": True}}, {"qwen": {"fields": {"x": 1}}},
    {"openai": {"fields": {"note": None}}}, {"openai": {"empty_tool_calls": True}}, {"openai": {"content": "list"}},
    {"openai": {"content": "absent"}}, {"openai": {"content": "null", "fields": {"x": "y"}}}])
_format = st.sampled_from([None, "openai", "anthropic", "autogen", "agentscope2", "pydantic-ai", "qwen", "gemini",
                          "otel-genai", "vercel-ai", "autogen-core"])


def _message(role: str, content: list[dict[str, Any]], source: str | None, extras: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": content, "source_format": source, "extras": extras}


_call = st.builds(lambda i, n, raw: {"kind": "tool_call", "call_id": i, "name": n, "arguments_raw": raw,
                                     "arguments": json.loads(raw)},
                  _id, st.sampled_from(["f", "get weather", ""]), _raw)
_canonical = st.one_of(
    st.builds(lambda r, t, s, e: _message(r, [{"kind": "text", "text": t}], s, e),
              st.sampled_from(["system", "user", "assistant", "tool"]), _text, _format, _extras),
    st.builds(lambda i, t, n, err, s, e: _message("tool", [{"kind": "tool_result", "call_id": i, "output": t, "name": n,
                                                             "is_error": err}], s, e),
              _id, _text, st.one_of(st.none(), st.just("f")), st.booleans(), _format, _extras),
    st.builds(lambda lead, calls, s, e: _message("assistant", lead + calls, s, e),
              st.lists(_text.map(lambda t: {"kind": "text", "text": t}), max_size=1),
              st.lists(_call, min_size=1, max_size=3), _format, _extras),
    st.builds(lambda t, s: _message("user", [{"kind": "text", "text": t}, {"kind": "text", "text": t}], s, {}),
              _text, _format),
    st.builds(lambda t: {**_message("user", [{"kind": "text", "text": t}], "openai", {}), "name": "ana"}, _text),
)


def _unique_calls(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A call id is used once in a conversation (a store refuses a second): later ones get a suffix."""
    msgs, seen = copy.deepcopy(msgs), set()
    for block in (b for m in msgs for b in m["content"] if b["kind"] == "tool_call"):
        while block["call_id"] in seen:
            block["call_id"] += "'"
        seen.add(block["call_id"])
    return msgs


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_canonical, max_size=8), st.sampled_from(TAKERS))
def test_plain_messages_give_the_output_and_losses_of_the_canonical_path(sqlite_store, msgs, target):
    cid = sqlite_store.save(_unique_calls(msgs), "canonical")
    lean, full = both_paths(sqlite_store, cid, target)
    assert lean == full


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_openai_items.map(lambda items: [i for i in items if "\ud800" not in repr(i)]), st.sampled_from(TAKERS))
def test_openai_items_load_as_the_canonical_path_writes_them(sqlite_store, monkeypatch, items, target):
    """From their rows, not their documents (a load in OpenAI reads those when every message has one)."""
    monkeypatch.setattr(holes, "stored", lambda *args: None)
    try:
        cid = sqlite_store.save(copy.deepcopy(items), "openai")
    except ConvstoreError:  # a lone surrogate, a call id used twice: nothing stored to load
        assume(False)
    lean, full = both_paths(sqlite_store, cid, target)
    assert lean == full


def test_plain_rows_are_read_as_plain(sqlite_store):
    cid = sqlite_store.save(copy.deepcopy([*OPENAI_CHAT, *chat(12)]), "openai")
    with sqlite_store._connect() as conn:
        read = fetch.readable(conn, cid, 0, windowed=False)
    kinds = {type(m).__name__ for m in read}
    assert kinds == {"Plain", "Message"}  # the image's message is canonical
    assert [m.role for m in read] == [m.role for m in sqlite_store.load_messages(cid)]
    calls = [m for m in read if m.__class__ is Plain and m.content and m.content[0].kind == "tool_call"]
    assert calls and all(m.role == "assistant" for m in calls)


@pytest.mark.parametrize("target", TAKERS)
def test_a_load_on_every_backend_matches_the_canonical_path(store, target):
    cid = store.save(copy.deepcopy([*OPENAI_CHAT, *chat(40)]), "openai")
    lean, full = both_paths(store, cid, target)
    assert lean == full
    last = store.load(cid, target, last=7)
    assert last == write(store.load_messages(cid, last=7), target)[0]


@settings(max_examples=300, deadline=None)
@given(_openai_items, st.sampled_from(TAKERS))
def test_a_conversion_reads_plain_items_as_the_canonical_path_would(items, target):
    try:
        expected = write(read(copy.deepcopy(items), "openai"), target)
    except ConvstoreError as exc:
        with pytest.raises(type(exc), match="^" + re.escape(str(exc)) + "$"):
            convert(copy.deepcopy(items), from_="openai", to=target)
        return
    losses: list[Loss] = []
    assert convert(copy.deepcopy(items), from_="openai", to=target, on_loss=losses.append) == expected[0]
    assert losses == list(expected[1])


_ORPHANS = [  # results no call before them answers, named or not, beside calls that are answered; speakers
    Plain("user", "hi", "openai"),
    Plain("tool", "lost", "openai", (Result("nobody"),), "f"),
    Plain("tool", "lost too", None, (Result("nobody either"),)),
    Plain("assistant", None, "openai", (Call("c1", "f", '{"a": 1}'), Call("c2", "g", "[1]"))),
    Plain("tool", "one", "openai", (Result("c1"),), "f"),
    Plain("tool", "two", "autogen", (Result("c2"),), None, {"autogen": {"created_at": "2020-01-01"}}),
    Plain("system", "late", "anthropic"),
    Plain("tool", "again", "openai", (Result("c1"),), "f"),
    Plain("user", "from ana", "autogen-core", speaker="ana", source_type="UserMessage"),
    Plain("assistant", None, "autogen-core", (Call("c3", "h", "{}"),), speaker="",
          source_type="AssistantMessage"),
    Plain("tool", "three", "autogen-core", (Result("c3"),), "h",
          source_type="FunctionExecutionResultMessage"),
    Plain("assistant", "named", None, speaker="bot"),
    Plain("system", "a named system", "autogen-core", speaker="root"),
]


@pytest.mark.parametrize("target", TAKERS)
def test_plain_orphan_results_give_the_output_and_losses_of_the_canonical_path(target):
    """Results no call answers do not come from a store's rows (they keep a document): made by hand."""
    value, losses = write(list(_ORPHANS), target)
    expected, expected_losses = write(canonical(list(_ORPHANS)), target)
    assert value == expected
    assert list(losses) == list(expected_losses)


_speaker = st.sampled_from([None, None, "", "ana", "user", "assistant"])
_spoken_notes = st.sampled_from([None, None, {"openai": {"reasoning_content": "r"}}, {"autogen": {"x": [1]}}])
_spoken_id = st.sampled_from([None, None, "", "m1"])
_object = st.dictionaries(st.sampled_from(["a", "b", "ü", ""]), st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.just("k"), st.integers(), max_size=1)), max_size=3)
_object_call = st.builds(lambda i, n, a: Call(i, n, None, arguments=a), _id, st.sampled_from(["f", "g"]), _object)
_any_call = st.one_of(_object_call, st.builds(lambda i, raw: Call(i, "f", raw), _id, _raw))
_plain_spoken = st.one_of(
    st.builds(lambda calls, t, s, f, e, x: Plain("assistant", t, f, tuple(calls), speaker=s, extras=e, external_id=x),
              st.lists(_any_call, min_size=1, max_size=3).filter(lambda cs: any(c.arguments_raw is None for c in cs)),
              st.one_of(st.none(), _text), _speaker, _format, _spoken_notes, _spoken_id),
    st.builds(lambda r, t, s, f, k, e, x: Plain(r, t, f, speaker=s, source_type=k, extras=e, external_id=x),
              st.sampled_from(["system", "user", "assistant"]), _text, _speaker, _format,
              st.sampled_from([None, "UserMessage", "TextMessage"]), _spoken_notes, _spoken_id),
    st.builds(lambda i, raw, t, s, f, e, x: Plain("assistant", t, f, (Call(i, "f", raw),), speaker=s, extras=e,
                                                  external_id=x),
              _id, _raw, st.one_of(st.none(), _text), _speaker, _format, _spoken_notes, _spoken_id),
    st.builds(lambda i, t, f, n, x: Plain("tool", t, f, (Result(i),), n, external_id=x), _id, _text, _format,
              st.sampled_from(["f", None]), _spoken_id),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_plain_spoken, max_size=6), st.sampled_from(TAKERS))
def test_plain_messages_of_speakers_give_the_output_and_losses_of_the_canonical_path(msgs, target):
    """A speaker (an autogen-core message's source) is written, carried or reported as a canonical name
    is, a message's id (a Vercel UIMessage's) as a canonical external id is, calls of object arguments (a
    Vercel tool part's input) as canonical calls without their text are."""
    try:
        expected, expected_losses = write(canonical(list(msgs)), target)
    except ConvstoreError as exc:
        with pytest.raises(type(exc), match="^" + re.escape(str(exc)) + "$"):
            write(list(msgs), target)
        return
    value, losses = write(list(msgs), target)
    assert json.dumps(value, default=repr) == json.dumps(expected, default=repr)  # the keys' order too
    assert list(losses) == list(expected_losses)


@pytest.mark.parametrize("target", TAKERS)
def test_plain_calls_of_odd_object_arguments_give_what_the_canonical_path_gives(target):
    """Objects whose text does not read back as them (NaN: AgentScope 2's writer then reads the call back)
    and deep ones."""
    deep: dict[str, Any] = {"a": 1}
    for _ in range(150):
        deep = {"a": deep}
    msgs = [Plain("assistant", "t", "vercel-ai", (Call("c1", "f", None, arguments=deep),
                                                 Call("c2", "g", None, arguments={"x": float("nan"), "y": 2**70}))),
            Plain("tool", "ok", "vercel-ai", (Result("c2"),), "g")]
    value, losses = write(list(msgs), target)
    expected, expected_losses = write(canonical(list(msgs)), target)
    assert json.dumps(value) == json.dumps(expected)  # NaN is no equal of itself: compared as text
    assert list(losses) == list(expected_losses)
