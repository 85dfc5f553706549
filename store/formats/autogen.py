"""AutoGen AgentChat messages and events (``autogen_agentchat.messages``), as ``dump()`` writes them.

Reads every chat message (``TextMessage``, ``MultiModalMessage``, ``StopMessage``,
``ToolCallSummaryMessage``, ``HandoffMessage``, ``StructuredMessage[...]``) and
event (``ToolCallRequestEvent``, ``ToolCallExecutionEvent``, ``MemoryQueryEvent``,
``UserInputRequestedEvent``, ``ModelClientStreamingChunkEvent``, ``ThoughtEvent``,
``SelectSpeakerEvent``, ``CodeGenerationEvent``, ``CodeExecutionEvent``), in the
0.7 shape (``id``, ``created_at``) and the older one without them.

AgentChat has no roles: ``source`` names the speaker. A message from ``"user"`` is
a user message, tool execution events are tool messages, the rest assistant
messages. What the canonical model brings that AgentChat cannot hold travels
JSON-encoded in ``metadata["convstore"]`` (metadata is ``dict[str, str]``), with a
text stand-in where a block has no AgentChat form (an image URL, a file, a refusal).
The writer is :mod:`._autogen_write`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, Discriminator, Field, StringConstraints, Tag, TypeAdapter

from .. import exactjson
from ..errors import SchemaError
from ..lean import Plain, Writable
from ..model import (
    BLOCK,
    Block,
    CodeBlock,
    CodeResultBlock,
    DataBlock,
    HandoffBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    Usage,
)
from . import autogen_core as core
from ._common import CARRY_KEY, dump_json, made, message_list, restore, validate_others
from .autogen_core import FunctionCall, FunctionExecutionResult, ImageData, OpenModel, unknown

NAME = "autogen"


class RequestUsage(OpenModel):
    prompt_tokens: int
    completion_tokens: int


class _Base(OpenModel):
    id: str | None = None
    source: str
    models_usage: RequestUsage | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None


class TextMessage(_Base):
    content: str
    type: Literal["TextMessage"]


class StopMessage(_Base):
    content: str
    type: Literal["StopMessage"]


class MultiModalMessage(_Base):
    content: list[str | ImageData]
    type: Literal["MultiModalMessage"]


class ToolCallSummaryMessage(_Base):
    content: str
    tool_calls: list[FunctionCall] = Field(default_factory=list)
    results: list[FunctionExecutionResult] = Field(default_factory=list)
    type: Literal["ToolCallSummaryMessage"]


class HandoffMessage(_Base):
    content: str
    target: str
    context: list[core.LLMMessage] = Field(default_factory=list)
    type: Literal["HandoffMessage"]


class StructuredMessage(_Base):
    content: dict[str, Any]
    format_string: str | None = None
    type: Annotated[str, StringConstraints(pattern=r"^StructuredMessage")]


class ToolCallRequestEvent(_Base):
    content: list[FunctionCall]
    type: Literal["ToolCallRequestEvent"]


class ToolCallExecutionEvent(_Base):
    content: list[FunctionExecutionResult]
    type: Literal["ToolCallExecutionEvent"]


class MemoryContent(OpenModel):
    content: str | dict[str, Any]
    mime_type: str
    metadata: dict[str, Any] | None = None


class MemoryQueryEvent(_Base):
    content: list[MemoryContent]
    type: Literal["MemoryQueryEvent"]


class UserInputRequestedEvent(_Base):
    request_id: str
    content: Literal[""] = ""
    type: Literal["UserInputRequestedEvent"]


class ModelClientStreamingChunkEvent(_Base):
    content: str
    full_message_id: str | None = None
    type: Literal["ModelClientStreamingChunkEvent"]


class ThoughtEvent(_Base):
    content: str
    type: Literal["ThoughtEvent"]


class SelectSpeakerEvent(_Base):
    content: list[str]
    type: Literal["SelectSpeakerEvent"]


class CodeBlockModel(OpenModel):
    code: str
    language: str


class CodeGenerationEvent(_Base):
    retry_attempt: int = 0
    content: str
    code_blocks: list[CodeBlockModel]
    type: Literal["CodeGenerationEvent"]


class CodeResultModel(OpenModel):
    exit_code: int
    output: str


class CodeExecutionEvent(_Base):
    retry_attempt: int = 0
    result: CodeResultModel
    type: Literal["CodeExecutionEvent"]


_CLASSES = (TextMessage, StopMessage, MultiModalMessage, ToolCallSummaryMessage, HandoffMessage,
            ToolCallRequestEvent, ToolCallExecutionEvent, MemoryQueryEvent, UserInputRequestedEvent,
            ModelClientStreamingChunkEvent, ThoughtEvent, SelectSpeakerEvent, CodeGenerationEvent,
            CodeExecutionEvent)
TYPES = frozenset(c.__name__ for c in _CLASSES)


class _Untyped(BaseModel):
    """Where a message of no known ``type`` lands, so the error names the ``type`` field."""

    type: Literal[(*sorted(TYPES), "StructuredMessage[...]")]  # type: ignore[valid-type]


def _tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return core.UNTYPED
    if kind.startswith("StructuredMessage"):
        return "StructuredMessage"
    return kind if kind in TYPES else core.UNTYPED


AgentChatMessage = Annotated[
    Union[(*(Annotated[c, Tag(c.__name__)] for c in (*_CLASSES, StructuredMessage)),
           Annotated[_Untyped, Tag(core.UNTYPED)])],
    Discriminator(_tag),
]
MESSAGES = TypeAdapter(list[AgentChatMessage])


def _time(value: datetime) -> str:
    """A timestamp as pydantic (hence ``dump()``) writes it: ISO 8601, UTC as ``Z``."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


