"""AgentScope 2.x ``Msg`` as ``Msg.model_dump(mode="json")`` writes it (agentscope 2.0.x).

A 2.x reply ``Msg`` holds a whole reasoning-acting run: thinking, text and tool
calls, the tool results *in the same message*, hints injected between iterations,
more text. On import each ``Msg`` is split into canonical messages: the assistant's
own blocks, a ``tool`` message per run of results and a ``user`` message per hint
(2.x's formatters send hints to the model as user messages); ``extras["agentscope2"]
["part"]`` marks the pieces so that export puts them back into one ``Msg`` exactly.
On export from other formats each tool message goes into the ``Msg`` that holds its
calls. What 2.x has no field for travels in ``Msg.metadata["convstore"]`` (see
:func:`_common.carry`), so X -> agentscope2 -> X gives X back.
The writer is :mod:`._agentscope2_write`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, AnyUrl, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..errors import SchemaError
from ..lean import Plain, Writable
from ..model import BLOCK, AudioBlock, ImageBlock, Message, VideoBlock
from ._common import CARRY_KEY, b64decode_exact, made, message_list, parse_json, restore, validate_others

NAME = "agentscope2"
_URL = TypeAdapter(AnyUrl)


def _absolute_url(url: str) -> str:
    """2.x's ``URLSource.url`` is an ``AnyUrl``: check it as 2.x does, keep it as written."""
    try:
        _URL.validate_python(url)
    except ValidationError as exc:
        raise ValueError(exc.errors(include_url=False)[0]["msg"]) from None
    return url


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Base64Source(_Open):
    type: Literal["base64"]
    data: str
    media_type: str


class URLSource(_Open):
    type: Literal["url"]
    url: Annotated[str, AfterValidator(_absolute_url)]
    media_type: str


class _Block(_Open):
    # absent is fine (2.x fills a fresh id / "now"); null is not, as in 2.x
    id: str = None  # type: ignore[assignment]
    created_at: str = None  # type: ignore[assignment]
    finished_at: str | None = None


class TextPart(_Block):
    type: Literal["text"]
    text: str


class ThinkingPart(_Block):
    type: Literal["thinking"]
    thinking: str


class DataPart(_Block):
    type: Literal["data"]
    source: Annotated[Union[Base64Source, URLSource], Field(discriminator="type")]
    name: str | None = None


OutputPart = Annotated[Union[TextPart, DataPart], Field(discriminator="type")]


class HintPart(_Block):
    type: Literal["hint"]
    hint: str | list[OutputPart]
    source: str | None = None


class ToolCallPart(_Block):
    type: Literal["tool_call"]
    id: str  # the call id, required (a result repeats it)
    name: str
    input: str
    state: Literal["pending", "asking", "allowed", "submitted", "finished"] = "pending"
    suggested_rules: list[dict[str, Any]] = Field(default_factory=list)


class ToolResultPart(_Block):
    type: Literal["tool_result"]
    id: str
    name: str
    output: str | list[OutputPart]
    state: Literal["success", "error", "interrupted", "denied", "running"] = "running"
    metadata: dict[str, Any] = Field(default_factory=dict)


Part = Annotated[Union[TextPart, ThinkingPart, HintPart, ToolCallPart, ToolResultPart, DataPart],
                 Field(discriminator="type")]


class AsUsage(_Open):
    input_tokens: int
    output_tokens: int
    cache_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class ErrorInfo(_Open):
    type: str = "unknown"
    message: str


class Msg(_Open):
    name: str
    content: list[Part]
    role: Literal["user", "assistant", "system"]
    id: str = None  # type: ignore[assignment]
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str = None  # type: ignore[assignment]
    usage: AsUsage | None = None
    finished_at: str | None = None
    finished_reason: Literal["completed", "interrupted", "exceed_max_iters", "error"] | None = None
    structured_output: dict[str, Any] | None = None
    error: ErrorInfo | None = None


MESSAGES = TypeAdapter(list[Msg])
PART = TypeAdapter(Part)

_ALLOWED = {"user": {"text", "data"}, "system": {"text"}}
"""Block types the 2.x ``Msg`` validator lets each role hold (assistant: all)."""
_MEDIA = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
_ERROR_STATES = {"error", "denied", "interrupted"}
_MSG_LEFTOVERS = ("finished_at", "finished_reason", "structured_output", "error")
_CACHE = ("cache_input_tokens", "cache_creation_input_tokens")
_KINDS = {"tool_result": "tool", "hint": "hint"}
_ROLE_OF = {"tool": "tool", "hint": "user"}


