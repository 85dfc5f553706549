"""A conversion reads a format's plain items as ``lean.Plain`` (its ``to_writable``), not canonical
messages: the very same messages once made canonical, the very same output and losses in every target,
the very same errors, as its ``to_canonical`` (the source models' path) gives."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from store.errors import ConvstoreError
from store.formats import FORMATS, Loss, convert, read, write
from store.lean import Call, Plain, Result, canonical
from tests.test_lean import _arguments, _id, _text
from tests.test_lean import _conversation as _openai_items

READERS = [name for name, fmt in FORMATS.items() if fmt.to_writable is not None]
TARGETS = [name for name, fmt in FORMATS.items() if fmt.takes_plain]

_name = st.sampled_from(["f", "g", ""])
_extra = st.one_of(st.just({}), st.fixed_dictionaries({"note": _text}))
_carried = st.sampled_from([  # what convstore carries in a Qwen item's extra (plain: notes and a source alone)
    {"extras": {"openai": {"content": "null"}}, "source_format": "openai"}, {"source_format": "openai"},
    {"extras": {"openai": {"fields": {"reasoning_content": "r"}}}}, {"source_format": "qwen"}, {"extras": {}}, {},
    {"extras": {"qwen": {"x": 1}}}, {"extras": {"openai": "junk"}}, {"extras": {"openai": {}}, "name": "bob"},
    {"split": True, "extras": {"openai": {}}}, {"source_format": 7}, {"extras": None}, "junk",
])
_qwen_carrying = st.one_of(
    st.builds(lambda r, c, p: {"role": r, "content": c, "extra": {"convstore": p}},
              st.sampled_from(["system", "user", "assistant"]), _text, _carried),
    st.builds(lambda n, a, i, p: {"role": "assistant", "content": "", "function_call": {"name": n, "arguments": a},
                                  "extra": {"function_id": i, "convstore": p}}, _name, _arguments, _id, _carried),
    st.builds(lambda n, c, i, p: {"role": "function", "name": n, "content": c, "extra": {"function_id": i, "convstore": p}},
              _name, _text, _id, _carried),
)
_qwen_item = st.one_of(
    _qwen_carrying,
    st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["system", "user", "assistant"]), _text),
    st.builds(lambda r, c, more: {"role": r, "content": c, **more}, st.sampled_from(["user", "assistant", "function"]),
              st.one_of(st.none(), _text), st.dictionaries(st.sampled_from(["name", "x", "reasoning_content"]), _text,
                                                           max_size=2)),
    st.builds(lambda c, n, a, i, e: {"role": "assistant", "content": c, "function_call": {"name": n, "arguments": a},
                                     "extra": {"function_id": i, **e}},
              st.sampled_from(["", "hi"]), _name, _arguments, _id, _extra),
    st.builds(lambda n, a: {"role": "assistant", "content": "", "function_call": {"name": n, "arguments": a}},
              _name, _arguments),  # no id: one is made up, and answered by name
    st.builds(lambda n, c, i, e: {"role": "function", "name": n, "content": c, "extra": {"function_id": i, **e}},
              st.one_of(st.none(), _name), _text, _id, _extra),
    st.builds(lambda n, c: {"role": "function", "name": n, "content": c}, _name, _text),
    st.builds(lambda c: {"role": "user", "content": [{"text": c}]}, _text),
    st.sampled_from([{"role": "bogus", "content": "x"}, {"role": "user", "content": 7}, {"role": "assistant"},
                     {"role": ["user"], "content": "x"},
                     {"role": "function", "name": "f", "content": "x", "extra": {"function_id": 7}}]),
)
_SHAPE = {"system": {}, "user": {"tool_call_id": None}, "assistant": {"model": None, "tool_calls": None}}


def _docent(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"id": None, "content": content, "role": role, "metadata": None, **_SHAPE.get(role, {}), **more}


_docent_call = st.builds(lambda i, n: {"id": i, "function": n, "arguments": {}, "type": None, "parse_error": None},
                         _id, _name)
_docent_item = st.one_of(
    st.builds(_docent, st.sampled_from(["system", "user", "assistant"]), _text),
    st.builds(lambda r, c, more: {**_docent(r, c), **more}, st.sampled_from(["system", "user", "assistant"]), _text,
              st.dictionaries(st.sampled_from(["id", "metadata", "model", "x"]),
                              st.one_of(st.just({}), st.just("m"), st.none()), max_size=2)),
    st.builds(lambda c, calls: _docent("assistant", c, tool_calls=calls), st.sampled_from(["", "hi"]),
              st.lists(_docent_call, max_size=2)),
    st.builds(lambda c, i, n, e: _docent("tool", c, tool_call_id=i, function=n, error=e), _text,
              st.one_of(st.none(), _id), st.one_of(st.none(), _name), st.sampled_from([None, {"message": "x"}])),
    st.builds(lambda c: _docent("user", [{"type": "text", "text": c}]), _text),
    st.sampled_from([{"role": "bogus", "content": "x"}, _docent("user", 7), {"role": "tool"},
                     _docent("tool", "x", tool_call_id=7, function=None, error=None)]),
)
_responses_item = st.one_of(
    st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "system", "developer", "assistant"]),
              _text),
    st.builds(lambda r, c: {"role": r, "content": [{"type": "input_text", "text": c}]},
              st.sampled_from(["user", "system"]), _text),
    st.builds(lambda c: {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": c,
                                                                              "annotations": []}]}, _text),
    st.builds(lambda i, n, a, more: {"type": "function_call", "call_id": i, "name": n, "arguments": a, **more},
              _id, _name, _arguments, st.sampled_from([{}, {}, {"id": "fc_1"}, {"status": "completed"}])),
    st.builds(lambda i, c, more: {"type": "function_call_output", "call_id": i, "output": c, **more},
              _id, _text, st.sampled_from([{}, {}, {"name": "f"}, {"id": "o_1"}])),
    st.builds(lambda t: {"type": "reasoning", "summary": [{"type": "summary_text", "text": t}]}, _text),
    st.builds(lambda i, t: {"type": "custom_tool_call", "call_id": i, "name": "f", "input": t}, _id, _text),
    st.sampled_from([{"type": "function_call", "call_id": 7, "name": "f", "arguments": "{}"}, "an item",
                     {"role": "bogus", "content": "x"}, {"type": "web_search_call", "id": "ws_1"},
                     {"type": "function_call_output", "call_id": "c", "output": None}, {"role": "user", "content": 7}]),
)
def _af(role: Any, contents: Any, **more: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "contents": contents, "additional_properties": {}, **more}


def _af_text(text: Any, **more: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, "additional_properties": {}, **more}


_af_call = st.builds(lambda i, n, a, more: {"type": "function_call", "call_id": i, "name": n, "arguments": a,
                                            "additional_properties": {}, **more},
                     _id, _name, _arguments, st.sampled_from([{}, {"hosted": False}, {"hosted": True}, {"x": 1}]))
_af_result = st.builds(
    lambda i, t, r, items, more: {"type": "function_result", "call_id": i, "result": r(t), **items(t),
                                  "additional_properties": {}, **more},
    _id, _text, st.sampled_from([lambda t: t, lambda t: t + "!", lambda t: None, lambda t: {"a": t}]),
    st.sampled_from([lambda t: {"items": [_af_text(t)]}, lambda t: {}, lambda t: {"items": []},
                     lambda t: {"items": [_af_text(t), _af_text(t)]}]),
    st.sampled_from([{}, {}, {"exception": "FunctionInvocationError"}]))
_af_item = st.one_of(
    st.builds(lambda r, t: _af(r, [_af_text(t)]), st.sampled_from(["system", "user", "assistant", "tool", "developer"]),
              _text),
    st.builds(lambda lead, calls: _af("assistant", lead + calls), st.lists(_text.map(_af_text), max_size=1),
              st.lists(_af_call, min_size=1, max_size=2)),
    st.builds(lambda r, res: _af(r, [res]), st.sampled_from(["tool", "tool", "user"]), _af_result),
    st.builds(lambda t, more: _af("user", [_af_text(t)], **more), _text,
              st.sampled_from([{"author_name": "ana"}, {"message_id": "m1"}, {"x_meta": 1}])),
    st.builds(lambda t: {**_af("user", [_af_text(t)]), "additional_properties": {"k": "v"}}, _text),
    st.builds(lambda item, props: {**item, "additional_properties": props},  # notes convstore carried, or near them
              st.one_of(st.builds(lambda r, t: _af(r, [_af_text(t)]), st.sampled_from(["user", "assistant"]), _text),
                        st.builds(lambda calls: _af("assistant", calls), st.lists(_af_call, min_size=1, max_size=2)),
                        st.builds(lambda res: _af("tool", [res]), _af_result)),
              st.sampled_from([{"convstore": {"extras": {"openai": {"content": "null"}}}},
                               {"convstore": {"extras": {"openai": {"fields": {"reasoning_content": "r"}}}}},
                               {"convstore": {"extras": {"agent-framework": {"x": 1}}}}, {"convstore": {"extras": {}}},
                               {"convstore": {"extras": {"openai": 5}}}, {"convstore": {"extras": {"openai": {}},
                                                                                        "name": "ana"}},
                               {"convstore": {"extras": {"openai": {}}}, "k": 1}, {"convstore": "x"},
                               {"convstore": {"extras": {"openai": {}}, "source_format": "openai"}}])),
    st.sampled_from([_af("user", []), _af("user", "a string"), _af(["user"], [_af_text("x")]), _af("user", [{"type": "bogus"}]), {"role": "user"},
                     _af("tool", [{"type": "function_result", "call_id": 7}]), "a message"]),
)
_anthropic_item = st.one_of(
    st.builds(lambda r, t: {"role": r, "content": t}, st.sampled_from(["user", "assistant", "user"]), _text),
    st.builds(lambda t: {"role": "user", "content": [{"type": "text", "text": t}]}, _text),
    st.builds(lambda i, n: {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": n, "input": {}}]},
              _id, _name),
    st.builds(lambda i, t: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": t}]},
              _id, _text),
    st.builds(lambda t: {"role": "user", "content": t, "x": 1}, _text),
    st.sampled_from([{"role": "bogus", "content": "x"}, {"role": "user", "content": 7}, {"role": "user"}]),
)
_gemini_item = st.one_of(
    st.builds(lambda r, t: {"role": r, "parts": [{"text": t}]}, st.sampled_from(["user", "model", "bogus"]), _text),
    st.builds(lambda r, t: {"role": r, "parts": [{"text": t, "thought": True}]}, st.sampled_from(["user", "model"]),
              _text),
    st.builds(lambda t: {"role": "user", "parts": [{"text": t}, {"text": t}]}, _text),
    st.builds(lambda i, n: {"role": "model", "parts": [{"function_call": {"name": n, "id": i, "args": {}}}]},
              _id, _name),
    st.builds(lambda r, head, calls: {"role": r, "parts": head + calls}, st.sampled_from(["model", "model", "user"]),
              st.one_of(st.just([]), st.builds(lambda t: [{"text": t}], _text), st.just([{"text": "t", "thought": True}]),
                        st.just([{"text": 7}])),
              st.lists(st.one_of(
                  st.builds(lambda i, n, a: {"function_call": {"name": n, "id": i, "args": a}}, _id, _name,
                            st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2)),
                  st.sampled_from([{"function_call": {"name": "f", "args": {}}}, {"function_call": {"name": "f", "id": "c"}},
                                   {"function_call": {"name": "f", "id": "c", "args": [1]}},
                                   {"function_call": {"name": "f", "id": "c", "args": {}, "x": 1}},
                                   {"function_call": {"name": "f", "id": "c", "args": {}}, "thought_signature": "s"},
                                   {"text": "after"}])), max_size=3)),
    st.builds(lambda i, n, t: {"role": "user", "parts": [{"function_response": {"name": n, "id": i,
                                                                                 "response": {"output": t}}}]},
              _id, _name, _text),
    st.builds(lambda t: {"parts": [{"text": t}]}, _text),
    st.sampled_from([{"role": "user", "parts": "x"}, {"role": "user", "parts": [{"text": 7}]}, "content"]),
)
_otel_item = st.one_of(
    st.builds(lambda r, t: {"role": r, "parts": [{"type": "text", "content": t}]},
              st.sampled_from(["system", "user", "assistant", "tool", "developer"]), _text),
    st.builds(lambda i, t: {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": t}]},
              st.one_of(st.none(), _id), st.one_of(_text, st.just({"a": 1}))),
    st.builds(lambda i, n: {"role": "assistant", "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": {}}]},
              st.one_of(st.none(), _id), _name),
    st.builds(lambda r, head, calls: {"role": r, "parts": head + calls}, st.sampled_from(["assistant", "assistant", "user"]),
              st.one_of(st.just([]), st.builds(lambda t: [{"type": "text", "content": t}], _text),
                        st.just([{"type": "text", "content": 7}]), st.just([{"type": "reasoning", "content": "r"}])),
              st.lists(st.one_of(
                  st.builds(lambda i, n, a: {"type": "tool_call", "name": n, "id": i, "arguments": a},
                            _id, _name, st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2)),
                  st.sampled_from([{"type": "tool_call", "name": "f", "id": None, "arguments": {}},
                                   {"type": "tool_call", "name": "f", "id": "c"},
                                   {"type": "tool_call", "name": "f", "id": "c", "arguments": "{}"},
                                   {"type": "text", "content": "after"}])), max_size=3)),
    st.builds(lambda t: {"role": "tool", "parts": [{"type": "tool_call_response", "response": t}]}, _text),
    st.builds(lambda t, more: {"role": "user", "parts": [{"type": "text", "content": t}], **more}, _text,
              st.sampled_from([{"name": "ana"}, {"finish_reason": "stop"}])),
    st.sampled_from([{"role": "user", "parts": [{"type": "text", "content": 7}]}, {"role": "user"}, "message",
                     {"role": ["user"], "parts": [{"type": "text", "content": "x"}]}]),
)
_otel_messages = st.lists(_otel_item, max_size=8)
_LC_BASE = {"additional_kwargs": {}, "response_metadata": {}, "name": None, "id": None}
_LC_MORE = {"ai": {"tool_calls": [], "invalid_tool_calls": [], "usage_metadata": None}, "human": {}, "system": {},
            "tool": {"tool_call_id": "c", "artifact": None, "status": "success"}}


def _lc(kind: str, content: Any, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": {"content": content, **_LC_BASE, "type": kind, **_LC_MORE[kind], **data}}


_langchain_item = st.one_of(
    st.builds(_lc, st.sampled_from(["human", "system", "ai"]), _text),
    st.builds(lambda i, n, t, status: _lc("tool", t, tool_call_id=i, name=n, status=status), _id,
              st.one_of(st.none(), _name), _text, st.sampled_from(["success", "success", "error"])),
    st.builds(lambda k, t, more: _lc(k, t, **more), st.sampled_from(["human", "ai"]), _text,
              st.sampled_from([{"name": "ana"}, {"id": "m1"}, {"additional_kwargs": {"x": 1}},
                               {"response_metadata": {"model_name": "m"}}])),
    st.builds(lambda i, n: _lc("ai", "", tool_calls=[{"name": n, "args": {}, "id": i, "type": "tool_call"}]),
              _id, _name),
    st.builds(lambda t, calls: _lc("ai", t, tool_calls=calls), _text, st.lists(st.one_of(
        st.builds(lambda i, n, a: {"name": n, "args": a, "id": i, "type": "tool_call"}, _id, _name,
                  st.dictionaries(st.sampled_from(["a", "b"]), st.one_of(st.integers(), _text, st.none()), max_size=2)),
        st.sampled_from([{"name": "f", "args": {}, "id": None, "type": "tool_call"}, {"name": "f", "args": {}, "id": "c"},
                         {"name": "f", "args": [1], "id": "c", "type": "tool_call"},
                         {"name": "f", "args": {}, "id": "c", "type": "tool_call", "x": 1}])), min_size=1, max_size=3)),
    st.builds(lambda t: {"type": "human", "data": {"content": t, "type": "human"}}, _text),  # keys left out
    st.builds(lambda t: {"content": t, **_LC_BASE, "type": "human"}, _text),  # a bare model_dump
    st.builds(lambda t: _lc("human", [{"type": "text", "text": t}]), _text),
    st.sampled_from([_lc("human", 7), {"type": "bogus", "data": {}}, "message", _lc("tool", "x", tool_call_id=7)]),
)
_UNNAMED = {"convstore": {"name": None}}
_agentscope_item = st.one_of(
    st.builds(lambda r, t, meta: {"name": r, "role": r, "content": [{"type": "text", "text": t}], "metadata": meta},
              st.sampled_from(["user", "assistant", "system", "USER"]), _text,
              st.sampled_from([_UNNAMED, _UNNAMED, {}, None, {"convstore": {"name": "x"}}])),
    st.builds(lambda i, n, t, meta: {"name": "system", "role": "system", "metadata": meta,
                                     "content": [{"type": "tool_result", "id": i, "name": n, "output": t}]},
              _id, _name, _text, st.sampled_from([{"convstore": {"name": None, "source_role": None}}, _UNNAMED, {}])),
    st.builds(lambda t: {"name": "a", "role": "assistant", "content": [{"type": "text", "text": t}],
                         "metadata": {"convstore": {"continues": True}}}, _text),
    st.builds(lambda i, n: {"name": "a", "role": "assistant", "metadata": _UNNAMED,
                            "content": [{"type": "tool_use", "id": i, "name": n, "input": {}}]}, _id, _name),
    st.builds(lambda t: {"name": "u", "role": "user", "content": t, "metadata": _UNNAMED}, _text),
    st.builds(lambda t: {"name": "u", "role": "user", "content": [{"type": "text", "text": t}], "metadata": _UNNAMED,
                         "id": "m1", "timestamp": "2025-01-01 00:00:00.000"}, _text),
    st.sampled_from([{"name": "u", "role": ["user"], "content": [], "metadata": {}}, {"role": "user"}, "msg",
                     {"name": "u", "role": "user", "content": [{"type": "text", "text": 7}], "metadata": _UNNAMED}]),
)
_AS2_NULLS = {"usage": None, "finished_at": None, "finished_reason": None, "structured_output": None, "error": None}


def _as2(role: str, content: list[Any], metadata: Any, **more: Any) -> dict[str, Any]:
    return {"name": role, "content": content, "role": role, "metadata": metadata, **_AS2_NULLS, **more}


_as2_call = st.builds(lambda i, a, state, more: {"type": "tool_call", "id": i, "name": "f", "input": a, "state": state,
                                                 "suggested_rules": [], "finished_at": None, **more},
                      st.sampled_from(["c1", "c2", "c3"]), st.just('{"a": 1}') | _arguments,
                      st.sampled_from(["finished", "finished", "pending"]),
                      st.sampled_from([{}] * 9 + [{"suggested_rules": [{"r": 1}]}, {"finished_at": "t"}, {"x": 1}]))
_as2_result = st.builds(lambda i, t, state, more: {"type": "tool_result", "id": i, "name": "f", "output": t, "state": state,
                                                   "metadata": {}, "finished_at": None, **more},
                        st.sampled_from(["c1", "c2", "c4"]), _text, st.sampled_from(["success", "success", "error"]),
                        st.sampled_from([{}] * 9 + [{"metadata": {"k": 1}}, {"output": []}, {"name": None}]))
_as2_payload = st.builds(lambda cuts, more: {"unset": ["name"], **cuts, **more},
                         st.sampled_from([{"splits": [2, 3], "unmarked": True}, {"splits": [1, 2, 3, 4], "unmarked": True}] * 3
                                         + [{"unmarked": True}, {"splits": [2, 3]}, {}, {"splits": 3, "unmarked": True},
                                            {"joins": [2], "unmarked": True}, {"splits": ["x"], "unmarked": True}]),
                         st.sampled_from([{}] * 4 + [{"extras": {"openai": {"content": "null"}}}] * 2
                                         + [{"parts": {}}, {"as_role": "user"}, {"unset": ["source_role"]}]))
_as2_turn = st.builds(lambda head, calls, results, payload: _as2("assistant", head + calls + results, {"convstore": payload}),
                      st.lists(_text.map(lambda t: {"type": "text", "text": t, "finished_at": None}), max_size=1),
                      st.lists(_as2_call, max_size=3), st.lists(_as2_result, max_size=3), _as2_payload)
_agentscope2_item = st.one_of(
    st.builds(lambda r, t, meta: _as2(r, [{"type": "text", "text": t, "finished_at": None}], meta),
              st.sampled_from(["user", "assistant", "system"]), _text,
              st.sampled_from([{"convstore": {"unset": ["name"]}}] * 3 + [{}, {"convstore": {"unset": ["source_role"]}}])),
    st.builds(lambda t, more: _as2("user", [{"type": "text", "text": t, "finished_at": None}],
                                   {"convstore": {"unset": ["name"]}}, **more), _text,
              st.sampled_from([{"id": "m1"}, {"created_at": "2025-01-01T00:00:00"}, {"usage": {"input_tokens": 1}}])),
    st.builds(lambda i, n, t: _as2("assistant", [
        {"type": "tool_call", "id": i, "name": n, "input": "{}", "state": "finished", "suggested_rules": [],
         "finished_at": None},
        {"type": "tool_result", "id": i, "name": n, "output": t, "state": "success", "metadata": {}, "finished_at": None}],
        {"convstore": {"unset": ["name"], "splits": [1], "unmarked": True}}), _id, _name, _text),
    st.builds(lambda t: _as2("system", [{"type": "tool_call", "id": "c", "name": "f", "input": "{}"}], {}), _text),
    _as2_turn,
    st.builds(lambda t, e: _as2("user", [{"type": "text", "text": t, "finished_at": None}],
                                {"convstore": {"extras": e, "unset": ["name"]}}), _text,
              st.sampled_from([{"openai": {"content": "list"}}, {}, {"openai": "x"}, [], {"agentscope2": {"part": 1}}])),
    st.sampled_from([_as2("user", [{"type": "text", "text": 7, "finished_at": None}], {}), "msg", {"role": "user"},
                     _as2(["user"], [], {})]),
)
_AG_UNNAMED = '{"autogen":{"unnamed":true}}'
_AG_PART = '{"autogen":{"part":true}}'
_ag_carried = st.sampled_from([_AG_UNNAMED] * 4 + [
    _AG_PART, '{"autogen":{"role":"system","unnamed":true}}', '{"autogen":{"role":"tool","unnamed":true}}',
    '{"autogen":{"role":"","unnamed":true}}', '{"autogen":{"role":7,"unnamed":true}}', '{"autogen":{"unnamed":1}}',
    '{"extras":{"openai":{"content":"null"}},"autogen":{"unnamed":true}}', '{"extras":{},"autogen":{"unnamed":true}}',
    '{"extras":{"openai":"x"},"autogen":{"unnamed":true}}', '{"extras":{"autogen":{"absent":["metadata"]}},'
    '"autogen":{"unnamed":true}}', '{"name":"ana","autogen":{"unnamed":true}}', '{"autogen":{"part":true,"x":1}}',
    '{"autogen":{}}', "[1]", "not json", '{"extras":{"openai":{"n":NaN}},"autogen":{"unnamed":true}}'])


def _ag(kind: str, content: Any, carried: str, source: str = "assistant", **more: Any) -> dict[str, Any]:
    return {"source": source, "models_usage": None, "metadata": {"convstore": carried}, "content": content,
            "type": kind, **more}


_ag_call = st.builds(lambda i, n, a: {"id": i, "arguments": a, "name": n}, _id, _name, _arguments)
_ag_result = st.builds(lambda i, n, t, e: {"content": t, "name": n, "call_id": i, "is_error": e}, _id, _name, _text,
                       st.sampled_from([False, False, True, None]))
_ag_calls = st.builds(lambda calls, c: _ag("ToolCallRequestEvent", calls, c),
                     st.lists(_ag_call, min_size=1, max_size=2) | st.just([]), _ag_carried)
_ag_part = st.builds(lambda: _ag("ToolCallRequestEvent", [{"id": "c1", "arguments": '{"a": 1}', "name": "f"}], _AG_PART))
_autogen_item = st.one_of(
    st.builds(lambda t, c, s: _ag("TextMessage", t, c, s), _text, _ag_carried,
              st.sampled_from(["user", "assistant", "system", "ana"])),
    _ag_calls,
    st.builds(lambda c: _ag("ToolCallRequestEvent", [{"id": "c1", "arguments": '{"a": 1}', "name": "f"}], c),
              st.sampled_from([_AG_PART, _AG_PART, _AG_UNNAMED])),  # calls that are plain, split from a turn or not
    st.builds(lambda t: _ag("TextMessage", t, _AG_PART), _text),
    st.builds(lambda results, c: _ag("ToolCallExecutionEvent", results, c), st.lists(_ag_result, max_size=2),
              _ag_carried),
    st.builds(lambda t, more: _ag("TextMessage", t, _AG_UNNAMED, "user", **more), _text,
              st.sampled_from([{"id": "m1"}, {"created_at": "2025-01-01T00:00:00Z"}, {"x": 1},
                               {"models_usage": {"prompt_tokens": 1, "completion_tokens": 2}}])),
    st.builds(lambda t: {**_ag("TextMessage", t, _AG_UNNAMED), "metadata": {"convstore": _AG_UNNAMED, "k": "v"}},
              _text),
    st.builds(lambda t: _ag("ThoughtEvent", t, _AG_UNNAMED), _text),
    st.sampled_from([_ag("TextMessage", 7, _AG_UNNAMED), _ag("TextMessage", "x", _AG_UNNAMED, ["user"]),
                     _ag("Bogus", "x", _AG_UNNAMED), _ag("TextMessage", "x", 7), {"type": "TextMessage"}, "message",
                     _ag("ToolCallRequestEvent", [{"id": 7, "arguments": "{}", "name": "f"}], _AG_UNNAMED),
                     _ag("MultiModalMessage", ["x", {"data": "not base64!"}], _AG_UNNAMED)]),
)
_vc_text = _text.map(lambda t: {"type": "text", "text": t})
_vc_tool = st.builds(lambda i, out, more: {"type": "tool-f", "toolCallId": i, "state": "output-available",
                                           "input": {"a": 1}, "output": out, **more},
                     st.sampled_from(["c1", "c2"]), _text | st.just({"x": 1}),
                     st.sampled_from([{}] * 6 + [{"providerExecuted": True}, {"state": "output-error"}]))
_vc_part = st.one_of(_vc_text, _vc_text, st.just({"type": "step-start"}), _vc_tool,
                     st.sampled_from([{"type": "step-start", "x": 1}, {"type": "text", "text": 7},
                                      {"type": "reasoning", "text": "r"}, {"type": "dynamic-tool", "toolName": "f",
                                       "toolCallId": "c", "state": "output-available", "input": {}, "output": "o"},
                                      {"type": "tool-g", "toolCallId": "c", "state": "input-available", "input": {},
                                       "output": None}, {"type": "text", "text": "x", "state": "done"}]))
_vercel_item = st.one_of(
    st.builds(lambda i, r, parts: {"id": i, "role": r, "parts": parts}, st.sampled_from(["m1", "m2"]),
              st.sampled_from(["user", "system", "assistant", "assistant"]), st.lists(_vc_part, max_size=5)),
    st.builds(lambda t, more: {"id": "m", "role": "user", "parts": [{"type": "text", "text": t}], **more}, _text,
              st.sampled_from([{"metadata": {}}, {"metadata": {"k": 1}}, {"x": 1}])),
    st.sampled_from([{"id": 7, "role": "user", "parts": []}, {"id": "m", "role": "bogus", "parts": []}, "message",
                     {"id": "m", "role": "user", "parts": "x"}, {"id": "m", "role": ["user"], "parts": []}]),
)
_pa_part = st.one_of(
    st.builds(lambda k, t: {"content": t, "part_kind": k}, st.sampled_from(["system-prompt", "user-prompt", "text"]),
              _text),
    st.builds(lambda n, c, i: {"tool_name": n, "content": c, "part_kind": "tool-return", "tool_call_id": i}, _name,
              _text | st.just({"a": [1]}) | st.none(), _id),
    st.builds(lambda n, a, i: {"tool_name": n, "part_kind": "tool-call", "args": a, "tool_call_id": i}, _name,
              _arguments | st.just({"a": 1}) | st.none() | st.just([1]), _id),
    st.sampled_from([{"content": "x", "part_kind": "text", "id": "p1"}, {"content": 7, "part_kind": "text"},
                     {"tool_name": "f", "part_kind": "tool-call", "args": "{}", "tool_call_id": None},
                     {"tool_name": "f", "part_kind": "tool-call", "args": "{}"}, {"content": "t", "part_kind": "thinking"},
                     {"content": ["x"], "part_kind": "user-prompt"}, {"content": "x", "part_kind": ["text"]}]),
)
_pydantic_ai_item = st.one_of(
    st.builds(lambda k, parts: {"parts": parts, "kind": k}, st.sampled_from(["request", "response"]),
              st.lists(_pa_part, max_size=4)),
    st.builds(lambda parts, more: {"parts": parts, "kind": "response", **more}, st.lists(_pa_part, max_size=2),
              st.sampled_from([{"timestamp": "2025-01-01T00:00:00Z"}, {"model_name": "m"}, {"x": 1}])),
    st.sampled_from([{"parts": "x", "kind": "request"}, {"parts": [], "kind": "bogus"}, "message", {"kind": "request"},
                     {"parts": [], "kind": ["request"]}]),
)
_ac_call = st.builds(lambda i, a, n: {"id": i, "arguments": a, "name": n}, _id, _arguments, _name)
_ac_result = st.builds(lambda t, i, e, more: {"content": t, "name": "f", "call_id": i, "is_error": e, **more}, _text, _id,
                       st.sampled_from([False, False, True, None]), st.sampled_from([{}] * 5 + [{"x": 1}]))
_autogen_core_item = st.one_of(
    st.builds(lambda t: {"content": t, "type": "SystemMessage"}, _text),
    st.builds(lambda t, s: {"content": t, "source": s, "type": "UserMessage"}, _text, st.sampled_from(["user", "ana"])),
    st.builds(lambda c, th: {"content": c, "thought": th, "source": "assistant", "type": "AssistantMessage"},
              _text | st.lists(_ac_call, max_size=2), st.none() | _text),
    st.builds(lambda rs: {"content": rs, "type": "FunctionExecutionResultMessage"}, st.lists(_ac_result, max_size=2)),
    st.sampled_from([{"content": "x", "type": "SystemMessage", "x": 1}, {"content": 7, "type": "SystemMessage"},
                     {"content": "x", "source": "a", "type": "AssistantMessage"},
                     {"content": "x", "thought": 7, "source": "a", "type": "AssistantMessage"},
                     {"content": ["x", {"data": "not base64"}], "source": "u", "type": "UserMessage"},
                     {"content": [{"id": "c", "arguments": "{}"}], "thought": None, "source": "a",
                      "type": "AssistantMessage"}, {"content": "x", "type": "Bogus"}, "message"]),
)
_ITEMS = {"autogen-core": st.lists(_autogen_core_item, max_size=8),
          "pydantic-ai": st.lists(_pydantic_ai_item, max_size=8),
          "vercel-ai": st.lists(_vercel_item, max_size=8) | st.builds(lambda m: {"messages": m, "x": 1},
                                                                       st.lists(_vercel_item, max_size=4)),
          "agentscope2": st.lists(_agentscope2_item, max_size=10) | st.lists(_as2_turn, max_size=4),
          "autogen": st.lists(_autogen_item.map(lambda item: [item]) | st.tuples(_autogen_item, _ag_part).map(list),
                              max_size=6).map(lambda groups: [item for group in groups for item in group]),
          "agentscope": st.lists(_agentscope_item, max_size=10),
          "langchain": st.lists(_langchain_item, max_size=10),
          "otel-genai": st.one_of(
    _otel_messages,
    st.builds(lambda s, i, o: {"system_instructions": s, "input_messages": i, "output_messages": o},
              st.just([{"type": "text", "content": "be brief"}]), _otel_messages,
              st.lists(st.builds(lambda t: {"role": "assistant", "parts": [{"type": "text", "content": t}],
                                            "finish_reason": "stop"}, _text), max_size=2)),
    st.builds(lambda i, more: {"input_messages": i, **more}, _otel_messages,
              st.sampled_from([{}, {"gen_ai.request.model": "m"}, {"output_messages": "bad"}]))),
          "gemini": st.one_of(st.lists(_gemini_item, max_size=10),
                              st.builds(lambda s, c: {"system_instruction": s, "contents": c},
                                        st.one_of(_text, st.just({"parts": [{"text": "s"}]})),
                                        st.lists(_gemini_item, max_size=8)),
                              st.builds(lambda c: {"contents": c, "generation_config": {}},
                                        st.lists(_gemini_item, max_size=8))),
          "anthropic": st.one_of(st.lists(_anthropic_item, max_size=10),
                                 st.builds(lambda s, m: {"system": s, "messages": m}, _text,
                                           st.lists(_anthropic_item, max_size=8)),
                                 st.builds(lambda m: {"system": "s", "messages": m, "max_tokens": 5},
                                           st.lists(_anthropic_item, max_size=8))),
          "agent-framework": st.lists(_af_item, max_size=10), "qwen": st.lists(_qwen_item, max_size=10), "docent": st.lists(_docent_item, max_size=10),
          "openai-responses": st.lists(_responses_item, max_size=10)}


def _written(items: Any, fmt: str) -> Any:
    """Items as ``fmt`` writes an OpenAI conversation (what an agent on that framework holds); None
    where the conversation cannot be read."""
    try:
        return convert(items, from_="openai", to=fmt)
    except ConvstoreError:
        return None


def _sources(fmt: str) -> st.SearchStrategy[Any]:
    return st.one_of(_ITEMS[fmt], _openai_items.map(lambda items: _written(items, fmt)).filter(bool))


def _same_error(exc: Exception, fn: Any) -> None:
    with pytest.raises(type(exc), match="^" + re.escape(str(exc)) + "$"):
        fn()


@pytest.mark.parametrize("fmt", READERS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_plain_items_read_as_the_canonical_path_reads_them(fmt, data):
    items = data.draw(_sources(fmt))
    module = FORMATS[fmt]
    try:
        expected = module.to_canonical(copy.deepcopy(items))
    except (ConvstoreError, ValidationError) as exc:  # a bad carried field: the model's own error (read wraps it)
        _same_error(exc, lambda: module.to_writable(copy.deepcopy(items)))
        return
    assert canonical(module.to_writable(copy.deepcopy(items))) == expected


@pytest.mark.parametrize("fmt", READERS)
@settings(max_examples=300, deadline=None)
@given(data=st.data(), target=st.sampled_from(TARGETS))
def test_a_conversion_from_plain_items_writes_what_the_canonical_path_would(fmt, data, target):
    items = data.draw(_sources(fmt))
    try:
        expected = write(read(copy.deepcopy(items), fmt), target)
    except ConvstoreError as exc:
        _same_error(exc, lambda: convert(copy.deepcopy(items), from_=fmt, to=target))
        return
    losses: list[Loss] = []
    value = convert(copy.deepcopy(items), from_=fmt, to=target, on_loss=losses.append)
    assert json.dumps(value, default=repr) == json.dumps(expected[0], default=repr)  # the keys' order too
    assert losses == list(expected[1])


@pytest.mark.parametrize("fmt", READERS)
def test_an_agents_conversation_is_read_mostly_as_plain_messages(fmt):
    """The fast path is taken: most of an agent's messages (texts, calls, results) are plain ones."""
    from benchmarks.workload import conversation

    items = convert(conversation(2000), from_="openai", to=fmt)
    msgs = FORMATS[fmt].to_writable(items)
    assert sum(m.__class__ is Plain for m in msgs) > 0.3 * len(msgs)
    assert canonical(msgs) == read(convert(conversation(2000), from_="openai", to=fmt), fmt)


