"""Docent chat messages (``docent.data_models.chat``, docent 0.1.x).

Reads ``SystemMessage``, ``UserMessage`` (``tool_call_id``), ``AssistantMessage``
(``model``, ``tool_calls`` with ``id``, ``function``, ``arguments`` object, ``parse_error``,
``view``) and ``ToolMessage`` (``tool_call_id``, ``function``, ``error``) with
``ContentText`` (``refusal``) and ``ContentReasoning`` (``signature``, ``summary``,
``redacted``) parts, message ``id`` and ``metadata``. Writes what ``model_dump(mode="json")``
writes (every field, nulls included); the seed's shape without ``metadata`` is read too.

Docent has no media, speaker names, timestamps or usage: export keeps them in
``metadata["convstore"]`` (restored on import) and shows media as text stand-ins.
Docent's ``check_messages()`` warns on consecutive assistant or user messages, empty
messages, late system messages and tool calls not answered right away, so export
merges, pads, relabels and reorders messages that came from other formats, notes how
in ``metadata["convstore"]`` (undone on import) and reports each change. Docent input
that has such warts is written back as it came. The writer is :mod:`._docent_write`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments, same_json
from ..model import Message
from ._common import (
    CARRY_KEY,
    Losses,
    carried_notes,
    made,
    message_list,
    notes_bag,
    restore,
    undeclared,
    validate_others,
)

NAME = "docent"


_OPEN = ConfigDict(extra="allow")

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader).


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    text: str
    refusal: NotRequired[bool | None]


@with_config(_OPEN)
class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    reasoning: str
    summary: NotRequired[str | None]
    signature: NotRequired[str | None]
    redacted: NotRequired[bool]


Part = Annotated[TextPart | ReasoningPart, Field(discriminator="type")]


@with_config(_OPEN)
class View(TypedDict):
    title: NotRequired[str | None]
    format: Literal["text", "markdown"]
    content: str


@with_config(_OPEN)
class ToolCall(TypedDict):
    id: str
    function: str
    arguments: dict[str, Any]
    type: NotRequired[Literal["function"] | None]
    parse_error: NotRequired[str | None]
    view: NotRequired[View | None]
    google_thought_signature: NotRequired[str | None]


@with_config(_OPEN)
class _Message(TypedDict):
    id: NotRequired[str | None]
    content: str | list[Part]  # type: ignore[valid-type]
    metadata: NotRequired[dict[str, Any] | None]


@with_config(_OPEN)
class SystemMessage(_Message):
    role: Literal["system"]


@with_config(_OPEN)
class UserMessage(_Message):
    role: Literal["user"]
    tool_call_id: NotRequired[list[str] | None]


@with_config(_OPEN)
class AssistantMessage(_Message):
    role: Literal["assistant"]
    model: NotRequired[str | None]
    tool_calls: NotRequired[list[ToolCall] | None]


@with_config(_OPEN)
class ToolMessage(_Message):
    role: Literal["tool"]
    tool_call_id: NotRequired[str | None]
    function: NotRequired[str | None]
    error: NotRequired[dict[str, Any] | None]


DocentMessage = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
MESSAGES = TypeAdapter(list[DocentMessage])
_DECLARED = {name: frozenset(model.__annotations__) for name, model in (
    ("system", SystemMessage), ("user", UserMessage), ("assistant", AssistantMessage), ("tool", ToolMessage),
    ("text", TextPart), ("reasoning", ReasoningPart), ("call", ToolCall))}
"""The declared keys of each message role, part type and a call; a value's others are its unknown ones."""


def _extra(value: dict[str, Any], of: str) -> dict[str, Any] | None:
    """A validated value's unknown keys (a model's ``model_extra``), or None."""
    return undeclared(value, _DECLARED[of])


