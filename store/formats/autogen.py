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
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, Discriminator, Field, StringConstraints, Tag, TypeAdapter, ValidationError

from .. import exactjson
from ..errors import SchemaError
from ..model import (
    BLOCK,
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
    Usage,
    UsageBlock,
    VideoBlock,
)
from ..model import MESSAGES as CANONICAL
from . import autogen_core as core
from ._common import CARRY_KEY, Losses, carry, dump_json, message_list, restore, validate
from .autogen_core import FunctionCall, FunctionExecutionResult, ImageData, OpenModel, finish, unknown

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
    TextMessage: lambda m: [TextBlock(text=m.content)],
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


def _apply(fields: dict[str, Any], payload: dict[str, Any] | None) -> Message:
    """The canonical message, with what an earlier export carried in ``metadata["convstore"]``."""
    if payload is None:
        return Message(**fields)
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
    parsed = validate(MESSAGES, raw, NAME)
    problems = []
    for i, m in enumerate(parsed):
        if isinstance(m, MultiModalMessage):
            problems += core.image_problems(m.content, i, "content")
        elif isinstance(m, HandoffMessage):
            problems += core.check_images(m.context, i, "context")
    if problems:
        raise SchemaError(NAME, problems)
    merged: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for m, r in zip(parsed, raw, strict=True):
        fields, payload = _message_in(m, r)
        if payload and (payload.get(_OWN) or {}).get("part") and merged:
            merged[-1][0]["content"] += fields["content"]  # a canonical message split on export
            continue
        merged.append((fields, payload))
    return [_apply(fields, payload) for fields, payload in merged]


