"""Export of the ``autogen`` format (see :mod:`store.formats.autogen`): canonical messages as
AgentChat message dicts, in the ``dump()`` shape ``MessageFactory`` loads.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from ..lean import Call, Plain, canonical, writable
from ..model import (
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
    UsageBlock,
    VideoBlock,
)
from ..model import MESSAGES as CANONICAL
from . import autogen_core as core
from ._common import CARRY_KEY, Losses, call_text, carry, dump_json
from .autogen import NAME, PART, TYPES, UNNAMED, _OWN, _role, _time
from .autogen_core import finish

TAKES_PLAIN = True

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
        if CARRY_KEY in head["metadata"] and "metadata" in own.get("absent", ()):  # a payload outweighs the spelling
            own = {**own, "absent": [key for key in own["absent"] if key != "metadata"]}
        self.out.append(finish(ident | head | first, own))
        for body in bodies[1:]:
            self.out.append(head | {"models_usage": None, "metadata": {CARRY_KEY: PART}} | body)

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same messages and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        self.index, self.patches = index, {}
        content, text = msg.content, msg.text
        if content and content[0].__class__ is not Call:  # a tool result
            bodies, source = [self._plain_result(msg)], self.callers.get(content[0].call_id, ("assistant", ""))[0]
        else:
            source = msg.role if msg.speaker is None else msg.speaker
            bodies = [] if text is None else [{"content": text, "type": "TextMessage"}]
            for call in content:
                self.callers[call.call_id] = (source, call.name)  # type: ignore[union-attr]
            if content:
                bodies.append({"content": self._plain_calls(content, text is not None),  # type: ignore[arg-type]
                               "type": "ToolCallRequestEvent"})
        payload: dict[str, Any] = {}
        if msg.extras:
            payload["extras"] = to_jsonable_python(dict(msg.extras))
            self.losses.add(index, "extras", "carried", f"AgentChat has no such field; {_CARRIED}")
        own: dict[str, Any] = {}
        if _role(bodies[0]["type"], source) != msg.role:
            own["role"] = msg.role
            self.losses.add(index, "role", "carried",
                            f"AgentChat has no roles (a {msg.role} message from {source!r}); {_CARRIED}")
        if msg.speaker is None:
            own["unnamed"] = True
        if self.patches:
            own["patch"] = self.patches
        if own:
            payload[_OWN] = own
        metadata = {} if not payload else {  # most plain messages' payload is UNNAMED
            CARRY_KEY: UNNAMED if payload == _UNNAMED_PAYLOAD else dump_json(payload)}
        head = {"source": source, "models_usage": None, "metadata": metadata}
        self.out.append(({} if msg.external_id is None else {"id": msg.external_id}) | head | bodies[0])
        for body in bodies[1:]:
            self.out.append(head | {"models_usage": None, "metadata": {CARRY_KEY: PART}} | body)

    def _plain_calls(self, calls: tuple[Call, ...], after_text: bool) -> list[dict[str, Any]]:
        """A plain message's calls as ``core.call_out`` writes them; those of object arguments (written as
        their text) patched as :meth:`_patch` patches them, at their block's position."""
        out = []
        for pos, c in enumerate(calls, after_text):
            if c.arguments_raw is None:
                self.patches[str(pos)] = {"arguments_raw": None}
                self.losses.add(self.index, "tool_call.arguments_raw", "carried", _CARRIED)
            out.append({"id": c.call_id, "arguments": call_text(c), "name": c.name})
        return out

    def _plain_result(self, msg: Plain) -> dict[str, Any]:
        """The body of a plain tool result: its call's execution event, or a text stand-in where no call
        is known (the result carried whole), as :meth:`_body` writes its canonical one."""
        result, name = msg.content[0], msg.name
        caller = self.callers.get(result.call_id)
        if caller is None:
            self.patches["0"] = {"kind": "tool_result", "call_id": result.call_id,
                                 **({} if name is None else {"name": name}), "output": msg.text,
                                 "is_error": result.is_error}  # type: ignore[union-attr]
            self.losses.add(self.index, "tool_result", "carried", f"no AgentChat form: a text stand-in; {_CARRIED}")
            return {"content": core.result_stand_in(name, result.call_id, msg.text), "type": "TextMessage"}  # type: ignore[arg-type]
        if name is None:
            self.patches["0"] = {"name": None}
            self.losses.add(self.index, "tool_result.name", "carried", _CARRIED)
        return {"content": [{"content": msg.text, "name": name or caller[1] or "", "call_id": result.call_id,
                             "is_error": result.is_error}], "type": "ToolCallExecutionEvent"}  # type: ignore[union-attr]

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
            payload = carry(msg, native=_NATIVE, blocks=self.carried, update={"metadata": odd, "extras": other}) or {}
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


