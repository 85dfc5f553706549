"""AgentScope 1.x ``Msg`` (``Msg.to_dict()`` / ``Msg.from_dict()``), and the seed's Java JSON.

Reads ``{"id", "name", "role", "content", "metadata", "timestamp"}`` messages whose
content is a string or a list of ``text``, ``thinking``, ``image``/``audio``/``video``
(URL or base64 source), ``tool_use`` and ``tool_result`` blocks. AgentScope puts each
tool result in a message of its own (``{"name": "system", "role": "system"}``); those
become canonical ``tool`` messages. The Java JSON (upper-case roles, a ``TOOL`` role,
``usage``, block ``metadata``/``state``, ``toolUseId``) is read too; export always
writes the Python 1.x shape.

What AgentScope has no field for travels in ``metadata["convstore"]``: canonical
message fields (via :func:`_common.carry`), ``patch`` (per block: the canonical fields
the block cannot hold, or the whole block behind a text stand-in) and ``continues``
(this message belongs to the previous canonical one, e.g. its second tool result).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, Union

import pydantic
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import to_jsonable_python
from typing_extensions import assert_never

from ..errors import SchemaError
from ..model import (BLOCK, AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, ErrorBlock, FileBlock,
                     HandoffBlock, ImageBlock, Message, ReasoningBlock, RefusalBlock, TextBlock,
                     ToolCallBlock, ToolResultBlock, Usage, UsageBlock, VideoBlock)
from ._common import (CARRY_KEY, Losses, b64decode_exact, b64encode, carry, data_uri, dump_json, message_list,
                      parse_data_uri, restore, unknown_fields, validate)

NAME = "agentscope"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextPart(_Open):
    type: Literal["text"]
    text: str


class ThinkingPart(_Open):
    type: Literal["thinking"]
    thinking: str


class URLSource(_Open):
    type: Literal["url"]
    url: str


class Base64Source(_Open):
    type: Literal["base64"]
    media_type: str
    data: str


class MediaPart(_Open):
    type: Literal["image", "audio", "video"]
    source: Annotated[Union[URLSource, Base64Source], Field(discriminator="type")]


class ToolUsePart(_Open):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    raw_input: str | None = None


class ToolResultPart(_Open):
    type: Literal["tool_result"]
    id: str
    name: str | None = None  # required in Python 1.x; Java writes null for an error made without a name
    output: str | list[Annotated[Union[TextPart, MediaPart], Field(discriminator="type")]]

    @model_validator(mode="before")
    @classmethod
    def _seed_id(cls, data: Any) -> Any:
        """The seed's Java builder names the call id ``toolUseId``."""
        if isinstance(data, dict) and "id" not in data and "toolUseId" in data:
            return {**data, "id": data["toolUseId"]}
        return data


Part = Annotated[
    Union[TextPart, ThinkingPart, MediaPart, ToolUsePart, ToolResultPart], Field(discriminator="type")
]


class Msg(_Open):
    name: str | None
    role: Literal["user", "assistant", "system", "USER", "ASSISTANT", "SYSTEM", "TOOL"]
    content: str | list[Part]
    metadata: dict[str, Any] | None = None
    timestamp: str | None = None
    id: str | None = None


MESSAGES = TypeAdapter(list[Msg])
_JAVA_ROLES = {"USER": "user", "ASSISTANT": "assistant", "SYSTEM": "system", "TOOL": "system"}
_ROLES_IN = {"user": "user", "assistant": "assistant", "system": "system", **_JAVA_ROLES}
"""The canonical role of a message's blocks other than tool results (those make a ``tool`` message)."""
_ROLE_OUT = {"user": "user", "assistant": "assistant", "system": "system", "tool": "system"}
_PY_ROLES = {"user", "assistant", "system"}
_MEDIA_IN = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
_OUTPUT_KINDS = {"text", "image", "audio", "video"}
Patch: TypeAlias = "dict[str, Any] | None"
Written: TypeAlias = "tuple[dict[str, Any], Patch]"
T = TypeVar("T")


def _unknown(model: BaseModel) -> dict[str, Any]:
    """Keys the canonical model has no field for: unknown ones, and known ones given as null."""
    fields = unknown_fields(model)
    return {"fields": fields} if fields else {}