def test_a_bad_carried_field_fails_as_the_message_alone_would():
    """AutoGen's messages are validated in one call: the error is still the message's own."""
    items = [{"source": "a", "models_usage": None, "metadata": {}, "content": "fine", "type": "TextMessage"},
             {"source": "a", "models_usage": None, "content": "x", "type": "TextMessage",
              "metadata": {"convstore": json.dumps({"autogen": {"role": "bogus"}})}}]
    with pytest.raises(ConvstoreError, match="^cannot read autogen input: 1 validation error for Message role "):
        read(items, "autogen")


def _as2_turn_of(payload: dict[str, Any], result: dict[str, Any] | None = None, state: str = "finished") -> list[Any]:
    call = {"type": "tool_call", "id": "c1", "name": "f", "input": "{}", "state": state, "suggested_rules": [],
            "finished_at": None}
    results = [{"type": "tool_result", "id": i, "name": "f", "output": "ok", "state": "success", "metadata": {},
                "finished_at": None, **(result or {})} for i in ("c1", "c2")]
    return [_as2("assistant", [{"type": "text", "text": "t", "finished_at": None}, call, *results],
                 {"convstore": {"unset": ["name"], **payload}})]


def _vc_turn(**more: Any) -> list[Any]:
    tool = {"type": "tool-f", "toolCallId": "c", "state": "output-available", "input": {}, "output": "o", **more}
    return [{"id": "m", "role": "assistant", "parts": [{"type": "step-start"}, {"type": "text", "text": "t"}, tool]}]


