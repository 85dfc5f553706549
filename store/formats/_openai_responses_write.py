"""Canonical messages as OpenAI Responses input items (the export half of ``openai_responses``).

Each canonical message becomes items in block order: an assistant message's text and
refusal runs become message items, its calls ``function_call`` / ``custom_tool_call``
items, its reasoning ``reasoning`` items; results become ``*_call_output`` items. Blocks
that came from this format hold their item's keys in ``extras["openai-responses"]`` and
are written back exactly; others get the shapes the openai SDK types require (ids the
Agents SDK's placeholder where one is required). Items have no extension field, so what
they cannot express is approximated (a text stand-in) or dropped, and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import assert_never

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
from ._common import Losses, b64encode, call_text, data_uri, dump_json, report_extras, report_fields
from .openai_responses import AUDIO_MEDIA_TYPES, DEFAULTS, FAKE_ID, NAME, TEXT_TYPE, summary_of

_AUDIO_FORMATS = {v: k for k, v in AUDIO_MEDIA_TYPES.items()}
_ALLOWED = {
    "output": frozenset({"output_text", "refusal"}),
    "input": frozenset({"input_text", "input_image", "input_file"}),
}
"""Part types the openai SDK takes in assistant output ("output") and in input messages and
call outputs ("input"); input_audio only in the Agents SDK's own union, so only when it came
from this format."""
CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_NOT_IN_ITEMS = ("name", "external_id", "created_at", "model", "usage")


def _of(thing: Block | Message) -> dict[str, Any]:
    """``extras["openai-responses"]`` of a block or message, whatever other code put there."""
    own = thing.extras.get(NAME) if thing.extras else None
    return own if isinstance(own, dict) else {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _media_ref(block: Any) -> str:
    ref = block.url or block.filename or block.file_id or f"{len(block.data or b'')} bytes inline"
    return f"[{block.kind}{' ' + block.media_type if block.media_type else ''}: {ref}]"


_STAND_INS: dict[type, Callable[[Any], str]] = {
    ImageBlock: _media_ref, AudioBlock: _media_ref, VideoBlock: _media_ref, FileBlock: _media_ref,
    TextBlock: lambda b: b.text, RefusalBlock: lambda b: b.text, ReasoningBlock: lambda b: b.text,
    DataBlock: lambda b: dump_json(b.data), CodeBlock: lambda b: b.code, CodeResultBlock: lambda b: b.output,
    ErrorBlock: lambda b: f"[error{' ' + b.code if b.code else ''}: {b.message}]",
    HandoffBlock: lambda b: f"[handoff to {b.target}]",
}
"""The text that stands in for a block where items have no place for it (approximated)."""


def _media_part(block: Block) -> dict[str, Any] | None:
    """An image, file or (own) audio block as its input part; None where it has none."""
    own = _of(block)
    match block:
        case ImageBlock():
            part: dict[str, Any] = {"type": "input_image"}
            url = data_uri(block.media_type, block.data) if block.data is not None else block.url
            part.update({k: v for k, v in (("image_url", url), ("file_id", block.file_id)) if v is not None})
            return part if len(part) > 1 or own else None
        case FileBlock():
            part = {"type": "input_file"}
            raw = own.get("file_data")
            if isinstance(raw, str) or block.data is not None:
                part["file_data"] = raw if isinstance(raw, str) else data_uri(block.media_type, block.data or b"")
            for key, value in (("file_id", block.file_id), ("file_url", block.url), ("filename", block.filename)):
                if value is not None:
                    part[key] = value
            return part if part.keys() & {"file_data", "file_id", "file_url"} or own else None
        case AudioBlock():
            raw = own.get("audio")
            fmt = _AUDIO_FORMATS.get(block.media_type or "")
            if isinstance(raw, dict):
                return {"type": "input_audio", "input_audio": raw}
            if raw is not True or block.data is None or fmt is None:
                return None  # audio from elsewhere: not in the openai SDK's part types
            return {"type": "input_audio", "input_audio": {"data": b64encode(block.data), "format": fmt}}
    return None


def part_out(block: Block, context: str) -> dict[str, Any] | None:
    """``block`` as a content part of ``context`` ("input" or "output"); None where it is none."""
    own = _of(block)
    match block:
        case TextBlock():
            kind = own.get("type")
            part: dict[str, Any] | None = {"type": kind if kind in TEXT_TYPE.values() else TEXT_TYPE[context],
                                           "text": block.text}
        case RefusalBlock():
            part = {"type": "refusal", "refusal": block.text}
        case _:
            part = _media_part(block)
    if part is None:
        return None
    fields = own.get("fields")
    part.update(fields if isinstance(fields, dict) else DEFAULTS.get(part["type"], {}))
    return part


@dataclass
class _Run:
    """A message item being filled from consecutive blocks of an assistant message."""

    fields: dict[str, Any] | None
    """The item's own keys when it came from this format; None for blocks from elsewhere."""
    string: bool = False
    blocks: list[Block] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)