def looks_like(data: Any) -> bool:
    """A non-empty list of objects whose ``type`` is an AgentChat message or event class name."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(isinstance(m, dict) and _tag(m) != core.UNTYPED for m in msgs)


# --- from canonical --------------------------------------------------------------------------

_KINDS = {  # block class -> the kind of AgentChat message it goes into (None: only carried)
    TextBlock: "content", ImageBlock: "content", RefusalBlock: "content", AudioBlock: "content",
    VideoBlock: "content", FileBlock: "content", ErrorBlock: "content", ReasoningBlock: "thought",
    ToolCallBlock: "calls", ToolResultBlock: "results", DataBlock: "data", CodeBlock: "code",
    CodeResultBlock: "code_result", HandoffBlock: "handoff", UsageBlock: None,
}
_MERGING = frozenset({"content", "calls", "results", "code"})
_TEXT_BODIES = {  # text-only types: their fields besides content, from the message's notes
    "StopMessage": lambda own: {},
    "ToolCallSummaryMessage": lambda own: {"tool_calls": own.get("tool_calls", []),
                                           "results": own.get("results", [])},
    "ModelClientStreamingChunkEvent": lambda own: {"full_message_id": own.get("full_message_id")},
}
_LIST_TYPES = frozenset({"ToolCallRequestEvent", "ToolCallExecutionEvent", "MemoryQueryEvent",
                        "MultiModalMessage"})
_NATIVE = {"name", "external_id", "created_at", "usage", "source_format", "source_type"}
_PART = dump_json({_OWN: {"part": True}})
_STRUCTURED = "StructuredMessage[Data]"
"""The type written for structured data from other formats (AgentChat names it after the content class)."""
_CARRIED = "kept in metadata['convstore']"


def _hint(msg: Message) -> str | None:
    """The AgentChat type a canonical message came from, when it came from one."""
    kind = msg.source_type
    return kind if kind in TYPES or (kind or "").startswith("StructuredMessage") else None


def _whole(block: Block) -> dict[str, Any]:
    dumped = block.model_dump(mode="json", exclude_none=True)
    if not dumped.get("extras"):
        dumped.pop("extras", None)
    return dumped


class _Group:
    """Consecutive blocks that become one AgentChat message (``text``: a code or handoff text)."""

    __slots__ = ("items", "kind", "text")

    def __init__(self, kind: str, item: tuple[int, Block]) -> None:
        self.kind, self.items, self.text = kind, [item], None


class _Writer:
    """Writes one conversation; remembers who made each tool call, so results can name their source.

    One canonical message becomes one AgentChat message, or several (a text and tool calls):
    the later ones are marked as parts, and read back as one message. Per message, ``count``
    follows the position each block will have when read back, for the patches.
    """

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.out: list[dict[str, Any]] = []
        self.callers: dict[str, tuple[str, str]] = {}  # call id -> (source, tool name)

    def message(self, msg: Message, index: int) -> None:
        self.index, self.patches, self.carried, self.synth, self.count = index, {}, {}, [], 0
        own = msg.extras.get(NAME, {})
        hint = _hint(msg)
        source = self._source(msg)
        bodies = [self._body(g, hint, own) for g in self._groups(msg, hint, source)] or [self._empty(hint)]
        first = bodies[0]
        head = {"source": source, "models_usage": self._usage(msg, own),
                "metadata": self._metadata(msg, first, source)}
        created = own.get("created_at") or (None if msg.created_at is None else _time(msg.created_at))
        if created is not None:
            head["created_at"] = created
        ident = {} if msg.external_id is None else {"id": msg.external_id}
        self.out.append(finish(ident | head | first, own))
        for body in bodies[1:]:
            self.out.append(head | {"models_usage": None, "metadata": {CARRY_KEY: _PART}} | body)

    def _source(self, msg: Message) -> str:
        if msg.name is not None:
            return msg.name
        call = next((b.call_id for b in msg.content if isinstance(b, ToolResultBlock)), None)
        return self.callers.get(call, ("assistant", ""))[0] if msg.role == "tool" else msg.role

    def _groups(self, msg: Message, hint: str | None, source: str) -> list[_Group]:
        groups: list[_Group] = []
        for pos, block in enumerate(msg.content):
            kind = self._kind(block, hint)
            if kind is None:
                self.carried[pos] = block
                self.losses.add(self.index, block.kind, "carried", f"no AgentChat form; {_CARRIED}")
                continue
            if isinstance(block, ToolCallBlock):
                self.callers[block.call_id] = (source, block.name)
            last = groups[-1] if groups else None
            merges = kind in _MERGING or (kind == "data" and hint == "MemoryQueryEvent")
            if last and last.kind == kind and merges:
                last.items.append((pos, block))
                continue
            group = _Group(kind, (pos, block))
            if kind in ("code", "handoff") and last and last.kind == "content" and len(last.items) == 1 \
                    and isinstance(last.items[0][1], TextBlock):
                group.text = groups.pop().items[0]  # the text of a code generation or a handoff
            groups.append(group)
        return groups

    def _kind(self, block: Block, hint: str | None) -> str | None:
        if isinstance(block, ToolResultBlock):
            return "results" if block.call_id in self.callers else "content"  # no call: a text stand-in
        if isinstance(block, DataBlock):
            data = block.data
            names = isinstance(data, list) and all(isinstance(s, str) for s in data)
            fits = isinstance(data, dict) or (hint == "MemoryQueryEvent" and isinstance(data, str)) or (
                hint == "SelectSpeakerEvent" and names)
            return "data" if fits else "content"
        return _KINDS[type(block)]

    # --- bodies: the type-specific part of one AgentChat message ---

    def _body(self, group: _Group, hint: str | None, own: dict[str, Any]) -> dict[str, Any]:
        if group.kind == "content":
            return self._content(group, hint, own)
        text = "" if group.kind not in ("code", "handoff") else self._text(group)
        blocks: list[Any] = [self._patch(pos, block) for pos, block in group.items]
        match group.kind:
            case "thought":
                return {"content": blocks[0].text, "type": "ThoughtEvent"}
            case "calls":
                return {"content": [core.call_out(b, NAME) for b in blocks], "type": "ToolCallRequestEvent"}
            case "results":
                results = [core.result_out(b, self.callers[b.call_id][1], NAME) for b in blocks]
                return {"content": results, "type": "ToolCallExecutionEvent"}
            case "data":
                return self._data(blocks, hint, own)
            case "code":
                code = [finish({"code": b.code, "language": b.language or ""}, b.extras.get(NAME, {}))
                        for b in blocks]
                return {"retry_attempt": own.get("retry_attempt", 0), "content": text, "code_blocks": code,
                        "type": "CodeGenerationEvent"}
            case "code_result":
                b = blocks[0]
                result = finish({"exit_code": b.exit_code or 0, "output": b.output}, b.extras.get(NAME, {}))
                return {"retry_attempt": own.get("retry_attempt", 0), "result": result,
                        "type": "CodeExecutionEvent"}
            case "handoff":
                return {"content": text, "target": blocks[0].target, "context": self._context(blocks[0]),
                        "type": "HandoffMessage"}
        raise AssertionError(group.kind)

    def _text(self, group: _Group) -> str:
        """The text of a code or handoff group; without one, a placeholder left out again on import."""
        if group.text is None:
            self.synth.append(self.count)
            self.count += 1
            return ""
        return self._patch(*group.text).text

    def _content(self, group: _Group, hint: str | None, own: dict[str, Any]) -> dict[str, Any]:
        elements = [self._element(pos, block) for pos, block in group.items]
        if len(elements) != 1 or not isinstance(elements[0], str) or hint == "MultiModalMessage":
            return {"content": elements, "type": "MultiModalMessage"}
        text = elements[0]
        if hint in _TEXT_BODIES:
            return {"content": text, "type": hint, **_TEXT_BODIES[hint](own)}
        if hint == "UserInputRequestedEvent" and text == "" and "request_id" in own:
            return {"request_id": own["request_id"], "content": "", "type": hint}
        return {"content": text, "type": "TextMessage"}

    def _element(self, pos: int, block: Block) -> Any:
        """One entry of a MultiModalMessage: text, an image, or a text stand-in (the block is carried)."""
        if isinstance(block, TextBlock):
            return self._patch(pos, block).text
        if isinstance(block, ImageBlock) and (image := core.image_out(block, NAME)) is not None:
            self._patch(pos, block)
            return image
        self.count += 1
        self.patches[pos] = _whole(block)
        self.losses.add(self.index, block.kind, "carried", f"no AgentChat form: a text stand-in; {_CARRIED}")
        return core.stand_in(block) or ""

    def _data(self, blocks: list[DataBlock], hint: str | None, own: dict[str, Any]) -> dict[str, Any]:
        if hint == "MemoryQueryEvent":
            items = [finish({"content": b.data, "mime_type": b.media_type or "application/json",
                             "metadata": b.extras.get(NAME, {}).get("metadata")}, b.extras.get(NAME, {}))
                     for b in blocks]
            return {"content": items, "type": hint}
        if hint == "SelectSpeakerEvent" and isinstance(blocks[0].data, list):
            return {"content": blocks[0].data, "type": hint}
        kind = hint if hint and hint.startswith("StructuredMessage") else _STRUCTURED
        return {"content": blocks[0].data, "format_string": own.get("format_string"), "type": kind}

    def _empty(self, hint: str | None) -> dict[str, Any]:
        if hint in _LIST_TYPES:
            return {"content": [], "type": hint}
        self.synth.append(0)
        return {"content": "", "type": "TextMessage"}

    def _context(self, block: HandoffBlock) -> list[dict[str, Any]]:
        try:
            messages = CANONICAL.validate_python(block.context)
        except ValidationError:
            self.losses.add(self.index, "handoff.context", detail="not a list of canonical messages")
            return []
        inner = Losses(core.NAME)
        out = core.messages_out(messages, inner)
        for loss in inner:
            field = f"handoff.context[{loss.index}].{loss.field}"
            self.losses.add(self.index, field, loss.action, loss.detail)
        return out

    def _patch(self, pos: int, block: Any) -> Any:
        """Note the fields of ``block`` its AgentChat form cannot hold, for the way back."""
        self.count += 1
        lost = _LOST.get(type(block))
        patch = lost(block) if lost else {}
        if block.extras and (other := {k: v for k, v in block.extras.items() if k != NAME}):
            patch["extras"] = other
        if patch:
            self.patches[pos] = patch
            self.losses.add(self.index, f"{block.kind}.{','.join(patch)}", "carried", _CARRIED)
        return block

    # --- message-level fields ---

    @staticmethod
    def _usage(msg: Message, own: dict[str, Any]) -> dict[str, Any] | None:
        usage = msg.usage
        if usage is None:
            return None
        return {"prompt_tokens": usage.input_tokens or 0, "completion_tokens": usage.output_tokens or 0,
                **own.get("usage_fields", {})}

    def _metadata(self, msg: Message, first: dict[str, Any], source: str) -> dict[str, str]:
        """AgentChat metadata: the string entries, plus the convstore payload of what has no field."""
        metadata = {k: v for k, v in msg.metadata.items() if isinstance(v, str)}
        odd = {k: v for k, v in msg.metadata.items() if not isinstance(v, str)} if msg.metadata else {}
        other = {k: v for k, v in msg.extras.items() if k != NAME} if msg.extras else {}
        payload: dict[str, Any] = {}
        if odd or other or msg.source_role or msg.model or self.carried:
            payload = carry(msg.model_copy(update={"metadata": odd, "extras": other}), native=_NATIVE,
                            blocks=self.carried) or {}
            for key in payload.keys() - {"blocks"}:
                self.losses.add(self.index, key, "carried", f"AgentChat has no such field; {_CARRIED}")
        own = self._own(msg, first, source)
        if own:
            payload[_OWN] = own
        if payload:
            metadata[CARRY_KEY] = dump_json(payload)
        return metadata

    def _own(self, msg: Message, first: dict[str, Any], source: str) -> dict[str, Any]:
        """This format's part of the payload: role, name, usage, block patches and placeholders."""
        own: dict[str, Any] = {}
        role = _role(first["type"], source)
        if role != msg.role:
            own["role"] = msg.role
            self.losses.add(self.index, "role", "carried",
                            f"AgentChat has no roles (a {msg.role} message from {source!r}); {_CARRIED}")
        if msg.name is None:
            own["unnamed"] = True
        usage = msg.usage
        if usage is not None and (usage.input_tokens is None or usage.output_tokens is None
                                  or usage.total_tokens is not None or usage.extras):
            own["usage"] = usage.model_dump(mode="json", exclude_defaults=True)
            self.losses.add(self.index, "usage", "carried",
                            f"models_usage has prompt and completion tokens only; {_CARRIED}")
        if self.patches:
            own["patch"] = {str(pos): patch for pos, patch in sorted(self.patches.items())}
        if self.synth:
            own["synth"] = self.synth
        return own