def _dc_text(metadata: Any) -> dict[str, Any]:
    return {"id": None, "content": "t", "role": "user", "metadata": metadata, "tool_call_id": None}


def _dc_result(metadata: Any) -> dict[str, Any]:
    return {"id": None, "content": "o", "role": "tool", "metadata": metadata, "tool_call_id": "c", "function": "f",
            "error": None}


_DC_METADATA = [  # a Docent item's metadata: only other formats' notes carried make it a plain one
    {"convstore": {"extras": {"openai": {"fields": {"reasoning_content": "r"}}}}},
    {"convstore": {"extras": {"openai": {}, "qwen": {"fields": {"x": 1}}}}},
    {"convstore": {"extras": {"docent": {"x": 1}}}}, {"convstore": {"extras": {}}}, {"convstore": {"extras": 5}},
    {"convstore": {"extras": {"openai": 5}}}, {"convstore": {"extras": {"openai": {}}, "name": "ana"}},
    {"convstore": {"extras": {"openai": {}}}, "k": 1}, {"k": 1}, {}, {"convstore": "x"}, {"convstore": None},
]


_QW_NOTES = {"convstore": {"extras": {"openai": {"content": "null"}}, "source_format": "openai"}}


def _qw_call(call_id: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "{}"},
            "extra": {"function_id": call_id, **extra}}


