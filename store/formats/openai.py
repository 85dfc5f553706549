"""OpenAI Chat Completions messages (``openai.types.chat.ChatCompletionMessageParam``).

Reads system/developer, user (text, image, audio, file parts), assistant (text,
refusal, ``tool_calls``, legacy ``function_call``), tool and legacy function
messages. What the canonical model has no field for (unknown keys, ``detail``,
whether content was a string or a list) is kept in ``extras["openai"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import (
    AudioBlock,
    Block,
    FileBlock,
    ImageBlock,
    Message,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ._common import Losses, lost_extras, message_list, unknown_fields, b64decode_exact, b64encode, data_uri, dump_json, parse_data_uri, parse_json, validate

NAME = "openai"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextPart(_Open):
    type: Literal["text"]
    text: str


class RefusalPart(_Open):
    type: Literal["refusal"]
    refusal: str


class ImageURL(_Open):
    url: str


class ImagePart(_Open):
    type: Literal["image_url"]
    image_url: ImageURL


class InputAudio(_Open):
    data: str
    format: str


class AudioPart(_Open):
    type: Literal["input_audio"]
    input_audio: InputAudio


class FileRef(_Open):
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class FilePart(_Open):
    type: Literal["file"]
    file: FileRef


UserPart = Annotated[Union[TextPart, ImagePart, AudioPart, FilePart], Field(discriminator="type")]
AssistantPart = Annotated[Union[TextPart, RefusalPart], Field(discriminator="type")]


class Function(_Open):
    name: str
    arguments: str


class FunctionToolCall(_Open):
    id: str
    type: Literal["function"]
    function: Function


class Custom(_Open):
    name: str
    input: str


class CustomToolCall(_Open):
    id: str
    type: Literal["custom"]
    custom: Custom


ToolCall = Annotated[Union[FunctionToolCall, CustomToolCall], Field(discriminator="type")]


class SystemMessage(_Open):
    role: Literal["system", "developer"]
    content: str | list[TextPart]
    name: str | None = None


class UserMessage(_Open):
    role: Literal["user"]
    content: str | list[UserPart]
    name: str | None = None


class AssistantMessage(_Open):
    role: Literal["assistant"]
    content: str | list[AssistantPart] | None = None
    refusal: str | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    function_call: Function | None = None


class ToolMessage(_Open):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[TextPart]


class FunctionMessage(_Open):
    role: Literal["function"]
    name: str
    content: str | None


OpenAIMessage = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage, FunctionMessage],
    Field(discriminator="role"),
]
MESSAGES = TypeAdapter(list[OpenAIMessage])

_AUDIO_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_FORMATS = {v: k for k, v in _AUDIO_MEDIA_TYPES.items()}


def _unknown(model: BaseModel) -> dict[str, Any] | None:
    """Keys the canonical model has no field for: unknown ones, and known ones given as null."""
    return unknown_fields(model, skip="content")


def _extras(model: BaseModel, **shape: Any) -> dict[str, Any]:
    """The ``extras["openai"]`` entry: unknown keys plus shape notes, empty parts left out."""
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    if (fields := _unknown(model)) is not None:
        kept = {"fields": fields, **kept}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


# Blocks and messages are built as plain dicts and validated into canonical models in one
# call into pydantic-core per batch (to_canonical): constructing the models one by one costs
# several times more.
BlockDict = dict[str, Any]


def _text_in(part: TextPart) -> BlockDict:
    return {"kind": "text", "text": part.text, "extras": _extras(part)}


def _refusal_in(part: RefusalPart) -> BlockDict:
    return {"kind": "refusal", "text": part.refusal, "extras": _extras(part)}


def _image_in(part: ImagePart) -> BlockDict:
    url = part.image_url.url
    decoded = parse_data_uri(url)
    extras = _extras(part, inner=_unknown(part.image_url))
    if decoded is None:
        return {"kind": "image", "url": url, "extras": extras}
    return {"kind": "image", "media_type": decoded[0], "data": decoded[1], "extras": extras}


def _audio_in(part: AudioPart) -> BlockDict:
    audio = part.input_audio
    data = b64decode_exact(audio.data)
    media_type = _AUDIO_MEDIA_TYPES.get(audio.format)
    exact = data is not None and media_type is not None
    extras = _extras(part, inner=_unknown(audio), raw=None if exact else audio.model_dump())
    return {"kind": "audio", "data": data if exact else None, "media_type": media_type, "extras": extras}


def _file_in(part: FilePart) -> BlockDict:
    ref = part.file
    decoded = parse_data_uri(ref.file_data) if ref.file_data else None
    extras = _extras(part, inner=_unknown(ref), file_data=ref.file_data if ref.file_data and not decoded else None)
    return {
        "kind": "file", "file_id": ref.file_id, "filename": ref.filename,
        "media_type": decoded[0] if decoded else None, "data": decoded[1] if decoded else None, "extras": extras,
    }


_PARTS_IN = {TextPart: _text_in, RefusalPart: _refusal_in, ImagePart: _image_in, AudioPart: _audio_in, FilePart: _file_in}


def _content_in(model: BaseModel) -> tuple[list[BlockDict], str | None]:
    """Blocks, and how the source wrote ``content`` when not as a plain string."""
    content = model.__dict__.get("content")
    if isinstance(content, str):
        return [{"kind": "text", "text": content}], None
    if content is None:
        return [], "absent" if "content" not in model.model_fields_set else "null"
    return [_PARTS_IN[type(part)](part) for part in content], "list"


def _tool_call_in(call: FunctionToolCall | CustomToolCall) -> BlockDict:
    if isinstance(call, CustomToolCall):
        return {"kind": "tool_call", "call_id": call.id, "name": call.custom.name, "arguments_raw": call.custom.input,
                "extras": _extras(call, type="custom", inner=_unknown(call.custom))}
    arguments, error = parse_json(call.function.arguments)
    return {"kind": "tool_call", "call_id": call.id, "name": call.function.name, "arguments": arguments,
            "arguments_raw": call.function.arguments, "parse_error": error,
            "extras": _extras(call, inner=_unknown(call.function))}


class _Reader:
    """Converts one batch; keeps the legacy function calls still waiting for a result."""

    def __init__(self) -> None:
        self.legacy_pending: dict[str, list[str]] = {}
        self.names: dict[str, str] = {}

    def message(self, m: Any, index: int) -> dict[str, Any]:
        blocks, form = _content_in(m)
        role = "tool" if m.role in ("tool", "function") else ("system" if m.role == "developer" else m.role)
        if isinstance(m, AssistantMessage):
            blocks += self._assistant_extra(m, index)
        elif isinstance(m, ToolMessage):
            blocks = [self._result(m.tool_call_id, blocks, form)]
            form = None
        elif isinstance(m, FunctionMessage):
            pending = self.legacy_pending.get(m.name) or []
            call_id = pending.pop(0) if pending else f"function-{index}"
            blocks = [self._result(call_id, blocks, None, legacy=True, name=m.name)]
        name = None if isinstance(m, (ToolMessage, FunctionMessage)) else m.name
        return {
            "role": role, "source_role": m.role if m.role != role else None, "name": name, "content": blocks,
            "source_format": NAME,
            "extras": _extras(m, content=form, empty_tool_calls=m.__dict__.get("tool_calls") == []),
        }

    def _assistant_extra(self, m: AssistantMessage, index: int) -> list[BlockDict]:
        blocks: list[BlockDict] = []
        if m.refusal is not None:
            blocks.append({"kind": "refusal", "text": m.refusal, "extras": {NAME: {"field": True}}})
        for call in m.tool_calls or []:
            block = _tool_call_in(call)
            self.names[block["call_id"]] = block["name"]
            blocks.append(block)
        if m.function_call is not None:
            fc = m.function_call
            call_id = f"function-{index}"
            self.legacy_pending.setdefault(fc.name, []).append(call_id)
            arguments, error = parse_json(fc.arguments)
            blocks.append({
                "kind": "tool_call", "call_id": call_id, "name": fc.name, "arguments": arguments,
                "arguments_raw": fc.arguments, "parse_error": error, "call_id_synthesized": True,
                "extras": _extras(fc, legacy=True),
            })
        return blocks

    def _result(self, call_id: str, blocks: list[BlockDict], form: str | None, legacy: bool = False,
                name: str | None = None) -> BlockDict:
        if form == "list":
            output: str | list[BlockDict] = blocks
        else:
            output = blocks[0]["text"] if blocks and blocks[0]["kind"] == "text" else ""
        null = legacy and not blocks
        return {"kind": "tool_result", "call_id": call_id, "name": name or self.names.get(call_id),
                "output": output, "extras": {NAME: {"content": "null"}} if null else {}}


def to_canonical(data: Any) -> list[Message]:
    """Validate OpenAI Chat Completions messages and convert them to canonical ones."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    reader = _Reader()
    return CANONICAL.validate_python([reader.message(m, i) for i, m in enumerate(parsed)])


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` chunk by chunk, with the same result as on the whole list:
    one reader spans the chunks (a result finds its call's name in an earlier chunk)
    and errors name the index in the whole stream."""
    reader = _Reader()
    base = 0
    for chunk in chunks:
        parsed = validate(MESSAGES, chunk, NAME, first=base)
        yield CANONICAL.validate_python([reader.message(m, base + i) for i, m in enumerate(parsed)])
        base += len(chunk)


_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


_OPENAI_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"}
_PART_TYPES = {"text", "refusal", "image_url", "input_audio", "file"}


def _looks_like_message(m: Any) -> bool:
    if not (isinstance(m, dict) and m.get("role") in _ROLES and m.keys() <= _OPENAI_KEYS):
        return False
    content = m.get("content")
    return not isinstance(content, list) or all(isinstance(p, dict) and p.get("type") in _PART_TYPES for p in content)


def looks_like(data: Any) -> bool:
    """A list of OpenAI-keyed messages whose content parts are OpenAI part types."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(_looks_like_message(m) for m in msgs)


# --- from canonical --------------------------------------------------------------


def _merge(out: dict[str, Any], extras: dict[str, Any], inner_key: str | None = None) -> dict[str, Any]:
    own = extras.get(NAME, {})
    if inner_key and own.get("inner"):
        out[inner_key].update(own["inner"])
    out.update(own.get("fields") or {})
    return out


def _part_out(block: Block, index: int, losses: Losses) -> dict[str, Any] | None:
    match block:
        case TextBlock():
            return _merge({"type": "text", "text": block.text}, block.extras)
        case RefusalBlock():
            return _merge({"type": "refusal", "refusal": block.text}, block.extras)
        case ImageBlock():
            url = block.url if block.data is None else data_uri(block.media_type, block.data)
            if url is None:
                losses.add(index, "image", detail="an image without URL or data (a file id) has no OpenAI form")
                return None
            return _merge({"type": "image_url", "image_url": {"url": url}}, block.extras, "image_url")
        case AudioBlock():
            return _audio_out(block, index, losses)
        case FileBlock():
            ref: dict[str, Any] = {}
            raw = block.extras.get(NAME, {}).get("file_data")
            if block.data is not None or raw:
                ref["file_data"] = raw or data_uri(block.media_type, block.data or b"")
            for key in ("file_id", "filename"):
                if getattr(block, key) is not None:
                    ref[key] = getattr(block, key)
            return _merge({"type": "file", "file": ref}, block.extras, "file")
    losses.add(index, block.kind, detail="OpenAI messages have no place for it")
    return None


def _audio_out(block: AudioBlock, index: int, losses: Losses) -> dict[str, Any] | None:
    raw = block.extras.get(NAME, {}).get("raw")
    if raw:
        return _merge({"type": "input_audio", "input_audio": raw}, block.extras)
    fmt = _AUDIO_FORMATS.get(block.media_type or "")
    if block.data is None or fmt is None:
        losses.add(index, "audio", detail="OpenAI takes only inline wav or mp3 audio")
        return None
    audio = {"data": b64encode(block.data), "format": fmt}
    return _merge({"type": "input_audio", "input_audio": audio}, block.extras, "input_audio")


def _content_out(parts: list[dict[str, Any]], form: str | None) -> Any:
    if form in ("null", "absent") and not parts:
        return None
    if form != "list" and len(parts) == 1 and parts[0].get("type") == "text" and len(parts[0]) == 2:
        return parts[0]["text"]
    return parts if parts or form == "list" else None


def _tool_call_out(block: ToolCallBlock) -> dict[str, Any]:
    own = block.extras.get(NAME, {})
    if own.get("type") == "custom":
        call = {"id": block.call_id, "type": "custom", "custom": {"name": block.name, "input": block.arguments_raw or ""}}
        return _merge(call, block.extras, "custom")
    arguments = block.arguments_raw if block.arguments_raw is not None else dump_json(block.arguments)
    call = {"id": block.call_id, "type": "function", "function": {"name": block.name, "arguments": arguments}}
    return _merge(call, block.extras, "function")


# Which part types each role takes (images, audio and files only in user messages).
_ROLE_PARTS = {
    "system": {"text"}, "developer": {"text"}, "tool": {"text"},
    "user": {"text", "image_url", "input_audio", "file"}, "assistant": {"text", "refusal"},
}


def _stand_in(block: Block) -> str:
    if isinstance(block, (ImageBlock, AudioBlock, FileBlock)) or block.kind == "video":
        ref = block.url or block.filename or block.file_id or f"{len(block.data or b'')} bytes inline"
        return f"[{block.kind}{' ' + block.media_type if block.media_type else ''}: {ref}]"
    return getattr(block, "text", None) or f"[{block.kind}]"


def _parts_for(role: str, blocks: list[Block], index: int, losses: Losses) -> list[dict[str, Any]]:
    """Parts for a message of ``role``: what the role does not take becomes a text stand-in."""
    allowed = _ROLE_PARTS[role]
    parts = []
    for block in blocks:
        part = _part_out(block, index, losses)
        if part is None:
            continue
        if part["type"] not in allowed:
            losses.add(index, block.kind, "approximated", f"OpenAI {role} messages take no {part['type']}: text stand-in")
            part = {"type": "text", "text": _stand_in(block)}
        parts.append(part)
    return parts


def _result_out(block: ToolResultBlock, index: int, msg: Message, losses: Losses) -> dict[str, Any]:
    content: Any = block.output
    if not isinstance(block.output, str):
        content = _parts_for("tool", block.output, index, losses)
    if block.is_error:
        losses.add(index, "tool_result.is_error", "approximated", "OpenAI tool results have no error flag")
    legacy = msg.source_format == NAME and msg.source_role == "function"
    if legacy or block.extras.get(NAME, {}).get("content") == "null":
        null = block.extras.get(NAME, {}).get("content") == "null"
        return _merge({"role": "function", "name": block.name or "", "content": None if null else content}, msg.extras)
    out = {"role": "tool", "tool_call_id": block.call_id, "content": content}
    # a tool message's unknown keys go back on it (not on each result of a message holding several)
    alone = msg.role == "tool" and len(msg.content) == 1
    return _merge(out, msg.extras) if alone else out


def _message_out(msg: Message, index: int, losses: Losses) -> list[dict[str, Any]]:
    """One canonical message becomes its tool results (one message each) and then the rest."""
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    legacy: dict[str, Any] | None = None
    refusal: str | None = None
    rest: list[Block] = []
    for block in msg.content:
        if isinstance(block, ToolResultBlock):
            out.append(_result_out(block, index, msg, losses))
        elif isinstance(block, ToolCallBlock):
            if block.extras.get(NAME, {}).get("legacy"):
                legacy = {"name": block.name, "arguments": block.arguments_raw or dump_json(block.arguments)}
                legacy.update(block.extras[NAME].get("fields") or {})
            else:
                calls.append(_tool_call_out(block))
        elif isinstance(block, RefusalBlock) and block.extras.get(NAME, {}).get("field"):
            refusal = block.text
        else:
            rest.append(block)
    _report_message_fields(msg, index, losses)  # a tool message's fields too: never dropped in silence
    if msg.role == "tool" and not rest:
        return out
    role = "user" if msg.role == "tool" else _role(msg)
    parts = _parts_for(role, rest, index, losses)
    if not (parts or calls or legacy or refusal is not None or NAME in msg.extras):
        if msg.content:  # everything in it was dropped (reported above): no empty message
            return out
    return out + [_body(msg, parts, calls, legacy, refusal, index, losses)]


def _role(msg: Message) -> str:
    return msg.source_role if msg.source_role in ("system", "developer") and msg.role == "system" else msg.role


def _body(msg: Message, parts: list[dict[str, Any]], calls: list[dict[str, Any]], legacy: Any,
          refusal: str | None, index: int, losses: Losses) -> dict[str, Any]:
    own = msg.extras.get(NAME, {})
    role = "user" if msg.role == "tool" else _role(msg)
    if role != "assistant" and calls:
        losses.add(index, "tool_calls", detail=f"a {role} message cannot call tools in OpenAI")
    bare = role == "assistant" and not calls and legacy is None and refusal is None
    if (role in ("system", "developer", "user") or bare) and not parts and own.get("content") is None:
        parts = [{"type": "text", "text": ""}]
    body: dict[str, Any] = {"role": role}
    form = own.get("content")
    content = _content_out(parts, form)
    if form != "absent" or content is not None:
        body["content"] = content
    if refusal is not None:
        body["refusal"] = refusal
    if msg.name is not None:
        body["name"] = msg.name
    if role == "assistant" and (calls or own.get("empty_tool_calls")):
        body["tool_calls"] = calls
    if legacy is not None:
        body["function_call"] = legacy
    return _merge(body, msg.extras)


_NOT_IN_OPENAI = ("external_id", "created_at", "model", "usage")


def _report_message_fields(msg: Message, index: int, losses: Losses) -> None:
    for field in _NOT_IN_OPENAI:
        if getattr(msg, field) is not None:
            losses.add(index, field, detail="OpenAI messages have no such field")
    if msg.metadata:
        losses.add(index, "metadata", detail="OpenAI messages have no such field")
    for field in lost_extras(msg, NAME):
        losses.add(index, field, detail="a field of another format")


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as OpenAI Chat Completions message dicts."""
    out: list[dict[str, Any]] = []
    for index, msg in enumerate(messages):
        out.extend(_message_out(msg, index, losses))
    return out
