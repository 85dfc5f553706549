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
from pydantic import Discriminator, StringConstraints, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from .. import exactjson
from ..errors import SchemaError
from ..lean import Plain, Writable
from ..model import BLOCK, Block, Message, Usage
from . import autogen_core as core
from ._common import CARRY_KEY, dump_json, made, message_list, restore, validate_others
from .autogen_core import _OPEN, FunctionCall, FunctionExecutionResult, ImageData, keys, unknown

NAME = "autogen"


# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a message (a reader walking models spent as long again on their attributes and their unknown keys).
# A TypedDict takes no config from its bases: each one allows unknown keys itself.


@with_config(_OPEN)
class RequestUsage(TypedDict):
    prompt_tokens: int
    completion_tokens: int


@with_config(_OPEN)
class _Base(TypedDict):
    id: NotRequired[str | None]
    source: str
    models_usage: NotRequired[RequestUsage | None]
    metadata: NotRequired[dict[str, str]]
    created_at: NotRequired[datetime | None]


@with_config(_OPEN)
class TextMessage(_Base):
    content: str
    type: Literal["TextMessage"]


@with_config(_OPEN)
class StopMessage(_Base):
    content: str
    type: Literal["StopMessage"]


@with_config(_OPEN)
class MultiModalMessage(_Base):
    content: list[str | ImageData]
    type: Literal["MultiModalMessage"]


@with_config(_OPEN)
class ToolCallSummaryMessage(_Base):
    content: str
    tool_calls: NotRequired[list[FunctionCall]]
    results: NotRequired[list[FunctionExecutionResult]]
    type: Literal["ToolCallSummaryMessage"]


@with_config(_OPEN)
class HandoffMessage(_Base):
    content: str
    target: str
    context: NotRequired[list[core.LLMMessage]]
    type: Literal["HandoffMessage"]


@with_config(_OPEN)
class StructuredMessage(_Base):
    content: dict[str, Any]
    format_string: NotRequired[str | None]
    type: Annotated[str, StringConstraints(pattern=r"^StructuredMessage")]


@with_config(_OPEN)
class ToolCallRequestEvent(_Base):
    content: list[FunctionCall]
    type: Literal["ToolCallRequestEvent"]


@with_config(_OPEN)
class ToolCallExecutionEvent(_Base):
    content: list[FunctionExecutionResult]
    type: Literal["ToolCallExecutionEvent"]


@with_config(_OPEN)
class MemoryContent(TypedDict):
    content: str | dict[str, Any]
    mime_type: str
    metadata: NotRequired[dict[str, Any] | None]


@with_config(_OPEN)
class MemoryQueryEvent(_Base):
    content: list[MemoryContent]
    type: Literal["MemoryQueryEvent"]


@with_config(_OPEN)
class UserInputRequestedEvent(_Base):
    request_id: str
    content: NotRequired[Literal[""]]
    type: Literal["UserInputRequestedEvent"]


@with_config(_OPEN)
class ModelClientStreamingChunkEvent(_Base):
    content: str
    full_message_id: NotRequired[str | None]
    type: Literal["ModelClientStreamingChunkEvent"]


@with_config(_OPEN)
class ThoughtEvent(_Base):
    content: str
    type: Literal["ThoughtEvent"]


@with_config(_OPEN)
class SelectSpeakerEvent(_Base):
    content: list[str]
    type: Literal["SelectSpeakerEvent"]


@with_config(_OPEN)
class CodeBlockModel(TypedDict):
    code: str
    language: str


@with_config(_OPEN)
class CodeGenerationEvent(_Base):
    retry_attempt: NotRequired[int]
    content: str
    code_blocks: list[CodeBlockModel]
    type: Literal["CodeGenerationEvent"]


@with_config(_OPEN)
class CodeResultModel(TypedDict):
    exit_code: int
    output: str


@with_config(_OPEN)
class CodeExecutionEvent(_Base):
    retry_attempt: NotRequired[int]
    result: CodeResultModel
    type: Literal["CodeExecutionEvent"]


_CLASSES = (TextMessage, StopMessage, MultiModalMessage, ToolCallSummaryMessage, HandoffMessage,
            ToolCallRequestEvent, ToolCallExecutionEvent, MemoryQueryEvent, UserInputRequestedEvent,
            ModelClientStreamingChunkEvent, ThoughtEvent, SelectSpeakerEvent, CodeGenerationEvent,
            CodeExecutionEvent)
TYPES = frozenset(c.__name__ for c in _CLASSES)


class _Untyped(TypedDict):
    """Where a message of no known ``type`` lands, so the error names the ``type`` field."""

    type: Literal[(*sorted(TYPES), "StructuredMessage[...]")]  # type: ignore[valid-type]


def _tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else None
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
    "ToolCallSummaryMessage": ("tool_calls", "results"), "HandoffMessage": ("context",),
    "StructuredMessage": ("format_string",), "UserInputRequestedEvent": ("content",),
    "ModelClientStreamingChunkEvent": ("full_message_id",), "CodeGenerationEvent": ("retry_attempt",),
    "CodeExecutionEvent": ("retry_attempt",),
}
_KEYS = {c.__name__: keys(c) for c in (*_CLASSES, StructuredMessage)}  # by kind (see _kind)
_USAGE, _MEMORY = keys(RequestUsage), keys(MemoryContent)
_CODE, _RESULT = keys(CodeBlockModel), keys(CodeResultModel)
_CHAT = frozenset({"TextMessage", "MultiModalMessage", "StopMessage", "ToolCallSummaryMessage",
                   "HandoffMessage"})