_SHAPE: dict[str, dict[str, None]] = {  # per role, what model_dump writes beyond id/content/role/metadata
    "system": {},
    "user": {"tool_call_id": None},
    "assistant": {"model": None, "tool_calls": None},
    "tool": {"tool_call_id": None, "function": None, "error": None},
}
_LAYOUT = ("pad", "merged", "was", "synthetic")
"""convstore notes on how export reshaped a message (undone before reading it)."""
_RESTORED = (set(Message.model_fields) - {"role", "content"}) | {"blocks"}
_BAD_NOTES = (TypeError, KeyError, ValueError, IndexError, AttributeError)


def _skeleton(role: str) -> dict[str, Any]:
    return {"id": None, "content": "", "role": role, "metadata": None, **_SHAPE[role]}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "refusal": None}


def _own(**found: Any) -> dict[str, Any]:
    """The ``extras["docent"]`` entry: the given notes that are set."""
    kept = {k: v for k, v in found.items() if v is not None}
    return {NAME: kept} if kept else {}


def _apply(block: dict[str, Any], left: dict[str, Any]) -> dict[str, Any]:
    """``block`` (fields) with the fields a convstore note kept for it."""
    return {**block, **left, "extras": {**left.get("extras", {}), **block.get("extras", {})}}


# --- to canonical --------------------------------------------------------------
# Canonical fields, validated in one call (``made``).


def _part_in(part: dict[str, Any]) -> dict[str, Any]:
    fields = _extra(part, part["type"])
    if part["type"] == "text":
        refusal = part.get("refusal")
        if refusal:
            return {"kind": "refusal", "text": part["text"], "extras": _own(fields=fields)}
        return {"kind": "text", "text": part["text"], "extras": _own(fields=fields, refusal=refusal)}
    # Docent keeps a redacted block's opaque blob in ``signature`` (see its parse_reasoning_block).
    redacted, signature = part.get("redacted", False), part.get("signature")
    return {"kind": "reasoning", "text": part["reasoning"], "redacted": redacted,
            "signature": None if redacted else signature, "data": signature if redacted else None,
            "extras": _own(fields=fields, summary=part.get("summary"))}


def _call_in(call: dict[str, Any]) -> dict[str, Any]:
    view = call.get("view")
    return {"kind": "tool_call", "call_id": call["id"], "name": call["function"],
            "arguments": call["arguments"],
            "parse_error": call.get("parse_error"),
            "extras": _own(fields=_extra(call, "call"), type=call.get("type"),
                           view=view and {"title": None, **view},
                           google_thought_signature=call.get("google_thought_signature"))}


