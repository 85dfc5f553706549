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

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import Message
from ._common import (StandIn, b64decode_exact, message_list, parse_data_uri, parse_json, unknown_keys,
                      validate)

NAME = "openai"


_OPEN = ConfigDict(extra="allow")

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader).


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_OPEN)
class RefusalPart(TypedDict):
    type: Literal["refusal"]
    refusal: str


@with_config(_OPEN)
class ImageURL(TypedDict):
    url: str


@with_config(_OPEN)
class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


@with_config(_OPEN)
class InputAudio(TypedDict):
    data: str
    format: str


@with_config(_OPEN)
class AudioPart(TypedDict):
    type: Literal["input_audio"]
    input_audio: InputAudio


@with_config(_OPEN)
class FileRef(TypedDict, total=False):
    file_data: str | None
    file_id: str | None
    filename: str | None


@with_config(_OPEN)
class FilePart(TypedDict):
    type: Literal["file"]
    file: FileRef


UserPart = Annotated[Union[TextPart, ImagePart, AudioPart, FilePart], Field(discriminator="type")]
AssistantPart = Annotated[Union[TextPart, RefusalPart], Field(discriminator="type")]


@with_config(_OPEN)
class Function(TypedDict):
    name: str
    arguments: str


@with_config(_OPEN)
class FunctionToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: Function


@with_config(_OPEN)
class Custom(TypedDict):
    name: str
    input: str


@with_config(_OPEN)
class CustomToolCall(TypedDict):
    id: str
    type: Literal["custom"]
    custom: Custom


ToolCall = Annotated[Union[FunctionToolCall, CustomToolCall], Field(discriminator="type")]


@with_config(_OPEN)
class SystemMessage(TypedDict):
    role: Literal["system", "developer"]
    content: str | list[TextPart]
    name: NotRequired[str | None]


@with_config(_OPEN)
class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserPart]  # type: ignore[valid-type]
    name: NotRequired[str | None]


@with_config(_OPEN)
class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: NotRequired[str | list[AssistantPart] | None]  # type: ignore[valid-type]
    refusal: NotRequired[str | None]
    name: NotRequired[str | None]
    tool_calls: NotRequired[list[ToolCall] | None]  # type: ignore[valid-type]
    function_call: NotRequired[Function | None]


@with_config(_OPEN)
class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[TextPart]


@with_config(_OPEN)
class FunctionMessage(TypedDict):
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


def _keys(*models: type) -> frozenset[str]:
    return frozenset(key for model in models for key in model.__annotations__)


_KEYS = {"system": _keys(SystemMessage), "developer": _keys(SystemMessage), "user": _keys(UserMessage),
         "assistant": _keys(AssistantMessage), "tool": _keys(ToolMessage), "function": _keys(FunctionMessage),
         "text": _keys(TextPart), "refusal": _keys(RefusalPart), "image_url": _keys(ImagePart),
         "input_audio": _keys(AudioPart), "file": _keys(FilePart), "url": _keys(ImageURL),
         "audio": _keys(InputAudio), "ref": _keys(FileRef), "call": _keys(FunctionToolCall),
         "custom": _keys(Custom), "function_": _keys(Function)}
"""The declared keys of each message role, part type and inner object (by a name of ours)."""


def _unknown(value: dict[str, Any], of: str) -> dict[str, Any] | None:
    """Keys the canonical model has no field for: unknown ones, and known ones given as null."""
    return unknown_keys(value, _KEYS[of], skip="content")


def _extras(value: dict[str, Any], of: str, **shape: Any) -> dict[str, Any]:
    """The ``extras["openai"]`` entry: unknown keys plus shape notes, empty parts left out."""
    kept = {k: v for k, v in shape.items() if v is not None and v is not False} if shape else {}
    if (fields := _unknown(value, of)) is not None:
        kept = {"fields": fields, **kept}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


# Blocks and messages are built as plain dicts and validated into canonical models in one
# call into pydantic-core per batch (to_canonical): constructing the models one by one costs
# several times more.
BlockDict = dict[str, Any]


def _text_in(part: dict[str, Any]) -> BlockDict:
    return {"kind": "text", "text": part["text"], "extras": _extras(part, "text")}


def _refusal_in(part: dict[str, Any]) -> BlockDict:
    return {"kind": "refusal", "text": part["refusal"], "extras": _extras(part, "refusal")}


