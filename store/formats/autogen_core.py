"""autogen-core LLM messages (``autogen_core.models.LLMMessage``), as a model context holds them.

Reads a list of ``SystemMessage`` / ``UserMessage`` (text and ``{"data": <base64>}``
images) / ``AssistantMessage`` (text or ``FunctionCall`` s, plus ``thought``) /
``FunctionExecutionResultMessage``, or a model context's saved state
(``{"messages": [...]}``). These messages have no ids, timestamps or extension
field: what another format brings that they cannot hold is rendered as text
where that makes sense and always reported. An image whose data is no image (autogen
decodes it with PIL and refuses it) is refused, naming the message and field.

The models and block conversions here are shared with the ``autogen`` format,
whose ``HandoffMessage.context`` holds these messages. The writer is :mod:`._autogen_core_write`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import (
    AudioBlock,
    Block,
    CodeBlock,
    CodeResultBlock,
    DataBlock,
    ErrorBlock,
    FileBlock,
    HandoffBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UsageBlock,
    VideoBlock,
)
from ._common import b64decode_exact, b64encode, dump_json, message_list, parse_json, validate, validate_others

NAME = "autogen-core"


class OpenModel(BaseModel):
    """A schema model that keeps unknown keys (``model_extra``) for an exact round trip."""

    model_config = ConfigDict(extra="allow")


class FunctionCall(OpenModel):
    id: str
    arguments: str
    name: str


class FunctionExecutionResult(OpenModel):
    content: str
    name: str
    call_id: str
    is_error: bool | None = None


class ImageData(OpenModel):
    """``autogen_core.Image`` as it serializes: base64 image bytes (PNG once loaded)."""

    data: str


class SystemMessage(OpenModel):
    content: str
    type: Literal["SystemMessage"]


class UserMessage(OpenModel):
    content: str | list[str | ImageData]
    source: str
    type: Literal["UserMessage"]


class AssistantMessage(OpenModel):
    content: str | list[FunctionCall]
    thought: str | None = None
    source: str
    type: Literal["AssistantMessage"]


class FunctionExecutionResultMessage(OpenModel):
    content: list[FunctionExecutionResult]
    type: Literal["FunctionExecutionResultMessage"]


_CLASSES = (SystemMessage, UserMessage, AssistantMessage, FunctionExecutionResultMessage)
TYPES = frozenset(c.__name__ for c in _CLASSES)
UNTYPED = "[unknown type]"  # brackets: pydantic's tag is left out of error paths


class _Untyped(BaseModel):
    """Where a message of no known ``type`` lands, so that the error names the ``type`` field."""

    type: Literal[tuple(sorted(TYPES))]  # type: ignore[valid-type]


def _tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in TYPES else UNTYPED


LLMMessage = Annotated[
    Union[(*(Annotated[c, Tag(c.__name__)] for c in _CLASSES), Annotated[_Untyped, Tag(UNTYPED)])],
    Discriminator(_tag),
]
MESSAGES = TypeAdapter(list[LLMMessage])

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))
NO_RESULT = "[convstore: no result was recorded for this tool call]"


def sniff(data: bytes) -> str | None:
    """The image type of ``data`` by its magic bytes (autogen images carry no media type); only
    these are written as images, since autogen decodes them with PIL and rejects what fails."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