def _plain(part: dict[str, Any]) -> bool:
    return part == {"type": "output_text", "text": part.get("text"), "annotations": []}


class Writer:
    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.items: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}
        """call id -> tool name, of the calls written so far."""
        self.custom: set[str] = set()
        """ids of the calls written as custom tool calls (their outputs are custom too)."""
        self.source: str | None = None
        """The source format of the message being written."""

    def run(self, messages: list[Message | Plain]) -> list[dict[str, Any]]:
        """Canonical messages (plain ones among them: ``store.lean``) as items."""
        messages = canonical(messages, unless=_takes)
        for index, msg in enumerate(messages):
            self.source = msg.source_format
            if msg.__class__ is Plain:
                self._plain(msg, index)  # type: ignore[arg-type]
                continue
            _report_message_fields(msg, index, self.losses)  # type: ignore[arg-type]
            if msg.role == "assistant":
                self._turn(msg, index)  # type: ignore[arg-type]
            else:
                self._message(msg, index)  # type: ignore[arg-type]
        for index, msg in enumerate(messages):  # after the calls: an output written before its call is regrouped
            for block in msg.content:
                if block.kind == "tool_result" and block.call_id not in self.names:
                    self.losses.add(index, "tool_result", "approximated", f"answers no call ({block.call_id!r}): "
                                    "written where it stood, as an output the API refuses without its call")
        return regroup(self.items)

    def _plain(self, msg: Plain, index: int) -> None:
        """The items of a plain message (``store.lean``) that :func:`_takes`, as :meth:`_turn` and
        :meth:`_message` write its canonical one's, with the same losses (tests/test_lean_load.py)."""
        for name, value in msg.named():  # those of _NOT_IN_ITEMS a plain message may have
            if value is not None:
                self.losses.add(index, name, detail="Responses items have no such field")
        report_extras(msg, index, self.losses, NAME)
        content, items = msg.content, self.items
        if content and content[0].__class__ is not Call:  # a tool result
            call_id = content[0].call_id
            custom = call_id in self.custom
            item = {"type": "custom_tool_call_output" if custom else "function_call_output", "call_id": call_id,
                    "output": msg.text}
            if msg.name is not None and msg.source_format != NAME and not custom \
                    and call_id not in self.names:  # no call says it (as _result)
                item["name"] = msg.name
            if content[0].is_error:
                self.losses.add(index, "tool_result.is_error", "approximated",
                                "Responses call outputs have no error flag: only the output says it")
            items.append(item)
            return
        if msg.text is not None:
            items.append({"role": msg.role, "content": msg.text})
        for call in content:
            self.names[call.call_id] = call.name  # type: ignore[union-attr]
            self.custom.discard(call.call_id)  # type: ignore[union-attr]
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name,  # type: ignore[union-attr]
                          "arguments": call_text(call)})

    # --- parts ------------------------------------------------------------------------

    def _part(self, block: Block, context: str, own: bool, index: int, where: str) -> dict[str, Any]:
        """A part of ``context``: what that context does not take becomes a text stand-in."""
        part = part_out(block, context)
        if part is not None and (own or _of(block) or part["type"] in _ALLOWED[context]):
            return part
        self.losses.add(index, block.kind, "approximated",
                        f"Responses {where} take no {block.kind}: text stand-in")
        return {"type": TEXT_TYPE[context], "text": _STAND_INS[type(block)](block),
                **DEFAULTS.get(TEXT_TYPE[context], {})}

    # --- assistant messages --------------------------------------------------------------

    def _turn(self, msg: Message, index: int) -> None:
        start = len(self.items)
        run: _Run | None = None
        for block in msg.content:
            own = _of(block)
            if isinstance(block, DataBlock) and own.get("item") is True and isinstance(block.data, dict):
                run = self._close(run)
                self.items.append(dict(block.data))  # an item type with no canonical meaning, kept whole
            elif isinstance(block, (ToolCallBlock, ToolResultBlock, ReasoningBlock, UsageBlock)):
                run = self._close(run)
                self._item(block, index)
            else:
                if isinstance(own.get("item"), dict):  # where an item of this format started
                    self._close(run)
                    run = _Run(dict(own["item"]), own.get("string") is True)
                run = run or _Run(None)
                run.blocks.append(block)
                run.parts.append(self._part(block, "output", run.fields is not None, index, "assistant messages"))
        self._close(run)
        if not any(_of(b) for b in msg.content if isinstance(b, ReasoningBlock)):  # own reasoning: as it was
            self.items[start:] = _reasoning_first(self.items[start:])

    def _close(self, run: _Run | None) -> None:
        """Writes the message item of ``run``; returns None, the run that is open next."""
        if run is None:
            return None
        if run.fields is not None:  # an item from this format, as it was
            one = run.blocks[0]
            string = run.string and len(run.blocks) == 1 and isinstance(one, TextBlock)
            self.items.append({"role": "assistant", "content": one.text if string else run.parts, **run.fields})
        elif all(_plain(p) for p in run.parts):  # text only: easy messages, which every consumer takes
            self.items.extend({"role": "assistant", "content": p["text"]} for p in run.parts)
        else:  # a refusal needs the output message form, whose id the SDK types require
            self.items.append({"type": "message", "role": "assistant", "id": FAKE_ID, "status": "completed",
                               "content": run.parts})
        return None

    def _item(self, block: ToolCallBlock | ToolResultBlock | ReasoningBlock | UsageBlock, index: int) -> None:
        match block:
            case ToolCallBlock():
                self.items.append(self._call(block))
            case ToolResultBlock():
                self.items.append(self._result(block, index))
            case ReasoningBlock():
                self.items.append(self._reasoning(block, index))
            case UsageBlock():
                self.losses.add(index, "usage", detail="Responses items have no usage")
            case _:
                assert_never(block)

    def _call(self, block: ToolCallBlock) -> dict[str, Any]:
        own = _of(block)
        # a Chat Completions custom tool call (the openai format's own note) is one here too
        custom = own.get("type") == "custom" or _dict(block.extras.get("openai")).get("type") == "custom"
        raw = call_text(block)
        self.names[block.call_id] = block.name
        if custom:
            self.custom.add(block.call_id)
            item = {"type": "custom_tool_call", "call_id": block.call_id, "name": block.name, "input": raw}
        else:  # the latest call of an id is the one its un-noted results answer, as the reader reads them
            self.custom.discard(block.call_id)
            item = {"type": "function_call", "call_id": block.call_id, "name": block.name, "arguments": raw}
        return item | _dict(own.get("fields"))

    def _result(self, block: ToolResultBlock, index: int) -> dict[str, Any]:
        own = _of(block)
        kind = own.get("type")  # noted on outputs from this format; else the kind of the call answered
        custom = kind == "custom" if kind in ("custom", "function") else block.call_id in self.custom
        output: Any = block.output
        if not isinstance(output, str):
            output = [self._part(b, "input", bool(own), index, "call outputs") for b in output]
        item = {"type": "custom_tool_call_output" if custom else "function_call_output",
                "call_id": block.call_id, "output": output}
        # ``name`` only where the source had it, or where no call says it (a result of another format without
        # its call; this format's outputs note a name they had)
        orphan = not own and self.source != NAME and not custom and block.call_id not in self.names
        if block.name is not None and (own.get("name") is True or orphan):
            item["name"] = block.name
        if block.is_error:
            self.losses.add(index, "tool_result.is_error", "approximated",
                            "Responses call outputs have no error flag: only the output says it")
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="Responses call outputs have no error details")
        return item | _dict(own.get("fields"))

    def _reasoning(self, block: ReasoningBlock, index: int) -> dict[str, Any]:
        own = _of(block)
        fields = own.get("fields")
        summary = own.get("summary")
        item: dict[str, Any] = {"type": "reasoning",
                                "summary": summary if isinstance(summary, list) else summary_of(block.text)}
        item.update(fields if isinstance(fields, dict) else {"id": FAKE_ID})
        if block.data is not None and own:
            item["encrypted_content"] = block.data
        elif block.data is not None:
            self.losses.add(index, "reasoning.data", detail="another provider's opaque reasoning data is no "
                                                            "encrypted_content OpenAI can read")
        if block.signature is not None:
            self.losses.add(index, "reasoning.signature", detail="Responses reasoning items have no signature")
        return item

    # --- other messages --------------------------------------------------------------------

    def _message(self, msg: Message, index: int) -> None:
        """A system, user or tool message: its call outputs, then one input message, then any calls."""
        own = bool(_of(msg))  # list content from this format: its parts as they were, whatever the role
        calls: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        for block in msg.content:
            if isinstance(block, ToolResultBlock):
                self.items.append(self._result(block, index))
            elif isinstance(block, ToolCallBlock):
                calls.append(self._call(block))  # items have no role: a call is a call wherever it was
            elif isinstance(block, UsageBlock):
                self._item(block, index)
            else:
                parts.append(self._part(block, "input", own, index, f"{_role(msg)} messages"))
        if msg.role == "tool" and parts:
            self.losses.add(index, "content", "approximated", "what a tool message holds besides its results "
                                                               "became a user message")
        if parts or not msg.content and msg.role != "tool":
            self.items.append(_input_message(msg, parts))
        self.items.extend(calls)


