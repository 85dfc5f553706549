"""Anthropic Messages (``anthropic.types.MessageParam`` plus the request's ``system``).

Reads ``{"system": ..., "messages": [...]}`` (other request keys are kept) or a bare
list of messages, which may hold the inline ``role: "system"`` messages anthropic 2.x
allows. Blocks: text, image and document (base64, URL, file, plain-text and content
sources), thinking and redacted_thinking, tool_use and tool_result; the SDK's other
blocks (server tools, search results, container uploads) are kept unchanged in a
:class:`~store.model.DataBlock`. What the canonical model has no field for
(``cache_control``, ``citations``, a document's ``context``, whether content was a
string) is kept in ``extras["anthropic"]``.

tool_result blocks live in user messages: they become canonical ``tool`` messages on
import; on export, consecutive tool messages and the user message after them become
one user message again, the results first.

Export writes the object form (no ``system`` key without a system prompt) and keeps
to the API's rules beyond the SDK types: user and assistant turns alternate
(consecutive same-role messages are merged, reported as approximated), the first turn
is a user one, every tool_use is answered by tool_result blocks at the start of the
next message, and no text block is empty. Anthropic messages have no names, ids,
timestamps, model or usage: a speaker name becomes a ``[name] `` prefix of the
message's first text (reported as approximated); the rest is reported dropped.
Messages read from Anthropic are written back as they were, also where the API
would object, so that a same-format round trip is exact.
The writer is :mod:`._anthropic_write`.
"""

from __future__ import annotations

from itertools import groupby
from typing import Annotated, Any, Literal, Union, get_args, get_type_hints

from pydantic import ConfigDict, Discriminator, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..lean import Plain, Writable
from ..model import Message
from ._common import b64decode_exact, made, message_list, note_first, unknown_keys, validate, validate_others

NAME = "anthropic"


_OPEN = ConfigDict(extra="allow")
"""The SDK's types allow keys they do not declare: kept (``extras["anthropic"]["fields"]``)."""


def _tagged(*models: type, key: str = "type") -> Any:
    """A union picked by ``key``, tagged by class name: a literal tag such as ``text`` or
    ``thinking`` is also a field name, which would blur the field paths of errors."""
    tags = {value: m.__name__ for m in models for value in get_args(get_type_hints(m)[key])}

    def pick(value: Any) -> str | None:
        found = value.get(key) if isinstance(value, dict) else None
        return tags.get(found) if isinstance(found, str) else None

    return Annotated[
        Union[tuple(Annotated[m, Tag(m.__name__)] for m in models)],  # type: ignore[misc]
        Discriminator(pick, custom_error_type=f"{NAME}_{key}",
                      custom_error_message=f"{key} is missing or not one of {', '.join(map(repr, tags))}"),
    ]


# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (a reader walking models spent as long again on their attributes and their unknown keys).


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_OPEN)
class Base64Source(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


@with_config(_OPEN)
class TextSource(TypedDict):
    type: Literal["text"]
    media_type: str
    data: str


@with_config(_OPEN)
class URLSource(TypedDict):
    type: Literal["url"]
    url: str


@with_config(_OPEN)
class FileSource(TypedDict):
    type: Literal["file"]
    file_id: str


@with_config(_OPEN)
class ContentSource(TypedDict):
    type: Literal["content"]
    content: str | list[dict[str, Any]]


ImageSource = _tagged(Base64Source, URLSource, FileSource)
DocumentSource = _tagged(Base64Source, URLSource, FileSource, TextSource, ContentSource)


@with_config(_OPEN)
class ImagePart(TypedDict):
    type: Literal["image"]
    source: ImageSource  # type: ignore[valid-type]


@with_config(_OPEN)
class DocumentPart(TypedDict):
    type: Literal["document"]
    source: DocumentSource  # type: ignore[valid-type]
    title: NotRequired[str | None]


@with_config(_OPEN)
class ThinkingPart(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


@with_config(_OPEN)
class RedactedThinkingPart(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


@with_config(_OPEN)
class ToolUsePart(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


_PASSTHROUGH = (
    "search_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "container_upload", "tool_reference", "browser_state",
)


@with_config(_OPEN)
class OtherPart(TypedDict):
    """A block of the SDK's union that has no canonical counterpart; kept as it is."""

    type: Literal[_PASSTHROUGH]  # type: ignore[valid-type]


ResultPart = _tagged(TextPart, ImagePart, DocumentPart, OtherPart)


@with_config(_OPEN)
class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[str | list[ResultPart]]  # type: ignore[valid-type]  # optional, not nullable
    is_error: NotRequired[bool]


Part = _tagged(
    TextPart, ImagePart, DocumentPart, ThinkingPart, RedactedThinkingPart, ToolUsePart, ToolResultPart, OtherPart
)


@with_config(_OPEN)
class ChatMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str | list[Part]  # type: ignore[valid-type]


@with_config(_OPEN)
class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextPart]


@with_config(_OPEN)
class Request(TypedDict):
    """What surrounds the messages: ``system`` and any other request keys (kept)."""

    system: NotRequired[str | list[TextPart]]


MESSAGES = TypeAdapter(list[_tagged(ChatMessage, SystemMessage, key="role")])  # type: ignore[misc]
REQUEST = TypeAdapter(Request)

_KEYS = {
    "text": frozenset(TextPart.__annotations__), "image": frozenset(ImagePart.__annotations__),
    "document": frozenset(DocumentPart.__annotations__), "thinking": frozenset(ThinkingPart.__annotations__),
    "redacted_thinking": frozenset(RedactedThinkingPart.__annotations__),
    "tool_use": frozenset(ToolUsePart.__annotations__),
    "tool_result": frozenset(ToolResultPart.__annotations__),
}
"""Each part type's declared keys; a part's others are its unknown ones."""
_MESSAGE_KEYS = frozenset(ChatMessage.__annotations__)
_SOURCE_KEYS = {"base64": frozenset(Base64Source.__annotations__),
                "text": frozenset(TextSource.__annotations__),
                "url": frozenset(URLSource.__annotations__), "file": frozenset(FileSource.__annotations__)}


def _extras(value: dict[str, Any], keys: frozenset[str], **shape: Any) -> dict[str, Any]:
    """The ``extras["anthropic"]`` entry: unknown keys plus shape notes, empty parts left out."""
    kept = {k: v for k, v in shape.items() if v is not None and v is not False} if shape else {}
    if (fields := unknown_keys(value, keys)) is not None:
        kept = {"fields": fields, **kept}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


def _source_in(source: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical media fields of an image or document source, and shape notes."""
    kind = source["type"]
    if kind == "content":  # blocks a canonical file cannot hold
        return {}, {"source": source}
    inner = unknown_keys(source, _SOURCE_KEYS[kind])
    if kind == "text":
        media = {"data": source["data"].encode(), "media_type": source["media_type"]}
        return media, {"inner": inner, "source": "text"}
    if kind == "base64":
        data = b64decode_exact(source["data"])  # else the string is kept as given
        raw = None if data is not None else source["data"]
        return {"data": data, "media_type": source["media_type"]}, {"inner": inner, "raw": raw}
    if kind == "url":
        return {"url": source["url"]}, {"inner": inner}
    return {"file_id": source["file_id"]}, {"inner": inner}


def _text_in(part: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "text", "text": part["text"], "extras": _extras(part, _KEYS["text"])}


def _image_in(part: dict[str, Any]) -> dict[str, Any]:
    media, notes = _source_in(part["source"])
    return {"kind": "image", **media, "extras": _extras(part, _KEYS["image"], **notes)}


def _document_in(part: dict[str, Any]) -> dict[str, Any]:
    media, notes = _source_in(part["source"])
    return {"kind": "file", **media, "filename": part.get("title"),
            "extras": _extras(part, _KEYS["document"], **notes)}


def _thinking_in(part: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "reasoning", "text": part["thinking"], "signature": part["signature"],
            "extras": _extras(part, _KEYS["thinking"])}


def _redacted_in(part: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "reasoning", "redacted": True, "data": part["data"],
            "extras": _extras(part, _KEYS["redacted_thinking"])}


def _tool_use_in(part: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "tool_call", "call_id": part["id"], "name": part["name"], "arguments": part["input"],
            "extras": _extras(part, _KEYS["tool_use"])}


_PART_IN = {"text": _text_in, "image": _image_in, "document": _document_in, "thinking": _thinking_in,
            "redacted_thinking": _redacted_in, "tool_use": _tool_use_in}
"""A part's canonical block, as fields (validated with the messages, :func:`._common.made`), by its type;
the passthrough types (``OtherPart``) are data blocks."""


def _part_in(part: dict[str, Any]) -> dict[str, Any]:
    if (read := _PART_IN.get(part["type"])) is not None:
        return read(part)
    return {"kind": "data", "data": part, "extras": {NAME: {"block": True}}}


class _Reader:
    """Converts one batch; remembers tool names by call id and the previous role."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.previous: str | None = None

    def block(self, part: dict[str, Any]) -> dict[str, Any]:
        if part["type"] != "tool_result":
            block = _part_in(part)
            if block["kind"] == "tool_call":
                self.names[block["call_id"]] = block["name"]
            return block
        content, is_error, call_id = part.get("content"), part.get("is_error"), part["tool_use_id"]
        return {
            "kind": "tool_result", "call_id": call_id, "name": self.names.get(call_id),
            "is_error": bool(is_error),
            "output": [_part_in(p) for p in content] if isinstance(content, list) else content or "",
            "extras": _extras(part, _KEYS["tool_result"], content="empty" if content == "" else None,
                              no_error=is_error is False),
        }

    def message(self, m: dict[str, Any]) -> list[dict[str, Any]]:
        """The canonical messages of one Anthropic message, as fields: a user message's tool results
        go into tool messages of their own (the parts after the first marked ``joined``)."""
        role, content = m["role"], m["content"]
        separate, self.previous = role == self.previous, role
        listed = content.__class__ is list
        head = _extras(m, _MESSAGE_KEYS, content="list" if listed else None, separate=separate,
                       inline=role == "system")
        blocks = [self.block(p) for p in content] if listed else [{"kind": "text", "text": content}]
        if role != "user":
            return [{"role": role, "content": blocks, "source_format": NAME, "extras": head}]
        out: list[dict[str, Any]] = []
        for results, run in groupby(blocks, key=_is_result):
            out.append({"role": "tool" if results else "user", "source_role": "user" if results else None,
                        "content": list(run), "source_format": NAME,
                        "extras": {NAME: {"joined": True}} if out else head})
        return out or [{"role": "user", "source_format": NAME, "extras": head}]


def _is_result(block: dict[str, Any]) -> bool:
    return block["kind"] == "tool_result"


def to_canonical(data: Any) -> list[Message]:
    """Validate an Anthropic request (``{"system", "messages", ...}``) or a bare list of
    messages and convert it to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each message of a text
    (``{"role", "content"}``, a string), for a writer that takes them (``formats.convert``): read
    from the item itself, whose plain types are its validation. A property test holds it to
    :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


def _plain_text(m: Any) -> Plain | None:
    if m.__class__ is dict and len(m) == 2 and (text := m.get("content")).__class__ is str \
            and (role := m.get("role")) in ("user", "assistant"):
        return Plain(role, text, NAME)
    return None


def _read(data: Any, lean: bool) -> list[Writable]:
    """The messages, those not plain built as fields and validated in one call (``made``)."""
    messages = message_list(data, NAME)
    request = None
    if isinstance(data, dict):
        request = validate(REQUEST, {k: v for k, v in data.items() if k != "messages"}, NAME)
    plain = [_plain_text(m) for m in messages] if lean else [None] * len(messages)
    parsed = iter(validate_others(MESSAGES, messages, plain, NAME))
    out: list[Any] = []
    if request is not None and "system" in request:
        system = request["system"]
        blocks = [{"kind": "text", "text": system}] if isinstance(system, str) \
            else [_part_in(p) for p in system]
        out.append({"role": "system", "content": blocks, "source_format": NAME,
                    "extras": {} if isinstance(system, str) else {NAME: {"content": "list"}}})
    reader = _Reader()
    for p in plain:
        if p is None:
            out += reader.message(next(parsed))
        elif p.role == reader.previous:  # a second message of a role in a row: noted, not plain
            out.append({"role": p.role, "content": [{"kind": "text", "text": p.text}], "source_format": NAME,
                        "extras": {NAME: {"separate": True}}})
        else:
            reader.previous = p.role
            out.append(p)
    others = None if request is None else {k: v for k, v in request.items() if k != "system"}
    if out and (request is None or others):
        note_first(out, NAME, {"form": "list"} if request is None else {"request": others})
    return made(out)


_ROLES = frozenset({"user", "assistant", "system"})
_TYPES = frozenset({"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result",
                    *_PASSTHROUGH})


def looks_like(data: Any) -> bool:
    """Messages with only ``role`` and ``content``, Anthropic roles and block types, and
    something only Anthropic has: a top-level ``system``, a non-text block (``image`` with
    a ``source``, ``tool_use``, ``thinking``, ...) or a text block's ``cache_control``."""
    messages, signal = (data.get("messages"), "system" in data) if isinstance(data, dict) else (data, False)
    if not isinstance(messages, list):
        return False
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in _ROLES or m.keys() != {"role", "content"}:
            return False
        content = m["content"]
        if not isinstance(content, (str, list)):
            return False
        for b in content if isinstance(content, list) else ():
            if not isinstance(b, dict) or b.get("type") not in _TYPES:
                return False
            signal = signal or b["type"] != "text" or "cache_control" in b or "citations" in b
    return signal


from ._anthropic_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
