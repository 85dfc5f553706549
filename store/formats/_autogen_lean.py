"""AutoGen AgentChat messages read for a writer that takes plain messages (``formats.convert``): ``to_writable``.

An agent's messages, as convstore writes them for unnamed messages (``source`` a stand-in for the role),
are mostly of three plain shapes: a text, calls (alone, or after a text they were split from) and a
result. Those are read from the items themselves (their plain types are their validation), as
:class:`~store.lean.Plain` s with their message type; every other message takes the source models' path
(``autogen._read``). A property test holds the result to ``to_canonical`` (tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

import orjson

from .. import exactjson
from ..lean import PLAIN_ROLES, Call, Plain, Result, Writable, bare_arguments
from ._common import CARRY_KEY, message_list, notes_bag
from .autogen import _OWN, NAME, PART, UNNAMED, _read, _role


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, with a :class:`~store.lean.Plain` standing in for each message of a plain shape,
    for a writer that takes them."""
    raw = message_list(data, NAME)
    plain = [_plain(m) for m in raw]
    if plain and plain[0] is not None and raw[0]["metadata"][CARRY_KEY] == PART:
        plain[0] = None  # a part with nothing before it is a message of its own, named
    return _read(raw, plain)


_ROLES = {"TextMessage": PLAIN_ROLES, "ToolCallRequestEvent": {"assistant"}, "ToolCallExecutionEvent": {"tool"}}


def _plain(m: Any) -> Plain | None:
    """The message of an item convstore wrote for an unnamed message of a plain shape, without other
    keys than AgentChat's own: a text, calls (each of a string id, name and arguments that parse to
    exactly their text; ``PART`` ones continue the message before), one result of a string (not an
    error); its payload the unnamed note (and a role, another format's notes); None for any other."""
    if m.__class__ is not dict or len(m) != 5 or m.get("models_usage", 0) is not None \
            or (metadata := m.get("metadata")).__class__ is not dict or len(metadata) != 1 \
            or (carried := metadata.get(CARRY_KEY)).__class__ is not str \
            or (source := m.get("source")).__class__ is not str:
        return None
    kind, content = m.get("type"), m.get("content")
    shape = _carried(carried)
    if shape is None or kind.__class__ is not str \
            or (role := shape[0] or _role(kind, source)) not in _ROLES.get(kind, ()):
        return None
    if kind == "TextMessage" and carried != PART:
        return Plain(role, content, NAME, extras=shape[1], source_type=kind) if content.__class__ is str else None
    if content.__class__ is not list or not content or kind != "ToolCallRequestEvent" and (len(content) != 1
                                                                                          or carried == PART):
        return None
    if kind == "ToolCallExecutionEvent":
        result = content[0]
        if result.__class__ is not dict or len(result) != 4 or result.get("is_error") is not False \
                or (text := result.get("content")).__class__ is not str \
                or (call_id := result.get("call_id")).__class__ is not str \
                or (name := result.get("name")).__class__ is not str:
            return None
        return Plain("tool", text, NAME, (Result(call_id),), name, extras=shape[1], source_type=kind)
    calls = [_call(c) for c in content]
    if None in calls:
        return None
    return Plain("assistant", None, NAME, tuple(calls), extras=shape[1], source_type=kind)  # type: ignore[arg-type]


def _call(call: Any) -> Call | None:
    if call.__class__ is not dict or len(call) != 3 or (call_id := call.get("id")).__class__ is not str \
            or (name := call.get("name")).__class__ is not str or (raw := call.get("arguments")).__class__ is not str \
            or not bare_arguments(raw):
        return None
    return Call(call_id, name, raw)


def _carried(text: str) -> tuple[str | None, dict[str, Any] | None] | None:
    """The role and the other formats' notes an unnamed message's payload holds (or the part of a message
    split on export: ``PART``), where it holds nothing else; else None."""
    if text == UNNAMED or text == PART:
        return None, None
    try:
        payload = exactjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if payload.__class__ is not dict or not payload.keys() <= {_OWN, "extras"}:
        return None
    own, extras = payload.get(_OWN), payload.get("extras", {})
    role = own.get("role") if own.__class__ is dict else None
    if own != ({"unnamed": True} if role is None else {"role": role, "unnamed": True}) \
            or role is not None and (role.__class__ is not str or not role) or not notes_bag(extras):
        return None
    return role, extras or None
