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
from typing import Annotated, Any, Literal, Union, get_args, get_type_hints

from pydantic import ConfigDict, Discriminator, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable
from ..model import Message
from ._common import (b64decode_exact, dump_json, made, note_first, parse_json, unknown_keys, validate,
                      validate_others)

NAME = "otel-genai"


_OPEN = ConfigDict(extra="allow")  # every definition of the schema allows more properties

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader).


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    content: str


@with_config(_OPEN)
class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    content: str


@with_config(_OPEN)
class ToolCallRequestPart(TypedDict):
    type: Literal["tool_call"]
    id: NotRequired[str | None]
    name: str
    arguments: NotRequired[Any]


@with_config(_OPEN)
class ToolCallResponsePart(TypedDict):
    type: Literal["tool_call_response"]
    id: NotRequired[str | None]
    response: Any


@with_config(_OPEN)
class _Inner(TypedDict):
    type: str


@with_config(_OPEN)
class ServerToolCallPart(TypedDict):
    type: Literal["server_tool_call"]
    id: NotRequired[str | None]
    name: str
    server_tool_call: _Inner


@with_config(_OPEN)
class ServerToolCallResponsePart(TypedDict):
    type: Literal["server_tool_call_response"]
    id: NotRequired[str | None]
    server_tool_call_response: _Inner


@with_config(_OPEN)
class BlobPart(TypedDict):
    type: Literal["blob"]
    mime_type: NotRequired[str | None]
    modality: str
    content: str


@with_config(_OPEN)
class FilePart(TypedDict):
    type: Literal["file"]
    mime_type: NotRequired[str | None]
    modality: str
    file_id: str


@with_config(_OPEN)
class UriPart(TypedDict):
    type: Literal["uri"]
    mime_type: NotRequired[str | None]
    modality: str
    uri: str


@with_config(_OPEN)
class GenericPart(TypedDict):
    type: str


_KNOWN = (TextPart, ReasoningPart, ToolCallRequestPart, ToolCallResponsePart, ServerToolCallPart,
          ServerToolCallResponsePart, BlobPart, FilePart, UriPart)
_TAGS = {get_args(get_type_hints(m)["type"])[0]: m.__name__ for m in _KNOWN}
_KEYS = {get_args(get_type_hints(m)["type"])[0]: frozenset(m.__annotations__) for m in _KNOWN}
"""Each known part type's declared keys; a part's others are its unknown ones."""


def _tag(value: Any) -> str:
    found = value.get("type") if isinstance(value, dict) else None
    return _TAGS.get(found, "GenericPart") if isinstance(found, str) else "GenericPart"


Part = Annotated[Union[tuple(Annotated[m, Tag(m.__name__)] for m in (*_KNOWN, GenericPart))],  # type: ignore[misc]
                 Discriminator(_tag)]


@with_config(_OPEN)
class ChatMessage(TypedDict):
    role: str
    parts: list[Part]  # type: ignore[valid-type]
    name: NotRequired[str | None]
    finish_reason: NotRequired[str | None]  # not in ChatMessage's schema, but allowed and kept


@with_config(_OPEN)
class OutputMessage(TypedDict):
    role: str
    parts: list[Part]  # type: ignore[valid-type]
    name: NotRequired[str | None]
    finish_reason: str  # required in OutputMessage


@with_config(_OPEN)
class Attributes(TypedDict, total=False):
    system_instructions: list[Part] | None  # type: ignore[valid-type]
    input_messages: list[ChatMessage] | None
    output_messages: list[OutputMessage] | None


