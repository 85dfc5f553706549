"""Vercel AI SDK UIMessages read for a conversion (``formats.convert``): ``to_writable``.

An agent's UIMessages are mostly of plain parts, with no keys but their own: texts, step starts and
tool parts whose output is available as a string. Their canonical fields are built from the items
themselves (their plain types are their validation), without the source models, and a message of a
text, a result or calls whose input is an object (a text before them or not) is a plain one (with its
UIMessage's id, if it is its first); every other message takes the source models' path
(``vercel_ai._message``), and all are validated as canonical messages in one call. A property test holds the result to ``to_canonical``
(tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

from ..lean import Call, Plain, Result, Writable
from ._common import message_list, validate_others
from .vercel_ai import MESSAGES, NAME, Fields, _message, finish

_TEXT_ROLES = ("user", "system")
_STEP = {"type": "step-start"}


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, the fields of plain UIMessages built from the items themselves."""
    raw = message_list(data, NAME)
    lean = [_lean(m) for m in raw]
    parsed = iter(validate_others(MESSAGES, raw, lean, NAME))
    out = [f for fields in lean
           for f in (map(_as_plain, fields) if fields is not None else _message(next(parsed)))]
    if isinstance(data, dict) and out and out[0].__class__ is Plain:  # a wrapper's keys: noted on the first
        out[0] = {"extras": {}, **out[0].fields()}
    return finish(data, out)


def _as_plain(f: Fields) -> Any:
    """Plain fields (a text, a result, calls whose input is an object after a text or not) as a
    :class:`~store.lean.Plain`; the fields as they are otherwise."""
    content = f["content"]
    if not content:
        return f
    block = content[0]
    if len(content) == 1 and block["kind"] == "text":
        return Plain(f["role"], block["text"], NAME, extras=f["extras"] or None,
                     external_id=f.get("external_id"))
    if block["kind"] == "tool_result":
        return Plain("tool", block["output"], NAME, (Result(block["call_id"]),), block["name"],
                     extras=f["extras"] or None)
    text = block["text"] if block["kind"] == "text" else None
    calls = [Call(b["call_id"], b["name"], None, arguments=b["arguments"]) for b in content[text is not None:]
             if b["kind"] == "tool_call" and b["arguments"].__class__ is dict]
    if len(calls) != len(content) - (text is not None):
        return f  # a text after a call, or input that is no object
    return Plain("assistant", text, NAME, tuple(calls), extras=f["extras"] or None, external_id=f.get("external_id"))


def _lean(m: Any) -> list[Fields] | None:
    """The canonical fields of a UIMessage of plain parts, as ``_message`` builds them; None for any other."""
    if m.__class__ is not dict or len(m) != 3 or (mid := m.get("id")).__class__ is not str \
            or (parts := m.get("parts")).__class__ is not list:
        return None
    role = m.get("role")
    if role in _TEXT_ROLES:
        texts = [_text(p) for p in parts]
        return None if None in texts else [{"role": role, "content": [{"kind": "text", "text": t} for t in texts],
                                            "source_format": NAME, "external_id": mid, "metadata": {}, "extras": {}}]
    if role != "assistant" or not parts:
        return None
    out: list[Fields] = []
    step: Fields | None = None
    results: list[Fields] = []
    for p in parts:
        text = _text(p)
        call = None if text is not None or p == _STEP else _tool(p)
        if text is None and call is None and p != _STEP:
            return None
        if p == _STEP or step is None:
            out += results
            results = []
            step = {"role": "assistant", "content": [], "source_format": NAME, "extras": {NAME: {"joined": True}}} \
                if out else {"role": "assistant", "content": [], "source_format": NAME, "external_id": mid,
                             "metadata": {}, "extras": {}}
            out.append(step)
            if p == _STEP:
                step["extras"].setdefault(NAME, {})["step"] = True
                continue
        if call is None:
            step["content"].append({"kind": "text", "text": text})
        else:
            step["content"].append(call[0])
            results.append(call[1])
    return out + results


def _text(p: Any) -> str | None:
    if p.__class__ is dict and len(p) == 2 and p.get("type") == "text" and (text := p.get("text")).__class__ is str:
        return text  # type: ignore[no-any-return]
    return None


def _tool(p: Any) -> tuple[Fields, Fields] | None:
    """A tool part whose string output is available, without other keys: its call and its result message."""
    if p.__class__ is not dict or len(p) != 5 or p.get("state") != "output-available" \
            or (kind := p.get("type")).__class__ is not str or not kind.startswith("tool-") \
            or (call_id := p.get("toolCallId")).__class__ is not str or "input" not in p \
            or (output := p.get("output")).__class__ is not str:
        return None
    name = kind[5:]
    return ({"kind": "tool_call", "call_id": call_id, "name": name, "arguments": p["input"], "extras": {}},
            {"role": "tool", "content": [{"kind": "tool_result", "call_id": call_id, "name": name, "output": output,
                                          "is_error": False, "extras": {}}],
             "source_format": NAME, "extras": {NAME: {"joined": True}}})