_QW_NEAR = [  # a turn's later item carrying notes (its canonical message keeps the first's), a text's other keys
    [{"role": "assistant", "content": "t", "extra": _QW_NOTES}, _qw_call("c1"), _qw_call("c2", **_QW_NOTES)],
    [_qw_call("c1", **_QW_NOTES), _qw_call("c2", **_QW_NOTES)],
    [{"role": "assistant", "content": "t"}, _qw_call("c1", **_QW_NOTES)],
    [{"role": "user", "content": "t", "extra": {"function_id": "c", **_QW_NOTES}}],
]


_AF_NOTES = {"convstore": {"extras": {"openai": {"x": 1}}}}
_AF_NEAR = [  # a result, a text and calls carrying other formats' notes, and a payload with more than notes
    [{"type": "message", "role": "tool", "additional_properties": _AF_NOTES, "contents": [
        {"type": "function_result", "call_id": "c1", "result": "ok", "additional_properties": {}}]}],
    [{"type": "message", "role": "user", "additional_properties": {"convstore": {"extras": {}, "name": "ana"}},
      "contents": [{"type": "text", "text": "t", "additional_properties": {}}]}],
]


_GM_NEAR = [  # responses without an id answer the calls before them by name, then in order
    [{"role": "model", "parts": [{"text": "t"}, {"function_call": {"name": "f", "id": "c1", "args": {}}},
                                 {"function_call": {"name": "g", "id": "c2", "args": {"a": 1}}}]},
     {"role": "user", "parts": [{"function_response": {"name": "g", "response": {"output": "two"}}},
                                {"function_response": {"name": "x", "response": {"output": "one"}}}]}],
]