def unknown(model: BaseModel, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """Shape notes for an exact round trip: unknown keys, and defaulted keys the input left out."""
    notes: dict[str, Any] = {}
    extra = model.__pydantic_extra__  # the attributes behind model_extra / model_fields_set: faster
    if extra:
        notes["fields"] = dict(extra)
    if optional:
        given = model.__pydantic_fields_set__
        absent = [f for f in optional if f not in given]
        if absent:
            notes["absent"] = absent
    return notes


def finish(out: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the unknown keys put back and the keys the source left out removed."""
    for key in notes.get("absent", ()):
        out.pop(key, None)
    if notes.get("fields"):
        out.update(notes["fields"])
    return out


# --- blocks, shared with the autogen format --------------------------------------------------


def call_in(call: FunctionCall, fmt: str) -> ToolCallBlock:
    arguments, error = parse_json(call.arguments)
    notes = unknown(call)
    return ToolCallBlock(call_id=call.id, name=call.name, arguments=arguments, arguments_raw=call.arguments,
                         parse_error=error, extras={fmt: notes} if notes else {})


def call_out(block: ToolCallBlock, fmt: str) -> dict[str, Any]:
    arguments = block.arguments_raw if block.arguments_raw is not None else dump_json(block.arguments)
    out = {"id": block.call_id, "arguments": arguments, "name": block.name}
    return finish(out, block.extras.get(fmt, {}))


def result_in(result: FunctionExecutionResult, fmt: str) -> ToolResultBlock:
    notes = unknown(result, ("is_error",))
    if result.is_error is None and "is_error" in result.model_fields_set:
        notes["is_error"] = None
    return ToolResultBlock(call_id=result.call_id, name=result.name, output=result.content,
                           is_error=bool(result.is_error), extras={fmt: notes} if notes else {})


def result_text(block: ToolResultBlock) -> tuple[str, bool]:
    """A result's output as the one string autogen holds, and whether that lost parts of it."""
    if isinstance(block.output, str):
        return block.output, False
    texts = [b.text for b in block.output if isinstance(b, (TextBlock, RefusalBlock))]
    return "\n".join(texts), len(texts) != len(block.output) or len(texts) > 1


def result_out(block: ToolResultBlock, name: str | None, fmt: str) -> dict[str, Any]:
    notes = block.extras.get(fmt, {})
    is_error = True if block.is_error else notes.get("is_error", False)
    out = {"content": result_text(block)[0], "name": block.name or name or "", "call_id": block.call_id,
           "is_error": is_error}
    return finish(out, notes)


def image_problems(parts: Any, index: int, where: str) -> list[tuple[int, str, str]]:
    """Problems of the ``{"data": ...}`` images among ``parts``: autogen decodes each with PIL
    and refuses what is not an image, so convstore refuses it too, naming where it is."""
    problems = []
    for pos, part in enumerate(parts if isinstance(parts, list) else ()):
        if isinstance(part, ImageData):
            try:  # decoded as autogen decodes it: leniently (base64 with line breaks is fine)
                data: bytes | None = base64.b64decode(part.data)
            except (binascii.Error, ValueError):
                data = None
            if data is None or sniff(data) is None:
                what = "not base64" if data is None else "not PNG, JPEG, GIF, BMP or WebP bytes"
                problems.append((index, f"{where}[{pos}].data", f"an autogen image must be an image ({what})"))
    return problems


def image_in(image: ImageData, fmt: str) -> ImageBlock:
    data = b64decode_exact(image.data)
    media_type = sniff(data) if data else None
    notes = unknown(image)
    if media_type is None:  # not an image type we know: written back as it came
        notes["data"] = image.data
    return ImageBlock(data=data, media_type=media_type, extras={fmt: notes} if notes else {})


def image_out(block: ImageBlock, fmt: str) -> dict[str, Any] | None:
    """``{"data": <base64>}``, or None when the image has no bytes autogen (PIL) can decode."""
    notes = block.extras.get(fmt, {})
    if notes.get("data") is not None:
        return finish({"data": notes["data"]}, notes)
    if block.data is None or sniff(block.data) is None:
        return None
    return finish({"data": b64encode(block.data)}, notes)


def result_stand_in(name: str | None, call_id: str, text: str) -> str:
    """The text a tool result (its tool's ``name``, its ``call_id``, its output as text) is shown as."""
    return f"[tool result of {name or 'call'} ({call_id}): {text}]"


_STAND_INS = {
    RefusalBlock: lambda b: b.text,
    ReasoningBlock: lambda b: b.text,
    DataBlock: lambda b: b.data if isinstance(b.data, str) else dump_json(b.data),
    CodeBlock: lambda b: f"```{b.language or ''}\n{b.code}\n```",
    CodeResultBlock: lambda b: b.output if b.exit_code is None else f"[exit code {b.exit_code}]\n{b.output}",
    ErrorBlock: lambda b: f"[error{' ' + b.code if b.code else ''}: {b.message}]",
    HandoffBlock: lambda b: f"[handoff to {b.target}]",
    ToolCallBlock: lambda b: f"[tool call {b.name} ({b.call_id}): {call_out(b, '')['arguments']}]",
    ToolResultBlock: lambda b: result_stand_in(b.name, b.call_id, result_text(b)[0]),
    UsageBlock: lambda b: None,
}


def stand_in(block: Block) -> str | None:
    """A clear text rendering of a block the target cannot hold (None: nothing worth showing)."""
    if isinstance(block, (ImageBlock, AudioBlock, VideoBlock, FileBlock)):
        where = block.url or block.filename or block.file_id or block.media_type or "inline data"
        return f"[{block.kind}: {where}]"
    if isinstance(block, TextBlock):
        return block.text
    return _STAND_INS[type(block)](block)


# --- to canonical ----------------------------------------------------------------------------


def _note(model: BaseModel, optional: tuple[str, ...] = (), **shape: Any) -> dict[str, Any]:
    notes = {**unknown(model, optional), **{k: v for k, v in shape.items() if v is not None}}
    return {NAME: notes} if notes else {}


def _system_in(m: SystemMessage) -> dict[str, Any]:
    return {"role": "system", "content": [{"kind": "text", "text": m.content}], "source_format": NAME,
            "source_type": m.type, "extras": _note(m)}


def _user_in(m: UserMessage) -> dict[str, Any]:
    if isinstance(m.content, str):
        blocks: list[Any] = [{"kind": "text", "text": m.content}]
    else:
        blocks = [{"kind": "text", "text": p} if isinstance(p, str) else image_in(p, NAME) for p in m.content]
    form = "list" if isinstance(m.content, list) else None
    return {"role": "user", "name": m.source, "content": blocks, "source_format": NAME, "source_type": m.type,
            "extras": _note(m, content=form)}


def _assistant_in(m: AssistantMessage) -> dict[str, Any]:
    blocks: list[Any] = [] if m.thought is None else [{"kind": "reasoning", "text": m.thought}]
    if isinstance(m.content, str):
        if m.content or m.thought is None:  # "" beside a thought is autogen's "no text"
            blocks.append({"kind": "text", "text": m.content})
    else:
        blocks.extend(call_in(c, NAME) for c in m.content)
    form = "list" if m.content == [] else None
    return {"role": "assistant", "name": m.source, "content": blocks, "source_format": NAME,
            "source_type": m.type, "extras": _note(m, ("thought",), content=form)}


def _results_in(m: FunctionExecutionResultMessage) -> dict[str, Any]:
    return {"role": "tool", "content": [result_in(r, NAME) for r in m.content], "source_format": NAME,
            "source_type": m.type, "extras": _note(m)}


_IN = {SystemMessage: _system_in, UserMessage: _user_in, AssistantMessage: _assistant_in,
       FunctionExecutionResultMessage: _results_in}


def messages_in(parsed: list[Any]) -> list[Message]:
    """Canonical messages from validated LLM message models (their fields validated in one call)."""
    return CANONICAL.validate_python([_IN[type(m)](m) for m in parsed])


def check_images(parsed: list[Any], index: int | None = None, where: str = "") -> list[tuple[int, str, str]]:
    """Problems of the images of validated LLM messages (``index``/``where``: a handoff's context)."""
    problems = []
    for i, m in enumerate(parsed):
        if isinstance(m, UserMessage):
            path = f"{where}[{i}].content" if where else "content"
            problems += image_problems(m.content, i if index is None else index, path)
    return problems


def to_canonical(data: Any) -> list[Message]:
    """Validate autogen-core LLM messages (a list, or a model context ``{"messages": [...]}``)."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    if problems := check_images(parsed):
        raise SchemaError(NAME, problems)
    return messages_in(parsed)


def to_writable(data: Any) -> list[Message]:
    """:func:`to_canonical` for a conversion (``formats.convert``): the canonical fields of messages of plain
    values, with no keys but their own (texts, calls whose arguments are a string, results noting whether
    they failed), built from the items themselves (their plain types are their validation), the others'
    from the source models. A property test holds it to :func:`to_canonical` (tests/test_lean_read.py)."""
    raw = message_list(data, NAME)
    lean = [_lean(m) for m in raw]
    parsed = iter(validate_others(MESSAGES, raw, lean, NAME))
    models = [next(parsed) if fields is None else None for fields in lean]
    if problems := check_images(models):  # a lean item (None here) has no image: the indexes are the input's
        raise SchemaError(NAME, problems)
    return CANONICAL.validate_python([fields if fields is not None else _IN[type(m)](m)
                                      for fields, m in zip(lean, models)])


_KEYS = {"SystemMessage": {"content", "type"}, "UserMessage": {"content", "source", "type"},
         "AssistantMessage": {"content", "thought", "source", "type"},
         "FunctionExecutionResultMessage": {"content", "type"}}
_ROLES = {"SystemMessage": "system", "UserMessage": "user", "AssistantMessage": "assistant",
          "FunctionExecutionResultMessage": "tool"}


def _lean(m: Any) -> dict[str, Any] | None:
    """The canonical fields of a message of plain values, as ``_IN`` builds them; None for any other."""
    kind = m.get("type") if m.__class__ is dict else None
    if kind.__class__ is not str or m.keys() != _KEYS.get(kind) or m.get("source", "").__class__ is not str:
        return None
    content, thought = m["content"], m.get("thought")
    if kind == "FunctionExecutionResultMessage":
        blocks = [_lean_result(r) for r in content] if content.__class__ is list else [None]
    elif content.__class__ is str:
        blocks = [] if thought is None else [{"kind": "reasoning", "text": thought}]
        if content or thought is None:
            blocks.append({"kind": "text", "text": content})
    else:
        blocks = [_lean_call(c) for c in content] if kind == "AssistantMessage" and content.__class__ is list \
            and content else [None]
        if thought is not None:
            blocks.insert(0, {"kind": "reasoning", "text": thought})
    if None in blocks or thought is not None and thought.__class__ is not str:
        return None
    fields = {"role": _ROLES[kind], "content": blocks, "source_format": NAME, "source_type": kind}
    if "source" in m:
        fields["name"] = m["source"]
    return fields


def _lean_call(c: Any) -> dict[str, Any] | None:
    if c.__class__ is not dict or len(c) != 3 or (raw := c.get("arguments")).__class__ is not str \
            or (call_id := c.get("id")).__class__ is not str or (name := c.get("name")).__class__ is not str:
        return None
    arguments, error = parse_json(raw)
    return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments, "arguments_raw": raw,
            "parse_error": error}


def _lean_result(r: Any) -> dict[str, Any] | None:
    if r.__class__ is not dict or len(r) != 4 or (output := r.get("content")).__class__ is not str \
            or (call_id := r.get("call_id")).__class__ is not str or (name := r.get("name")).__class__ is not str \
            or (is_error := r.get("is_error")).__class__ is not bool:
        return None
    return {"kind": "tool_result", "call_id": call_id, "name": name, "output": output, "is_error": is_error}


def looks_like(data: Any) -> bool:
    """A non-empty list of objects whose ``type`` is an LLM message class name."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(isinstance(m, dict) and m.get("type") in TYPES for m in msgs)


from ._autogen_core_write import TAKES_PLAIN, from_canonical, messages_out  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "messages_out", "to_canonical", "to_writable"]