def _answers(msg: Message | Plain, requested: set[str]) -> bool:
    """Whether ``msg`` is a tool message of results of the calls in ``requested`` only."""
    return msg.role == "tool" and bool(msg.content) and all(
        b.kind == "tool_result" and b.call_id in requested for b in msg.content)


def _rest(msg: Message | Plain) -> dict[str, Any]:
    """What of a message two tool messages must share to join: all but its content."""
    if msg.__class__ is Plain:  # its canonical message's
        return {**_PLAIN_REST, "source_format": msg.source_format, "source_type": msg.source_type,
                "external_id": msg.external_id, "extras": dict(msg.extras or {})}
    return msg.model_dump(exclude={"content"})  # type: ignore[union-attr]


_PLAIN_REST = Message(role="tool").model_dump(exclude={"content"})


def _joined(messages: list[Message | Plain]) -> list[tuple[int, Message | Plain]]:
    """The messages to write, with their indexes: consecutive tool messages answering one
    request join into one, since AgentChat writes the results of one turn's parallel calls as
    one ToolCallExecutionEvent (OpenAI writes a tool message per result). Only messages that
    differ in nothing but their results join, and only those without notes (a source's notes may mark where
    one of its messages ends: Pydantic AI's requests after a request), so nothing of theirs is lost; read
    back, they are one tool message, which OpenAI-like targets split again."""
    out: list[tuple[int, Message | Plain]] = []
    requested: set[str] = set()
    for index, msg in enumerate(messages):
        calls = {b.call_id for b in msg.content if b.kind == "tool_call"}
        if calls:
            requested = calls
        prev = out[-1][1] if out else None
        if prev is not None and not msg.extras and _answers(prev, requested) and _answers(msg, requested) \
                and _rest(prev) == _rest(msg):
            prev, msg = canonical([prev, msg])  # type: ignore[assignment]  # a plain result joins as its canonical message
            out[-1] = (out[-1][0], prev.model_copy(update={"content": [*prev.content, *msg.content]}))  # type: ignore[union-attr]
        else:
            out.append((index, msg))
    return out


_UNNAMED_PAYLOAD = {_OWN: {"unnamed": True}}  # the payload whose text is UNNAMED


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be: a source message
    type not AgentChat's (which the canonical path neither writes nor carries; AgentChat's picks the type), or
    the one the plain path writes anyway."""
    # an id: its first item's, as the canonical path writes it; a speaker: its source
    if not writable(msg, NAME, ids=True, speakers=True):
        return False
    content = msg.content
    first = "text" if not content or content[0].__class__ is Call and msg.text is not None \
        else content[0].kind
    return _hint(msg) is None or msg.source_type == _PLAIN_TYPE[first]


_PLAIN_TYPE = {"text": "TextMessage", "tool_call": "ToolCallRequestEvent",
               "tool_result": "ToolCallExecutionEvent"}
"""The AgentChat type of a plain message's first item: its text, its calls, its result."""


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as AgentChat message dicts (``dump()``
    shape, loadable by ``MessageFactory``)."""
    writer = _Writer(losses)
    for index, msg in _joined(canonical(messages, unless=_takes)):
        if msg.__class__ is Plain:
            writer.plain(msg, index)  # type: ignore[arg-type]
        else:
            writer.message(msg, index)  # type: ignore[arg-type]
    return writer.out
