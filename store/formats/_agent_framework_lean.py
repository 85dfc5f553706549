"""Agent Framework messages read for a writer that takes plain messages (``formats.convert``): ``to_writable``.

An agent's messages are mostly of three plain shapes, as ``Message.to_dict()`` writes them without
an author, an id or properties (but other formats' notes that convstore carried): one text, an
assistant's function calls (after a text or not; their arguments a string that parses to exactly itself)
and one function result of a text. Those are read
from the items themselves (their plain types are their validation), as a
:class:`~store.lean.Plain`; every other message takes the source models' path (``_Reader.message``).
A property test holds the result to ``to_canonical`` (tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments
from ._common import carried_notes, message_list, validate_others
from .agent_framework import MESSAGES, NAME, _Reader, _strays

_TEXT_ROLES = frozenset({"system", "user", "assistant"})


def _bare(value: Any, keys: int) -> bool:
    """A dict of ``keys`` keys whose ``additional_properties`` is empty."""
    return value.__class__ is dict and len(value) == keys and value.get("additional_properties") == {}


def _text(content: Any) -> str | None:
    if _bare(content, 3) and content.get("type") == "text" and (text := content.get("text")).__class__ is str:
        return text  # type: ignore[no-any-return]
    return None


def _call(content: Any) -> Call | None:
    hosted = content.get("hosted", False) if content.__class__ is dict else None
    if hosted is not False or not _bare(content, 6 if "hosted" in content else 5) \
            or content.get("type") != "function_call":
        return None
    call_id, name, raw = content.get("call_id"), content.get("name"), content.get("arguments")
    if call_id.__class__ is not str or name.__class__ is not str or raw.__class__ is not str or not bare_arguments(raw):
        return None
    return Call(call_id, name, raw)


def _result(content: Any) -> Plain | None:
    """A function result whose ``result`` is its one text item's text (or a text, without items)."""
    items = content.get("items", ()) if content.__class__ is dict else None
    if items is None or content.get("type") != "function_result" or not _bare(content, 5 if items != () else 4):
        return None
    call_id, text = content.get("call_id"), content.get("result")
    if call_id.__class__ is not str or text.__class__ is not str:
        return None
    if items != () and (items.__class__ is not list or len(items) != 1 or _text(items[0]) != text):
        return None
    return Plain("tool", text, NAME, (Result(call_id),))


def _plain(item: Any) -> Plain | None:
    """The message of an item of a plain shape (a result's tool name still to find); None for any other."""
    if item.__class__ is not dict or len(item) != 4 or item.get("type") != "message" \
            or (contents := item.get("contents")).__class__ is not list or not contents:
        return None
    notes = None
    if (ap := item.get("additional_properties")) != {} and (notes := carried_notes(ap, NAME)) is None:
        return None
    role = item.get("role")
    if role == "tool":
        if len(contents) != 1 or (result := _result(contents[0])) is None:
            return None
        result.extras = notes
        return result
    if role.__class__ is not str or role not in _TEXT_ROLES:
        return None
    text = _text(contents[0])
    if len(contents) == 1 and text is not None:
        return Plain(role, text, NAME, extras=notes)
    calls = [_call(c) for c in (contents[1:] if text is not None else contents)]
    if role != "assistant" or None in calls:
        return None
    return Plain("assistant", text, NAME, tuple(calls), extras=notes)  # type: ignore[arg-type]


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, with a :class:`~store.lean.Plain` standing in for each message of a plain shape,
    for a writer that takes them."""
    raw = message_list(data, NAME)
    plain = [_plain(item) for item in raw]
    parsed = iter(validate_others(MESSAGES, raw, plain, NAME))
    models = [None if p is not None else next(parsed) for p in plain]
    if problems := [p for i, m in enumerate(models) if m is not None for p in _strays(m, i)]:
        raise SchemaError(NAME, problems)
    reader = _Reader()
    for index, (p, m) in enumerate(zip(plain, models)):
        if m is not None:
            reader.message(m, index)
        elif p.role == "tool":  # type: ignore[union-attr]
            p.name = reader.names.get(p.content[0].call_id)  # type: ignore[union-attr]  # as the reader names it
            reader.read.append(p)
        else:
            reader.names.update((call.call_id, call.name) for call in p.content)  # type: ignore[union-attr]
            reader.read.append(p)
    return reader.messages()
