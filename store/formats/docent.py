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

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments, canonical, same_json
from ..model import (
    BLOCK,
    Block,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ._common import CARRY_KEY, Losses, message_list, notes_bag, restore, validate_others

NAME = "docent"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextPart(_Open):
    type: Literal["text"]
    text: str
    refusal: bool | None = None


class ReasoningPart(_Open):
    type: Literal["reasoning"]
    reasoning: str
    summary: str | None = None
    signature: str | None = None
    redacted: bool = False


Part = Annotated[TextPart | ReasoningPart, Field(discriminator="type")]


class View(_Open):
    title: str | None = None
    format: Literal["text", "markdown"]
    content: str


class ToolCall(_Open):
    id: str
    function: str
    arguments: dict[str, Any]
    type: Literal["function"] | None = None
    parse_error: str | None = None
    view: View | None = None
    google_thought_signature: str | None = None


class _Message(_Open):
    id: str | None = None
    content: str | list[Part]
    metadata: dict[str, Any] | None = None


class SystemMessage(_Message):
    role: Literal["system"]


class UserMessage(_Message):
    role: Literal["user"]
    tool_call_id: list[str] | None = None


class AssistantMessage(_Message):
    role: Literal["assistant"]
    model: str | None = None
    tool_calls: list[ToolCall] | None = None


class ToolMessage(_Message):
    role: Literal["tool"]
    tool_call_id: str | None = None
    function: str | None = None
    error: dict[str, Any] | None = None


DocentMessage = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
MESSAGES = TypeAdapter(list[DocentMessage])

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


def _apply(block: Block, left: dict[str, Any]) -> Block:
    """``block`` with the fields a convstore note kept for it."""
    extras = {**left.get("extras", {}), **block.extras}
    return BLOCK.validate_python({**block.model_dump(), **left, "extras": extras})


# --- to canonical --------------------------------------------------------------


def _part_in(part: TextPart | ReasoningPart) -> Block:
    fields = part.model_extra or None
    if isinstance(part, TextPart):
        if part.refusal:
            return RefusalBlock(text=part.text, extras=_own(fields=fields))
        return TextBlock(text=part.text, extras=_own(fields=fields, refusal=part.refusal))
    # Docent keeps a redacted block's opaque blob in ``signature`` (see its parse_reasoning_block).
    redacted = part.redacted
    return ReasoningBlock(
        text=part.reasoning, redacted=redacted, signature=None if redacted else part.signature,
        data=part.signature if redacted else None, extras=_own(fields=fields, summary=part.summary),
    )


def _call_in(call: ToolCall) -> ToolCallBlock:
    return ToolCallBlock(
        call_id=call.id, name=call.function, arguments=call.arguments, parse_error=call.parse_error,
        extras=_own(fields=call.model_extra or None, type=call.type,
                    view=call.view and call.view.model_dump(),
                    google_thought_signature=call.google_thought_signature),
    )


def _patched(blocks: list[Block], left: dict[str, Any] | None) -> list[Block]:
    if not left:
        return blocks
    return [_apply(b, left[str(i)]) if str(i) in left else b for i, b in enumerate(blocks)]


def _body_in(content: str | list[Part], calls: list[ToolCall] | None, marks: dict[str, Any]) -> list[Block]:
    skip = set(marks.get("standins", ()))
    if isinstance(content, str):
        keep = 0 not in skip and (content != "" or marks.get("empty_text"))
        parts: list[Block] = [TextBlock(text=content)] if keep else []
    else:
        parts = [_part_in(p) for i, p in enumerate(content) if i not in skip]
    parts = _patched(parts, marks.get("parts"))
    blocks = _patched([_call_in(c) for c in calls or ()], marks.get("calls"))
    at = marks.get("calls_at") or ()
    for position, call in zip(at, blocks):  # calls the source had between its texts
        parts.insert(position, call)
    return parts + blocks[len(at):]


def _list_by_choice(content: str | list[Part]) -> bool:
    """A list that export would write as a string unless told (no parts, or one plain text)."""
    if not isinstance(content, list) or len(content) > 1:
        return False
    return not content or (isinstance(content[0], TextPart) and content[0].refusal is None
                           and not content[0].model_extra)


class _Reader:
    """Converts one batch; remembers calls not yet answered, for results without ``tool_call_id``."""

    def __init__(self) -> None:
        self.unanswered: dict[str, str] = {}  # call id -> function name, oldest first

    def read(self, m: Any, index: int, as_is: bool) -> tuple[Message, dict[str, Any]]:
        meta = m.metadata
        marks: dict[str, Any] = {}
        if meta and isinstance(meta.get(CARRY_KEY), dict):
            meta = dict(meta)
            marks = meta.pop(CARRY_KEY)
        notes: dict[str, Any] = {"fields": m.model_extra or None, "as_is": as_is or None,
                                 "metadata": "empty" if m.metadata == {} else None}
        model = None
        if isinstance(m, ToolMessage):
            content: list[Block] = [self._result_in(m, marks.get("result"), index)]
        else:
            calls = m.tool_calls if isinstance(m, AssistantMessage) else None
            content = _body_in(m.content, calls, marks)
            for call in calls or ():
                self.unanswered[call.id] = call.function
            notes["content"] = "list" if _list_by_choice(m.content) else None
            if isinstance(m, AssistantMessage):
                model, notes["tool_calls"] = m.model, "empty" if calls == [] else None
            elif isinstance(m, UserMessage):
                notes["tool_call_id"] = m.tool_call_id
        msg = Message(role=marks.get("role", m.role), content=content, external_id=m.id, model=model,
                      metadata=meta or {}, source_format=NAME, extras=_own(**notes))
        return msg, marks

    def plain(self, msg: Plain) -> tuple[Plain, dict[str, Any]]:
        """A message :func:`_plain_item` read, its calls noted unanswered and its result answered as
        :meth:`read` notes them."""
        if msg.role == "tool":
            self.unanswered.pop(msg.content[0].call_id, None)
        for call in msg.content if msg.role == "assistant" else ():
            self.unanswered[call.call_id] = call.name  # type: ignore[union-attr]
        return msg, {}

    def _result_in(self, m: ToolMessage, left: dict[str, Any] | None, index: int) -> Block:
        call_id, extras = m.tool_call_id, {}
        if call_id is None:  # pair with the oldest unanswered call of that function, as a reader would
            found = next((c for c, name in self.unanswered.items() if name == m.function), None)
            call_id, extras = found or f"docent-{index}", _own(no_call_id=True)
        self.unanswered.pop(call_id, None)
        output = m.content if isinstance(m.content, str) else [_part_in(p) for p in m.content]
        block = ToolResultBlock(call_id=call_id, name=m.function, output=output, is_error=m.error is not None,
                                error=m.error, extras=extras)
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
        made, rest = iter(MESSAGES.validate_python([d for d, p in zip(raw, plain) if p is not None])), iter(parsed)
        plain, parsed = [None] * len(raw), [next(rest) if p is None else next(made) for p in plain]
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
        reader, made = _Reader(), iter(parsed)
        for index, stood in enumerate(plain):
            msg, marks = reader.read(next(made), index, as_is[index]) if stood is None else reader.plain(stood)
            if join and msg.role == "tool" and read[-1][1].role == "tool":
                read[-1][1].content.extend(canonical([msg])[0].content)  # type: ignore[arg-type]
                join -= 1  # one canonical tool message, split on export
                continue
            join = marks.get("join", 0)
            read.append((index, msg, marks))
        out = []
        for index, msg, marks in read:
            out.append(restore(msg, marks) if marks.keys() & _RESTORED else msg)  # type: ignore[arg-type]
        return out
    except _BAD_NOTES as exc:  # hand-edited convstore notes: the input's fault
        problem = (index, f"metadata.{CARRY_KEY}", f"malformed convstore notes ({exc})")
        raise SchemaError(NAME, [problem]) from None


_NULLS = {role: ("id", "metadata", *shape) for role, shape in _SHAPE.items()}


def _plain_item(d: Any) -> Plain | None:
    """An item as ``model_dump`` writes a text (not empty) or a result of its call's id (and its
    function's name, or null) as its message, or as convstore writes an assistant's calls (a text
    before them or not), read from the item itself; None for any other."""
    if d.__class__ is not dict or (text := d.get("content")).__class__ is not str \
            or (role := d.get("role")).__class__ is not str or role not in _NULLS:
        return None
    if role == "assistant" and d.get("tool_calls"):
        return _plain_calls(d, text)
    nulls = _NULLS[role]
    if role == "tool":
        nulls = nulls[:2] + nulls[4:]  # not the call's id nor the function
        call_id, name = d.get("tool_call_id"), d.get("function")
        if call_id.__class__ is not str or not (name is None or name.__class__ is str):
            return None
    elif not text:
        return None  # an empty text has no block
    if len(d) != len(_NULLS[role]) + 2 or any(d.get(key, 0) is not None for key in nulls):
        return None
    return Plain("tool", text, NAME, (Result(call_id),), name) if role == "tool" else Plain(role, text, NAME)


_CALL_KEYS = ("id", "function", "arguments", "type", "parse_error", "view", "google_thought_signature")
_CALL_MARKS = frozenset({"calls", "extras"})


def _plain_calls(d: dict[str, Any], text: str) -> Plain | None:
    """An assistant's item as convstore writes a message of calls (after a text or not): each call's
    arguments an object, their text in the item's notes (``calls``; ``extras``: other formats' notes),
    where that text parses to exactly them; None for any other."""
    meta = d.get("metadata")
    marks = meta.get(CARRY_KEY) if meta.__class__ is dict and len(meta) == 1 else None
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
