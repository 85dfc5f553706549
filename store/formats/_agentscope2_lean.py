"""AgentScope 2.x Msgs read for a writer that takes plain messages (``formats.convert``): ``to_writable``.

An agent's Msgs, as convstore writes them for unnamed messages, are mostly of two plain shapes: one text,
and an assistant's turn (a text or not, its calls, the results after them, each result a message of its
own as the payload's ``splits`` say). Those are read from the items themselves (their plain types are
their validation), as :class:`~store.lean.Plain` s; every other Msg takes the source models' path
(``agentscope2._read``). A property test holds the result to ``to_canonical`` (tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

from ..lean import Call, Plain, Result, Writable, bare_arguments
from ._common import CARRY_KEY, message_list, notes_bag
from .agentscope2 import NAME, _read, _segments


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, with :class:`~store.lean.Plain` s standing in for the messages of each Msg of a
    plain shape, for a writer that takes them."""
    raw = message_list(data, NAME)
    answered = _answered(raw)
    return _read(raw, [_plain(m, answered) for m in raw], answered)


_ROLES = ("user", "assistant", "system")
_NULLS = ("usage", "finished_at", "finished_reason", "structured_output", "error")
_TEXT_KEYS = {"type", "text", "finished_at"}
_CALL_KEYS = {"type", "id", "name", "input", "state", "suggested_rules", "finished_at"}
_RESULT_KEYS = {"type", "id", "name", "output", "state", "metadata", "finished_at"}
_PLAIN_PAYLOAD = {"unset", "extras", "splits", "unmarked"}
_TEXT_PAYLOAD = {"unset", "extras"}


def _plain(m: Any, answered: set[str]) -> list[Plain] | None:
    """The messages of a Msg of a plain shape, as :func:`_read` would make them; None for any other."""
    if m.__class__ is not dict or len(m) != 9 or m.get("name").__class__ is not str \
            or (content := m.get("content")).__class__ is not list or not content \
            or (role := m.get("role")) not in _ROLES or any(m.get(key, 0) is not None for key in _NULLS) \
            or (metadata := m.get("metadata")).__class__ is not dict or len(metadata) != 1 \
            or (payload := metadata.get(CARRY_KEY)).__class__ is not dict or payload.get("unset") != ["name"] \
            or not payload.keys() <= _PLAIN_PAYLOAD or not notes_bag(extras := payload.get("extras", {})):
        return None
    first = content[0]
    text = first["text"] if first.__class__ is dict and first.keys() == _TEXT_KEYS and first["type"] == "text" \
        and first["finished_at"] is None and first["text"].__class__ is str else None
    if len(content) == 1:
        return [Plain(role, text, NAME, extras=extras or None)] if text is not None \
            and payload.keys() <= _TEXT_PAYLOAD else None
    start = at = 0 if text is None else 1
    while at < len(content) and content[at].__class__ is dict and content[at].get("type") == "tool_call":
        at += 1
    calls = [_plain_call(b, answered) for b in content[start:at]]
    results = [_plain_result(b) for b in content[at:]]
    if role != "assistant" or not at or None in calls or None in results \
            or results and not payload.get("unmarked") or payload.get("splits", []).__class__ is not list:
        return None  # (a Msg's later parts are marked as such, unless unmarked)
    if _segments([b["type"] for b in content], payload) != [("main", 0, at)] + [("tool", j, j + 1)
                                                                                  for j in range(at, len(content))]:
        return None  # a result is not a message of its own
    head = Plain("assistant", text, NAME, tuple(calls), extras=extras or None)  # type: ignore[arg-type]
    return [head, *results]  # type: ignore[list-item]


def _plain_call(b: dict[str, Any], answered: set[str]) -> Call | None:
    if b.keys() != _CALL_KEYS or (call_id := b["id"]).__class__ is not str or b["name"].__class__ is not str \
            or b["input"].__class__ is not str or b["suggested_rules"] != [] or b["finished_at"] is not None \
            or b["state"] != ("finished" if call_id in answered else "pending") or not bare_arguments(b["input"]):
        return None
    return Call(call_id, b["name"], b["input"])


def _plain_result(b: Any) -> Plain | None:
    if b.__class__ is not dict or b.keys() != _RESULT_KEYS or b["type"] != "tool_result" or b["state"] != "success" \
            or (call_id := b["id"]).__class__ is not str or b["name"].__class__ is not str \
            or b["output"].__class__ is not str or b["metadata"] != {} or b["finished_at"] is not None:
        return None
    return Plain("tool", b["output"], NAME, (Result(call_id),), b["name"])


def _answered(raw: list[Any]) -> set[str]:
    """The ids of the results in raw Msgs (the validated ones' :class:`_Reader` finds, for valid input)."""
    return {b.get("id") for m in raw if m.__class__ is dict and (content := m.get("content")).__class__ is list
            for b in content if b.__class__ is dict and b.get("type") == "tool_result" and isinstance(b.get("id"), str)}