_OPTIONAL = ("models_usage", "metadata")
_OPTIONAL_BY_TYPE = {
    ToolCallSummaryMessage: ("tool_calls", "results"), HandoffMessage: ("context",),
    StructuredMessage: ("format_string",), UserInputRequestedEvent: ("content",),
    ModelClientStreamingChunkEvent: ("full_message_id",), CodeGenerationEvent: ("retry_attempt",),
    CodeExecutionEvent: ("retry_attempt",),
}
_CHAT = frozenset({"TextMessage", "MultiModalMessage", "StopMessage", "ToolCallSummaryMessage",
                   "HandoffMessage"})
_OWN = "autogen"
"""Key of this format's own part of a ``metadata["convstore"]`` payload (role, block patches, ...)."""


# --- to canonical ----------------------------------------------------------------------------


def _note(notes: dict[str, Any]) -> dict[str, Any]:
    return {NAME: notes} if notes else {}


def _memory_in(item: MemoryContent) -> DataBlock:
    notes = unknown(item, ("metadata",))
    if "metadata" in item.model_fields_set:
        notes["metadata"] = item.metadata
    return DataBlock(data=item.content, media_type=item.mime_type, extras=_note(notes))


def _code_in(m: CodeGenerationEvent) -> list[Block]:
    code = [CodeBlock(code=b.code, language=b.language, extras=_note(unknown(b))) for b in m.code_blocks]
    return [TextBlock(text=m.content), *code]


def _handoff_in(m: HandoffMessage) -> list[Block]:
    context = [c.model_dump(mode="json", exclude_none=True) for c in core.messages_in(m.context)]
    return [TextBlock(text=m.content), HandoffBlock(target=m.target, context=context)]