@pytest.mark.parametrize(("fmt", "items"), [
    *[("qwen", items) for items in _QW_NEAR],
    *[("agent-framework", items) for items in _AF_NEAR],
    *[("gemini", items) for items in _GM_NEAR],
    ("agentscope2", _as2_turn_of({"splits": [3], "unmarked": True})),
    ("agentscope2", _as2_turn_of({"splits": [3]})),
    ("agentscope2", _as2_turn_of({"splits": 3, "unmarked": True})),
    ("agentscope2", _as2_turn_of({"splits": [3], "unmarked": True}, {"metadata": {"k": 1}})),
    ("agentscope2", _as2_turn_of({"splits": [3], "unmarked": True}, state="pending")),
    ("agentscope2", _as2_turn_of({"unmarked": True})),
    ("agentscope2", [_as2("user", [{"type": "text", "text": "t", "finished_at": None}],
                          {"convstore": {"unset": ["name"], "splits": 3}})]),
    ("agentscope2", [_as2("user", [{"type": "text", "text": "t", "finished_at": None}],
                          {"convstore": {"unset": ["name"], "unmarked": 1}})]),
    ("vercel-ai", _vc_turn()), ("vercel-ai", _vc_turn(providerExecuted=True)), ("vercel-ai", _vc_turn(output={"a": 1})),
    ("vercel-ai", _vc_turn(state="output-error")), ("vercel-ai", [{"id": "m", "role": "assistant", "parts": []}]),
    ("vercel-ai", [{"id": "m", "role": "assistant", "parts": [{"type": "tool-f", "toolCallId": "c",
                                                               "state": "output-available", "output": "o", "x": 1}]}]),
    ("pydantic-ai", [{"parts": [{"tool_name": "f", "content": None, "part_kind": "tool-return", "tool_call_id": "c"}],
                      "kind": "request"}]),
    ("pydantic-ai", [{"parts": [{"tool_name": "f", "args": None, "part_kind": "tool-call", "tool_call_id": "c"}],
                      "kind": "response"}]),
    *[("docent", [_dc_text(meta), _dc_result(meta)]) for meta in _DC_METADATA],
], ids=[*[f"qw-carried-{n}" for n in range(len(_QW_NEAR))], *[f"af-carried-{n}" for n in range(len(_AF_NEAR))],
        *[f"gm-unanswered-{n}" for n in range(len(_GM_NEAR))], "as2-plain", "as2-marked", "as2-bad-splits", "as2-result-metadata", "as2-pending", "as2-results-joined",
        "as2-text-bad-splits", "as2-text-unmarked", "vc-plain", "vc-more-keys", "vc-json-output", "vc-error",
        "vc-no-parts", "vc-no-input", "pa-null-content", "pa-null-args",
        *[f"dc-metadata-{n}" for n in range(len(_DC_METADATA))]])