def _patched(blocks: list[dict[str, Any]], left: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not left:
        return blocks
    return [_apply(b, left[str(i)]) if str(i) in left else b for i, b in enumerate(blocks)]


def _body_in(content: str | list[dict[str, Any]], calls: list[dict[str, Any]] | None,
             marks: dict[str, Any]) -> list[dict[str, Any]]:
    skip = set(marks.get("standins", ()))
    if isinstance(content, str):
        keep = 0 not in skip and (content != "" or marks.get("empty_text"))
        parts = [{"kind": "text", "text": content}] if keep else []
    else:
        parts = [_part_in(p) for i, p in enumerate(content) if i not in skip]
    parts = _patched(parts, marks.get("parts"))
    blocks = _patched([_call_in(c) for c in calls or ()], marks.get("calls"))
    at = marks.get("calls_at") or ()
    for position, call in zip(at, blocks):  # calls the source had between its texts
        parts.insert(position, call)
    return parts + blocks[len(at):]


def _list_by_choice(content: str | list[dict[str, Any]]) -> bool:
    """A list that export would write as a string unless told (no parts, or one plain text)."""
    if not isinstance(content, list) or len(content) > 1:
        return False
    return not content or (content[0]["type"] == "text" and content[0].get("refusal") is None
                           and content[0].keys() <= _DECLARED["text"])


def _role(msg: Any) -> str:
    return msg["role"] if msg.__class__ is dict else msg.role


class _Reader:
    """Converts one batch; remembers calls not yet answered, for results without ``tool_call_id``."""

    def __init__(self) -> None:
        self.unanswered: dict[str, str] = {}  # call id -> function name, oldest first

    def read(self, m: dict[str, Any], index: int, as_is: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        meta, role = m.get("metadata"), m["role"]
        marks: dict[str, Any] = {}
        if meta and isinstance(meta.get(CARRY_KEY), dict):
            meta = dict(meta)
            marks = meta.pop(CARRY_KEY)
        notes: dict[str, Any] = {"fields": _extra(m, role), "as_is": as_is or None,
                                 "metadata": "empty" if m.get("metadata") == {} else None}
        model = None
        if role == "tool":
            content = [self._result_in(m, marks.get("result"), index)]
        else:
            calls = m.get("tool_calls") if role == "assistant" else None
            content = _body_in(m["content"], calls, marks)
            for call in calls or ():
                self.unanswered[call["id"]] = call["function"]
            notes["content"] = "list" if _list_by_choice(m["content"]) else None
            if role == "assistant":
                model, notes["tool_calls"] = m.get("model"), "empty" if calls == [] else None
            elif role == "user":
                notes["tool_call_id"] = m.get("tool_call_id")
        msg = {"role": marks.get("role", role), "content": content, "external_id": m.get("id"),
               "model": model, "metadata": meta or {}, "source_format": NAME, "extras": _own(**notes)}
        return msg, marks

    def plain(self, msg: Plain) -> tuple[Plain, dict[str, Any]]:
        """A message :func:`_plain_item` read, its calls noted unanswered and its result answered as
        :meth:`read` notes them."""
        if msg.role == "tool":
            self.unanswered.pop(msg.content[0].call_id, None)
        for call in msg.content if msg.role == "assistant" else ():
            self.unanswered[call.call_id] = call.name  # type: ignore[union-attr]
        return msg, {}

    def _result_in(self, m: dict[str, Any], left: dict[str, Any] | None, index: int) -> dict[str, Any]:
        call_id, function, error, extras = m.get("tool_call_id"), m.get("function"), m.get("error"), {}
        if call_id is None:  # pair with the oldest unanswered call of that function, as a reader would
            found = next((c for c, name in self.unanswered.items() if name == function), None)
            call_id, extras = found or f"docent-{index}", _own(no_call_id=True)
        self.unanswered.pop(call_id, None)
        content = m["content"]
        output = content if isinstance(content, str) else [_part_in(p) for p in content]
        block = {"kind": "tool_result", "call_id": call_id, "name": function, "output": output,
                 "is_error": error is not None, "error": error, "extras": extras}
        return _apply(block, left) if left else block


def _marks_of(d: Any) -> dict[str, Any] | None:
    meta = d.get("metadata") if isinstance(d, dict) else None
    marks = meta.get(CARRY_KEY) if isinstance(meta, dict) else None
    return marks if isinstance(marks, dict) and any(k in marks for k in _LAYOUT) else None


def _undo(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The message(s) export wrote before it padded, merged or relabelled ``d``."""
    found = _marks_of(d)
    if found is None:
        return [d]
    marks = dict(found)
    d = {**d, "metadata": {**d["metadata"], CARRY_KEY: marks}}
    if "pad" in marks:
        d["content"] = marks.pop("pad")
    if marks.pop("synthetic", False):
        return []
    if "merged" in marks:
        return [x for part in _unmerge(d, marks.pop("merged")) for x in _undo(part)]
    if "was" in marks:
        d = {**marks.pop("was"), "metadata": d["metadata"]}
    if not marks:
        del d["metadata"][CARRY_KEY]
    d["metadata"] = d["metadata"] or None
    return [d]


def _unmerge(d: dict[str, Any], specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parts = d["content"] if isinstance(d["content"], list) else [_text(d["content"])]
    calls = d.get("tool_calls") or []
    out, k, j = [], 0, 0
    for spec in specs:
        spec = dict(spec)
        n, as_str, n_calls = spec.pop("n"), spec.pop("str", False), spec.pop("calls", None)
        piece, k = parts[k:k + n], k + n
        content = (piece[0]["text"] if piece else "") if as_str else piece
        part = {**_skeleton(d["role"]), **spec, "content": content}
        if n_calls is not None:
            part["tool_calls"], j = calls[j:j + n_calls], j + n_calls
        out.append(part)
    return out


def _has_warts(raw: list[dict[str, Any]]) -> bool:
    """Whether export would reshape these messages (Docent itself only warns about them)."""
    losses = Losses(NAME)
    _Arranger([_Out(i, d, False) for i, d in enumerate(raw)], losses).run()
    return bool(losses)


def to_canonical(data: Any) -> list[Message]:
    """Validate Docent chat messages and convert them to canonical ones."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each message of a plain
    item (a text; a result of its call's id; an assistant's calls as convstore writes them, their arguments'
    text in its notes), for a writer that takes them (``formats.convert``): read
    from the item itself, whose plain types are its validation. A property test holds it to
    :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


def _read(data: Any, lean: bool) -> list[Writable]:
    raw = message_list(data, NAME)
    plain = [_plain_item(d) for d in raw] if lean else [None] * len(raw)
    parsed = validate_others(MESSAGES, raw, plain, NAME)
    warts = _has_warts(raw)  # Docent's own messages with warts are written back as they came
    if warts and any(plain):  # each message then notes the warts: none is plain (the plain ones are valid)
        valid = iter(MESSAGES.validate_python([d for d, p in zip(raw, plain) if p is not None]))
        rest = iter(parsed)
        plain, parsed = [None] * len(raw), [next(rest) if p is None else next(valid) for p in plain]
    as_is = [warts] * len(raw)
    read: list[tuple[int, Writable, dict[str, Any]]] = []
    index = join = 0
    try:
        if any(_marks_of(d) for d in raw):
            expanded, as_is, kept = [], [], []
            for index, (d, stood) in enumerate(zip(raw, plain)):
                parts = _undo(d)  # a plain item's is the item: it has no notes
                expanded.extend(parts)
                as_is.extend([warts and _marks_of(d) is None] * len(parts))  # convstore's reshaping: not
                kept.extend([stood] if stood is not None else [None] * len(parts))
            index, plain = 0, kept
            parsed = validate_others(MESSAGES, expanded, plain, NAME)
        reader, each = _Reader(), iter(parsed)
        for index, stood in enumerate(plain):
            msg, marks = reader.read(next(each), index, as_is[index]) if stood is None \
                else reader.plain(stood)
            if join and _role(msg) == "tool" and _role(prev := read[-1][1]) == "tool":
                if prev.__class__ is not dict:
                    read[-1] = (read[-1][0], prev := prev.fields(), read[-1][2])  # type: ignore[union-attr]
                more = msg if msg.__class__ is dict else msg.fields()  # type: ignore[union-attr]
                prev["content"] += more["content"]  # type: ignore[index]
                join -= 1  # one canonical tool message, split on export
                continue
            join = marks.get("join", 0)
            read.append((index, msg, marks))
        try:
            msgs = made([msg for _, msg, _ in read])
        except ValueError:  # a convstore note at fault: the first message it is in
            for index, msg, _ in read:
                if msg.__class__ is dict:
                    Message(**msg)
            raise
        out = []
        for (index, _, marks), msg in zip(read, msgs):
            out.append(restore(msg, marks) if marks.keys() & _RESTORED else msg)
        return out
    except _BAD_NOTES as exc:  # hand-edited convstore notes: the input's fault
        problem = (index, f"metadata.{CARRY_KEY}", f"malformed convstore notes ({exc})")
        raise SchemaError(NAME, [problem]) from None


_NULLS = {role: ("id", *shape) for role, shape in _SHAPE.items()}


def _plain_item(d: Any) -> Plain | None:
    """An item as ``model_dump`` writes a text (not empty) or a result of its call's id (and its
    function's name, or null) as its message, its metadata null or only other formats' notes that
    convstore carried (``_common.carried_notes``), or as convstore writes an assistant's calls (a text
    before them or not), read from the item itself; None for any other."""
    if d.__class__ is not dict or (text := d.get("content")).__class__ is not str \
            or (role := d.get("role")).__class__ is not str or role not in _NULLS:
        return None
    if role == "assistant" and d.get("tool_calls"):
        return _plain_calls(d, text)
    nulls = _NULLS[role]
    if role == "tool":
        nulls = nulls[:1] + nulls[3:]  # not the call's id nor the function
        call_id, name = d.get("tool_call_id"), d.get("function")
        if call_id.__class__ is not str or not (name is None or name.__class__ is str):
            return None
    elif not text:
        return None  # an empty text has no block
    if len(d) != len(_NULLS[role]) + 3 or any(d.get(key, 0) is not None for key in nulls):
        return None
    extras = None if (meta := d.get("metadata", 0)) is None else carried_notes(meta, NAME)
    if extras is None and meta is not None:
        return None
    return Plain("tool", text, NAME, (Result(call_id),), name, extras) if role == "tool" \
        else Plain(role, text, NAME, extras=extras)


def _only_marks(meta: Any) -> Any:
    """An item's convstore notes, where they are all its metadata holds; None for any other."""
    return meta.get(CARRY_KEY) if meta.__class__ is dict and len(meta) == 1 else None


_CALL_KEYS = ("id", "function", "arguments", "type", "parse_error", "view", "google_thought_signature")
_CALL_MARKS = frozenset({"calls", "extras"})


def _plain_calls(d: dict[str, Any], text: str) -> Plain | None:
    """An assistant's item as convstore writes a message of calls (after a text or not): each call's
    arguments an object, their text in the item's notes (``calls``; ``extras``: other formats' notes),
    where that text parses to exactly them; None for any other."""
    marks = _only_marks(d.get("metadata"))
    if len(d) != 6 or d.get("id", 0) is not None or d.get("model", 0) is not None \
            or marks.__class__ is not dict or not marks.keys() <= _CALL_MARKS \
            or (raws := marks.get("calls")).__class__ is not dict \
            or not notes_bag(extras := marks.get("extras", {})) \
            or (items := d["tool_calls"]).__class__ is not list or len(raws) != len(items):
        return None
    calls = []
    for n, call in enumerate(items):
        raw = raws.get(str(n))
        if call.__class__ is not dict or list(call) != list(_CALL_KEYS) or raw.__class__ is not dict \
                or raw.keys() != {"arguments_raw"} or (text_of := raw["arguments_raw"]).__class__ is not str \
                or call["id"].__class__ is not str or call["function"].__class__ is not str \
                or call["arguments"].__class__ is not dict \
                or any(call[k] is not None for k in _CALL_KEYS[3:]) \
                or not bare_arguments(text_of) or not same_json(call["arguments"], text_of):
            return None
        calls.append(Call(call["id"], call["function"], text_of))
    return Plain("assistant", text or None, NAME, tuple(calls), extras=extras or None)


_KEYS = frozenset({"id", "content", "role", "metadata", "tool_call_id", "model", "tool_calls", "function",
                   "error"})
_OWN_KEYS = {"user": ("tool_call_id",), "assistant": ("model",), "tool": ("function", "error"), "system": ()}


def looks_like(data: Any) -> bool:
    """Dicts with only Docent's keys and at least one key or part only Docent has."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    if not msgs or not all(isinstance(m, dict) and m.get("role") in _SHAPE and m.keys() <= _KEYS
                           for m in msgs):
        return False
    return any(_docent_only(m) for m in msgs)


def _docent_only(m: dict[str, Any]) -> bool:
    if "metadata" in m or "id" in m or any(k in m for k in _OWN_KEYS[m["role"]]):
        return True
    calls, content = m.get("tool_calls"), m.get("content")
    if isinstance(calls, list) and any(isinstance(c, dict) and isinstance(c.get("function"), str)
                                       for c in calls):
        return True
    return isinstance(content, list) and any(
        isinstance(p, dict) and (p.get("type") == "reasoning" or "refusal" in p) for p in content)


# the writer imports the names above; _has_warts runs its _Arranger
from ._docent_write import TAKES_PLAIN, _Arranger, _Out, from_canonical  # noqa: E402

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