_BLOCKS_IN: dict[type, Any] = {  # class -> its canonical blocks
    TextMessage: lambda m: [{"kind": "text", "text": m.content}],  # fields: validated with its message
    StopMessage: lambda m: [TextBlock(text=m.content)],
    ThoughtEvent: lambda m: [ReasoningBlock(text=m.content)],
    MultiModalMessage: lambda m: [TextBlock(text=p) if isinstance(p, str) else core.image_in(p, NAME)
                                  for p in m.content],
    ToolCallSummaryMessage: lambda m: [TextBlock(text=m.content)],
    HandoffMessage: _handoff_in,
    StructuredMessage: lambda m: [DataBlock(data=m.content)],
    ToolCallRequestEvent: lambda m: [core.call_in(c, NAME) for c in m.content],
    ToolCallExecutionEvent: lambda m: [core.result_in(r, NAME) for r in m.content],
    MemoryQueryEvent: lambda m: [_memory_in(item) for item in m.content],
    UserInputRequestedEvent: lambda m: [TextBlock(text=m.content)],
    ModelClientStreamingChunkEvent: lambda m: [TextBlock(text=m.content)],
    SelectSpeakerEvent: lambda m: [DataBlock(data=list(m.content))],
    CodeGenerationEvent: _code_in,
    CodeExecutionEvent: lambda m: [CodeResultBlock(output=m.result.output, exit_code=m.result.exit_code,
                                                   extras=_note(unknown(m.result)))],
}
_NOTES_IN: dict[type, Any] = {  # class -> what else it needs for an exact way back
    ToolCallSummaryMessage: lambda m: {"tool_calls": [c.model_dump() for c in m.tool_calls],
                                       "results": [r.model_dump() for r in m.results]},
    StructuredMessage: lambda m: {"format_string": m.format_string},
    UserInputRequestedEvent: lambda m: {"request_id": m.request_id},
    # always noted, so that other formats report a chunk as something they do not keep
    ModelClientStreamingChunkEvent: lambda m: {"full_message_id": m.full_message_id, "chunk": True},
    CodeGenerationEvent: lambda m: {"retry_attempt": m.retry_attempt},
    CodeExecutionEvent: lambda m: {"retry_attempt": m.retry_attempt},
}


def _role(kind: str, source: str) -> str:
    """AgentChat has no roles: chat messages of the source "user" are the user's, the rest the agents'."""
    if kind == "ToolCallExecutionEvent":
        return "tool"
    chat = kind in _CHAT or kind.startswith("StructuredMessage")
    return "user" if source == "user" and chat else "assistant"


def _payload(metadata: dict[str, str]) -> dict[str, Any] | None:
    raw = metadata.get(CARRY_KEY)
    if raw is None:
        return None
    try:
        payload = exactjson.loads(raw)  # written by dump_json: NaN and long integers as they are
    except orjson.JSONDecodeError:
        return None
    if isinstance(payload, dict):
        del metadata[CARRY_KEY]
        return payload
    return None


