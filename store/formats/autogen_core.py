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

from pydantic import ConfigDict, Discriminator, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

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
from ..lean import Call, Plain, Result, Writable, bare_arguments
from ._common import (
    b64decode_exact, b64encode, call_text, dump_json, message_list, parse_json, validate, validate_others, validated,
)

NAME = "autogen-core"


_OPEN = ConfigDict(extra="allow")
"""autogen allows keys its messages do not declare: kept (``extras[fmt]["fields"]``) for an exact way back."""


# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a message (a reader walking models spent as long again on their attributes and their unknown keys).


@with_config(_OPEN)
class FunctionCall(TypedDict):
    id: str
    arguments: str
    name: str


@with_config(_OPEN)
class FunctionExecutionResult(TypedDict):
    content: str
    name: str
    call_id: str
    is_error: NotRequired[bool | None]


@with_config(_OPEN)
class ImageData(TypedDict):
    """``autogen_core.Image`` as it serializes: base64 image bytes (PNG once loaded)."""

    data: str


@with_config(_OPEN)
class SystemMessage(TypedDict):
    content: str
    type: Literal["SystemMessage"]


@with_config(_OPEN)
class UserMessage(TypedDict):
    content: str | list[str | ImageData]
    source: str
    type: Literal["UserMessage"]


@with_config(_OPEN)
class AssistantMessage(TypedDict):
    content: str | list[FunctionCall]
    thought: NotRequired[str | None]
    source: str
    type: Literal["AssistantMessage"]


@with_config(_OPEN)
class FunctionExecutionResultMessage(TypedDict):
    content: list[FunctionExecutionResult]
    type: Literal["FunctionExecutionResultMessage"]


def keys(model: type) -> frozenset[str]:
    """The keys a source TypedDict declares (its bases' too): the others are unknown ones."""
    return frozenset(model.__annotations__)


_CLASSES = (SystemMessage, UserMessage, AssistantMessage, FunctionExecutionResultMessage)
TYPES = frozenset(c.__name__ for c in _CLASSES)
UNTYPED = "[unknown type]"  # brackets: pydantic's tag is left out of error paths
CALL_KEYS, RESULT_KEYS, IMAGE_KEYS = keys(FunctionCall), keys(FunctionExecutionResult), keys(ImageData)
_KEYS_OF = {c.__name__: keys(c) for c in _CLASSES}


class _Untyped(TypedDict):
    """Where a message of no known ``type`` lands, so that the error names the ``type`` field."""

    type: Literal[tuple(sorted(TYPES))]  # type: ignore[valid-type]


def _tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else None
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


def unknown(value: dict[str, Any], declared: frozenset[str], optional: tuple[str, ...] = (),
            ) -> dict[str, Any]:
    """Shape notes for an exact round trip of a validated source dict (``declared``: its TypedDict's
    keys): unknown keys, and defaulted keys the input left out."""
    notes: dict[str, Any] = {}
    if not value.keys() <= declared:  # most values have none: one test in C
        notes["fields"] = {k: v for k, v in value.items() if k not in declared}
    if optional:
        absent = [f for f in optional if f not in value]
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


def call_in(call: FunctionCall, fmt: str) -> dict[str, Any]:
    """The canonical fields of a tool call block."""
    raw = call["arguments"]
    arguments, error = parse_json(raw)
    notes = unknown(call, CALL_KEYS)
    return {"kind": "tool_call", "call_id": call["id"], "name": call["name"], "arguments": arguments,
            "arguments_raw": raw, "parse_error": error, "extras": {fmt: notes} if notes else {}}


def call_dump(call: FunctionCall) -> dict[str, Any]:
    """A call as its model dumped it: the declared keys in their order, then the unknown ones."""
    out = {"id": call["id"], "arguments": call["arguments"], "name": call["name"]}
    return out if len(call) == 3 else {**out, **call}


def call_out(block: ToolCallBlock, fmt: str) -> dict[str, Any]:
    arguments = call_text(block)
    out = {"id": block.call_id, "arguments": arguments, "name": block.name}
    return finish(out, block.extras.get(fmt, {}))


def result_in(result: FunctionExecutionResult, fmt: str) -> dict[str, Any]:
    """The canonical fields of a tool result block."""
    notes = unknown(result, RESULT_KEYS, ("is_error",))
    is_error = result.get("is_error")
    if is_error is None and "is_error" in result:
        notes["is_error"] = None
    return {"kind": "tool_result", "call_id": result["call_id"], "name": result["name"],
            "output": result["content"], "is_error": bool(is_error), "extras": {fmt: notes} if notes else {}}


