"""Anthropic's one-pass writer (store.formats._anthropic_fast) against the full writer: the same
output and the same losses (or the same error in strict mode) for agents' conversations, for those
conversations broken in the ways the API's rules mend, and for any messages at all."""

from __future__ import annotations

import re
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.errors import LossError
from store.formats import _anthropic_write
from store.formats._anthropic_fast import one_pass
from store.formats._common import Losses
from store.lean import Call, Plain, Result
from store.model import Message

_text = st.one_of(st.sampled_from(["hi", "x" * 300, "", "  ", "\n"]), st.text(max_size=12))
_id = st.one_of(st.sampled_from(["call_1", "call_2", "call_3", "call 4", "a/b"]), st.text(min_size=1, max_size=3))
_raw = st.sampled_from(['{"a": 1}', "{}", "[1]", "null", '{"city": "Paris"}'])
_agent_extras = st.sampled_from([None, {"openai": {"fields": {"reasoning_content": "thinking"}}},
                                 {"openai": {"content": "null"}}, {"qwen": {"fields": {"x": 1}}}])
_extras = st.one_of(_agent_extras, st.just({"anthropic": {"joined": True}}))
_source = st.sampled_from(["openai", None, "anthropic"])


_mid = st.sampled_from([None, None, "m1", ""])  # a source's message id (a Vercel UIMessage's)


def _call(call_id: str, raw: str | None) -> Call:
    """A call of its arguments' text, or (None) of an object without text (a Vercel tool part's input)."""
    return Call(call_id, "get_weather", raw) if raw is not None else Call(call_id, "get_weather", None,
                                                                          arguments={"city": "Paris"})


def _turn(draw: Any, n: int) -> list[Any]:
    """A user message, the assistant's calls answered in order, and its answer."""
    out: list[Any] = [Plain("user", draw(_text.filter(str.strip)), "openai", external_id=draw(_mid))]
    if draw(st.booleans()):
        calls = tuple(_call(f"call_{n}_{k}", draw(st.one_of(_raw, st.none()))) for k in range(draw(st.integers(1, 3))))
        lead = draw(st.one_of(st.none(), _text.filter(str.strip)))
        out.append(Plain("assistant", lead, "openai", calls, extras=draw(_agent_extras)))
        out += [Plain("tool", draw(_text), "openai", (Result(c.call_id),), "get_weather") for c in calls]
    out.append(Plain("assistant", draw(_text.filter(str.strip)), "openai", extras=draw(_agent_extras),
                     external_id=draw(_mid)))
    return out


_image = Message.model_validate({"role": "user", "content": [
    {"kind": "text", "text": "look"},
    {"kind": "image", "url": "data:image/png;base64,iVBORw0KGgo=", "media_type": "image/png"}]})


@st.composite
def _conversation(draw: Any) -> list[Any]:
    head = [Plain("system", "You are terse.", "openai")] if draw(st.booleans()) else []
    msgs = head + [m for n in range(draw(st.integers(0, 5))) for m in _turn(draw, n)]
    users = [i for i, m in enumerate(msgs) if m.role == "user"]
    if users and draw(st.booleans()):  # a canonical message among them: a user's image
        msgs[draw(st.sampled_from(users))] = _image
    return msgs


_any = st.one_of(
    st.builds(Plain, st.sampled_from(["system", "user", "assistant"]), st.one_of(st.none(), _text),
              _source, extras=_extras),
    st.builds(lambda i, t, s: Plain("tool", t, s, (Result(i),)), _id, _text, _source),
    st.builds(lambda ids, raw, t, e: Plain("assistant", t, "openai", tuple(Call(i, "f", raw) for i in ids), extras=e),
              st.lists(_id, min_size=1, max_size=3), _raw, st.one_of(st.none(), _text), _extras),
    st.just(_image),
)


@st.composite
def _broken(draw: Any) -> list[Any]:
    """An agent's conversation with messages dropped, moved or added."""
    msgs = draw(_conversation())
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["drop", "move", "add"]))
        if action == "add" or not msgs:
            msgs.insert(draw(st.integers(0, len(msgs))), draw(_any))
        elif action == "drop":
            del msgs[draw(st.integers(0, len(msgs) - 1))]
        else:
            msgs.insert(draw(st.integers(0, len(msgs))), msgs.pop(draw(st.integers(0, len(msgs) - 1))))
    return msgs


def _written(msgs: list[Any], fast: bool, strict: bool = False) -> tuple[Any, list[Any]]:
    """The writer's output and losses, with the one pass, or with the full writer alone."""
    losses = Losses("anthropic", strict)
    with mock.patch.object(_anthropic_write, "one_pass", one_pass if fast else lambda *_: None):
        return _anthropic_write.from_canonical(msgs, losses), list(losses)


def _same(msgs: list[Any]) -> None:
    assert _written(msgs, True) == _written(msgs, False)
    try:
        expected = _written(msgs, False, strict=True)
    except LossError as exc:
        with pytest.raises(LossError, match="^" + re.escape(str(exc)) + "$"):
            _written(msgs, True, strict=True)
    else:
        assert _written(msgs, True, strict=True) == expected


@settings(max_examples=300, deadline=None)
@given(_conversation())
def test_an_agents_conversation_is_written_in_one_pass_as_the_full_writer_writes_it(msgs):
    assert one_pass(msgs, _anthropic_write._Writer(Losses("anthropic"))) is not None
    _same(msgs)


@settings(max_examples=500, deadline=None)
@given(_broken())
def test_a_broken_conversation_is_written_as_the_full_writer_writes_it(msgs):
    _same(msgs)


@settings(max_examples=300, deadline=None)
@given(st.lists(_any, max_size=8))
def test_any_messages_are_written_as_the_full_writer_writes_them(msgs):
    _same(msgs)


def test_what_the_api_rules_mend_is_left_to_the_full_writer():
    user, answer = Plain("user", "hi", "openai"), Plain("assistant", "hello", "openai")
    calls = Plain("assistant", None, "openai", (Call("c1", "f", "{}"), Call("c2", "f", "{}")))
    one, two = (Plain("tool", "ok", "openai", (Result(c),)) for c in ("c1", "c2"))
    mended = {
        "an assistant first": [answer, user],
        "two user turns": [user, user, answer],
        "a call unanswered": [user, calls, one, answer],
        "results out of order": [user, calls, two, one, answer],
        "a prompt after the chat": [user, answer, Plain("system", "be brief", "openai")],
        "an empty text": [user, Plain("assistant", "", "openai")],
    }
    for case, msgs in mended.items():
        assert one_pass(msgs, _anthropic_write._Writer(Losses("anthropic"))) is None, case
        _same(msgs)
    assert one_pass([user, calls, one, two, answer], _anthropic_write._Writer(Losses("anthropic"))) is not None