def _image_lost(block: ImageBlock) -> dict[str, Any]:
    lost = {f: getattr(block, f) for f in ("filename", "file_id", "url") if getattr(block, f) is not None}
    if block.data is not None and block.media_type != core.sniff(block.data):
        lost["media_type"] = block.media_type
    return lost


def _result_lost(block: ToolResultBlock) -> dict[str, Any]:
    lost: dict[str, Any] = {} if block.name is not None else {"name": None}
    if block.error is not None:
        lost["error"] = block.error
    if not isinstance(block.output, str):
        lost["output"] = [_whole(b) for b in block.output]
    return lost


_LOST = {  # block class -> its fields that the AgentChat form does not hold (they would read back otherwise)
    ImageBlock: _image_lost,
    ToolResultBlock: _result_lost,
    ReasoningBlock: lambda b: {f: getattr(b, f) for f in ("signature", "redacted", "data") if getattr(b, f)},
    ToolCallBlock: lambda b: ({"call_id_synthesized": True} if b.call_id_synthesized else {})
    | ({"arguments_raw": None} if b.arguments_raw is None else {}),
    CodeBlock: lambda b: {"language": None} if b.language is None else {},
    CodeResultBlock: lambda b: {"exit_code": None} if b.exit_code is None else {},
}


def _answers(msg: Message, requested: set[str]) -> bool:
    """Whether ``msg`` is a tool message of results of the calls in ``requested`` only."""
    return msg.role == "tool" and bool(msg.content) and all(
        isinstance(b, ToolResultBlock) and b.call_id in requested for b in msg.content)


def _joined(messages: list[Message]) -> list[tuple[int, Message]]:
    """The messages to write, with their indexes: consecutive tool messages answering one
    request join into one, since AgentChat writes the results of one turn's parallel calls as
    one ToolCallExecutionEvent (OpenAI writes a tool message per result). Only messages that
    differ in nothing but their results join, so nothing of theirs is lost; read back, they
    are one tool message, which OpenAI-like targets split again."""
    out: list[tuple[int, Message]] = []
    requested: set[str] = set()
    for index, msg in enumerate(messages):
        calls = {b.call_id for b in msg.content if isinstance(b, ToolCallBlock)}
        if calls:
            requested = calls
        prev = out[-1][1] if out else None
        if prev is not None and _answers(prev, requested) and _answers(msg, requested) \
                and prev.model_dump(exclude={"content"}) == msg.model_dump(exclude={"content"}):
            out[-1] = (out[-1][0], prev.model_copy(update={"content": [*prev.content, *msg.content]}))
        else:
            out.append((index, msg))
    return out


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as AgentChat message dicts (``dump()`` shape, loadable by ``MessageFactory``)."""
    writer = _Writer(losses)
    for index, msg in _joined(messages):
        writer.message(msg, index)
    return writer.out