def test_near_misses_read_as_the_canonical_path_reads_them(fmt, items):
    """Near misses of plain turns (a text, a call, its result and another) that random ones seldom hit:
    each read as the canonical path reads it, or refused with the same error."""
    module = FORMATS[fmt]
    try:
        expected = module.to_canonical(copy.deepcopy(items))
    except ConvstoreError as exc:
        _same_error(exc, lambda: module.to_writable(copy.deepcopy(items)))
        return
    assert canonical(module.to_writable(copy.deepcopy(items))) == expected


@pytest.mark.parametrize("target", TARGETS)
def test_docent_items_of_carried_notes_convert_as_the_canonical_path_converts_them(target):
    items = [item for meta in _DC_METADATA[:2] for item in (_dc_text(meta), _dc_result(meta))]
    expected, expected_losses = write(read(copy.deepcopy(items), "docent"), target)
    losses: list[Loss] = []
    assert convert(copy.deepcopy(items), from_="docent", to=target, on_loss=losses.append) == expected
    assert losses == list(expected_losses)


@pytest.mark.parametrize("notes", ["junk", [], 5])
def test_notes_that_are_no_object_are_refused_not_written(notes):
    """A format's notes are an object: the model refuses others (every writer reads them as one), and so
    does a reader restoring carried notes (once a crash of the OpenAI writer, read from AutoGen)."""
    from pydantic import ValidationError

    from store.model import Message, TextBlock

    with pytest.raises(ValidationError, match="extras.openai"):
        Message(role="user", extras={"openai": notes})
    with pytest.raises(ValidationError, match="extras.openai"):
        TextBlock(text="x", extras={"openai": notes})
    payload = '{"extras":{"openai":%s},"autogen":{"unnamed":true}}' % json.dumps(notes)
    item = {"source": "user", "models_usage": None, "metadata": {"convstore": payload}, "content": "x",
            "type": "TextMessage"}
    with pytest.raises(ConvstoreError, match="^cannot read autogen input: 1 validation error for Message extras.openai"):
        convert([item], from_="autogen", to="openai")


