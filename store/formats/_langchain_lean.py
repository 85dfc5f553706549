"""LangChain messages read for a writer that takes plain messages (``formats.convert``): ``to_writable``.

An agent's ``messages_to_dict`` items are mostly a text (human, system or AI), an AI message's calls (a
text before them or not) or a tool's successful result, every other key its default. Those are read from the items themselves (their plain types are
their validation), as a :class:`~store.lean.Plain` that keeps the LangChain type as its
``source_type``; every other item takes the source models' path (``_Reader.message``), its fields
validated with the others in one call. A property test holds the result to ``to_canonical``
(tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..lean import Call, Plain, Result, Writable
from ..model import MESSAGES as CANONICAL
from ._common import message_list
from .langchain import FULL_KEYS, MESSAGES, NAME, _parse, _Reader, _ROLES, _unwrap

_DEFAULTS = {"additional_kwargs": {}, "response_metadata": {}, "name": None, "id": None, "tool_calls": [],
             "invalid_tool_calls": [], "usage_metadata": None, "artifact": None, "status": "success"}
"""The value ``messages_to_dict`` writes for each key a message leaves at its default."""
_GIVEN = {"human": ("content", "type"), "system": ("content", "type"), "ai": ("content", "type"),
          "tool": ("content", "type", "tool_call_id", "name")}
"""Per plain type, the keys its item gives; the others hold their defaults."""


def _plain(item: Any) -> Plain | None:
    if item.__class__ is not dict or len(item) != 2 or (data := item.get("data")).__class__ is not dict:
        return None
    kind = item.get("type")
    given = _GIVEN.get(kind) if kind.__class__ is str else None  # type: ignore[arg-type]
    if kind == "ai" and data.get("tool_calls"):
        given = _CALLS_GIVEN
    if given is None or len(data) != len(FULL_KEYS[kind]) or data.get("type") != kind \
            or (text := data.get("content")).__class__ is not str \
            or any(data.get(key, 0) != _DEFAULTS[key] for key in FULL_KEYS[kind] if key not in given):
        return None
    if given is _CALLS_GIVEN:
        return _plain_calls(data["tool_calls"], text)
    if kind != "tool":
        return Plain(_ROLES[kind], text, NAME, source_type=kind) if text else None  # an empty one has no block
    call_id, name = data.get("tool_call_id"), data.get("name")
    if call_id.__class__ is not str or not (name is None or name.__class__ is str):
        return None
    return Plain("tool", text, NAME, (Result(call_id),), name, source_type=kind)


_CALLS_GIVEN = ("content", "type", "tool_calls")
_CALL_KEYS = {"name", "args", "id", "type"}


def _plain_calls(calls: Any, text: str) -> Plain | None:
    """An AI message's calls (a list, not empty), each of a name, an id and an object of arguments; None for
    any other."""
    if calls.__class__ is not list:
        return None
    out = []
    for call in calls:
        if call.__class__ is not dict or call.keys() != _CALL_KEYS or call["type"] != "tool_call" \
                or (name := call["name"]).__class__ is not str or (call_id := call["id"]).__class__ is not str \
                or (args := call["args"]).__class__ is not dict:
            return None
        out.append(Call(call_id, name, None, arguments=args))
    return Plain("assistant", text or None, NAME, tuple(out), source_type="ai")


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, with a :class:`~store.lean.Plain` standing in for each item of a text (not empty)
    or of a tool's successful result, every other key its default, for a writer that takes them."""
    items = message_list(data, NAME)
    plain = [_plain(item) for item in items]
    unwrapped = [_unwrap(item, i) for i, (item, p) in enumerate(zip(items, plain)) if p is None]
    try:
        parsed = iter(MESSAGES.validate_python([d for d, _ in unwrapped]))
    except ValidationError:  # located in the whole input (its plain items are valid)
        _parse(items, 0)
        raise
    reader, shapes = _Reader(), iter(shape for _, shape in unwrapped)
    fields = [reader.message(next(parsed), next(shapes), i) if p is None else p for i, p in enumerate(plain)]
    made = iter(CANONICAL.validate_python([f for f in fields if f.__class__ is dict]) if unwrapped else ())
    return [next(made) if f.__class__ is dict else f for f in fields]