def _parse_time(raw: str | None) -> tuple[datetime | None, bool]:
    """The timestamp, and whether writing it back with ``isoformat`` gives ``raw``."""
    if raw is None:
        return None, True
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return None, False
    return value, value.isoformat() == raw


def _segments(types: list[str], cuts: dict[str, Any] | None = None) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` runs of one Msg's blocks: ``tool`` (results), ``hint``
    (one each) or ``main`` (the rest). A convstore payload's ``splits`` and ``joins``
    add and remove boundaries, so a Msg built from other formats splits as it was built."""
    splits, joins = ({j for j in cuts.get(key) or () if isinstance(j, int)} if cuts else set()
                     for key in ("splits", "joins"))
    if not cuts and "tool_result" not in types and "hint" not in types:
        return [("main", 0, len(types))]
    segs: list[list[Any]] = []
    before = None
    for j, typ in enumerate(types):
        kind = _KINDS.get(typ, "main")
        if not segs or j in splits or (j not in joins and (kind == "hint" or kind != before)):
            segs.append([kind, j, j + 1])
        else:
            segs[-1][2] = j + 1
        before = kind
    return [tuple(s) for s in segs] or [("main", 0, 0)]  # type: ignore[misc]


# --- to canonical --------------------------------------------------------------


def _meta(b: _Block, ts: str | None, fields: dict[str, Any] | None, with_id: bool = True) -> dict[str, Any]:
    """Block fields without a canonical place: id, times that differ from the message's, unknown keys."""
    meta: dict[str, Any] = {"id": b.id} if with_id and b.id is not None else {}
    if b.created_at != ts:
        meta["created_at"] = b.created_at
    if b.finished_at is not None:
        meta["finished_at"] = b.finished_at
    if fields:
        meta["fields"] = fields
    return meta


def _own(meta: dict[str, Any]) -> dict[str, Any]:
    return {NAME: meta} if meta else {}


# Blocks and messages are canonical fields, validated in one call with the others (``_read``).


def _text_in(b: TextPart, ts: str | None, answered: set[str]) -> dict[str, Any]:
    return {"kind": "text", "text": b.text, "extras": _own(_meta(b, ts, b.model_extra))}


def _thinking_in(b: ThinkingPart, ts: str | None, answered: set[str]) -> dict[str, Any]:
    extra = dict(b.model_extra or {})  # ThinkingBlock keeps provider extras: two have canonical fields
    signature = extra.pop("signature") if isinstance(extra.get("signature"), str) else None
    redacted = extra.get("redacted_thinking_data")
    data = extra.pop("redacted_thinking_data") if isinstance(redacted, str) else None
    return {"kind": "reasoning", "text": b.thinking, "signature": signature, "redacted": data is not None,
            "data": data, "extras": _own(_meta(b, ts, extra))}


def _data_in(b: DataPart, ts: str | None, answered: set[str]) -> dict[str, Any]:
    src = b.source
    meta = _meta(b, ts, b.model_extra)
    if src.model_extra:
        meta["source_fields"] = src.model_extra
    major = src.media_type.split("/", 1)[0]
    kind = major if major in _MEDIA else "file"  # the block kinds are _MEDIA's major types, and file
    if isinstance(src, URLSource):
        return {"kind": kind, "url": src.url, "media_type": src.media_type, "filename": b.name, "extras": _own(meta)}
    data = b64decode_exact(src.data)
    if data is None:
        meta["b64"] = src.data
    return {"kind": kind, "data": data, "media_type": src.media_type, "filename": b.name, "extras": _own(meta)}


def _call_in(b: ToolCallPart, ts: str | None, answered: set[str]) -> dict[str, Any]:
    meta = _meta(b, ts, b.model_extra, with_id=False)
    if b.state != ("finished" if b.id in answered else "pending"):  # else export derives it
        meta["state"] = b.state
    if b.suggested_rules:
        meta["suggested_rules"] = b.suggested_rules
    arguments, error = parse_json(b.input)
    return {"kind": "tool_call", "call_id": b.id, "name": b.name, "arguments": arguments, "arguments_raw": b.input,
            "parse_error": error, "extras": _own(meta)}


def _result_in(b: ToolResultPart, ts: str | None, answered: set[str]) -> dict[str, Any]:
    meta = _meta(b, ts, b.model_extra, with_id=False)
    is_error = b.state in _ERROR_STATES
    if b.state != ("error" if is_error else "success"):
        meta["state"] = b.state
    if b.metadata:
        meta["metadata"] = b.metadata
    output = b.output if isinstance(b.output, str) else [
        _BLOCKS_IN[type(p)](p, ts, answered) for p in b.output]
    return {"kind": "tool_result", "call_id": b.id, "name": b.name, "output": output, "is_error": is_error,
            "extras": _own(meta)}


_BLOCKS_IN: dict[type, Any] = {
    TextPart: _text_in, ThinkingPart: _thinking_in, DataPart: _data_in, ToolCallPart: _call_in,
    ToolResultPart: _result_in,
}


class _Reader:
    """Splits each Msg into canonical messages; knows which calls were answered."""

    def __init__(self, msgs: list[Msg], answered: set[str]) -> None:
        """``answered``: the ids of the results of Msgs read without one (``_plain``)."""
        self.answered = answered | {b.id for m in msgs for b in m.content if b.type == "tool_result"}

    def message(self, m: Msg, index: int) -> list[Message | dict[str, Any]]:
        carried = m.metadata.get(CARRY_KEY)
        if not isinstance(carried, dict) or not carried:
            return self._split(m, {})
        try:
            return self._split(m, carried)
        except (ValidationError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            problem = (index, f"metadata.{CARRY_KEY}", f"not a convstore payload: {exc}")
            raise SchemaError(NAME, [problem]) from None

    def _split(self, m: Msg, carried: dict[str, Any]) -> list[Message | dict[str, Any]]:
        """The Msg's messages: canonical fields, or messages where a convstore payload was applied to them."""
        segs = _segments([b.type for b in m.content], carried)
        marked = not carried.get("unmarked") and (len(segs) > 1 or segs[0][0] != "main")
        out = [self._segment(m, kind, m.content[start:end], k, marked)
               for k, (kind, start, end) in enumerate(segs)]
        if carried:  # applied to messages: made here, so that an error names the payload
            out = [Message(**fields) for fields in out]  # type: ignore[misc]
            parts = carried.get("parts") if isinstance(carried.get("parts"), dict) else {}
            out[0] = _apply(out[0], carried)
            for k, (_, start, _) in enumerate(segs[1:], 1):
                if isinstance(parts.get(str(start)), dict):
                    out[k] = _apply(out[k], parts[str(start)])
        return out

    def _segment(self, m: Msg, kind: str, blocks: list[Any], k: int, marked: bool) -> dict[str, Any]:
        own: dict[str, Any] = {"part": k} if marked else {}
        if kind == "hint":
            hint = blocks[0]
            ts = hint.created_at
            content = [{"kind": "text", "text": hint.hint}] if isinstance(hint.hint, str) else [
                _BLOCKS_IN[type(p)](p, ts, self.answered) for p in hint.hint]
            info: dict[str, Any] = {"id": hint.id} if hint.id is not None else {}
            if isinstance(hint.hint, str):
                info["str"] = True
            if hint.model_extra:
                info["fields"] = hint.model_extra
            if "finished_at" in hint.model_fields_set:  # its default is "now": absent stays absent
                info["finished_at"] = hint.finished_at
            own["hint"] = info
            name = hint.source
        else:  # a split-off part takes its time from its first block
            ts = m.created_at if k == 0 else blocks[0].created_at
            content = [_BLOCKS_IN[type(b)](b, ts, self.answered) for b in blocks]
            name = None if kind == "tool" else m.name
        created_at, exact = _parse_time(ts)
        if not exact:
            own["created_at"] = ts
        if k == 0:
            own.update(_head(m, kind if marked else "main"))
        return {
            "role": _ROLE_OF.get(kind, m.role), "source_role": m.role if kind == "hint" else None, "name": name,
            "content": content, "source_format": NAME, "external_id": m.id if k == 0 else None,
            "created_at": created_at, "usage": _usage_in(m.usage) if k == 0 else None,
            "metadata": {k: v for k, v in m.metadata.items() if k != CARRY_KEY} if k == 0 and m.metadata else {},
            "extras": _own(own),
        }


def _head(m: Msg, kind: str) -> dict[str, Any]:
    """Msg-level fields the canonical model has no place for."""
    own = {k: getattr(m, k) for k in _MSG_LEFTOVERS if getattr(m, k) is not None}
    if m.error is not None:
        own["error"] = m.error.model_dump()
    if m.model_extra:
        own["fields"] = m.model_extra
    if kind != "main":  # the first message is a tool or hint message: keep the Msg's own name
        own["msg_name"] = m.name
    if kind == "hint":  # the message's time is the hint's; the Msg's own is kept here (None: absent)
        own["msg_created_at"] = m.created_at
    return own


def _usage_in(u: AsUsage | None) -> dict[str, Any] | None:
    if u is None:
        return None
    own: dict[str, Any] = {k: getattr(u, k) for k in _CACHE if getattr(u, k)}
    if u.model_extra:
        own["fields"] = u.model_extra
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "extras": _own(own)}


def _apply(msg: Message, payload: dict[str, Any]) -> Message:
    """``msg`` with a convstore payload applied: carried fields win over the
    stand-ins written in their place; block patches are applied last."""
    if not payload:
        return msg
    fields = {k for k in payload if k in Message.model_fields}
    if fields or "blocks" in payload:
        msg = restore(msg.model_copy(update=dict.fromkeys(fields - {"metadata", "extras"})), payload)
    update = dict.fromkeys(f for f in payload.get("unset") or () if f in ("name", "source_role"))
    if "as_role" in payload:
        update["role"] = payload["as_role"]
    patches = payload.get("block_patch") or {}
    if not patches and "role" not in update:
        # only fields set to null (an unnamed message's name): nothing to validate again
        return msg.model_copy(update=update) if update else msg
    content = list(msg.content)
    for pos, patch in patches.items():
        content[int(pos)] = BLOCK.validate_python({**content[int(pos)].model_dump(), **patch})
    return Message.model_validate({**msg.model_dump(), **update, "content": content})


def to_canonical(data: Any) -> list[Message]:
    """Validate AgentScope 2.x ``Msg`` dicts and convert them to canonical messages."""
    raw = message_list(data, NAME)
    return _read(raw, [None] * len(raw), set())  # type: ignore[return-value]


def _read(raw: list[Any], plain: list[list[Plain] | None], answered: set[str]) -> list[Writable]:
    """The messages of ``raw`` Msgs, those of a Msg read as plain ones (``plain``, see ``to_writable``) as
    they are; ``answered``: the ids of the results of those Msgs."""
    parsed = iter(validate_others(MESSAGES, raw, plain, NAME))
    msgs = [next(parsed) if p is None else p for p in plain]
    problems = [  # what 2.x's own Msg validator enforces per role
        (i, f"content[{j}].type", f"a {m.role} Msg may hold only {' and '.join(sorted(_ALLOWED[m.role]))}")
        for i, m in enumerate(msgs) if m.__class__ is not list and m.role in _ALLOWED
        for j, b in enumerate(m.content) if b.type not in _ALLOWED[m.role]
    ]
    if problems:
        raise SchemaError(NAME, problems)
    reader = _Reader([m for m in msgs if m.__class__ is not list], answered)
    return made([c for i, m in enumerate(msgs) for c in (m if m.__class__ is list else reader.message(m, i))])


_TYPES = {"text", "thinking", "hint", "data", "tool_call", "tool_result"}
_OWN_TYPES = {"hint", "data", "tool_call", "tool_result"}


def looks_like(data: Any) -> bool:
    """``name``/``role``/list ``content`` dicts with 2.x block types, and something
    only 2.x writes (``created_at``, block ids, a 2.x-only block type)."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    evidence = False
    for m in msgs:
        if not (isinstance(m, dict) and m.get("role") in ("user", "assistant", "system")
                and "timestamp" not in m  # 1.x's to_dict
                and isinstance(m.get("name"), str) and isinstance(m.get("content"), list)):
            return False
        evidence = evidence or "created_at" in m
        for b in m["content"]:
            if not isinstance(b, dict) or b.get("type") not in _TYPES:
                return False
            evidence = evidence or b["type"] in _OWN_TYPES or "id" in b
    return bool(msgs) and evidence


from ._agentscope2_lean import to_writable  # noqa: E402  (it reads with the reader above)
from ._agentscope2_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