def _own(java: bool, extras: dict[str, Any], **markers: Any) -> dict[str, Any]:
    """The ``extras["agentscope"]`` entry. ``java`` marks what came from Java JSON: export
    writes the Python shape, so that part is carried instead of written back."""
    kept = {**extras, **{k: v for k, v in markers.items() if v not in (None, False)}}
    return {NAME: {**kept, "java": True} if java else kept} if kept else {}


def _timestamp(value: datetime) -> str:
    """``Msg``'s own format, ``%Y-%m-%d %H:%M:%S.fff``: wall-clock time, no zone."""
    return (value if value.tzinfo is None else value.replace(tzinfo=None)).isoformat(" ", "milliseconds")


def _parse_time(raw: str) -> datetime | None:
    try:
        return datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
    except ValueError:
        return None


def _runs(items: list[T], is_result: Callable[[T], bool], grouped: bool = True) -> list[tuple[bool, list[T]]]:
    """Consecutive items split into runs of tool results and runs of the rest; with
    ``grouped`` false, each tool result is a run of its own."""
    runs: list[tuple[bool, list[T]]] = []
    for item in items:
        result = is_result(item)
        if runs and runs[-1][0] == result and (grouped or not result):
            runs[-1][1].append(item)
        else:
            runs.append((result, [item]))
    return runs or [(False, [])]


# --- to canonical ----------------------------------------------------------------------


def _media_in(part: MediaPart, java: bool) -> Block:
    own, src, cls = _unknown(part), part.source, _MEDIA_IN[part.type]
    if src.model_extra:
        own["source"] = dict(src.model_extra)
    if isinstance(src, URLSource):
        decoded = parse_data_uri(src.url)
        if decoded is None:
            return cls(url=src.url, extras=_own(java, own))
        return cls(media_type=decoded[0], data=decoded[1], extras=_own(java, own, data_uri=True))
    data = b64decode_exact(src.data)  # kept as given when not canonical base64
    raw = src.data if data is None else None
    return cls(media_type=src.media_type, data=data, extras=_own(java, own, raw=raw))


def _tool_use_in(part: ToolUsePart, java: bool) -> Block:
    raw = part.raw_input
    if raw is None and java and isinstance((part.model_extra or {}).get("content"), str):
        raw = part.model_extra["content"]  # Java keeps the model's raw argument string in `content`
    return ToolCallBlock(call_id=part.id, name=part.name, arguments=part.input, arguments_raw=raw,
                         extras=_own(java, _unknown(part)))


def _tool_result_in(part: ToolResultPart, java: bool) -> Block:
    output = part.output if isinstance(part.output, str) else [_part_in(p, java) for p in part.output]
    return ToolResultBlock(call_id=part.id, name=part.name, output=output, extras=_own(java, _unknown(part)),
                           is_error=java and (part.model_extra or {}).get("state") == "error")


_PARTS_IN: dict[type, Callable[[Any, bool], Block]] = {
    TextPart: lambda p, java: TextBlock(text=p.text, extras=_own(java, _unknown(p))),
    ThinkingPart: lambda p, java: ReasoningBlock(text=p.thinking, extras=_own(java, _unknown(p))),
    MediaPart: _media_in, ToolUsePart: _tool_use_in, ToolResultPart: _tool_result_in,
}


def _part_in(part: BaseModel, java: bool) -> Block:
    return _PARTS_IN[type(part)](part, java)


def _java_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    ints = {k: v for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}
    return Usage(input_tokens=ints.get("inputTokens"), output_tokens=ints.get("outputTokens"),
                 total_tokens=ints.get("totalTokens"))


def _split(m: Msg, java: bool, metadata: dict[str, Any], blocks: list[Block]) -> list[Message]:
    """One canonical message per run of tool results or other blocks; the first holds the
    message's own fields, the others say they continue it."""
    created = _parse_time(m.timestamp) if m.timestamp is not None else None
    shape = {
        "content": "str" if isinstance(m.content, str) else None,
        "timestamp": m.timestamp if created is None or _timestamp(created) != m.timestamp else None,
        "metadata": "absent" if "metadata" not in m.model_fields_set else None,
    }
    usage = _java_usage((m.model_extra or {}).get("usage")) if java else None
    out = []
    for k, (is_result, run) in enumerate(_runs(blocks, lambda b: isinstance(b, ToolResultBlock))):
        role = "tool" if is_result else _ROLES_IN[m.role]
        markers = shape if k == 0 else {"continues": True, "timestamp": shape["timestamp"]}
        extras = _own(java, _unknown(m) if k == 0 else {}, **markers, grouped=is_result and len(run) > 1)
        first = {"external_id": m.id, "metadata": metadata, "usage": usage} if k == 0 else {}
        out.append(Message(role=role, content=run, source_role=None if m.role == role else m.role,
                           name=m.name, source_format=NAME, created_at=created, extras=extras, **first))
    return out


