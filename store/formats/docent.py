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
that has such warts is written back as it came.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..errors import SchemaError
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
from ._common import CARRY_KEY, Losses, carry, dump_json, message_list, restore, validate

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
    raw = message_list(data, NAME)
    parsed = validate(MESSAGES, raw, NAME)
    warts = _has_warts(raw)  # Docent's own messages with warts are written back as they came
    as_is = [warts] * len(raw)
    read: list[tuple[int, Message, dict[str, Any]]] = []
    index = join = 0
    try:
        if any(_marks_of(d) for d in raw):
            expanded, as_is = [], []
            for index, d in enumerate(raw):
                parts = _undo(d)
                expanded.extend(parts)
                as_is.extend([warts and _marks_of(d) is None] * len(parts))  # convstore's reshaping: not
            index = 0
            parsed = validate(MESSAGES, expanded, NAME)
        reader = _Reader()
        for index, m in enumerate(parsed):
            msg, marks = reader.read(m, index, as_is[index])
            if join and msg.role == "tool" and read[-1][1].role == "tool":
                read[-1][1].content.extend(msg.content)  # one canonical tool message, split on export
                join -= 1
                continue
            join = marks.get("join", 0)
            read.append((index, msg, marks))
        out = []
        for index, msg, marks in read:
            out.append(restore(msg, marks) if marks.keys() & _RESTORED else msg)
        return out
    except _BAD_NOTES as exc:  # hand-edited convstore notes: the input's fault
        problem = (index, f"metadata.{CARRY_KEY}", f"malformed convstore notes ({exc})")
        raise SchemaError(NAME, [problem]) from None


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


# --- from canonical --------------------------------------------------------------


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _media_standin(block: Any) -> str:
    where = block.url or (f"file {block.file_id}" if block.file_id else None) or (
        f"{len(block.data)} bytes" if block.data is not None else "no data")
    about = ", ".join(x for x in (block.filename, block.media_type) if x)
    return f"[{block.kind}: {where}{f' ({about})' if about else ''}]"


_STANDINS: dict[str, Callable[[Any], str | None]] = {
    "image": _media_standin,
    "audio": _media_standin,
    "video": _media_standin,
    "file": _media_standin,
    "error": lambda b: f"[error{f' {b.code}' if b.code else ''}: {b.message}]",
    "data": lambda b: f"[data: {_short(dump_json(b.data))}]",
    "code": lambda b: f"```{b.language or ''}\n{b.code}\n```",
    "code_result": lambda b: f"[code output{f', exit code {b.exit_code}' if b.exit_code is not None else ''}]"
                             f"\n{b.output}",
    "handoff": lambda b: f"[handoff to {b.target}]",
    "tool_call": lambda b: f"[tool call {b.name} {_short(b.arguments_raw or dump_json(b.arguments))}]",
    "tool_result": lambda b: f"[tool result for call {b.call_id}]",
    "usage": lambda b: None,  # kept in metadata only: it is no conversation text
}
"""What Docent shows for a block it cannot hold (the block itself goes to metadata.convstore)."""

_NATIVE = {
    "text": frozenset({"text"}),
    "refusal": frozenset({"text"}),
    "reasoning": frozenset({"text", "signature", "redacted"}),
    "tool_call": frozenset({"call_id", "name", "arguments", "arguments_raw", "parse_error"}),
    "tool_result": frozenset({"call_id", "name", "output", "is_error", "error"}),
}
"""Per block kind, the fields Docent holds itself (the rest is carried)."""


def _leftover(block: Block) -> dict[str, Any]:
    """What of ``block`` no Docent field holds, JSON-ready (empty when nothing)."""
    native = _NATIVE[block.kind]
    if not (block.model_fields_set - native - {"kind", "extras"}) and block.extras.keys() <= {NAME}:
        return {}
    left = block.model_dump(mode="json", exclude_defaults=True, exclude={"kind", *native})
    if "extras" in left:
        left["extras"].pop(NAME, None)
        if not left["extras"]:
            del left["extras"]
    return left


