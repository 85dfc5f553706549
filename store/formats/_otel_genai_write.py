"""Writing the ``otel-genai`` format: canonical messages as OpenTelemetry GenAI
``{system_instructions?, input_messages, output_messages}`` (see :mod:`.otel_genai`)."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..lean import ANY_ROLE, Call, Plain, canonical, writable
from ..model import (
    AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock,
    ToolCallBlock, ToolResultBlock, VideoBlock,
)
from ._common import (
    Losses, b64encode, dump_json, merge_own, parse_data_uri, parse_json, report_extras,
)
from .otel_genai import CODE_TOOL, KEYS, MODALITY_OUT, NAME

_NOT_IN_OTEL = ("external_id", "created_at", "model", "usage", "metadata")
_Media = ImageBlock | AudioBlock | VideoBlock | FileBlock


def _own(block: Block | Message | Plain) -> dict[str, Any]:
    return block.extras.get(NAME, {}) if block.extras else {}


_merge = partial(merge_own, fmt=NAME)
"""``out`` with the unknown keys and explicit nulls the source had."""


def _with_id(out: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    return out if call_id is None else {"id": call_id, **out}


class _Writer:
    def __init__(self, messages: list[Message], losses: Losses) -> None:
        self.losses = losses
        calls = [b for m in messages for b in m.content if b.kind == "tool_call"]
        self.anonymous = {b.call_id for b in calls if b.__class__ is not Call and b.call_id_synthesized}
        self.names = {b.call_id: b.name for b in calls}  # a result's name is its call's

    def parts(self, blocks: list[Block], index: int) -> list[dict[str, Any]]:
        return [p for b in blocks if (p := _KINDS[b.kind](self, b, index)) is not None]

    def plain_parts(self, msg: Plain, index: int) -> list[dict[str, Any]]:
        """:meth:`parts` of a plain message (``store.lean``) that :func:`_takes`: the same parts and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        content = msg.content
        if content and content[0].__class__ is not Call:  # a tool result
            result = content[0]
            out: dict[str, Any] = {"type": "tool_call_response"}
            if result.call_id not in self.anonymous:
                out["id"] = result.call_id
            out["response"] = msg.text
            if result.is_error:
                self.losses.add(index, "tool_result.is_error", "approximated", "OTel GenAI responses have no error flag")
            if msg.name is not None and self.names.get(result.call_id) != msg.name:
                self.losses.add(index, "tool_result.name", detail="a response is named only by the call it answers")
            return [out]
        parts = [] if msg.text is None else [{"type": "text", "content": msg.text}]
        for call in content:
            part: dict[str, Any] = {"type": "tool_call", "name": call.name}  # type: ignore[union-attr]
            if call.call_id not in self.anonymous:
                part["id"] = call.call_id
            if (arguments := call.parsed()) is not None:  # type: ignore[union-attr]
                part["arguments"] = arguments
            parts.append(part)
        return parts

    def _stand_in(self, index: int, kind: str, text: str) -> dict[str, Any]:
        self.losses.add(index, kind, "approximated", "written as a text part")
        return {"type": "text", "content": text}

    def _reasoning(self, block: ReasoningBlock, index: int) -> dict[str, Any] | None:
        if block.redacted:
            self.losses.add(index, "reasoning", detail="redacted reasoning has no OTel GenAI form")
            return None
        if block.signature is not None:
            self.losses.add(index, "reasoning.signature", detail="a reasoning part has no signature")
        return _merge({"type": "reasoning", "content": block.text}, block.extras)

    def _media(self, block: _Media, index: int) -> dict[str, Any] | None:
        own = _own(block)
        data, media = block.data, block.media_type
        if data is None and block.url and (decoded := parse_data_uri(block.url)):
            media, data = decoded  # the spec: inline data goes in a blob, not a data URI
        found = {"blob": data is not None or "raw" in own, "file": block.file_id is not None,
                 "uri": block.url is not None and not (data is not None and block.data is None)}
        kind = own.get("part") or next((k for k, there in found.items() if there), None)
        if kind is None:
            self.losses.add(index, block.kind, detail="no data, URI or file id")
            return None
        for other in (k for k, there in found.items() if there and k != kind):
            self.losses.add(index, f"{block.kind}.{ {'blob': 'data', 'file': 'file_id', 'uri': 'url'}[other]}",
                            detail=f"a {kind} part holds one reference")
        if block.filename is not None:
            self.losses.add(index, f"{block.kind}.filename", detail="a media part has no file name")
        out: dict[str, Any] = {"type": kind, "modality": own.get("modality", MODALITY_OUT[block.kind])}
        if media is not None:
            out["mime_type"] = media
        value = {"blob": lambda: own.get("raw") or b64encode(data or b""), "file": lambda: block.file_id,
                 "uri": lambda: block.url}[kind]()
        out[{"blob": "content", "file": "file_id", "uri": "uri"}[kind]] = value
        return _merge(out, block.extras)

    def _call(self, block: ToolCallBlock, index: int) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_call", "name": block.name}
        if block.call_id not in self.anonymous:
            out["id"] = block.call_id
        if block.arguments_raw is not None and (_own(block).get("raw") or block.parse_error):
            out["arguments"] = block.arguments_raw  # text as it came (also text that is no JSON)
        elif block.arguments is not None:
            out["arguments"] = block.arguments
        return _merge(out, block.extras)

    def _result(self, block: ToolResultBlock, index: int) -> dict[str, Any]:
        own = _own(block)
        out: dict[str, Any] = {"type": "tool_call_response"}
        if block.call_id not in self.anonymous and not own.get("no_id"):
            out["id"] = block.call_id
        if isinstance(block.output, list):
            out["response"] = self.parts(block.output, index)
        elif own.get("json"):
            value, failed = parse_json(block.output)
            out["response"] = block.output if failed else value
        else:
            out["response"] = block.output
        if block.is_error:
            self.losses.add(index, "tool_result.is_error", "approximated", "OTel GenAI responses have no error flag")
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="OTel GenAI responses have no error details")
        if block.name is not None and self.names.get(block.call_id) != block.name:
            self.losses.add(index, "tool_result.name", detail="a response is named only by the call it answers")
        return _merge(out, block.extras)

    def _code(self, block: CodeBlock, index: int) -> dict[str, Any]:
        """Code the provider runs: the spec's server_tool_call of a code interpreter."""
        own = _own(block)
        inner: dict[str, Any] = {"type": CODE_TOOL, "code": block.code}
        if block.language is not None or own.get("null_language"):
            inner["language"] = block.language
        out = {"type": "server_tool_call", "name": own.get("name", CODE_TOOL),
               "server_tool_call": {**inner, **(own.get("inner") or {})}}
        return _merge(_with_id(out, own.get("id")), block.extras)

    def _code_result(self, block: CodeResultBlock, index: int) -> dict[str, Any]:
        own = _own(block)
        inner: dict[str, Any] = {"type": CODE_TOOL, "outputs": [{"type": "logs", "logs": block.output,
                                                                  **(own.get("log") or {})}]}
        if block.exit_code is not None or own.get("null_exit"):
            inner["exit_code"] = block.exit_code
        out = {"type": "server_tool_call_response", "server_tool_call_response": {**inner, **(own.get("inner") or {})}}
        return _merge(_with_id(out, own.get("id")), block.extras)

    def _data(self, block: DataBlock, index: int) -> dict[str, Any]:
        if _own(block).get("part") and isinstance(block.data, dict):
            return dict(block.data)  # a part of a type convstore has no block for, as it was
        return self._stand_in(index, "data", dump_json(block.data))


