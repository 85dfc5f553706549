"""Canonical messages as AI SDK ``UIMessage[]`` (see :mod:`store.formats.vercel_ai`).

A UIMessage holds a whole assistant turn: the canonical assistant message of each step opens
with ``step-start``, and tool results go back into the part of their call (its ``state``
becomes ``output-available`` / ``output-error``), so the pieces the reader split come back
as one message.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from ..lean import Call, Plain, canonical, writable
from ..model import (
    AudioBlock, Block, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock,
    ToolResultBlock, VideoBlock,
)
from ._common import Losses, data_uri, parse_data_uri, parse_json, report_extras
from .vercel_ai import CARRIED_PART, NAME

_NOT_IN_UI = ("name", "created_at", "model", "usage")
_OWN_ONLY_AT_HEAD = ("external_id", "metadata")  # a UIMessage's; a step or a result inside it has none
_CARRIED = f"kept whole in a {CARRIED_PART} part"
_STATES = {True: ("output-error", "errorText"), False: ("output-available", "output")}  # is_error -> state, key
_MEDIA = (ImageBlock, AudioBlock, VideoBlock, FileBlock)


def _fields(out: dict[str, Any], block: Block | Message) -> dict[str, Any]:
    out.update(block.extras.get(NAME, {}).get("fields") or {})
    return out


class _Writer:
    def __init__(self, messages: list[Message], losses: Losses) -> None:
        self.losses = losses
        self.out: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None  # the assistant UIMessage a next step joins
        self.after_results = False  # the message before was tool results: a foreign step continues the turn
        self.calls: dict[str, list[tuple[int, dict[str, Any]]]] = {}  # call id -> (UIMessage, part) awaiting a result
        self.ids = {m.external_id for m in messages if m.__class__ is not Plain and m.external_id is not None}

    # --- messages ------------------------------------------------------------------------

    def message(self, msg: Message, index: int) -> None:
        own, native = msg.extras.get(NAME, {}), msg.source_format == NAME
        results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
        rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
        if msg.role == "tool" or (results and not rest and msg.role == "user"):
            self._report(msg, index, head=False)
            for block in rest:
                self.losses.add(index, block.kind, detail="UIMessages hold a tool's output in its call's part only")
            for block in results:
                self.result(block, index)
            self.after_results = True
            return
        joins = self.current is not None and msg.role == "assistant" and (
            own.get("joined") if native else self.after_results)
        self._report(msg, index, head=not joins)
        target = self.current if joins and self.current is not None else self._open(msg, index)
        if msg.role == "assistant" and (own.get("step") if native else True):  # the SDK opens every step so
            target["parts"].append({"type": "step-start", **(own.get("step_fields") or {})})
        for block in rest:
            part = self.part(block, index, native)
            if part is not None:
                target["parts"].append(part)
                if isinstance(block, ToolCallBlock) and not (native and block.extras.get(NAME, {}).get("open")):
                    self.calls.setdefault(block.call_id, []).append((len(self.out) - 1, part))
        for block in results:  # results inside the message (a provider-run tool): into their call's part
            self.result(block, index)
        self.current = target if msg.role == "assistant" else None
        self.after_results = bool(results)

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same parts and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        if msg.speaker:
            self.losses.add(index, "name", detail="UIMessages have no such field")
        report_extras(msg, index, self.losses, NAME)
        content = msg.content
        if content and content[0].__class__ is not Call:  # a tool result, into its call's part
            result = content[0]
            waiting = self.calls.get(result.call_id)
            if not waiting:
                part = self._orphan(result.call_id, msg.name, index)
            else:
                at, part = waiting.pop(0)
                if at != len(self.out) - 1:
                    self.losses.add(index, "tool_result", "approximated",
                                    f"moved into its call's part, in UIMessage {at} (not the last one)")
            state, key = _STATES[result.is_error]
            part["state"], part[key] = state, msg.text
            self.after_results = True
            return
        assistant = msg.role == "assistant"
        if self.current is not None and assistant and self.after_results:
            target = self.current
        else:
            target = {"id": self._fresh(f"msg_{index}"), "role": msg.role, "parts": []}
            self.out.append(target)
        parts = target["parts"]
        if assistant:
            parts.append({"type": "step-start"})
        if msg.text is not None:
            parts.append({"type": "text", "text": msg.text})
        for call in content:
            part = {"type": f"tool-{call.name}", "toolCallId": call.call_id, "state": "input-available",  # type: ignore[union-attr]
                    "input": call.parsed()}  # type: ignore[union-attr]
            parts.append(part)
            self.calls.setdefault(call.call_id, []).append((len(self.out) - 1, part))
        self.current = target if assistant else None
        self.after_results = False

    def _open(self, msg: Message, index: int) -> dict[str, Any]:
        own = msg.extras.get(NAME, {})
        ui: dict[str, Any] = {"id": msg.external_id if msg.external_id is not None else self._fresh(f"msg_{index}"),
                              "role": msg.role}
        if msg.metadata:
            ui["metadata"] = dict(msg.metadata)
        elif "metadata" in own:  # {} or a value that is no object, as it came
            ui["metadata"] = own["metadata"]["value"]
        ui["parts"] = []
        self.out.append(_fields(ui, msg))
        return ui

    def _fresh(self, wanted: str) -> str:
        found, n = wanted, 1
        while found in self.ids:
            n += 1
            found = f"{wanted}_{n}"
        self.ids.add(found)
        return found

    def _report(self, msg: Message, index: int, head: bool) -> None:
        for name in _NOT_IN_UI:
            if getattr(msg, name):
                self.losses.add(index, name, detail="UIMessages have no such field")
        if not head:
            for name in _OWN_ONLY_AT_HEAD:
                if getattr(msg, name):
                    self.losses.add(index, name, detail="a step or tool result inside a UIMessage has none of its own")
        report_extras(msg, index, self.losses, NAME)

    # --- parts ---------------------------------------------------------------------------

    def part(self, block: Block, index: int, native: bool) -> dict[str, Any] | None:
        own = block.extras.get(NAME, {})
        match block:
            case TextBlock():
                return _fields({"type": "text", "text": block.text}, block)
            case ReasoningBlock():
                return self._reasoning(block, index, native)
            case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock():
                return self._file(block, index)
            case ToolCallBlock():
                return self._call(block, index, native)
            case DataBlock() if own.get("part") and isinstance(block.data, dict):
                return dict(block.data)  # a part with no canonical counterpart, as it came
            case DataBlock() if isinstance(own.get("type"), str):
                part: dict[str, Any] = {"type": own["type"]}
                if own.get("id") is not None:
                    part["id"] = own["id"]
                if not own.get("no_data"):
                    part["data"] = block.data
                return _fields(part, block)
        # no UI part of its own (refusal, error, code, usage, handoff, another format's data)
        self.losses.add(index, block.kind, "carried", _CARRIED)
        return {"type": CARRIED_PART, "data": block.model_dump(mode="json", exclude_none=True)}

    def _reasoning(self, block: ReasoningBlock, index: int, native: bool) -> dict[str, Any] | None:
        if block.redacted:
            self.losses.add(index, "reasoning", detail="redacted reasoning has no UI part")
            return None
        if block.signature is not None and not native:
            self.losses.add(index, "reasoning.signature", detail="a UI reasoning part keeps no signature")
        return _fields({"type": "reasoning", "text": block.text}, block)

    def _file(self, block: ImageBlock | AudioBlock | VideoBlock | FileBlock, index: int) -> dict[str, Any] | None:
        media = block.media_type
        if block.data is not None:
            url = data_uri(media, block.data)
        elif block.url is not None:
            url = block.url
            media = media or (decoded[0] if (decoded := parse_data_uri(url)) else None)
        else:
            self.losses.add(index, block.kind, detail="a file id is no URL, which a UI file part needs")
            return None
        if media is None:
            media = mimetypes.guess_type(block.filename or url)[0] or "application/octet-stream"
            self.losses.add(index, f"{block.kind}.media_type", "approximated", f"a file part needs one: sent {media}")
            if block.data is not None:
                url = data_uri(media, block.data)
        part: dict[str, Any] = {"type": "file", "mediaType": media}
        if block.filename is not None:
            part["filename"] = block.filename
        part["url"] = url
        if block.file_id is not None:
            self.losses.add(index, f"{block.kind}.file_id", detail="a UI file part has a URL only")
        return _fields(part, block)

    def _call(self, block: ToolCallBlock, index: int, native: bool) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        part: dict[str, Any] = ({"type": "dynamic-tool", "toolName": block.name} if own.get("dynamic")
                                else {"type": f"tool-{block.name}"})
        part["toolCallId"] = block.call_id
        part["state"] = own.get("state", "input-available")
        if own.get("no_input"):
            pass
        elif block.parse_error is not None and block.arguments_raw is not None:
            self.losses.add(index, "tool_call.arguments", "approximated",
                            f"not JSON ({block.parse_error}): input is the text {block.arguments_raw[:80]!r}")
            part["input"] = block.arguments_raw
        elif block.arguments is None and not native and not (block.arguments_raw or "").strip():
            part["input"] = {}  # no arguments: an empty object, as the APIs read it
        else:
            part["input"] = block.arguments
        return _fields(part, block)

    def result(self, block: ToolResultBlock, index: int) -> None:
        own = block.extras.get(NAME, {})
        waiting = self.calls.get(block.call_id)
        found = waiting.pop(0) if waiting else None
        if found is None:
            part = self._orphan(block.call_id, block.name, index)
        else:
            at, part = found
            if at != len(self.out) - 1:
                self.losses.add(index, "tool_result", "approximated",
                                f"moved into its call's part, in UIMessage {at} (not the last one)")
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="a UI tool part has the error text only")
        if own.get("state") == "output-denied":
            part["state"] = "output-denied"  # the approval (denied) is among the call's fields
            _fields(part, block)
            return
        state, key = _STATES[block.is_error]
        part["state"] = state
        if not own.get("no_output"):
            text = self._text(block, index)
            if own.get("json") and not block.is_error:
                value, failed = parse_json(text) if text else (None, None)
                part[key] = text if failed else value
            else:
                part[key] = text
        _fields(part, block)

    def _orphan(self, call_id: str, name: str | None, index: int) -> dict[str, Any]:
        """A part for a result (of ``call_id``, its tool ``name``) whose call is not among the parts
        written before it."""
        self.losses.add(index, "tool_result", "approximated",
                        "answers no call before it: written as a tool part of its own, without input")
        if self.current is None:
            self.current = {"id": self._fresh(f"msg_{index}"), "role": "assistant", "parts": []}
            self.out.append(self.current)
        part = {"type": f"tool-{name or ''}", "toolCallId": call_id, "state": "output-available",
                "input": None}
        self.current["parts"].append(part)
        return part

    def _text(self, block: ToolResultBlock, index: int) -> str:
        if isinstance(block.output, str):
            return block.output
        texts = [b.text for b in block.output if isinstance(b, TextBlock)]
        if len(texts) < len(block.output):
            self.losses.add(index, "tool_result.output", detail="a UI tool output keeps the text only here")
        return "\n".join(texts)


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be (a speaker
    reported dropped; its source message type ignored, as the canonical path ignores it)."""
    return writable(msg, NAME, own=False, speakers=True)


def write(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]] | dict[str, Any]:
    """Canonical messages (plain ones among them: ``store.lean``) as UIMessages."""
    messages = canonical(messages, unless=_takes)
    writer = _Writer(messages, losses)
    for index, msg in enumerate(messages):
        if msg.__class__ is Plain:
            writer.plain(msg, index)  # type: ignore[arg-type]
        else:
            writer.message(msg, index)  # type: ignore[arg-type]
    first = messages[0] if messages else None
    wrapper = first.extras.get(NAME, {}).get("wrapper") if first is not None and first.extras else None
    return writer.out if wrapper is None else {**wrapper, "messages": writer.out}