def _part_out(block: TextBlock | RefusalBlock | ReasoningBlock) -> tuple[dict[str, Any], dict[str, Any]]:
    own = block.extras.get(NAME, {})
    left = _leftover(block)
    if isinstance(block, ReasoningBlock):
        signature = block.signature
        if block.redacted:  # Docent's blob field is ``signature``; keep both when both are set
            signature = block.data if block.data is not None else block.signature
            left.pop("data", None)
            if block.signature is not None:
                left.update(signature=block.signature, **({"data": None} if block.data is None else {}))
        part = {"type": "reasoning", "reasoning": block.text, "summary": own.get("summary"),
                "signature": signature, "redacted": block.redacted}
    else:
        part = _text(block.text)
        part["refusal"] = True if isinstance(block, RefusalBlock) else own.get("refusal")
    part.update(own.get("fields") or {})
    return part, left


def _call_out(block: ToolCallBlock, index: int, losses: Losses) -> tuple[dict[str, Any], dict[str, Any]]:
    own = block.extras.get(NAME, {})
    left = _leftover(block)
    args = block.arguments
    if not isinstance(args, dict):
        args, left["arguments"] = {}, args
        losses.add(index, "tool_call.arguments", "carried",
                   f"Docent arguments are a JSON object; call {block.call_id} gets {{}}, "
                   "the original is kept")
    if block.arguments_raw is not None:
        left["arguments_raw"] = block.arguments_raw  # the source had a string: give it back byte-exact
    call = {"id": block.call_id, "function": block.name, "arguments": args, "type": own.get("type"),
            "parse_error": block.parse_error, "view": own.get("view"),
            "google_thought_signature": own.get("google_thought_signature")}
    call.update(own.get("fields") or {})
    return call, left


@dataclass
class _Out:
    """A Docent message on its way out: the canonical message it came from, and what merged into it."""

    index: int
    d: dict[str, Any]
    native: bool
    group: list[dict[str, Any]] | None = None


def _standin(block: Block, index: int, losses: Losses, why: str) -> str | None:
    text = _STANDINS[block.kind](block)
    shown = "shown as a text stand-in, " if text is not None else ""
    losses.add(index, block.kind, "carried", f"{why}: {shown}kept in metadata.{CARRY_KEY}")
    return text


def _message_marks(msg: Message, index: int, losses: Losses, blocks: dict[int, Block]) -> dict[str, Any]:
    """The carry payload of ``msg``: what Docent's message fields do not hold."""
    assistant = msg.role == "assistant"
    if not (msg.name or msg.created_at or msg.usage or msg.source_role or msg.source_type or blocks
            or (msg.model and not assistant) or msg.extras.keys() - {NAME}):
        return {}
    native = {"external_id", "metadata", "source_format", *(("model",) if assistant else ())}
    payload = carry(msg, native=native, blocks=blocks) or {}
    extras = payload.pop("extras", {})
    extras.pop(NAME, None)
    if extras:
        payload["extras"] = extras
    for field in [f for f in ("name", "created_at", "usage", "model") if f in payload] + [f"extras.{f}"
                                                                                         for f in extras]:
        losses.add(index, field, "carried",
                   f"Docent {msg.role} messages have no such field; kept in metadata.{CARRY_KEY}")
    return payload


def _set_metadata(d: dict[str, Any], msg: Message, marks: dict[str, Any]) -> None:
    meta = {**msg.metadata, CARRY_KEY: marks} if marks else dict(msg.metadata)
    d["metadata"] = meta if meta or msg.extras.get(NAME, {}).get("metadata") == "empty" else None