# Canonical block kind -> how it is written (the schema has a part for most). A table of the class's
# functions, not of one writer's bound methods: those would tie the writer to itself in a reference cycle.
_KINDS: dict[str, Any] = {
    "text": lambda w, b, i: _merge({"type": "text", "content": b.text}, b.extras),
    "reasoning": _Writer._reasoning, "image": _Writer._media, "audio": _Writer._media, "video": _Writer._media,
    "file": _Writer._media, "tool_call": _Writer._call, "tool_result": _Writer._result, "code": _Writer._code,
    "code_result": _Writer._code_result, "data": _Writer._data,
    "refusal": lambda w, b, i: w._stand_in(i, "refusal", b.text),
    "error": lambda w, b, i: w._stand_in(i, "error", f"[error] {b.message}"),
    "handoff": lambda w, b, i: w._stand_in(i, "handoff", f"[handoff to {b.target}]"),
    "usage": lambda w, b, i: w.losses.add(i, "usage", detail="OTel GenAI messages have no usage"),
}


def _report(msg: Message | Plain, index: int, losses: Losses) -> None:
    if msg.__class__ is not Plain:
        for name in _NOT_IN_OTEL:
            if getattr(msg, name):
                losses.add(index, name, detail="OTel GenAI messages have no such field")
    elif msg.external_id:  # the one of these fields a plain message may have
        losses.add(index, "external_id", detail="OTel GenAI messages have no such field")
    report_extras(msg, index, losses, NAME)


