"""OpenAI Chat Completions messages (``openai.types.chat.ChatCompletionMessageParam``).

Reads system/developer, user (text, image, audio, file parts), assistant (text,
refusal, ``tool_calls``, legacy ``function_call``), tool and legacy function
messages. What the canonical model has no field for (unknown keys, ``detail``,
whether content was a string or a list) is kept in ``extras["openai"]``.
The writer is :mod:`._openai_write`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import Message
from ._common import StandIn, message_list, unknown_fields, b64decode_exact, parse_data_uri, parse_json, validate

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


class Reader:
    """Converts one batch; keeps the legacy function calls still waiting for a result."""

    def __init__(self) -> None:
        self.legacy_pending: dict[str, list[str]] = {}
        self.names: dict[str, str] = {}

    def read(self, items: list[Any], base: int = 0, stand_in: StandIn | None = None,
             indexes: Sequence[int] | None = None) -> tuple[list[Any], list[bool]]:
        """The canonical fields of ``items`` (``base``: the first one's index in the input; or
        ``indexes``, each one's, where they are not in a row: an error is then located by ``base``,
        and the caller reads the whole input again for it), and which of them :func:`verbatim` accepts.

        An item :func:`verbatim` accepts is read as it is: its plain types are its validation,
        and building and walking source models would cost more than all the rest of the read
        (a property test holds :meth:`plain` to the models' path). The others are validated
        with the source models, in one call. ``stand_in(item, names)`` may give, for an item
        :func:`verbatim` accepts, what to take instead of its fields (``names``: the tool names of
        the calls read so far)."""
        simple = [verbatim(item) for item in items]
        others = [item for item, plain in zip(items, simple) if not plain]
        try:
            parsed = iter(MESSAGES.validate_python(others) if others else ())
        except ValidationError:  # located in the whole input (its plain items are valid: the same errors)
            validate(MESSAGES, items, NAME, first=base)
            raise
        at = range(base, base + len(items)) if indexes is None else indexes
        return [self.message(next(parsed), i) if not plain
                else stood if stand_in and (stood := stand_in(item, self.names)) is not None
                else self.plain(item, i)
                for i, item, plain in zip(at, items, simple)], simple

    def plain(self, item: dict[str, Any], index: int) -> dict[str, Any]:
        """:meth:`message` of an item :func:`verbatim` accepts, read from the item itself."""
        role, content = item["role"], item.get("content")
        blocks: list[BlockDict] = [] if content is None else [{"kind": "text", "text": content}]
        for call in item.get("tool_calls") or ():
            function = call["function"]
            arguments, error = parse_json(function["arguments"])
            self.names[call["id"]] = function["name"]
            blocks.append({"kind": "tool_call", "call_id": call["id"], "name": function["name"],
                           "arguments": arguments, "arguments_raw": function["arguments"],
                           "parse_error": error, "extras": {}})
        if role == "tool":
            call_id = item["tool_call_id"]
            blocks = [{"kind": "tool_result", "call_id": call_id, "name": self.names.get(call_id),
                       "output": content, "extras": {}}]
        shape: dict[str, Any] = {}
        if fields := {key: value for key, value in item.items() if key not in _VERBATIM_KEYS[role]}:
            shape["fields"] = fields
        if content is None:
            shape["content"] = "null" if "content" in item else "absent"
        if item.get("tool_calls") == []:
            shape["empty_tool_calls"] = True
        developer = role == "developer"
        return {
            "role": "system" if developer else role, "source_role": "developer" if developer else None,
            "name": None if role == "tool" else item.get("name"), "content": blocks, "source_format": NAME,
            "extras": {NAME: shape} if shape else {},
        }

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
    return read_marked(data)[0]


def read_marked(data: Any) -> tuple[list[Message], list[bool]]:
    """:func:`to_canonical`, and for each item whether :func:`verbatim` accepts it."""
    fields, plain = read_fields(data)
    return CANONICAL.validate_python(fields), plain


def read_fields(data: Any, stand_in: StandIn | None = None) -> tuple[list[Any], list[bool]]:
    """:func:`read_marked` before the canonical validation: each message's fields as a dict
    (or what ``stand_in`` gives for it, see ``Reader.read``)."""
    return Reader().read(message_list(data, NAME), stand_in=stand_in)


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` chunk by chunk, with the same result as on the whole list:
    one reader spans the chunks (a result finds its call's name in an earlier chunk)
    and errors name the index in the whole stream."""
    for _, fields, _ in read_fields_stream(chunks):
        yield CANONICAL.validate_python(fields)


def read_fields_stream(chunks: Iterable[list[Any]], stand_in: StandIn | None = None,
                       ) -> Iterator[tuple[list[Any], list[Any], list[bool]]]:
    """:func:`read_fields` chunk by chunk, with each chunk: one reader spans the chunks (see
    :func:`to_canonical_stream`)."""
    reader = Reader()
    base = 0
    for chunk in chunks:
        yield chunk, *reader.read(chunk, base, stand_in)
        base += len(chunk)


_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


FIELDS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"})
"""The keys OpenAI has a field for: any other an item holds is its own (kept in extras)."""
_PART_TYPES = {"text", "refusal", "image_url", "input_audio", "file"}


def _looks_like_message(m: Any) -> bool:
    if not (isinstance(m, dict) and m.get("role") in _ROLES and m.keys() <= FIELDS):
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


# The keys a message of each role may hold for ``verbatim``; any other must be none of OpenAI's own.
_VERBATIM_KEYS = {
    "system": {"role", "content", "name"}, "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"}, "assistant": {"role", "content", "name", "tool_calls"},
    "tool": {"role", "content", "tool_call_id"},
}


def _plain_call(call: Any) -> bool:
    if type(call) is not dict or call.keys() != {"id", "type", "function"} or call["type"] != "function":
        return False
    function = call["function"]
    return (type(call["id"]) is str and call["id"] != "" and type(function) is dict
            and function.keys() == {"name", "arguments"} and type(function["name"]) is str
            and type(function["arguments"]) is str)


def verbatim(item: Any) -> bool:
    """Whether the writer gives ``item`` back as it is for the message read from it, so that
    its stored document can be the item itself (``store.docs``): string content, a name,
    function calls with ids, a result's call id, unknown keys holding strings (kept in
    extras), the shapes agents write most. A property test holds it to the writer."""
    if type(item) is not dict or type(role := item.get("role")) is not str:
        return False
    if (allowed := _VERBATIM_KEYS.get(role)) is None:
        return False
    for key, value in item.items():
        if key not in allowed and (type(key) is not str or key in FIELDS or type(value) is not str):
            return False
    content = item.get("content")
    if type(content) is not str and not (role == "assistant" and content is None):
        return False
    if "name" in item and type(item["name"]) is not str:
        return False
    if role == "tool":
        return type(item.get("tool_call_id")) is str and item["tool_call_id"] != ""
    calls = item.get("tool_calls", [])
    return type(calls) is list and all(_plain_call(call) for call in calls)


from ._openai_write import TAKES_PLAIN, from_canonical, write_message  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "read_fields", "read_fields_stream", "read_marked",
           "to_canonical", "to_canonical_stream"]