def _result_out(block: ToolResultBlock, index: int, losses: Losses) -> dict[str, Any]:
    left = _leftover(block)
    content: Any = block.output
    if not isinstance(block.output, str):
        content, exact = [], True
        for b in block.output:
            if isinstance(b, (TextBlock, RefusalBlock, ReasoningBlock)):
                part, part_left = _part_out(b)
                content.append(part)
                exact = exact and not part_left
            else:
                exact = False
                text = _standin(b, index, losses, "Docent tool output holds only text and reasoning")
                content.extend([_text(text)] if text is not None else [])
        if not exact:
            left["output"] = [b.model_dump(mode="json", exclude_defaults=True) | {"kind": b.kind}
                              for b in block.output]
    error = block.error
    if block.is_error and error is None:  # Docent says "failed" with an error object only
        shown = block.output if isinstance(block.output, str) else ""
        error, left["error"] = {"type": "unknown", "message": shown or "the tool call failed"}, None
    elif not block.is_error and error is not None:
        left["is_error"] = False
    d = _skeleton("tool")
    no_id = block.extras.get(NAME, {}).get("no_call_id")
    d.update(content=content, tool_call_id=None if no_id else block.call_id, function=block.name, error=error,
             metadata={CARRY_KEY: {"result": left}} if left else None)
    return d


def _tool_out(msg: Message, index: int, losses: Losses) -> list[dict[str, Any]]:
    """One Docent tool message per result; the first holds the message's own fields."""
    dicts, carried = [], {}
    for pos, block in enumerate(msg.content):
        if isinstance(block, ToolResultBlock):
            dicts.append(_result_out(block, index, losses))
        else:
            carried[pos] = block
            _standin(block, index, losses, "a Docent tool message holds one tool result only")
    marks = _message_marks(msg, index, losses, carried)
    if len(dicts) > 1:
        marks["join"] = len(dicts) - 1
    first = dicts[0]
    first.update(id=msg.external_id, **(msg.extras.get(NAME, {}).get("fields") or {}))
    _set_metadata(first, msg, {**marks, **(first["metadata"] or {}).get(CARRY_KEY, {})})
    return dicts


def _body_out(msg: Message, blocks: list[Block], index: int, losses: Losses) -> dict[str, Any]:
    role = "user" if msg.role == "tool" else msg.role
    own = msg.extras.get(NAME, {})
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    marks: dict[str, Any] = {}
    standins, carried, seq = [], {}, []  # seq: for each part or call, whether it is a call
    for pos, block in enumerate(blocks):
        if isinstance(block, (TextBlock, RefusalBlock, ReasoningBlock)):
            part, left = _part_out(block)
            if left:
                marks.setdefault("parts", {})[str(seq.count(False))] = left
            parts.append(part)
            seq.append(False)
        elif isinstance(block, ToolCallBlock) and role == "assistant":
            call, left = _call_out(block, index, losses)
            if left:
                marks.setdefault("calls", {})[str(len(calls))] = left
            calls.append(call)
            seq.append(True)
        else:
            carried[pos] = block
            text = _standin(block, index, losses, f"Docent {role} messages cannot hold {block.kind} content")
            if text is not None:
                standins.append(len(parts))
                parts.append(_text(text))
    at = [i for i, is_call in enumerate(seq) if is_call]
    if at and not all(seq[at[0]:]):
        marks["calls_at"] = at
    if standins:
        marks["standins"] = standins
    if msg.role != role:
        marks["role"] = msg.role
        losses.add(index, "role", "approximated",
                   "a tool message without tool results: written as a user message")
    d = _skeleton(role)
    d.update(id=msg.external_id, content=_content_out(parts, own.get("content"), marks))
    if role == "assistant":
        d.update(model=msg.model, tool_calls=calls or ([] if own.get("tool_calls") == "empty" else None))
    elif role == "user":
        d["tool_call_id"] = own.get("tool_call_id")
    d.update(own.get("fields") or {})
    _set_metadata(d, msg, {**_message_marks(msg, index, losses, carried), **marks})
    return d