_CARRIED_ERRORS = (pydantic.ValidationError, TypeError, KeyError, IndexError, ValueError, AttributeError)


def _bad_carry(index: int, where: str, exc: Exception) -> SchemaError:
    """A ``metadata["convstore"]`` that is not what an export writes (edited by hand, say)."""
    if isinstance(exc, pydantic.ValidationError):
        err = exc.errors(include_url=False)[0]
        why = f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    else:
        why = f"{type(exc).__name__}: {exc}"
    return SchemaError(NAME, [(index, f"metadata.{CARRY_KEY}{where}", f"not what convstore carries: {why}")])


def _patched(blocks: list[Block], patches: Any, index: int) -> list[Block]:
    """Blocks with the canonical fields (or whole blocks) an export carried put back."""
    out = list(blocks)
    try:
        for patch in patches:
            at = patch["at"]
            if "block" in patch:
                out[at] = BLOCK.validate_python(patch["block"])
            else:
                current = out[at].model_dump()
                out[at] = BLOCK.validate_python({**current, **patch["set"], "kind": current["kind"]})
    except _CARRIED_ERRORS as exc:
        raise _bad_carry(index, ".patch", exc) from None
    return out


def _restored(message: Message, payload: dict[str, Any], index: int) -> Message:
    """``message`` with the fields an export carried; a carried name, role name or time
    wins over what the written message said (it was a stand-in)."""
    carried = {k: v for k, v in payload.items() if k not in ("patch", "continues")}
    if not carried:
        return message
    base = message.model_copy(update={k: None for k in ("name", "source_role", "created_at") if k in carried})
    try:
        extras = carried.get("extras")
        if isinstance(extras, dict) and isinstance(extras.get(NAME), dict) and NAME in message.extras:
            carried["extras"] = {**extras, NAME: {**extras[NAME], **message.extras[NAME]}}
        return restore(base, carried)
    except _CARRIED_ERRORS as exc:
        raise _bad_carry(index, "", exc) from None


def to_canonical(data: Any) -> list[Message]:
    """Validate AgentScope 1.x (or Java) ``Msg`` dicts and convert them to canonical messages."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    out: list[Message] = []
    pending: tuple[int, int, dict[str, Any]] | None = None  # a carried payload waits for its continuations
    for index, m in enumerate(parsed):
        java = m.role in _JAVA_ROLES
        metadata = dict(m.metadata or {})
        payload = metadata.pop(CARRY_KEY) if isinstance(metadata.get(CARRY_KEY), dict) else {}
        content = [TextPart(type="text", text=m.content)] if isinstance(m.content, str) else m.content
        blocks = [_part_in(p, java) for p in content]
        if payload.get("patch"):
            blocks = _patched(blocks, payload["patch"], index)
        if payload.get("continues") and out:
            out[-1].content.extend(blocks)
            continue
        if pending:
            out[pending[0]] = _restored(out[pending[0]], pending[2], pending[1])
        pending = (len(out), index, payload) if payload else None
        out.extend(_split(m, java, metadata, blocks))
    if pending:
        out[pending[0]] = _restored(out[pending[0]], pending[2], pending[1])
    return out


_BLOCK_TYPES = {"text", "thinking", "image", "audio", "video", "tool_use", "tool_result"}
_FOREIGN_KEYS = {"type", "created_at", "tool_calls", "function_call", "extra", "tool_call_id", "contents"}


def looks_like(data: Any) -> bool:
    """Named ``Msg`` dicts with AgentScope roles, an id, metadata or timestamp, and AgentScope blocks."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(_looks_like_msg(m) for m in msgs)