ATTRIBUTES = TypeAdapter(Attributes)
MESSAGES = TypeAdapter(list[ChatMessage])
PARTS = TypeAdapter(list[Part])  # type: ignore[valid-type]
KEYS = ("system_instructions", "input_messages", "output_messages")
ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
MODALITIES = {"image": "image", "audio": "audio", "video": "video"}
MEDIA_PREFIXES = (("image/", "image"), ("audio/", "audio"), ("video/", "video"))
MODALITY_OUT = {"image": "image", "audio": "audio", "video": "video", "file": "document"}
"""The modality written for each media kind; ``document`` is not in v1.41.1's enum, but the
schema takes any string and later releases added it for files."""
CODE_TOOL = "code_interpreter"  # the spec's example of a server tool (OpenAI's code interpreter)
_MESSAGE = frozenset(ChatMessage.__annotations__)


# --- to canonical --------------------------------------------------------------------


def note(**shape: Any) -> dict[str, Any]:
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


class _Reader:
    """Converts one conversation into canonical fields (validated in one call, ``made``); pairs calls and
    responses without id in order."""

    def __init__(self) -> None:
        self.pending: list[str] = []  # ids of unanswered calls, oldest first

    def part(self, part: dict[str, Any], index: int, pos: int) -> dict[str, Any]:
        keys = _KEYS.get(part["type"])
        if keys is None:  # the schema's GenericPart
            return {"kind": "data", "data": part, "extras": note(part=True)}
        return _PART_IN[part["type"]](self, part, unknown_keys(part, keys), index, pos)

    def _text(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return {"kind": "text", "text": part["content"], "extras": note(fields=fields)}

    def _reasoning(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return {"kind": "reasoning", "text": part["content"], "extras": note(fields=fields)}

    def _media(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return _media_in(part, fields)

    def _server(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return _server_in(part, fields)

    def _call(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        given = part.get("id")
        call_id = given if given is not None else f"otel_call_{index}_{pos}"
        self.pending.append(call_id)
        args, raw, error = part.get("arguments"), None, None
        if isinstance(args, str):  # arguments recorded as the model sent them: JSON text
            raw = args
            args, error = parse_json(raw)
        return {"kind": "tool_call", "call_id": call_id, "name": part["name"], "arguments": args,
                "arguments_raw": raw, "parse_error": error, "call_id_synthesized": given is None,
                "extras": note(fields=fields, raw=raw is not None)}

    def _response(self, part: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        given = part.get("id")
        if given is not None:
            call_id = given
        else:  # no id: the oldest call still waiting
            call_id = self.pending[0] if self.pending else f"otel_result_{index}_{pos}"
        if call_id in self.pending:
            self.pending.remove(call_id)
        value, as_json = part["response"], None
        blocks = _blocks(value, self, index)
        if blocks is not None:
            output: Any = blocks
        elif isinstance(value, str):
            output = value
        else:  # any other JSON value, kept as its text: every format can hold text
            output, as_json = dump_json(value), True
        return {"kind": "tool_result", "call_id": call_id, "output": output,
                "extras": note(fields=fields, json=as_json, no_id=given is None)}

    def message(self, m: dict[str, Any], index: int, output: bool) -> dict[str, Any]:
        blocks = [self.part(p, index, pos) for pos, p in enumerate(m["parts"])]
        source = m["role"]
        role = ROLES.get(source, "user")
        return {"role": role, "source_role": source if source != role else None, "name": m.get("name"),
                "content": blocks, "source_format": NAME,
                "extras": note(fields=unknown_keys(m, _MESSAGE), finish_reason=m.get("finish_reason"),
                               output=output)}


_PART_IN = {"text": _Reader._text, "reasoning": _Reader._reasoning, "tool_call": _Reader._call,
            "tool_call_response": _Reader._response, "blob": _Reader._media, "file": _Reader._media,
            "uri": _Reader._media, "server_tool_call": _Reader._server,
            "server_tool_call_response": _Reader._server}
"""A known part's canonical block (as fields), by its type."""
_CONTENT_TAGS = frozenset({"TextPart", "ReasoningPart", "BlobPart", "FilePart", "UriPart"})


def _blocks(value: Any, reader: _Reader, index: int) -> list[dict[str, Any]] | None:
    """A response that is a list of content parts (as convstore writes block outputs), as blocks."""
    if not (isinstance(value, list) and value and all(_tag(v) in _CONTENT_TAGS for v in value)):
        return None
    try:
        parts = PARTS.validate_python(value)
    except ValueError:
        return None
    return [reader.part(p, index, pos) for pos, p in enumerate(parts)]


def _media_in(part: dict[str, Any], fields: Any) -> dict[str, Any]:
    modality, mime_type, kind = part["modality"], part.get("mime_type"), part["type"]
    block = MODALITIES.get(modality) or next(
        (k for prefix, k in MEDIA_PREFIXES if (mime_type or "").startswith(prefix)), "file")
    notes: dict[str, Any] = {"fields": fields,
                             "modality": modality if modality != MODALITY_OUT[block] else None}
    media: dict[str, Any] = {"kind": block, "media_type": mime_type}
    if kind == "blob":
        media["data"] = b64decode_exact(part["content"])
        if media["data"] is None:
            notes["raw"] = part["content"]  # not exact base64: kept as the text it was
    elif kind == "file":
        media["file_id"] = part["file_id"]
    else:
        media["url"] = part["uri"]
    media["extras"] = note(**notes, part=kind)
    return media


def _server_in(part: dict[str, Any], fields: Any) -> dict[str, Any]:
    """The code interpreter's call and logs as code blocks (what Gemini's code execution is too);
    any other server tool unchanged."""
    ids = {"id": part.get("id")}  # an explicit null id is among the fields
    if part["type"] == "server_tool_call":
        inner = part["server_tool_call"]
        code, language = inner.get("code"), inner.get("language")
        if inner["type"] == CODE_TOOL and isinstance(code, str) and isinstance(language, (str, type(None))):
            rest = {k: v for k, v in inner.items() if k not in ("type", "code", "language")}
            name = part["name"]
            return {"kind": "code", "code": code, "language": language, "extras": note(
                **ids, fields=fields, name=name if name != CODE_TOOL else None, inner=rest or None,
                null_language="language" in inner and language is None)}
    else:
        inner = part["server_tool_call_response"]
        outputs = inner.get("outputs")
        if (inner["type"] == CODE_TOOL and isinstance(outputs, list) and len(outputs) == 1
                and isinstance(outputs[0], dict)
                and outputs[0].get("type") == "logs" and isinstance(outputs[0].get("logs"), str)):
            log = outputs[0]
            exit_code = inner.get("exit_code")
            if isinstance(exit_code, int) and not isinstance(exit_code, bool) or exit_code is None:
                rest = {k: v for k, v in inner.items() if k not in ("type", "outputs", "exit_code")}
                more = {k: v for k, v in log.items() if k not in ("type", "logs")}
                return {"kind": "code_result", "output": log["logs"], "exit_code": exit_code, "extras": note(
                    **ids, fields=fields, inner=rest or None, log=more or None,
                    null_exit="exit_code" in inner and exit_code is None)}
    return {"kind": "data", "data": part, "extras": note(part=True)}


def _system_in(parts: list[dict[str, Any]], reader: _Reader) -> dict[str, Any]:
    return {"role": "system", "content": [reader.part(p, 0, pos) for pos, p in enumerate(parts)],
            "source_format": NAME, "extras": note(instructions=True)}


def to_canonical(data: Any) -> list[Message]:
    """Validate ``{"system_instructions"?, "input_messages"?, "output_messages"?, ...}`` or a bare
    list of messages and convert them to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each input message of one
    text part, of an assistant's calls (of ids, and objects of arguments; a text before them or not), or of
    one response (a string) to a call of its id, for a writer that takes them
    (``formats.convert``): read from the item itself, whose plain types are its validation. A
    property test holds it to :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


def _plain(m: Any) -> Plain | None:
    if m.__class__ is not dict or len(m) != 2 or (parts := m.get("parts")).__class__ is not list or not parts \
            or (part := parts[0]).__class__ is not dict:
        return None
    if len(parts) > 1 or part.get("type") == "tool_call":
        return _plain_calls(m.get("role"), parts)
    if len(part) != 3 - (part.get("type") == "text"):
        return None
    role, kind = m.get("role"), part.get("type")
    if kind == "text" and role.__class__ is str and role in _TEXT_ROLES and (text := part.get("content")).__class__ is str:
        return Plain(role, text, NAME)  # type: ignore[arg-type]
    if kind == "tool_call_response" and role == "tool" and (text := part.get("response")).__class__ is str \
            and (call_id := part.get("id")).__class__ is str:
        return Plain("tool", text, NAME, (Result(call_id),))
    return None


_TEXT_ROLES = frozenset({"system", "user", "assistant"})
_CALL_KEYS = {"type", "name", "id", "arguments"}


def _plain_calls(role: Any, parts: list[Any]) -> Plain | None:
    """An assistant's calls, each of a name, an id and an object of arguments, a text part before them or
    not; None for any other."""
    first = parts[0]
    text = first.get("content") if len(first) == 2 and first.get("type") == "text" else None
    if role != "assistant" or text.__class__ is not str and text is not None:
        return None
    calls = []
    for part in parts[text is not None:]:
        if part.__class__ is not dict or part.keys() != _CALL_KEYS or part["type"] != "tool_call" \
                or (name := part["name"]).__class__ is not str or (call_id := part["id"]).__class__ is not str \
                or (args := part["arguments"]).__class__ is not dict:
            return None
        calls.append(Call(call_id, name, None, arguments=args))
    return Plain("assistant", text, NAME, tuple(calls)) if calls else None


def _plains(items: Any, lean: bool) -> list[Plain | None]:
    return [_plain(m) for m in items] if lean and isinstance(items, list) else []


def _read(data: Any, lean: bool) -> list[Writable]:
    reader = _Reader()
    if isinstance(data, list):
        plain = _plains(data, lean)
        out = _messages(reader, validate_others(MESSAGES, data, plain, NAME), plain, len(data), 0, False)
        if out:
            note_first(out, NAME, {"form": "list"})
        return made(out)
    if not isinstance(data, dict):
        raise SchemaError(NAME, [(None, "", f"expected a list of messages or an object with input_messages, "
                                            f"got {type(data).__name__}")])
    plain = _plains(data.get("input_messages"), lean)
    rest = {**data, "input_messages": [m for m, p in zip(data["input_messages"], plain) if p is None]} if plain else data
    attrs = validate_others(ATTRIBUTES, data, plain, NAME, others=rest)
    system = attrs.get("system_instructions")
    out: list[Any] = [] if system is None else [_system_in(system, reader)]
    inputs, outputs = attrs.get("input_messages") or [], attrs.get("output_messages") or []
    count = len(plain) or len(inputs)
    out += _messages(reader, inputs, plain, count, 0, False)
    out += _messages(reader, outputs, [], len(outputs), count, True)
    absent = [k for k in KEYS[1:] if attrs.get(k) is None]
    others = {k: v for k, v in attrs.items() if k not in KEYS}
    if out and (absent or others):
        note_first(out, NAME, {k: v for k, v in (("absent", absent), ("request", others)) if v})
    return made(out)


def _messages(reader: _Reader, parsed: list[Any], plain: list[Plain | None], count: int, first: int,
              output: bool) -> list[Any]:
    """``count`` messages from the first, index ``first``: the plain ones given, the others read from ``parsed``."""
    each = iter(parsed)
    out: list[Any] = []
    for i, p in enumerate(plain or [None] * count):
        if p is None:
            out.append(reader.message(next(each), first + i, output))
        else:
            if p.role == "assistant":  # calls waiting for a response, as the reader notes them
                reader.pending.extend(call.call_id for call in p.content)
            elif p.content and p.content[0].call_id in reader.pending:  # answered, as the reader notes it
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
            note_first(out, NAME, {"form": "list"})
        base += len(chunk)
        yield made(out)


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