def _image_in(part: dict[str, Any]) -> BlockDict:
    url = part["image_url"]["url"]
    decoded = parse_data_uri(url)
    extras = _extras(part, "image_url", inner=_unknown(part["image_url"], "url"))
    if decoded is None:
        return {"kind": "image", "url": url, "extras": extras}
    return {"kind": "image", "media_type": decoded[0], "data": decoded[1], "extras": extras}


def _audio_in(part: dict[str, Any]) -> BlockDict:
    audio = part["input_audio"]
    data = b64decode_exact(audio["data"])
    media_type = _AUDIO_MEDIA_TYPES.get(audio["format"])
    exact = data is not None and media_type is not None
    extras = _extras(part, "input_audio", inner=_unknown(audio, "audio"), raw=None if exact else audio)
    return {"kind": "audio", "data": data if exact else None, "media_type": media_type, "extras": extras}


def _file_in(part: dict[str, Any]) -> BlockDict:
    ref = part["file"]
    file_data = ref.get("file_data")
    decoded = parse_data_uri(file_data) if file_data else None
    extras = _extras(part, "file", inner=_unknown(ref, "ref"),
                     file_data=file_data if file_data and not decoded else None)
    return {
        "kind": "file", "file_id": ref.get("file_id"), "filename": ref.get("filename"),
        "media_type": decoded[0] if decoded else None, "data": decoded[1] if decoded else None, "extras": extras,
    }


_PARTS_IN = {"text": _text_in, "refusal": _refusal_in, "image_url": _image_in, "input_audio": _audio_in,
             "file": _file_in}


def _content_in(m: dict[str, Any]) -> tuple[list[BlockDict], str | None]:
    """Blocks, and how the source wrote ``content`` when not as a plain string."""
    content = m.get("content")
    if isinstance(content, str):
        return [{"kind": "text", "text": content}], None
    if content is None:
        return [], "absent" if "content" not in m else "null"
    return [_PARTS_IN[part["type"]](part) for part in content], "list"


def _tool_call_in(call: dict[str, Any]) -> BlockDict:
    if call["type"] == "custom":
        custom = call["custom"]
        return {"kind": "tool_call", "call_id": call["id"], "name": custom["name"],
                "arguments_raw": custom["input"],
                "extras": _extras(call, "call", type="custom", inner=_unknown(custom, "custom"))}
    function = call["function"]
    arguments, error = parse_json(function["arguments"])
    return {"kind": "tool_call", "call_id": call["id"], "name": function["name"], "arguments": arguments,
            "arguments_raw": function["arguments"], "parse_error": error,
            "extras": _extras(call, "call", inner=_unknown(function, "function_"))}


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

    def message(self, m: dict[str, Any], index: int) -> dict[str, Any]:
        blocks, form = _content_in(m)
        source = m["role"]
        role = "tool" if source in ("tool", "function") else ("system" if source == "developer" else source)
        if source == "assistant":
            blocks += self._assistant_extra(m, index)
        elif source == "tool":
            blocks = [self._result(m["tool_call_id"], blocks, form)]
            form = None
        elif source == "function":
            pending = self.legacy_pending.get(m["name"]) or []
            call_id = pending.pop(0) if pending else f"function-{index}"
            blocks = [self._result(call_id, blocks, None, legacy=True, name=m["name"])]
        return {
            "role": role, "source_role": source if source != role else None,
            "name": None if role == "tool" else m.get("name"), "content": blocks, "source_format": NAME,
            "extras": _extras(m, source, content=form, empty_tool_calls=m.get("tool_calls") == []),
        }

    def _assistant_extra(self, m: dict[str, Any], index: int) -> list[BlockDict]:
        blocks: list[BlockDict] = []
        if (refusal := m.get("refusal")) is not None:
            blocks.append({"kind": "refusal", "text": refusal, "extras": {NAME: {"field": True}}})
        for call in m.get("tool_calls") or ():
            block = _tool_call_in(call)
            self.names[block["call_id"]] = block["name"]
            blocks.append(block)
        if (fc := m.get("function_call")) is not None:
            call_id = f"function-{index}"
            self.legacy_pending.setdefault(fc["name"], []).append(call_id)
            arguments, error = parse_json(fc["arguments"])
            blocks.append({
                "kind": "tool_call", "call_id": call_id, "name": fc["name"], "arguments": arguments,
                "arguments_raw": fc["arguments"], "parse_error": error, "call_id_synthesized": True,
                "extras": _extras(fc, "function_", legacy=True),
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