def result_dump(result: FunctionExecutionResult) -> dict[str, Any]:
    """A result as its model dumped it: the declared keys in their order (``is_error`` null where the
    input left it out), then the unknown ones."""
    out = {"content": result["content"], "name": result["name"], "call_id": result["call_id"],
           "is_error": result.get("is_error")}
    return out if result.keys() <= RESULT_KEYS else {**out, **result}


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
        if part.__class__ is dict:  # an ImageData; the other parts are strings
            try:  # decoded as autogen decodes it: leniently (base64 with line breaks is fine)
                data: bytes | None = base64.b64decode(part["data"])
            except (binascii.Error, ValueError):
                data = None
            if data is None or sniff(data) is None:
                what = "not base64" if data is None else "not PNG, JPEG, GIF, BMP or WebP bytes"
                problems.append((index, f"{where}[{pos}].data", f"an autogen image must be an image ({what})"))
    return problems


def image_in(image: ImageData, fmt: str) -> dict[str, Any]:
    """The canonical fields of an image block."""
    data = b64decode_exact(image["data"])
    media_type = sniff(data) if data else None
    notes = unknown(image, IMAGE_KEYS)
    if media_type is None:  # not an image type we know: written back as it came
        notes["data"] = image["data"]
    return {"kind": "image", "data": data, "media_type": media_type, "extras": {fmt: notes} if notes else {}}


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


def _note(m: dict[str, Any], optional: tuple[str, ...] = (), **shape: Any) -> dict[str, Any]:
    notes = {**unknown(m, _KEYS_OF[m["type"]], optional), **{k: v for k, v in shape.items() if v is not None}}
    return {NAME: notes} if notes else {}


def _system_in(m: SystemMessage) -> dict[str, Any]:
    return {"role": "system", "content": [{"kind": "text", "text": m["content"]}], "source_format": NAME,
            "source_type": m["type"], "extras": _note(m)}


def _user_in(m: UserMessage) -> dict[str, Any]:
    content = m["content"]
    if content.__class__ is str:
        blocks: list[Any] = [{"kind": "text", "text": content}]
    else:
        blocks = [{"kind": "text", "text": p} if p.__class__ is str else image_in(p, NAME) for p in content]
    form = "list" if content.__class__ is list else None
    return {"role": "user", "name": m["source"], "content": blocks, "source_format": NAME,
            "source_type": m["type"], "extras": _note(m, content=form)}


def _assistant_in(m: AssistantMessage) -> dict[str, Any]:
    content, thought = m["content"], m.get("thought")
    blocks: list[Any] = [] if thought is None else [{"kind": "reasoning", "text": thought}]
    if content.__class__ is str:
        if content or thought is None:  # "" beside a thought is autogen's "no text"
            blocks.append({"kind": "text", "text": content})
    else:
        blocks.extend(call_in(c, NAME) for c in content)
    form = "list" if content == [] else None
    return {"role": "assistant", "name": m["source"], "content": blocks, "source_format": NAME,
            "source_type": m["type"], "extras": _note(m, ("thought",), content=form)}


def _results_in(m: FunctionExecutionResultMessage) -> dict[str, Any]:
    return {"role": "tool", "content": [result_in(r, NAME) for r in m["content"]], "source_format": NAME,
            "source_type": m["type"], "extras": _note(m)}


_IN = {"SystemMessage": _system_in, "UserMessage": _user_in, "AssistantMessage": _assistant_in,
       "FunctionExecutionResultMessage": _results_in}


def messages_in(parsed: list[Any]) -> list[Message]:
    """Canonical messages from validated LLM messages (their fields validated in one call)."""
    return CANONICAL.validate_python([_IN[m["type"]](m) for m in parsed])


def check_images(parsed: list[Any], index: int | None = None, where: str = "") -> list[tuple[int, str, str]]:
    """Problems of the images of validated LLM messages (``index``/``where``: a handoff's context)."""
    problems = []
    for i, m in enumerate(parsed):
        if m is not None and m["type"] == "UserMessage":
            path = f"{where}[{i}].content" if where else "content"
            problems += image_problems(m["content"], i if index is None else index, path)
    return problems