def _takes(msg: Any) -> bool:
    """Whether :meth:`Writer._plain` writes a plain message as its canonical one would be."""
    return writable(msg, NAME, ids=True, speakers=True)  # its canonical path ignores source_type


def _role(msg: Message) -> str:
    if msg.role == "system":
        return msg.source_role if msg.source_role in ("system", "developer") else "system"
    return "user" if msg.role == "tool" else msg.role


def _input_message(msg: Message, parts: list[dict[str, Any]]) -> dict[str, Any]:
    own = _of(msg)
    listed = own.get("content") == "list"
    plain = len(parts) == 1 and parts[0].keys() == {"type", "text"} and parts[0]["type"] == "input_text"
    content: Any = parts if listed or (parts and not plain) else parts[0]["text"] if parts else ""
    return {"role": _role(msg), "content": content} | _dict(own.get("fields"))


def _reasoning_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reasoning that trails a message's output goes before that output: the API wants a
    reasoning item followed by the output it led to."""
    last = max((i for i, item in enumerate(items) if item.get("type") != "reasoning"), default=None)
    if last is None or last == len(items) - 1:
        return items
    before = max((i for i in range(last) if items[i].get("type") == "reasoning"), default=-1)
    return items[:before + 1] + items[last + 1:] + items[before + 1:last + 1]


def regroup(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call outputs that come before their call move right after the run of calls holding it."""
    first_call: dict[Any, int] = {}
    for i, item in enumerate(items):
        if item.get("type") in CALL_TYPES:
            first_call.setdefault(item.get("call_id"), i)
    out: list[dict[str, Any]] = []
    waiting: dict[Any, list[dict[str, Any]]] = {}
    due: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        call_id = item.get("call_id")
        if item.get("type") in OUTPUT_TYPES and first_call.get(call_id, -1) > i:
            waiting.setdefault(call_id, []).append(item)
            continue
        if item.get("type") not in CALL_TYPES:
            out.extend(due)
            due = []
        out.append(item)
        if item.get("type") in CALL_TYPES:
            due.extend(waiting.pop(call_id, []))
    return out + due


def _report_message_fields(msg: Message, index: int, losses: Losses) -> None:
    report_fields(msg, index, losses, NAME, _NOT_IN_ITEMS, "Responses items have no such field")
