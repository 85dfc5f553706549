"""OpenTelemetry GenAI semantic conventions: the message schema of ``gen_ai.system_instructions``,
``gen_ai.input.messages`` and ``gen_ai.output.messages`` (semantic-conventions v1.41.1,
``docs/gen-ai/gen-ai-*.json``; vendored in ``tests/conformance/otel_genai_schemas``).

Shape read and written: one object, like a span's attributes::

    {"system_instructions": [part, ...],          # optional: instructions given apart from the chat
     "input_messages":  [{"role", "parts", "name"?}, ...],
     "output_messages": [{"role", "parts", "name"?, "finish_reason"}, ...]}

(other keys are kept), or a bare list of messages (input messages; written back as a list).
Parts: ``text`` and ``reasoning`` (``content``), ``tool_call`` (``id``?, ``name``,
``arguments``: any JSON; a string is taken as the arguments' JSON text), ``tool_call_response``
(``id``?, ``response``: a string is the output; a list of known parts is output blocks; any
other value is kept as its JSON text), ``blob`` (base64 ``content``), ``file`` (``file_id``) and
``uri`` (``uri``), each with ``modality`` and ``mime_type``?; ``server_tool_call`` /
``server_tool_call_response`` (a ``code_interpreter`` call with ``code``, and its response with
a single ``logs`` output, become code / code_result blocks, other server tools
:class:`~store.model.DataBlock`); a part of any other ``type`` (the schema's GenericPart) is
kept unchanged in a DataBlock. Known part types are validated against their own definition
(the schema's ``anyOf`` would let a malformed one pass as a GenericPart). Unknown keys and
explicit nulls are kept in ``extras["otel-genai"]``, as is ``finish_reason``; roles outside
system/user/assistant/tool read as ``user`` and are written back as they were.

Canonical order: the system instructions (one system message), the input messages, then the
output messages. Writing puts back the first message in ``system_instructions`` when it is a
system message without a name (or was read from there); the output messages are the trailing
run of assistant messages after the last input (a message read from this format keeps the side
it was read on), each with its ``finish_reason`` (read from this format) or ``tool_call`` when
it holds tool calls, else ``stop``. Several output messages (choices) read as consecutive
assistant messages. Calls and responses without ``id`` are paired in order; their ids are made
up on import and left out again on export. The schema has no error flag, file name, message
ids, timestamps, model or usage: those are reported when dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter

from ..errors import SchemaError
from ..lean import Plain, Result, Writable, canonical
from ..model import (
    AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock,
    TextBlock, ToolCallBlock, ToolResultBlock, VideoBlock,
)
from ._common import b64decode_exact, dump_json, parse_json, unknown_fields, validate, validate_others

NAME = "otel-genai"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")  # every definition of the schema allows more properties


class TextPart(_Open):
    type: Literal["text"]
    content: str


class ReasoningPart(_Open):
    type: Literal["reasoning"]
    content: str


class ToolCallRequestPart(_Open):
    type: Literal["tool_call"]
    id: str | None = None
    name: str
    arguments: Any = None


class ToolCallResponsePart(_Open):
    type: Literal["tool_call_response"]
    id: str | None = None
    response: Any


class _Inner(_Open):
    type: str


class ServerToolCallPart(_Open):
    type: Literal["server_tool_call"]
    id: str | None = None
    name: str
    server_tool_call: _Inner


class ServerToolCallResponsePart(_Open):
    type: Literal["server_tool_call_response"]
    id: str | None = None
    server_tool_call_response: _Inner


class BlobPart(_Open):
    type: Literal["blob"]
    mime_type: str | None = None
    modality: str
    content: str


class FilePart(_Open):
    type: Literal["file"]
    mime_type: str | None = None
    modality: str
    file_id: str


class UriPart(_Open):
    type: Literal["uri"]
    mime_type: str | None = None
    modality: str
    uri: str


class GenericPart(_Open):
    type: str


_KNOWN = (TextPart, ReasoningPart, ToolCallRequestPart, ToolCallResponsePart, ServerToolCallPart,
          ServerToolCallResponsePart, BlobPart, FilePart, UriPart)
_TAGS = {get_args(m.model_fields["type"].annotation)[0]: m.__name__ for m in _KNOWN}


def _tag(value: Any) -> str:
    found = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return _TAGS.get(found, "GenericPart") if isinstance(found, str) else "GenericPart"


Part = Annotated[Union[tuple(Annotated[m, Tag(m.__name__)] for m in (*_KNOWN, GenericPart))],  # type: ignore[misc]
                 Discriminator(_tag)]


class ChatMessage(_Open):
    role: str
    parts: list[Part]
    name: str | None = None
    finish_reason: str | None = None  # not in ChatMessage's schema, but allowed and kept


class OutputMessage(ChatMessage):
    finish_reason: str  # required in OutputMessage


class Attributes(_Open):
    system_instructions: list[Part] | None = None
    input_messages: list[ChatMessage] | None = None
    output_messages: list[OutputMessage] | None = None


ATTRIBUTES = TypeAdapter(Attributes)
MESSAGES = TypeAdapter(list[ChatMessage])
PARTS = TypeAdapter(list[Part])
KEYS = ("system_instructions", "input_messages", "output_messages")
ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
MODALITIES = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
MEDIA_PREFIXES = (("image/", ImageBlock), ("audio/", AudioBlock), ("video/", VideoBlock))
MODALITY_OUT = {"image": "image", "audio": "audio", "video": "video", "file": "document"}
"""The modality written for each media kind; ``document`` is not in v1.41.1's enum, but the
schema takes any string and later releases added it for files."""
CODE_TOOL = "code_interpreter"  # the spec's example of a server tool (OpenAI's code interpreter)


# --- to canonical --------------------------------------------------------------------


def note(**shape: Any) -> dict[str, Any]:
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


class _Reader:
    """Converts one conversation; pairs calls and responses without id in order."""

    def __init__(self) -> None:
        self.pending: list[str] = []  # ids of unanswered calls, oldest first

    def part(self, part: BaseModel, index: int, pos: int) -> Block:
        fields = unknown_fields(part)
        match part:
            case TextPart():
                return TextBlock(text=part.content, extras=note(fields=fields))
            case ReasoningPart():
                return ReasoningBlock(text=part.content, extras=note(fields=fields))
            case ToolCallRequestPart():
                return self._call(part, fields, index, pos)
            case ToolCallResponsePart():
                return self._response(part, fields, index, pos)
            case BlobPart() | FilePart() | UriPart():
                return _media_in(part, fields)
            case ServerToolCallPart() | ServerToolCallResponsePart():
                return _server_in(part, fields)
        return DataBlock(data=part.model_dump(mode="json"), extras=note(part=True))

    def _call(self, part: ToolCallRequestPart, fields: Any, index: int, pos: int) -> ToolCallBlock:
        call_id = part.id if part.id is not None else f"otel_call_{index}_{pos}"
        self.pending.append(call_id)
        args, raw, error = part.arguments, None, None
        if isinstance(args, str):  # arguments recorded as the model sent them: JSON text
            raw = args
            args, error = parse_json(raw)
        return ToolCallBlock(call_id=call_id, name=part.name, arguments=args, arguments_raw=raw, parse_error=error,
                             call_id_synthesized=part.id is None, extras=note(fields=fields, raw=raw is not None))

    def _response(self, part: ToolCallResponsePart, fields: Any, index: int, pos: int) -> ToolResultBlock:
        if part.id is not None:
            call_id = part.id
        else:  # no id: the oldest call still waiting
            call_id = self.pending[0] if self.pending else f"otel_result_{index}_{pos}"
        if call_id in self.pending:
            self.pending.remove(call_id)
        value, as_json = part.response, None
        blocks = _blocks(value, self, index)
        if blocks is not None:
            output: str | list[Block] = blocks
        elif isinstance(value, str):
            output = value
        else:  # any other JSON value, kept as its text: every format can hold text
            output, as_json = dump_json(value), True
        return ToolResultBlock(call_id=call_id, output=output,
                               extras=note(fields=fields, json=as_json, no_id=part.id is None))

    def message(self, m: ChatMessage, index: int, output: bool) -> Message:
        blocks = [self.part(p, index, pos) for pos, p in enumerate(m.parts)]
        role = ROLES.get(m.role, "user")
        return Message(role=role, source_role=m.role if m.role != role else None, name=m.name, content=blocks,
                       source_format=NAME, extras=note(fields=unknown_fields(m),
                                                       finish_reason=m.finish_reason, output=output))


_CONTENT_TAGS = frozenset({"TextPart", "ReasoningPart", "BlobPart", "FilePart", "UriPart"})


def _blocks(value: Any, reader: _Reader, index: int) -> list[Block] | None:
    """A response that is a list of content parts (as convstore writes block outputs), as blocks."""
    if not (isinstance(value, list) and value and all(_tag(v) in _CONTENT_TAGS for v in value)):
        return None
    try:
        parts = PARTS.validate_python(value)
    except ValueError:
        return None
    return [reader.part(p, index, pos) for pos, p in enumerate(parts)]


def _media_in(part: BlobPart | FilePart | UriPart, fields: Any) -> Block:
    kind = MODALITIES.get(part.modality) or next(
        (cls for prefix, cls in MEDIA_PREFIXES if (part.mime_type or "").startswith(prefix)), FileBlock)
    written = MODALITY_OUT[kind.model_fields["kind"].default]
    notes: dict[str, Any] = {"fields": fields, "modality": part.modality if part.modality != written else None}
    media: dict[str, Any] = {"media_type": part.mime_type}
    if isinstance(part, BlobPart):
        media["data"] = b64decode_exact(part.content)
        if media["data"] is None:
            notes["raw"] = part.content  # not exact base64: kept as the text it was
    elif isinstance(part, FilePart):
        media["file_id"] = part.file_id
    else:
        media["url"] = part.uri
    return kind(**media, extras=note(**notes, part=part.type))


def _server_in(part: ServerToolCallPart | ServerToolCallResponsePart, fields: Any) -> Block:
    """The code interpreter's call and logs as code blocks (what Gemini's code execution is too);
    any other server tool unchanged."""
    ids = {"id": part.id}  # an explicit null id is among the fields
    if isinstance(part, ServerToolCallPart):
        inner = part.server_tool_call
        code, language = (inner.model_extra or {}).get("code"), (inner.model_extra or {}).get("language")
        if inner.type == CODE_TOOL and isinstance(code, str) and isinstance(language, (str, type(None))):
            rest = {k: v for k, v in inner.model_extra.items() if k not in ("code", "language")}
            return CodeBlock(code=code, language=language, extras=note(
                **ids, fields=fields, name=part.name if part.name != CODE_TOOL else None, inner=rest or None,
                null_language="language" in inner.model_extra and language is None))
    else:
        inner = part.server_tool_call_response
        extra = inner.model_extra or {}
        outputs = extra.get("outputs")
        if (inner.type == CODE_TOOL and isinstance(outputs, list) and len(outputs) == 1 and isinstance(outputs[0], dict)
                and outputs[0].get("type") == "logs" and isinstance(outputs[0].get("logs"), str)):
            log = outputs[0]
            exit_code = extra.get("exit_code")
            if isinstance(exit_code, int) and not isinstance(exit_code, bool) or exit_code is None:
                rest = {k: v for k, v in extra.items() if k not in ("outputs", "exit_code")}
                more = {k: v for k, v in log.items() if k not in ("type", "logs")}
                return CodeResultBlock(output=log["logs"], exit_code=exit_code, extras=note(
                    **ids, fields=fields, inner=rest or None, log=more or None,
                    null_exit="exit_code" in extra and exit_code is None))
    return DataBlock(data=part.model_dump(mode="json", exclude_unset=True), extras=note(part=True))


def _system_in(parts: list[BaseModel], reader: _Reader) -> Message:
    return Message(role="system", content=[reader.part(p, 0, pos) for pos, p in enumerate(parts)],
                   source_format=NAME, extras=note(instructions=True))


def to_canonical(data: Any) -> list[Message]:
    """Validate ``{"system_instructions"?, "input_messages"?, "output_messages"?, ...}`` or a bare
    list of messages and convert them to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each input message of one
    text part, or of one response (a string) to a call of its id, for a writer that takes them
    (``formats.convert``): read from the item itself, whose plain types are its validation. A
    property test holds it to :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