def to_canonical(data: Any) -> list[Message]:
    """Validate autogen-core LLM messages (a list, or a model context ``{"messages": [...]}``)."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    if problems := check_images(parsed):
        raise SchemaError(NAME, problems)
    return messages_in(parsed)


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical` for a conversion (``formats.convert``): messages of plain values, with no keys but
    their own, read from the items themselves (their plain types are their validation): a text, calls whose
    arguments parse to exactly their text, or one result that did not fail, as a :class:`~store.lean.Plain`
    with its speaker and message type; other texts, calls and results (a thought, several results, an
    error) as canonical fields; the others' from the source models. A property test holds it to
    :func:`to_canonical` (tests/test_lean_read.py)."""
    raw = message_list(data, NAME)
    lean = [_plain(m) or _lean(m) for m in raw]
    parsed = iter(validate_others(MESSAGES, raw, lean, NAME))
    models = [next(parsed) if fields is None else None for fields in lean]
    if problems := check_images(models):  # a lean item (None here) has no image: the indexes are the input's
        raise SchemaError(NAME, problems)
    read = [fields if fields is not None else _IN[m["type"]](m) for fields, m in zip(lean, models)]
    # an error located in the whole input, as to_canonical locates it
    return validated(read, lambda: [m if m.__class__ is dict else m.fields() for m in read])


def _plain(m: Any) -> Plain | None:
    """A text, calls or one result of :func:`_lean`'s plain values as a :class:`~store.lean.Plain`; None
    for any other."""
    if (kind := _kind(m)) is None or m.get("thought") is not None:
        return None
    content, speaker = m["content"], m.get("source")
    if content.__class__ is str:
        return None if kind == "FunctionExecutionResultMessage" else \
            Plain(_ROLES[kind], content, NAME, speaker=speaker, source_type=kind)
    if content.__class__ is not list or not content:
        return None
    if kind == "FunctionExecutionResultMessage":
        if len(content) != 1 or (result := _result(content[0])) is None or result[3]:  # one, not failed
            return None
        call_id, name, output, _ = result
        return Plain("tool", output, NAME, (Result(call_id),), name, source_type=kind)
    calls = [_call(c) for c in content] if kind == "AssistantMessage" else [None]
    if None in calls or not all(bare_arguments(raw) for _, _, raw in calls):  # type: ignore[misc]
        return None
    made = tuple(Call(*c) for c in calls)  # type: ignore[misc]
    return Plain("assistant", None, NAME, made, speaker=speaker, source_type=kind)


_KEYS = {"SystemMessage": {"content", "type"}, "UserMessage": {"content", "source", "type"},
         "AssistantMessage": {"content", "thought", "source", "type"},
         "FunctionExecutionResultMessage": {"content", "type"}}
_ROLES = {"SystemMessage": "system", "UserMessage": "user", "AssistantMessage": "assistant",
          "FunctionExecutionResultMessage": "tool"}


def _kind(m: Any) -> str | None:
    """The type of an item with no keys but its type's own (its source a string); None for any other."""
    kind = m.get("type") if m.__class__ is dict else None
    if kind.__class__ is not str or m.keys() != _KEYS.get(kind) or m.get("source", "").__class__ is not str:
        return None
    return kind


def _lean(m: Any) -> dict[str, Any] | None:
    """The canonical fields of a message of plain values, as ``_IN`` builds them; None for any other."""
    if (kind := _kind(m)) is None:
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


def _call(c: Any) -> tuple[str, str, str] | None:
    """A FunctionCall of strings and no other keys: its id, name and arguments; None for any other."""
    if c.__class__ is not dict or len(c) != 3 or (raw := c.get("arguments")).__class__ is not str \
            or (call_id := c.get("id")).__class__ is not str or (name := c.get("name")).__class__ is not str:
        return None
    return call_id, name, raw


def _result(r: Any) -> tuple[str, str, str, bool] | None:
    """A FunctionExecutionResult of plain values and no other keys: its call id, name, content and whether
    it failed; None for any other."""
    if r.__class__ is not dict or len(r) != 4 or (output := r.get("content")).__class__ is not str \
            or (call_id := r.get("call_id")).__class__ is not str or (name := r.get("name")).__class__ is not str \
            or (is_error := r.get("is_error")).__class__ is not bool:
        return None
    return call_id, name, output, is_error


def _lean_call(c: Any) -> dict[str, Any] | None:
    if (call := _call(c)) is None:
        return None
    call_id, name, raw = call
    arguments, error = parse_json(raw)
    return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments, "arguments_raw": raw,
            "parse_error": error}


def _lean_result(r: Any) -> dict[str, Any] | None:
    if (result := _result(r)) is None:
        return None
    call_id, name, output, is_error = result
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