_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=6)
_bag = st.dictionaries(st.text(max_size=6), _json, max_size=3)
_field = st.one_of(st.none(), st.text(max_size=6))
_notes = st.dictionaries(st.text(max_size=6), st.dictionaries(st.text(max_size=3), _json, max_size=3), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={"extras": _notes | _bag, "metadata": _bag, "name": _field,
                                           "source_format": _field, "source_type": _field, "external_id": _field,
                                           "model": _field, "source_role": _field, "autogen": _bag}),
       st.fixed_dictionaries({}, optional={"extras": _notes, "metadata": _bag, "name": _field, "source_format": _field,
                                           "model": _field}))
def test_restoring_notes_and_strings_gives_what_the_validating_merge_gives(carried, own):
    """``restore`` merges such a payload into a copy of the message; ``blocks`` (here none) takes the
    path that dumps the message and validates it again: the very same message."""
    from store.formats._common import restore
    from store.model import Message

    msg = Message(role="user", content=[{"kind": "text", "text": "hi"}], **own)
    try:
        slow = restore(msg, {**carried, "blocks": []})
    except ValidationError as exc:  # notes that are no object: both refuse them
        _same_error(exc, lambda: restore(msg, carried))
        return
    fast = restore(msg, carried)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()


_junk = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                               st.sampled_from(["text", "tool_call", "tool_result", "assistant", "user", "request",
                                                "TextMessage", "tool-f", "step-start", "convstore"])),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["role", "content", "type", "parts", "kind", "part_kind", "metadata", "id",
                                          "source", "text", "name", "convstore", "models_usage"]), inner, max_size=5),
                     max_leaves=12)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    inner = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [at] + [p for key, v in inner for p in _paths(v, (*at, key))]


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = _replaced(value[path[0]], path[1:], new)
    return out