def _plain(m: Any) -> Plain | None:
    if m.__class__ is not dict or len(m) != 2 or (parts := m.get("parts")).__class__ is not list or len(parts) != 1 \
            or (part := parts[0]).__class__ is not dict or len(part) != 3 - (part.get("type") == "text"):
        return None
    role, kind = m.get("role"), part.get("type")
    if kind == "text" and role.__class__ is str and role in _TEXT_ROLES and (text := part.get("content")).__class__ is str:
        return Plain(role, text, NAME)  # type: ignore[arg-type]
    if kind == "tool_call_response" and role == "tool" and (text := part.get("response")).__class__ is str \
            and (call_id := part.get("id")).__class__ is str:
        return Plain("tool", text, NAME, (Result(call_id),))
    return None


_TEXT_ROLES = frozenset({"system", "user", "assistant"})


def _plains(items: Any, lean: bool) -> list[Plain | None]:
    return [_plain(m) for m in items] if lean and isinstance(items, list) else []


def _read(data: Any, lean: bool) -> list[Writable]:
    reader = _Reader()
    if isinstance(data, list):
        plain = _plains(data, lean)
        out = _messages(reader, validate_others(MESSAGES, data, plain, NAME), plain, len(data), 0, False)
        if out:
            out[0] = canonical(out[:1])[0]
            out[0].extras.setdefault(NAME, {})["form"] = "list"  # type: ignore[union-attr]
        return out
    if not isinstance(data, dict):
        raise SchemaError(NAME, [(None, "", f"expected a list of messages or an object with input_messages, "
                                            f"got {type(data).__name__}")])
    plain = _plains(data.get("input_messages"), lean)
    rest = {**data, "input_messages": [m for m, p in zip(data["input_messages"], plain) if p is None]} if plain else data
    attrs = validate_others(ATTRIBUTES, data, plain, NAME, others=rest)
    out: list[Writable] = [_system_in(attrs.system_instructions, reader)] if attrs.system_instructions is not None else []
    inputs, outputs = attrs.input_messages or [], attrs.output_messages or []
    count = len(plain) or len(inputs)
    out += _messages(reader, inputs, plain, count, 0, False)
    out += _messages(reader, outputs, [], len(outputs), count, True)
    absent = [k for k in KEYS[1:] if getattr(attrs, k) is None]
    if out and (absent or attrs.model_extra):
        out[0] = canonical(out[:1])[0]
        out[0].extras.setdefault(NAME, {}).update({k: v for k, v in (("absent", absent),  # type: ignore[union-attr]
                                                                     ("request", attrs.model_extra)) if v})
    return out