def _looks_like_msg(m: Any) -> bool:
    if not isinstance(m, dict) or m.get("role") not in _ROLES_IN or "name" not in m:
        return False
    if _FOREIGN_KEYS & m.keys() or not {"id", "metadata", "timestamp"} & m.keys():
        return False
    content = m.get("content")
    return isinstance(content, str) or isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in content)


# --- from canonical ----------------------------------------------------------------------


def _fields(extras: dict[str, Any]) -> dict[str, Any]:
    """Our own markers, unless they came from Java JSON (not written back, carried instead)."""
    own = extras.get(NAME) if extras else None
    return {} if own is None or own.get("java") else own


def _set(block: Block, lost: list[str]) -> Patch:
    """A patch with the block's ``lost`` fields, and its extras unless the written block gives them back."""
    if block.extras and (block.extras.keys() != {NAME} or block.extras[NAME].get("java")):
        lost = [*lost, "extras"]
    return {"set": block.model_dump(mode="json", include=set(lost))} if lost else None


def _dump(block: Block) -> dict[str, Any]:
    return block.model_dump(mode="json", exclude_defaults=True) | {"kind": block.kind}


def _media_name(block: Any) -> str:
    what = block.filename or block.file_id or block.url or block.media_type or "no source"
    return f"[{block.kind}: {what}]"


_STAND_INS: dict[str, Callable[[Any], str]] = {
    "refusal": lambda b: b.text,
    "error": lambda b: f"[error{' ' + b.code if b.code else ''}] {b.message}",
    "data": lambda b: f"[data{' ' + b.media_type if b.media_type else ''}] {dump_json(b.data)}",
    "code": lambda b: f"```{b.language or ''}\n{b.code}\n```",
    "code_result": lambda b: f"[code result{'' if b.exit_code is None else f', exit code {b.exit_code}'}]\n"
                             f"{b.output}",
    "handoff": lambda b: f"[handoff to {b.target}]",
    "usage": lambda b: "[usage]",
    "reasoning": lambda b: f"[reasoning] {b.text}",
    "tool_call": lambda b: f"[tool call {b.name} {b.call_id}]",
    "tool_result": lambda b: f"[tool result {b.call_id}]",
    **{kind: _media_name for kind in ("image", "audio", "video", "file")},
}
"""A clear text stand-in for a block AgentScope cannot hold (the block itself is carried)."""


def _stand_in(block: Block) -> Written:
    return {"type": "text", "text": _STAND_INS[block.kind](block)}, {"block": _dump(block)}


def _media_out(block: ImageBlock | AudioBlock | VideoBlock) -> Written:
    own = _fields(block.extras)
    lost = [f for f in ("filename", "file_id") if getattr(block, f) is not None]
    if own.get("raw") is not None:
        source: dict[str, Any] = {"type": "base64", "media_type": block.media_type or "", "data": own["raw"]}
    elif block.data is not None and own.get("data_uri"):
        source = {"type": "url", "url": data_uri(block.media_type, block.data)}
    elif block.data is not None:
        source = {"type": "base64", "media_type": block.media_type or "application/octet-stream",
                  "data": b64encode(block.data)}
        lost += ["media_type"] * (block.media_type is None) + ["url"] * (block.url is not None)
    elif block.url is not None:
        source = {"type": "url", "url": block.url}  # 1.x URL sources have no media type
        lost += ["media_type"] * (block.media_type is not None)
    else:
        return _stand_in(block)
    source.update(own.get("source") or {})
    return {"type": block.kind, "source": source, **(own.get("fields") or {})}, _set(block, lost)


_ODD_ROLE = {
    True: "a tool message without tool results reads back as a system message",
    False: "a message of only tool results reads back as a tool message",
}
_WHY_CARRIED = {
    "name": "AgentScope needs a speaker name: the role is written as the name",
    "source_role": "AgentScope roles are user, assistant and system",
    "created_at": "AgentScope timestamps are local times to the millisecond",
    "blocks": "usage is not content in AgentScope",
    "extras": "fields of another format",
}