@pytest.mark.parametrize("fmt", READERS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_junk_is_refused_with_our_error_not_a_traceback(fmt, data):
    """A conversion's lean read takes any JSON: items of the format with one value anywhere in them made
    junk convert into any target, or are refused with convstore's error (an unhashable kind once raised a
    TypeError from a look-up, carried OpenAI notes of ``"fields": true`` one from the OpenAI writer)."""
    items = data.draw(_sources(fmt))
    path = data.draw(st.sampled_from(_paths(items)))
    items = _replaced(items, path, data.draw(_junk))
    try:
        convert(copy.deepcopy(items), from_=fmt, to=data.draw(st.sampled_from(TARGETS)))
    except ConvstoreError:
        pass


_ids = st.one_of(st.none(), st.sampled_from(["msg_1", "m-2", ""]))
_notes = st.sampled_from([None, {"vercel-ai": {"step": True}}, {"vercel-ai": {"joined": True}}, {"openai": {"x": 1}}])
_plain_with_id = st.one_of(
    st.builds(lambda r, t, i, e, s: Plain(r, t, "vercel-ai", extras=e, external_id=i, source_type=s),
              st.sampled_from(["system", "user", "assistant"]), _text, _ids, _notes, st.sampled_from([None, "T"])),
    st.builds(lambda c, n, t, i, e: Plain("tool", t, "vercel-ai", (Result(c),), n, extras=e, external_id=i),
              st.sampled_from(["c1", "c2"]), st.one_of(st.none(), _name), _text, _ids, _notes),  # never an error
    st.builds(lambda t, calls, i, e: Plain("assistant", t, "vercel-ai", tuple(calls), extras=e, external_id=i),
              st.one_of(st.none(), _text),
              st.lists(st.builds(lambda i, n, a: Call(i, n, a), st.sampled_from(["c1", "c2", "c3"]), _name,
                                 st.sampled_from(["{}", '{"a": 1}', "[1]"])),
                       min_size=1, max_size=2, unique_by=lambda c: c.call_id), _ids, _notes),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_plain_with_id, max_size=6), st.sampled_from(TARGETS))
def test_plain_messages_with_an_id_write_as_their_canonical_messages(msgs, target):
    """A writer that takes a plain message with its source's id (``writable(..., ids=True)``) writes and
    reports it as its canonical path does; the others take it canonical."""
    value, losses = write(msgs, target)
    expected, expected_losses = write(canonical(msgs), target)
    assert value == expected
    assert list(losses) == list(expected_losses)