def _messages(reader: _Reader, parsed: list[Any], plain: list[Plain | None], count: int, first: int,
              output: bool) -> list[Writable]:
    """``count`` messages from the first, index ``first``: the plain ones given, the others read from ``parsed``."""
    made = iter(parsed)
    out: list[Writable] = []
    for i, p in enumerate(plain or [None] * count):
        if p is None:
            out.append(reader.message(next(made), first + i, output))
        else:
            if p.content and p.content[0].call_id in reader.pending:  # answered, as the reader notes it
                reader.pending.remove(p.content[0].call_id)
            out.append(p)
    return out


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` of a bare list, chunk by chunk: one reader spans the chunks (a
    response pairs with a call in an earlier chunk); errors name the index in the whole list."""
    reader, base = _Reader(), 0
    for chunk in chunks:
        parsed = validate(MESSAGES, chunk, NAME, first=base)
        out = [reader.message(m, base + i, False) for i, m in enumerate(parsed)]
        if base == 0 and out:
            out[0].extras.setdefault(NAME, {})["form"] = "list"
        base += len(chunk)
        yield out


_MESSAGE_KEYS = frozenset({"role", "parts", "name", "finish_reason"})


def _looks_like_message(m: Any) -> bool:
    return (isinstance(m, dict) and m.keys() <= _MESSAGE_KEYS and isinstance(m.get("role"), str)
            and isinstance(m.get("parts"), list)
            and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in m["parts"]))


def looks_like(data: Any) -> bool:
    """``{role, parts}`` items whose parts are typed (``{"type": ...}``: Gemini's parts have no
    type), at least one part in all; or an object with ``input_messages`` / ``output_messages``
    lists of them."""
    if isinstance(data, dict):
        lists = [data.get(k) for k in KEYS[1:] if k in data]
        return (bool(lists) and "messages" not in data and "contents" not in data
                and all(isinstance(v, list) and all(_looks_like_message(m) for m in v) for v in lists))
    return (isinstance(data, list) and any(isinstance(m, dict) and m.get("parts") for m in data)
            and all(_looks_like_message(m) for m in data))


# --- from canonical --------------------------------------------------------------------


TAKES_PLAIN = True


def from_canonical(messages: list[Message], losses: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """Canonical messages as ``{"system_instructions"?, "input_messages", "output_messages"}``
    (or the bare list they were read from)."""
    from ._otel_genai_write import write  # the writer imports the helpers above

    return write(messages, losses)