def _content_out(parts: list[dict[str, Any]], form: str | None, marks: dict[str, Any]) -> Any:
    if form == "list" or len(parts) > 1:
        return parts
    if not parts:
        return ""
    plain = parts[0].keys() == {"type", "text", "refusal"} and parts[0]["type"] == "text"
    if not plain or parts[0]["refusal"] is not None:
        return parts
    if parts[0]["text"] == "":
        marks["empty_text"] = True  # a real empty text block, not just "no content"
    return parts[0]["text"]


def _message_out(msg: Message, index: int, losses: Losses) -> list[_Out]:
    native = bool(msg.extras.get(NAME, {}).get("as_is"))
    results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
    if msg.role == "tool" and results:
        return [_Out(index, d, native) for d in _tool_out(msg, index, losses)]
    rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
    body = _Out(index, _body_out(msg, rest, index, losses), native)
    if not results:
        return [body]
    # Results outside a tool message become tool messages: before it, or after it when it made the call.
    own_calls = {b.call_id for b in msg.content if isinstance(b, ToolCallBlock)}
    outs = [(r.call_id in own_calls, _Out(index, _result_out(r, index, losses), native)) for r in results]
    return [o for after, o in outs if not after] + [body] + [o for after, o in outs if after]


# --- Docent's ordering rules -------------------------------------------------------


class _Arranger:
    """Reorders, merges and relabels messages so that Docent's ``check_messages()`` has
    nothing to warn about; ``native`` messages (Docent input with warts) stay as they are."""

    def __init__(self, items: list[_Out], losses: Losses) -> None:
        self.items, self.losses = items, losses
        self.answers: dict[Any, deque[int]] = {}  # call id -> positions of tool messages answering it
        for i, it in enumerate(items):
            if it.d["role"] == "tool":
                self.answers.setdefault(it.d.get("tool_call_id"), deque()).append(i)
        self.taken: set[int] = set()
        self.out: list[_Out] = []
        self.pending: dict[str, tuple[_Out, str, int]] = {}  # call id -> (caller, function, source index)

    def run(self) -> list[dict[str, Any]]:
        started = False
        for i, it in enumerate(self.items):
            if i in self.taken:
                continue
            role = it.d["role"]
            if role == "tool":
                if it.d.get("tool_call_id") in self.pending:
                    del self.pending[it.d["tool_call_id"]]
                    self.out.append(it)
                    continue
                if not it.native:
                    it, role = self._relabel(it, "a tool result that answers no open call"), "user"
            elif role == "system" and started and not it.native:
                it, role = self._relabel(it, "a system message after the conversation started"), "user"
            started = started or role != "system"
            prev = self.out[-1] if self.out else None
            continues = role == "assistant" and prev is not None and prev.d["role"] == "assistant"
            if self.pending and not continues:  # the open calls must be answered before this message
                self._settle(i)
            if prev is not None and role in ("assistant", "user") and prev.d["role"] == role \
                    and not (prev.native and it.native):
                self._merge(prev, it)
            else:
                self.out.append(it)
            # only an assistant's tool_calls are validated calls; elsewhere it is an unknown key
            for call in (it.d.get("tool_calls") or ()) if it.d["role"] == "assistant" else ():
                self.pending[call["id"]] = (self.out[-1], call["function"], it.index)
        self._settle(len(self.items))
        return [self._finish(o) for o in self.out]

    def _settle(self, i: int) -> None:
        """Answer the open calls before message ``i``: move their later results up, or add placeholders."""
        for call_id, (caller, function, index) in self.pending.items():
            if caller.native:
                continue
            later = self.answers.get(call_id) or deque()
            while later and (later[0] <= i or later[0] in self.taken):
                later.popleft()
            if later:
                self.taken.add(later[0])
                self.out.append(self.items[later[0]])
                self.losses.add(self.items[later[0]].index, "tool_result", "approximated",
                                f"moved up to right after tool call {call_id} (Docent's order)")
                continue
            d = _skeleton("tool")
            d.update(content="(no tool response was recorded)", tool_call_id=call_id, function=function,
                     metadata={CARRY_KEY: {"synthetic": True}})
            self.out.append(_Out(index, d, False))
            self.losses.add(index, "tool_call", "approximated", f"tool call {call_id} has no response: "
                            "added a placeholder tool message (dropped again on import)")
        self.pending = {}

    def _relabel(self, it: _Out, why: str) -> _Out:
        d = it.d
        meta = dict(d.get("metadata") or {})
        meta[CARRY_KEY] = {**meta.get(CARRY_KEY, {}), "was": {k: v for k, v in d.items() if k != "metadata"}}
        label = "[system]"
        if d["role"] == "tool":
            function = f" ({d['function']})" if d.get("function") else ""
            label = f"[tool result for call {d.get('tool_call_id')}{function}]"
            label += f" error: {_short(dump_json(d['error']))}" if d.get("error") else ""
        old = d["content"]
        content = f"{label}\n{old}" if isinstance(old, str) else [_text(label), *old]
        new = _skeleton("user")
        new.update(id=d.get("id"), content=content, metadata=meta)
        self.losses.add(it.index, "role", "approximated",
                        f"{why}: written as a user message (restored on import)")
        return _Out(it.index, new, False)

    def _merge(self, prev: _Out, it: _Out) -> None:
        prev.group = (prev.group or [prev.d]) + [it.d]
        prev.native = False
        role = it.d["role"]
        self.losses.add(it.index, "message", "approximated", f"merged into the previous {role} message "
                        f"(Docent flags consecutive {role} messages); split again on import")

    def _finish(self, o: _Out) -> dict[str, Any]:
        d = _merged(o.group) if o.group else o.d
        if not o.native and _empty(d):
            meta = dict(d.get("metadata") or {})
            meta[CARRY_KEY] = {**meta.get(CARRY_KEY, {}), "pad": d["content"]}
            d = {**d, "content": f"(empty {d['role']} message)", "metadata": meta}
            self.losses.add(o.index, "content", "approximated",
                            "Docent flags empty messages: wrote a placeholder text (removed on import)")
        return d


