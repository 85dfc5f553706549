"""The canonical conversation model every format converts to and from.

A :class:`Message` is a role plus an ordered list of typed blocks (a tagged
union on ``kind``). Every block and every message has an ``extras`` bag: what a
source carries that the canonical fields do not, kept under the source format's
name (``extras["openai"]``), so a same-format round trip gives back the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Extras: TypeAlias = dict[str, dict[str, Any]]
"""An ``extras`` bag: each format's notes (an object) under its name."""
Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ToolStatus: TypeAlias = Literal["pending", "answered", "error"]


class _Model(BaseModel):
    # NaN and the infinities stay floats in model_dump(mode="json") (pydantic's default makes them None)
    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64",
                              ser_json_inf_nan="constants")


class Usage(_Model):
    """Token counts of one model call."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    extras: Extras = Field(default_factory=dict)


class _Block(_Model):
    extras: Extras = Field(default_factory=dict)


class TextBlock(_Block):
    kind: Literal["text"] = "text"
    text: str


class RefusalBlock(_Block):
    """The model declined to answer (OpenAI ``refusal``, Docent ``ContentText.refusal``)."""

    kind: Literal["refusal"] = "refusal"
    text: str


class ReasoningBlock(_Block):
    """Model reasoning. ``redacted`` reasoning keeps its opaque ``data`` only."""

    kind: Literal["reasoning"] = "reasoning"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    data: str | None = None


class _Media(_Block):
    """A media reference: a URL, inline bytes (decoded from base64 or a data URI), or a file id."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    filename: str | None = None
    file_id: str | None = None


class ImageBlock(_Media):
    kind: Literal["image"] = "image"


class AudioBlock(_Media):
    kind: Literal["audio"] = "audio"


class VideoBlock(_Media):
    kind: Literal["video"] = "video"


class FileBlock(_Media):
    kind: Literal["file"] = "file"


class ToolCallBlock(_Block):
    """A request to run a tool.

    ``arguments`` is the parsed JSON; ``arguments_raw`` is the string the source
    had, when it had one (kept byte-exact, also when it does not parse, in which
    case ``parse_error`` says why). ``call_id_synthesized`` marks ids convstore
    made up for sources without call ids; they are left out again on export.
    """

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: Any = None
    arguments_raw: str | None = None
    parse_error: str | None = None
    call_id_synthesized: bool = False


class ToolResultBlock(_Block):
    """The outcome of a tool call: text, or blocks (text, images, ...)."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str | None = None
    output: str | list[Block] = ""
    is_error: bool = False
    error: dict[str, Any] | None = None


class ErrorBlock(_Block):
    kind: Literal["error"] = "error"
    message: str
    code: str | None = None
    details: Any = None


class UsageBlock(_Block):
    """Token usage carried as content (agent-framework puts it among the contents)."""

    kind: Literal["usage"] = "usage"
    usage: Usage


class DataBlock(_Block):
    """Structured data (a JSON value), e.g. a structured output."""

    kind: Literal["data"] = "data"
    data: Any = None
    media_type: str | None = None


class CodeBlock(_Block):
    kind: Literal["code"] = "code"
    code: str
    language: str | None = None


class CodeResultBlock(_Block):
    kind: Literal["code_result"] = "code_result"
    output: str
    exit_code: int | None = None


class HandoffBlock(_Block):
    """Control passes to another agent, with the messages it should see."""

    kind: Literal["handoff"] = "handoff"
    target: str
    context: list[Any] = Field(default_factory=list)


Block = Annotated[
    Union[
        TextBlock,
        RefusalBlock,
        ReasoningBlock,
        ImageBlock,
        AudioBlock,
        VideoBlock,
        FileBlock,
        ToolCallBlock,
        ToolResultBlock,
        ErrorBlock,
        UsageBlock,
        DataBlock,
        CodeBlock,
        CodeResultBlock,
        HandoffBlock,
    ],
    Field(discriminator="kind"),
]
MediaBlock: TypeAlias = ImageBlock | AudioBlock | VideoBlock | FileBlock
MEDIA_KINDS = frozenset({"image", "audio", "video", "file"})


class Message(_Model):
    """One message of a conversation, in no particular framework's schema."""

    role: Role
    content: list[Block] = Field(default_factory=list)
    source_role: str | None = None
    """The source's own role name where it differs from ``role`` (``developer``, ``function``)."""
    name: str | None = None
    """The author: agent, user or speaker name."""
    source_format: str | None = None
    source_type: str | None = None
    """The source's message type, e.g. ``ToolCallRequestEvent``."""
    external_id: str | None = None
    created_at: datetime | None = None
    model: str | None = None
    usage: Usage | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    extras: Extras = Field(default_factory=dict)


class Conversation(_Model):
    id: str | None = None
    namespace: str = "default"
    title: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    messages: list[Message] = Field(default_factory=list)


class ToolCallRecord(_Model):
    """A tool call found by id: the call, its result (if any) and where both are."""

    call_id: str
    name: str
    arguments: Any = None
    arguments_raw: str | None = None
    status: ToolStatus
    result: str | list[Block] | None = None
    is_error: bool = False
    conversation_id: str
    call_position: int
    """Index of the message holding the call, within its conversation."""
    result_position: int | None = None
    call_created_at: datetime | None = None
    result_created_at: datetime | None = None


class TokenCounts(BaseModel):
    """Token counts summed over usage records (see :mod:`store.usage`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    records: int = 0
    """How many usage records were summed (a message's usage, or a usage block)."""

    def add(self, usage: Mapping[str, Any]) -> None:
        given = [usage.get(k) or 0 for k in ("input_tokens", "output_tokens")]
        self.input_tokens += given[0]
        self.output_tokens += given[1]
        total = usage.get("total_tokens")
        self.total_tokens += sum(given) if total is None else total
        self.records += 1


class ModelUsage(TokenCounts):
    model: str | None
    """The model named by the messages (None: messages that name none)."""


class ConversationUsage(TokenCounts):
    """The conversation's totals, and the same counts per model (most tokens first)."""

    conversation_id: str
    by_model: list[ModelUsage] = []


T = TypeVar("T")


class Page(list[T]):
    """One page of results: a plain list (so code that takes a list keeps working), and
    ``next_cursor``, the opaque cursor that asks for the next page (None when this one
    is the last). Pass it back with the same filters: ``find_tool_calls(cursor=...)``."""

    next_cursor: str | None

    def __init__(self, items: Iterable[T] = (), next_cursor: str | None = None) -> None:
        super().__init__(items)
        self.next_cursor = next_cursor

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


ToolResultBlock.model_rebuild()
MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
BLOCK: TypeAdapter[Block] = TypeAdapter(Block)
