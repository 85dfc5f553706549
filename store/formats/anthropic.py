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
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter

from ..lean import Plain, Writable, canonical
from ..model import (
    Block, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock,
    ToolResultBlock,
)
from ._common import b64decode_exact, message_list, unknown_fields, validate, validate_others

NAME = "anthropic"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


def _tagged(*models: type[BaseModel], key: str = "type") -> Any:
    """A union picked by ``key``, tagged by class name: a literal tag such as ``text`` or
    ``thinking`` is also a field name, which would blur the field paths of errors."""
    tags = {value: m.__name__ for m in models for value in get_args(m.model_fields[key].annotation)}

    def pick(value: Any) -> str | None:
        found = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
        return tags.get(found) if isinstance(found, str) else None

    return Annotated[
        Union[tuple(Annotated[m, Tag(m.__name__)] for m in models)],  # type: ignore[misc]
        Discriminator(pick, custom_error_type=f"{NAME}_{key}",
                      custom_error_message=f"{key} is missing or not one of {', '.join(map(repr, tags))}"),
    ]


class TextPart(_Open):
    type: Literal["text"]
    text: str


class Base64Source(_Open):
    type: Literal["base64"]
    media_type: str
    data: str


class TextSource(Base64Source):
    type: Literal["text"]  # type: ignore[assignment]


class URLSource(_Open):
    type: Literal["url"]
    url: str


class FileSource(_Open):
    type: Literal["file"]
    file_id: str


class ContentSource(_Open):
    type: Literal["content"]
    content: str | list[dict[str, Any]]


ImageSource = _tagged(Base64Source, URLSource, FileSource)
DocumentSource = _tagged(Base64Source, URLSource, FileSource, TextSource, ContentSource)


class ImagePart(_Open):
    type: Literal["image"]
    source: ImageSource  # type: ignore[valid-type]


class DocumentPart(_Open):
    type: Literal["document"]
    source: DocumentSource  # type: ignore[valid-type]
    title: str | None = None


class ThinkingPart(_Open):
    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingPart(_Open):
    type: Literal["redacted_thinking"]
    data: str


class ToolUsePart(_Open):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


_PASSTHROUGH = (
    "search_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "container_upload", "tool_reference", "browser_state",
)


class OtherPart(_Open):
    """A block of the SDK's union that has no canonical counterpart; kept as it is."""

    type: Literal[_PASSTHROUGH]  # type: ignore[valid-type]


ResultPart = _tagged(TextPart, ImagePart, DocumentPart, OtherPart)


class ToolResultPart(_Open):
    type: Literal["tool_result"]
    tool_use_id: str
    # Optional but not nullable in the SDK: defaults are not validated, so an explicit null is refused.
    content: str | list[ResultPart] = None  # type: ignore[valid-type, assignment]
    is_error: bool = None  # type: ignore[assignment]


Part = _tagged(
    TextPart, ImagePart, DocumentPart, ThinkingPart, RedactedThinkingPart, ToolUsePart, ToolResultPart, OtherPart
)


class ChatMessage(_Open):
    role: Literal["user", "assistant"]
    content: str | list[Part]  # type: ignore[valid-type]


class SystemMessage(_Open):
    role: Literal["system"]
    content: str | list[TextPart]


class Request(_Open):
    """What surrounds the messages: ``system`` and any other request keys (kept)."""

    system: str | list[TextPart] = None  # type: ignore[assignment]


MESSAGES = TypeAdapter(list[_tagged(ChatMessage, SystemMessage, key="role")])  # type: ignore[misc]
REQUEST = TypeAdapter(Request)


def _unknown(model: BaseModel) -> dict[str, Any] | None:
    """Keys the canonical model has no field for: unknown ones, and known ones given as null."""
    return unknown_fields(model)


def _extras(model: BaseModel, **shape: Any) -> dict[str, Any]:
    """The ``extras["anthropic"]`` entry: unknown keys plus shape notes, empty parts left out."""
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    if (fields := _unknown(model)) is not None:
        kept = {"fields": fields, **kept}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


