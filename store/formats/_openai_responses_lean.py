"""Responses items read for a writer that takes plain messages (``formats.convert``): ``to_writable``.

An agent's items are mostly of four plain shapes, each its keys alone, every value a string: an
easy user or system message (``{"role", "content"}``), an easy assistant message, a
``function_call`` and a ``function_call_output``. Those are read from the items themselves (their
plain types are their validation), without source models: a user's or system's message as a
:class:`~store.lean.Plain`, a turn of calls alone (whose arguments parse to exactly their text) as
one, a ``function_call_output`` of a function call read before it as one, the others as canonical
fields validated in one call. Every other item takes the source models' path (``_Reader.item``). A
property test holds the result to ``to_canonical`` (tests/test_lean_read.py).
"""

from __future__ import annotations

from typing import Any

from ..lean import Call, Plain, Result, Writable, bare_arguments
from ..model import MESSAGES as CANONICAL
from ._common import parse_json, validate_others
from .openai_responses import ITEMS, NAME, _Reader, items_of


def _plain_kind(item: Any) -> str | None:
    """Which of the four plain shapes ``item`` has ("text", "assistant", "call", "output"), or None."""
    if item.__class__ is not dict:
        return None
    kind = item.get("type")
    if kind is None:
        role = item.get("role")
        if len(item) != 2 or item.get("content").__class__ is not str:
            return None
        if role == "user" or role == "system":
            return "text"
        return "assistant" if role == "assistant" and item["content"] else None  # an empty one is kept whole
    if kind == "function_call":
        keys = ("call_id", "name", "arguments")
    elif kind == "function_call_output":
        keys = ("call_id", "output")
    else:
        return None
    if len(item) != len(keys) + 1 or any(item.get(key).__class__ is not str for key in keys):
        return None
    return "call" if kind == "function_call" else "output"


class _LeanReader(_Reader):
    """The reader whose assistant turns hold :class:`Call` s where a plain call was read (a turn of those
    alone is a :class:`Plain`, see :meth:`finished`)."""

    def plain(self, kind: str, item: dict[str, Any]) -> None:
        """An item of a plain shape, read as ``item`` reads its model."""
        if kind == "text":
            self.messages.append(Plain(item["role"], item["content"], NAME))  # type: ignore[arg-type]
        elif kind == "assistant":
            turn = self.turn()  # a text that starts its turn has no notes (``_Reader._assistant``)
            text = {"kind": "text", "text": item["content"]}
            turn.append({**text, "extras": {NAME: {"item": {}, "string": True}}} if turn else text)
        elif kind == "call":
            call_id, name, raw = item["call_id"], item["name"], item["arguments"]
            self.calls[call_id] = (name, False)
            self.turn().append(Call(call_id, name, raw) if bare_arguments(raw) else _call_fields(call_id, name, raw))
        elif (known := self.calls.get(call_id := item["call_id"])) is not None and not known[1]:
            # the output of a function call read before it: its kind not noted (``_Reader._output``)
            self.messages.append(Plain("tool", item["output"], NAME, (Result(call_id),), name=known[0]))
        else:
            self.messages.append({"role": "tool", "source_format": NAME, "content": [  # type: ignore[arg-type]
                {"kind": "tool_result", "call_id": call_id, "name": known[0] if known else None,
                 "output": item["output"], "extras": {NAME: {"type": "function"}}}]})

    def finished(self) -> list[Writable]:
        """The messages read: canonical fields validated in one call, a turn of plain calls alone as
        a :class:`Plain`."""
        out: list[Any] = []
        for msg in self.messages:
            if msg.__class__ is dict and msg["role"] == "assistant":  # type: ignore[index]
                content = msg["content"]  # type: ignore[index]
                head = content[0] if content and content[0].__class__ is dict and content[0].keys() == _TEXT \
                    else None
                calls = content[head is not None:]
                if all(block.__class__ is Call for block in calls):
                    out.append(Plain("assistant", head and head["text"], NAME, tuple(calls)))
                    continue
                msg["content"] = [_call_fields(*b[:3]) if b.__class__ is Call else b for b in content]  # type: ignore[index]
            out.append(msg)
        made = iter(CANONICAL.validate_python([msg for msg in out if msg.__class__ is dict]))
        return [next(made) if msg.__class__ is dict else msg for msg in out]


_TEXT = {"kind", "text"}  # a text that starts its turn, without notes


def _call_fields(call_id: str, name: str, raw: str) -> dict[str, Any]:
    arguments, error = parse_json(raw)
    return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments, "arguments_raw": raw,
            "parse_error": error}


def to_writable(data: Any) -> list[Writable]:
    """``to_canonical``, with :class:`~store.lean.Plain` messages standing in for a user's or system's
    easy message and for a turn of plain calls alone, for a writer that takes them."""
    raw = items_of(data)
    kinds = [_plain_kind(item) for item in raw]
    parsed = iter(validate_others(ITEMS, raw, kinds, NAME))
    reader = _LeanReader()
    for item, kind in zip(raw, kinds):
        if kind is None:
            reader.item(next(parsed))
        else:
            reader.plain(kind, item)
    return reader.finished()