class _Writer:
    """Converts one batch; remembers tool names by call id (a result must name its tool)."""

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.names: dict[str, str] = {}
        self.out: list[dict[str, Any]] = []

    def block(self, block: Block) -> Written:
        """The AgentScope block, and what it cannot hold (a patch), if anything."""
        fields = _fields(block.extras).get("fields") or {}
        match block:
            case TextBlock():
                return {"type": "text", "text": block.text, **fields}, _set(block, [])
            case ReasoningBlock():
                lost = [f for f in ("signature", "data") if getattr(block, f) is not None]
                return {"type": "thinking", "thinking": block.text, **fields}, \
                    _set(block, lost + ["redacted"] * block.redacted)
            case ImageBlock() | AudioBlock() | VideoBlock():
                return _media_out(block)
            case ToolCallBlock():
                return self.tool_call(block, fields)
            case ToolResultBlock():
                return self.tool_result(block, fields)
            case FileBlock() | RefusalBlock() | ErrorBlock() | DataBlock() | CodeBlock() | CodeResultBlock() \
                    | HandoffBlock() | UsageBlock():
                return _stand_in(block)
            case _:
                assert_never(block)

    def tool_call(self, block: ToolCallBlock, fields: dict[str, Any]) -> Written:
        self.names[block.call_id] = block.name
        is_object = isinstance(block.arguments, dict)
        part = {"type": "tool_use", "id": block.call_id, "name": block.name,
                "input": block.arguments if is_object else {}}
        if block.arguments_raw is not None:
            part["raw_input"] = block.arguments_raw
        lost = ["arguments"] * (not is_object) + ["parse_error"] * (block.parse_error is not None) \
            + ["call_id_synthesized"] * block.call_id_synthesized
        return {**part, **fields}, _set(block, lost)

    def tool_result(self, block: ToolResultBlock, fields: dict[str, Any]) -> Written:
        lost = ["name"] * (block.name is None) + ["is_error"] * block.is_error
        lost += ["error"] * (block.error is not None)
        output: Any = block.output
        if not isinstance(output, str):
            written = [self.block(b) if b.kind in _OUTPUT_KINDS else _stand_in(b) for b in block.output]
            output = [part for part, _ in written]
            # a patch inside the output would need a position inside the block: carry the whole output
            lost += ["output"] * any(patch is not None for _, patch in written)
        name = block.name if block.name is not None else self.names.get(block.call_id, "")
        return {"type": "tool_result", "id": block.call_id, "name": name, "output": output, **fields}, \
            _set(block, lost)

    def message(self, msg: Message, index: int) -> None:
        own = _fields(msg.extras)
        items: list[tuple[Written, bool]] = []
        usage: dict[int, Block] = {}
        for at, block in enumerate(msg.content):
            if isinstance(block, UsageBlock):
                usage[at] = block  # not content in AgentScope: carried whole, without a stand-in
                continue
            written = self.block(block)
            self._report(index, at, block, written[1])
            items.append((written, isinstance(block, ToolResultBlock)))
        # tool results read from a user or assistant message go back into one
        role = msg.source_role if msg.role == "tool" and msg.source_role in _PY_ROLES else _ROLE_OUT[msg.role]
        payload = self._payload(msg, index, role, usage)
        if own.get("continues") and not payload and self.out and isinstance(self.out[-1]["content"], list):
            _append(self.out[-1], [written for written, _ in items])  # split off one AgentScope message
            return
        runs = _runs(items, lambda item: item[1], grouped=bool(own.get("grouped"))) \
            if any(is_result for _, is_result in items) else [(False, items)]
        if ("tool" if runs[0][0] else _ROLES_IN[role]) != msg.role:
            self.losses.add(index, "role", "approximated", _ODD_ROLE[msg.role == "tool"])
        name = msg.name if msg.name is not None else role
        stamp = own.get("timestamp") or (_timestamp(msg.created_at) if msg.created_at is not None else None)
        for k, (is_result, run) in enumerate(runs):
            parts = [part for (part, _), _ in run]
            patch = _patch_key([written for written, _ in run])
            run_role = role if msg.role == "tool" or not is_result else "system"
            if k == 0:
                self.out.append(_body(msg, own, name, run_role, parts, {**payload, **patch}, stamp))
                continue
            body = {"name": name, "role": run_role, "content": parts,
                    "metadata": {CARRY_KEY: {"continues": True, **patch}}}
            self.out.append(body | ({"timestamp": stamp} if stamp is not None else {}))

    def _payload(self, msg: Message, index: int, role: str, usage: dict[int, Block]) -> dict[str, Any]:
        """What ``metadata["convstore"]`` must carry for ``msg`` to read back as it is."""
        created = msg.created_at
        odd_time = created is not None and (created.tzinfo or created.microsecond % 1000)
        if role == msg.role and not (msg.name is None or msg.source_role or msg.extras or usage or msg.model
                                     or msg.usage or msg.source_type or odd_time):
            return {}  # the common case: the written message says it all
        own = _fields(msg.extras)
        payload: dict[str, Any] = {}
        if msg.name is None:
            payload["name"] = None
        if msg.source_role != (role if role != msg.role else None):
            payload["source_role"] = msg.source_role
        stamp_exact = msg.created_at is None or own.get("timestamp") is not None or (
            msg.created_at.tzinfo is None and msg.created_at.microsecond % 1000 == 0)
        java = msg.extras.get(NAME, {}).get("java")  # Java JSON is not written back: carry all of it
        foreign = {k: v for k, v in msg.extras.items() if k != NAME or java} if msg.extras else {}
        if msg.model or msg.usage or msg.source_type or foreign or usage or not stamp_exact:
            native = {"name", "external_id", "metadata", "source_format", "source_role", "extras"}
            native |= {"created_at"} if stamp_exact else set()
            payload.update(carry(msg, native=native, blocks=usage) or {})
            payload.update({"extras": to_jsonable_python(foreign)} if foreign else {})
        for key in payload:
            fields = [f"extras.{k}" for k in payload[key]] if key == "extras" else \
                [f"content[{b['at']}]" for b in payload[key]] if key == "blocks" else [key]
            for field in fields:
                why = _WHY_CARRIED.get(key, "AgentScope messages have no field for it")
                self.losses.add(index, field, "carried", f"{why}: kept in metadata.{CARRY_KEY}")
        return payload

    def _report(self, index: int, at: int, block: Block, patch: Patch) -> None:
        if patch is None:
            return
        if "block" in patch:
            self.losses.add(index, f"content[{at}]", "carried", f"AgentScope 1.x has no {block.kind} block: "
                            f"a text stand-in is written, the block kept in metadata.{CARRY_KEY}")
            return
        for field in patch["set"]:
            self.losses.add(index, f"content[{at}].{field}", "carried", f"the AgentScope {block.kind} block "
                            f"has no field for it: kept in metadata.{CARRY_KEY}")