def _source_in(source: BaseModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical media fields of an image or document source, and shape notes."""
    inner = _unknown(source)
    match source:
        case TextSource():
            media = {"data": source.data.encode(), "media_type": source.media_type}
            return media, {"inner": inner, "source": "text"}
        case Base64Source():
            data = b64decode_exact(source.data)  # else the string is kept as given
            raw = None if data is not None else source.data
            return {"data": data, "media_type": source.media_type}, {"inner": inner, "raw": raw}
        case URLSource():
            return {"url": source.url}, {"inner": inner}
        case FileSource():
            return {"file_id": source.file_id}, {"inner": inner}
    return {}, {"source": source.model_dump()}  # a content source: blocks a canonical file cannot hold


def _part_in(part: BaseModel) -> Block:
    match part:
        case TextPart():
            return TextBlock(text=part.text, extras=_extras(part))
        case ImagePart():
            media, notes = _source_in(part.source)
            return ImageBlock(**media, extras=_extras(part, **notes))
        case DocumentPart():
            media, notes = _source_in(part.source)
            return FileBlock(**media, filename=part.title, extras=_extras(part, **notes))
        case ThinkingPart():
            return ReasoningBlock(text=part.thinking, signature=part.signature, extras=_extras(part))
        case RedactedThinkingPart():
            return ReasoningBlock(redacted=True, data=part.data, extras=_extras(part))
        case ToolUsePart():
            return ToolCallBlock(call_id=part.id, name=part.name, arguments=part.input, extras=_extras(part))
    return DataBlock(data=part.model_dump(), extras={NAME: {"block": True}})


class _Reader:
    """Converts one batch; remembers tool names by call id and the previous role."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.previous: str | None = None

    def block(self, part: BaseModel) -> Block:
        if not isinstance(part, ToolResultPart):
            block = _part_in(part)
            if isinstance(block, ToolCallBlock):
                self.names[block.call_id] = block.name
            return block
        content = part.content
        return ToolResultBlock(
            call_id=part.tool_use_id, name=self.names.get(part.tool_use_id), is_error=bool(part.is_error),
            output=[_part_in(p) for p in content] if isinstance(content, list) else content or "",
            extras=_extras(part, content="empty" if content == "" else None, no_error=part.is_error is False),
        )

    def message(self, m: ChatMessage | SystemMessage) -> list[Message]:
        """The canonical messages of one Anthropic message: a user message's tool results
        go into tool messages of their own (the parts after the first marked ``joined``)."""
        separate, self.previous = m.role == self.previous, m.role
        form = "list" if isinstance(m.content, list) else None
        head = _extras(m, content=form, separate=separate, inline=m.role == "system")
        content = m.content
        blocks = [TextBlock(text=content)] if isinstance(content, str) else [self.block(p) for p in content]
        if m.role != "user":
            return [Message(role=m.role, content=blocks, source_format=NAME, extras=head)]
        out: list[Message] = []
        for results, run in groupby(blocks, key=lambda b: isinstance(b, ToolResultBlock)):
            out.append(Message(
                role="tool" if results else "user", source_role="user" if results else None,
                content=list(run), source_format=NAME, extras={NAME: {"joined": True}} if out else head,
            ))
        return out or [Message(role="user", source_format=NAME, extras=head)]


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
    messages = message_list(data, NAME)
    request = None
    if isinstance(data, dict):
        request = validate(REQUEST, {k: v for k, v in data.items() if k != "messages"}, NAME)
    plain = [_plain_text(m) for m in messages] if lean else [None] * len(messages)
    parsed = iter(validate_others(MESSAGES, messages, plain, NAME))
    out: list[Writable] = []
    if request is not None and "system" in request.model_fields_set:
        system = request.system
        blocks = [TextBlock(text=system)] if isinstance(system, str) else [_part_in(p) for p in system]
        out.append(Message(role="system", content=blocks, source_format=NAME,
                           extras={} if isinstance(system, str) else {NAME: {"content": "list"}}))
    reader = _Reader()
    for p in plain:
        if p is None:
            out.extend(reader.message(next(parsed)))
        elif p.role == reader.previous:  # a second message of a role in a row: noted, not plain
            out.append(Message(role=p.role, content=[TextBlock(text=p.text)], source_format=NAME,
                               extras={NAME: {"separate": True}}))
        else:
            reader.previous = p.role
            out.append(p)
    if out and (request is None or request.model_extra):
        wrapper = {"form": "list"} if request is None else {"request": request.model_extra}
        out[0] = canonical(out[:1])[0]
        out[0].extras.setdefault(NAME, {}).update(wrapper)  # type: ignore[union-attr]
    return out


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