def _message_in(m: Any, raw: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Canonical message fields of one AgentChat message, and its convstore payload."""
    blocks = _BLOCKS_IN[type(m)](m)
    notes = {k: v for k, v in _NOTES_IN[type(m)](m).items() if v is not None} if type(m) in _NOTES_IN else {}
    notes.update(unknown(m, _OPTIONAL + _OPTIONAL_BY_TYPE.get(type(m), ())))
    if m.created_at is not None and _time(m.created_at) != raw.get("created_at"):
        notes["created_at"] = raw["created_at"]  # written another way than pydantic writes it
    usage = m.models_usage
    if usage is not None and usage.model_extra:
        notes["usage_fields"] = dict(usage.model_extra)
    metadata = dict(m.metadata)
    payload = _payload(metadata)
    role = _role(m.type, m.source)
    fields = {
        "role": role, "content": blocks, "name": m.source, "source_format": NAME, "source_type": m.type,
        "external_id": m.id, "created_at": m.created_at, "metadata": metadata, "extras": _note(notes),
        "usage": None if usage is None else Usage(input_tokens=usage.prompt_tokens,
                                                  output_tokens=usage.completion_tokens),
    }
    return fields, payload


def _apply(fields: dict[str, Any], payload: dict[str, Any] | None) -> Message | dict[str, Any]:
    """The canonical message, with what an earlier export carried in ``metadata["convstore"]``: its
    fields, where only this format's own notes were carried (validated with the others, in one call)."""
    if payload is None:
        return fields
    own = payload.get(_OWN) or {}
    if own.get("synth"):
        synth = set(own["synth"])
        fields["content"] = [b for i, b in enumerate(fields["content"]) if i not in synth]
    if "role" in own:
        fields["role"] = own["role"]
    if own.get("unnamed"):
        fields["name"] = None
    if "usage" in own:
        fields["usage"] = Usage.model_validate(own["usage"])
    if not own.get("patch") and not payload.keys() - {_OWN}:
        return fields
    message = Message(**fields)
    if payload.keys() - {_OWN}:
        message = restore(message, payload)
    if own.get("patch"):
        content = [_patched(b, own["patch"].get(str(i))) for i, b in enumerate(message.content)]
        message = message.model_copy(update={"content": content})
    return message


def _patched(block: Block, patch: dict[str, Any] | None) -> Block:
    if not patch:
        return block
    if "kind" in patch:  # the block had no AgentChat form: the patch is the whole block
        return BLOCK.validate_python(patch)
    extras = {**block.extras, **patch.get("extras", {})}
    return BLOCK.validate_python({**block.model_dump(), **patch, "extras": extras})


def to_canonical(data: Any) -> list[Message]:
    """Validate AgentChat messages (``dump()`` output) and convert them to canonical ones."""
    raw = message_list(data, NAME)
    return _read(raw, [None] * len(raw))  # type: ignore[return-value]


PART = dump_json({_OWN: {"part": True}})
"""The payload of an AgentChat message that continues the message before it (a canonical one split on export)."""
UNNAMED = dump_json({_OWN: {"unnamed": True}})
"""The payload of a message convstore wrote for an unnamed one (its ``source`` a stand-in), and nothing else."""


def _read(raw: list[Any], plain: list[Plain | None]) -> list[Writable]:
    """The messages of ``raw``, those read as plain ones (``plain``, see ``to_writable``) as they are."""
    parsed = iter(validate_others(MESSAGES, raw, plain, NAME))
    models = [next(parsed) if p is None else None for p in plain]
    problems = []
    for i, m in enumerate(models):
        if isinstance(m, MultiModalMessage):
            problems += core.image_problems(m.content, i, "content")
        elif isinstance(m, HandoffMessage):
            problems += core.check_images(m.context, i, "context")
    if problems:
        raise SchemaError(NAME, problems)
    merged: list[Any] = []  # (fields, payload) of a message, or a plain one
    for p, m, r in zip(plain, models, raw):
        if p is None:
            fields, payload = _message_in(m, r)
            part = payload is not None and (payload.get(_OWN) or {}).get("part")
        else:
            part = r["metadata"][CARRY_KEY] == PART
        if not (part and merged):
            merged.append((fields, payload) if p is None else p)
            continue
        last = merged[-1]  # the message this part was split from on export
        if p is not None and last.__class__ is Plain and last.role == "assistant" and not last.content:
            merged[-1] = Plain("assistant", last.text, NAME, p.content, extras=last.extras,
                               source_type=last.source_type)
            continue
        if last.__class__ is Plain:
            last = merged[-1] = (last.fields(), None)
        last[0]["content"] += fields["content"] if p is None else p.fields()["content"]
    return made([m if m.__class__ is Plain else _apply(*m) for m in merged])


def looks_like(data: Any) -> bool:
    """A non-empty list of objects whose ``type`` is an AgentChat message or event class name."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(isinstance(m, dict) and _tag(m) != core.UNTYPED for m in msgs)


from ._autogen_lean import to_writable  # noqa: E402  (it reads with the reader above)
from ._autogen_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