def _patch_key(written: list[Written], offset: int = 0) -> dict[str, Any]:
    """The ``patch`` entry for blocks written at ``offset`` onwards in one AgentScope message."""
    patches = [{"at": offset + at, **patch} for at, (_, patch) in enumerate(written) if patch is not None]
    return {"patch": patches} if patches else {}


def _append(body: dict[str, Any], written: list[Written]) -> None:
    """Blocks of a canonical message that was split off an AgentScope message go back into it."""
    patch = _patch_key(written, len(body["content"]))
    body["content"].extend(part for part, _ in written)
    if patch:
        metadata = body["metadata"] = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        metadata.setdefault(CARRY_KEY, {}).setdefault("patch", []).extend(patch["patch"])


def _body(msg: Message, own: dict[str, Any], name: str, role: str, parts: list[dict[str, Any]],
          payload: dict[str, Any], stamp: str | None) -> dict[str, Any]:
    """The first AgentScope message of a canonical one, in ``Msg.to_dict()`` key order."""
    body: dict[str, Any] = {} if msg.external_id is None else {"id": msg.external_id}
    plain = len(parts) == 1 and parts[0].keys() == {"type", "text"} and parts[0]["type"] == "text"
    body.update(name=name, role=role,
                content=parts[0]["text"] if own.get("content") == "str" and plain and not payload else parts)
    if own.get("metadata") != "absent" or msg.metadata or payload:
        body["metadata"] = dict(msg.metadata)
    if stamp is not None:
        body["timestamp"] = stamp
    body.update(own.get("fields") or {})
    if payload:
        body["metadata"] = {**(body.get("metadata") or {}), CARRY_KEY: payload}
    return body


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as AgentScope 1.x ``Msg.to_dict()`` dicts (each tool result in a
    ``system`` message of its own, as ``ReActAgent`` writes them)."""
    writer = _Writer(losses)
    for index, msg in enumerate(messages):
        writer.message(msg, index)
    return writer.out