_OWN = "autogen"
"""Key of this format's own part of a ``metadata["convstore"]`` payload (role, block patches, ...)."""


# --- to canonical ----------------------------------------------------------------------------


def _note(notes: dict[str, Any]) -> dict[str, Any]:
    return {NAME: notes} if notes else {}


def _kind(m: dict[str, Any]) -> str:
    """The class of a validated message: its ``type``, one for every ``StructuredMessage[...]``."""
    kind = m["type"]
    return "StructuredMessage" if kind.startswith("StructuredMessage") else kind


def _memory_in(item: MemoryContent) -> dict[str, Any]:
    notes = unknown(item, _MEMORY, ("metadata",))
    if "metadata" in item:
        notes["metadata"] = item["metadata"]
    return {"kind": "data", "data": item["content"], "media_type": item["mime_type"], "extras": _note(notes)}


def _code_in(m: CodeGenerationEvent) -> list[Any]:
    code = [{"kind": "code", "code": b["code"], "language": b["language"], "extras": _note(unknown(b, _CODE))}
            for b in m["code_blocks"]]
    return [{"kind": "text", "text": m["content"]}, *code]


def _handoff_in(m: HandoffMessage) -> list[Any]:
    context = [c.model_dump(mode="json", exclude_none=True) for c in core.messages_in(m.get("context", []))]
    return [{"kind": "text", "text": m["content"]},
            {"kind": "handoff", "target": m["target"], "context": context}]


def _text(m: dict[str, Any]) -> list[Any]:
    return [{"kind": "text", "text": m["content"]}]


def _result_in(m: CodeExecutionEvent) -> list[Any]:
    result = m["result"]
    return [{"kind": "code_result", "output": result["output"], "exit_code": result["exit_code"],
             "extras": _note(unknown(result, _RESULT))}]


# Blocks are canonical fields, validated with their message (made).
_BLOCKS_IN: dict[str, Any] = {  # kind -> its canonical blocks
    "TextMessage": _text,
    "StopMessage": _text,
    "ThoughtEvent": lambda m: [{"kind": "reasoning", "text": m["content"]}],
    "MultiModalMessage": lambda m: [{"kind": "text", "text": p} if p.__class__ is str
                                    else core.image_in(p, NAME) for p in m["content"]],
    "ToolCallSummaryMessage": _text,
    "HandoffMessage": _handoff_in,
    "StructuredMessage": lambda m: [{"kind": "data", "data": m["content"]}],
    "ToolCallRequestEvent": lambda m: [core.call_in(c, NAME) for c in m["content"]],
    "ToolCallExecutionEvent": lambda m: [core.result_in(r, NAME) for r in m["content"]],
    "MemoryQueryEvent": lambda m: [_memory_in(item) for item in m["content"]],
    "UserInputRequestedEvent": lambda m: [{"kind": "text", "text": m.get("content", "")}],
    "ModelClientStreamingChunkEvent": _text,
    "SelectSpeakerEvent": lambda m: [{"kind": "data", "data": list(m["content"])}],
    "CodeGenerationEvent": _code_in,
    "CodeExecutionEvent": _result_in,
}
_NOTES_IN: dict[str, Any] = {  # kind -> what else it needs for an exact way back
    "ToolCallSummaryMessage": lambda m: {"tool_calls": [core.call_dump(c) for c in m.get("tool_calls", ())],
                                         "results": [core.result_dump(r) for r in m.get("results", ())]},
    "StructuredMessage": lambda m: {"format_string": m.get("format_string")},
    "UserInputRequestedEvent": lambda m: {"request_id": m["request_id"]},
    # always noted, so that other formats report a chunk as something they do not keep
    "ModelClientStreamingChunkEvent": lambda m: {"full_message_id": m.get("full_message_id"), "chunk": True},
    "CodeGenerationEvent": lambda m: {"retry_attempt": m.get("retry_attempt", 0)},
    "CodeExecutionEvent": lambda m: {"retry_attempt": m.get("retry_attempt", 0)},
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
    kind = _kind(m)
    blocks = _BLOCKS_IN[kind](m)
    notes = {k: v for k, v in _NOTES_IN[kind](m).items() if v is not None} if kind in _NOTES_IN else {}
    notes.update(unknown(m, _KEYS[kind], _OPTIONAL + _OPTIONAL_BY_TYPE.get(kind, ())))
    created = m.get("created_at")
    if created is not None and _time(created) != raw.get("created_at"):
        notes["created_at"] = raw["created_at"]  # written another way than pydantic writes it
    usage = m.get("models_usage")
    if usage is not None and not usage.keys() <= _USAGE:
        notes["usage_fields"] = {k: v for k, v in usage.items() if k not in _USAGE}
    metadata = dict(m.get("metadata", ()))
    payload = _payload(metadata)
    fields = {
        "role": _role(m["type"], m["source"]), "content": blocks, "name": m["source"], "source_format": NAME,
        "source_type": m["type"], "external_id": m.get("id"), "created_at": created, "metadata": metadata,
        "extras": _note(notes),
        "usage": None if usage is None else {"input_tokens": usage["prompt_tokens"],
                                             "output_tokens": usage["completion_tokens"]},
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
        kind = None if m is None else m["type"]
        if kind == "MultiModalMessage":
            problems += core.image_problems(m["content"], i, "content")
        elif kind == "HandoffMessage":
            problems += core.check_images(m.get("context", []), i, "context")
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