def _merged(group: list[dict[str, Any]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    specs = []
    for d in group:
        spec = {k: v for k, v in d.items() if k not in ("role", "content", "tool_calls") and v is not None}
        if isinstance(d["content"], str):
            spec.update(str=True, n=1 if d["content"] else 0)
            content.extend([_text(d["content"])] if d["content"] else [])
        else:
            spec["n"] = len(d["content"])
            content.extend(d["content"])
        if d.get("tool_calls") is not None:
            spec["calls"] = len(d["tool_calls"])
            calls.extend(d["tool_calls"])
        specs.append(spec)
    out = _skeleton(group[0]["role"])
    out.update(id=group[0].get("id"), content=content, metadata={CARRY_KEY: {"merged": specs}})
    if out["role"] == "assistant":
        out.update(model=next((d["model"] for d in group if d.get("model")), None), tool_calls=calls or None)
    else:
        out["tool_call_id"] = [x for d in group for x in d.get("tool_call_id") or ()] or None
    return out


def _visible(part: dict[str, Any]) -> bool:
    if part.get("type") == "text":
        return bool((part.get("text") or "").strip())
    shown = part.get("summary") if part.get("redacted") and part.get("summary") else part.get("reasoning")
    return bool((shown or "").strip())


def _empty(d: dict[str, Any]) -> bool:
    """Docent's own test for an empty message (``checks._message_is_empty``)."""
    if d.get("tool_calls") or (d["role"] == "tool" and d.get("error")):
        return False
    content = d["content"]
    return not content.strip() if isinstance(content, str) else not any(_visible(p) for p in content)


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as Docent chat message dicts (``model_dump(mode="json")`` shape)."""
    items: list[_Out] = []
    for index, msg in enumerate(messages):
        items.extend(_message_out(msg, index, losses))
    return _Arranger(items, losses).run()