def _finish_reason(msg: Message | Plain) -> str:
    """A foreign reply's finish reason, as its content shows it (the schema requires one)."""
    return "tool_call" if any(b.kind == "tool_call" for b in msg.content) else "stop"


def _is_instructions(msg: Message) -> bool:
    if msg.source_format == NAME:
        return bool(_own(msg).get("instructions"))
    # a named one stays a message, keeping its name (a plain message's speaker; its name is a result's tool's)
    return msg.role == "system" and (msg.speaker if msg.__class__ is Plain else msg.name) is None


def _output_start(messages: list[Message], first: int) -> int:
    """Where the output messages begin: the trailing run of replies (a message read from this
    format keeps its side)."""
    start = len(messages)
    while start > first:
        msg = messages[start - 1]
        if not (_own(msg).get("output") if msg.source_format == NAME else msg.role == "assistant"):
            break
        start -= 1
    return start


def _message(msg: Message | Plain, index: int, writer: _Writer, output: bool) -> dict[str, Any]:
    _report(msg, index, writer.losses)
    if msg.__class__ is Plain:
        out = {"role": msg.role, "parts": writer.plain_parts(msg, index)}  # type: ignore[arg-type]
        if msg.speaker is not None:
            out["name"] = msg.speaker
        return {**out, "finish_reason": _finish_reason(msg)} if output else out
    native = msg.source_format == NAME
    out: dict[str, Any] = {"role": (msg.source_role or msg.role) if native else msg.role,
                           "parts": writer.parts(msg.content, index)}
    if msg.name is not None:
        out["name"] = msg.name
    reason = _own(msg).get("finish_reason")
    if reason is not None:
        out["finish_reason"] = reason
    elif output and not native:
        out["finish_reason"] = _finish_reason(msg)
    return _merge(out, msg.extras)


def _takes(msg: Any) -> bool:
    """Whether a plain message is written as its canonical one would be (:meth:`_Writer.plain_parts`)."""
    return writable(msg, NAME, texts=ANY_ROLE, ids=True, speakers=True)  # its canonical path ignores source_type


def write(messages: list[Message | Plain], losses: Losses) -> dict[str, Any] | list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) in the format."""
    messages = canonical(messages, unless=_takes)
    writer = _Writer(messages, losses)
    head = _own(messages[0]) if messages else {}
    system = bool(messages) and _is_instructions(messages[0])
    if system:
        _report(messages[0], 0, losses)
    first = 1 if system else 0
    if head.get("form") == "list" and not system:
        return [_message(m, i, writer, False) for i, m in enumerate(messages)]
    start = _output_start(messages, first)
    out: dict[str, Any] = dict(head.get("request") or {})
    if system:
        first_msg = messages[0]
        out["system_instructions"] = writer.plain_parts(first_msg, 0) if first_msg.__class__ is Plain \
            else writer.parts(first_msg.content, 0)
    lists = {"input_messages": [_message(messages[i], i, writer, False) for i in range(first, start)],
             "output_messages": [_message(messages[i], i, writer, True) for i in range(start, len(messages))]}
    for key in KEYS[1:]:
        if lists[key] or key not in head.get("absent", ()):
            out[key] = lists[key]
    return out
