"""Canonical messages as a Pydantic AI history: the writer of :mod:`.pydantic_ai`.

Blocks go to the side of the history that holds them (tool calls, thinking, builtin tool
returns and an assistant's blocks to a ``ModelResponse``, the rest to a ``ModelRequest``)
and each becomes the part its ``extras["pydantic-ai"]["part"]`` names, or the natural one
(text in a system message: a system prompt; text and media elsewhere in a request: items
of one user prompt; a tool result: a tool return). Canonical messages read from one
Pydantic AI message (``joined``) become one again; consecutive request-side messages of
other formats share one ``ModelRequest``, as Pydantic AI itself writes a system prompt, a
user prompt and tool returns, each part keeping its message's time as its ``timestamp``.
"""

from __future__ import annotations

import base64
from typing import Any

from ..lean import ANY_ROLE, Call, Plain, writable, write_each
from ..model import (
    AudioBlock, Block, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock, RefusalBlock, TextBlock,
    ToolCallBlock, ToolResultBlock, VideoBlock,
)
from ._common import Losses, dump_json, parse_json, report_extras
from .pydantic_ai import NAME, _URL_KIND

TAKES_PLAIN = True

_MEDIA = (ImageBlock, AudioBlock, VideoBlock, FileBlock)
_RESULT_KINDS = {"tool-return", "retry-prompt", "builtin-tool-return"}


def _own(block: Block) -> dict[str, Any]:
    return block.extras.get(NAME, {})


def _side(block: Block, role: str) -> str:
    """``response`` or ``request``: where ``block`` of a message with ``role`` stands."""
    if isinstance(block, (ToolCallBlock, ReasoningBlock)):
        return "response"
    if isinstance(block, ToolResultBlock):
        return "response" if _own(block).get("part", {}).get("part_kind") == "builtin-tool-return" else "request"
    return "response" if role == "assistant" else "request"


def _chunks(msg: Message) -> list[tuple[str, list[Block]]]:
    chunks: list[tuple[str, list[Block]]] = []
    for block in msg.content:
        side = _side(block, msg.role)
        if chunks and chunks[-1][0] == side:
            chunks[-1][1].append(block)
        else:
            chunks.append((side, [block]))
    return chunks or [("response" if msg.role == "assistant" else "request", [])]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")  # as pydantic-ai's serializer writes bytes


def _stand_in(block: Block) -> str:
    """The text a block with no place in Pydantic AI is written as."""
    match block:
        case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock():
            return f"[{block.kind}: {block.url or block.filename or block.file_id or 'inline data'}]"
        case DataBlock():
            return dump_json(block.data)
    for attr in ("text", "message", "code", "output"):
        if isinstance(value := getattr(block, attr, None), str):
            return f"[error] {value}" if attr == "message" else value
    return f"[{block.kind}: {getattr(block, 'target', '')}]"


class _Writer:
    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.out: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}  # call id -> tool name, for results that do not name theirs
        self.prompt: tuple[dict[str, Any], str | None] | None = None  # the open user prompt and its form
        self.stamp: str | None = None  # the message's time, for the parts of another format's message

    # --- messages ----------------------------------------------------------------------

    def message(self, msg: Message, index: int) -> None:
        own = msg.extras.get(NAME, {})
        self.stamp = None if own else (msg.created_at.isoformat() if msg.created_at else None)
        for n, (side, blocks) in enumerate(_chunks(msg)):
            target = self._target(msg, own, side, n, index)
            self.prompt = None
            for block in blocks:
                self._block(block, side, msg.role, target, index)
            self._close()

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same parts and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        content = msg.content
        result = bool(content) and content[0].__class__ is not Call
        kind = "response" if msg.role == "assistant" else "request"
        prev = self.out[-1] if self.out else None
        if prev is not None and prev["kind"] == kind == "request":  # another format's request side joins it
            target = prev
        else:
            target = {"parts": [], "kind": kind}
            if kind == "response" and msg.external_id is not None:  # as _response_fields writes it
                target["provider_response_id"] = msg.external_id
            self.out.append(target)
        if msg.speaker is not None:
            self.losses.add(index, "name", detail=f"a Pydantic AI {kind} has no such field")
        if kind == "request" and msg.external_id is not None:  # as _report reports it
            self.losses.add(index, "external_id", detail="a Pydantic AI request has no such field")
        report_extras(msg, index, self.losses, NAME)
        self.prompt, self.stamp, parts = None, None, target["parts"]
        if result:
            call_id = content[0].call_id
            name = msg.name if msg.name is not None else self.names.get(call_id)
            if name is None:
                self.losses.add(index, "tool_result.name", "approximated", "the tool's name is unknown: written as ''")
            part = {"tool_name": name or "", "content": msg.text, "part_kind": "tool-return", "tool_call_id": call_id}
            parts.append({**part, "outcome": "failed"} if content[0].is_error else part)
        elif kind == "response":
            if msg.text is not None:
                parts.append({"content": msg.text, "part_kind": "text"})
            for call in content:
                self.names[call.call_id] = call.name
                args = call.arguments_raw if call.arguments_raw is not None else call.arguments  # type: ignore[union-attr]
                parts.append({"tool_name": call.name, "part_kind": "tool-call", "args": args,  # type: ignore[union-attr]
                              "tool_call_id": call.call_id})
        else:
            parts.append({"content": msg.text, "part_kind": "system-prompt" if msg.role == "system" else "user-prompt"})

    def _target(self, msg: Message, own: dict[str, Any], side: str, n: int, index: int) -> dict[str, Any]:
        kind = "response" if side == "response" else "request"
        prev = self.out[-1] if self.out else None
        if prev is not None and prev["kind"] == kind and n == 0 and (
                own.get("joined") or (not own and kind == "request" and not msg.metadata)):
            self._report(msg, index, kind, merged=True)
            return prev
        head: dict[str, Any] = {"parts": [], "kind": kind, **own.get("defaults", {}), **own.get("fields", {})}
        if n == 0:
            if "timestamp" in own or msg.created_at is not None:
                # as read where it did not parse ("", or null), else the message's time
                head["timestamp"] = own["timestamp"] if "timestamp" in own else msg.created_at.isoformat()  # type: ignore[union-attr]
            if msg.metadata:
                head["metadata"] = msg.metadata
            if kind == "response":
                self._response_fields(msg, head)
            self._report(msg, index, kind)
        self.out.append(head)
        return head

    def _response_fields(self, msg: Message, head: dict[str, Any]) -> None:
        if msg.model is not None:
            head["model_name"] = msg.model
        if msg.external_id is not None:
            head["provider_response_id"] = msg.external_id
        if msg.usage is not None:
            usage = {k: v for k, v in (("input_tokens", msg.usage.input_tokens),
                                       ("output_tokens", msg.usage.output_tokens)) if v is not None}
            head["usage"] = {**usage, **msg.usage.extras.get(NAME, {})}

    def _report(self, msg: Message, index: int, kind: str, merged: bool = False) -> None:
        if msg.extras.get(NAME):
            return
        fields = ["name"] + (["model", "usage", "external_id"] if kind == "request" else [])
        for field in fields:
            if getattr(msg, field) is not None:
                self.losses.add(index, field, detail=f"a Pydantic AI {kind} has no such field")
        report_extras(msg, index, self.losses, NAME)

    # --- parts -------------------------------------------------------------------------

    def _part(self, target: dict[str, Any], block: Block, built: dict[str, Any]) -> dict[str, Any]:
        """``built`` completed with the keys the block's part came with (or a timestamp)."""
        own = _own(block)
        part = {**built, **own.get("part", {})}
        if "part" not in own and self.stamp and built["part_kind"] in _STAMPED:
            part["timestamp"] = self.stamp
        self._close()
        target["parts"].append(part)
        return part

    def _close(self) -> None:
        if self.prompt is not None:
            part, form = self.prompt
            items = part["content"]
            if form != "list" and len(items) == 1 and isinstance(items[0], str):
                part["content"] = items[0]
            self.prompt = None

    def _block(self, block: Block, side: str, role: str, target: dict[str, Any], index: int) -> None:
        own = _own(block)
        kind = own.get("part", {}).get("part_kind")
        if own.get("raw") == "part" and isinstance(block, DataBlock):
            self._close()
            target["parts"].append(block.data)
        elif side == "response":
            self._response_block(block, kind, target, index)
        elif isinstance(block, ToolResultBlock):
            self._part(target, block, self._result(block, kind or "tool-return", index))
        elif isinstance(block, TextBlock) and (kind in ("system-prompt", "retry-feedback", "retry-prompt")
                                               or (kind is None and role == "system" and not self.prompt)):
            text: Any = parse_json(block.text)[0] if own.get("json") else block.text
            self._part(target, block, {"content": text, "part_kind": kind or "system-prompt"})
        else:
            self._prompt_item(block, target, index)

    def _prompt_item(self, block: Block, target: dict[str, Any], index: int) -> None:
        own = _own(block)
        if self.prompt is None or "part" in own:
            part = self._part(target, block, {"content": [], "part_kind": "user-prompt"})
            self.prompt = (part, own.get("form"))
        item = self._item(block, index)
        if item is not None:
            self.prompt[0]["content"].append(item)

    def _item(self, block: Block, index: int) -> Any:
        own = _own(block)
        if own.get("raw") == "item" and isinstance(block, DataBlock):
            return block.data
        if isinstance(block, TextBlock):
            return {"content": block.text, **own["item"]} if "item" in own else block.text
        if isinstance(block, _MEDIA):
            return self._media(block, index, allow_url=True)
        self.losses.add(index, block.kind, "approximated", "written as text in the user prompt")
        return _stand_in(block)

    def _media(self, block: Any, index: int, allow_url: bool) -> dict[str, Any] | None:
        item = dict(_own(block).get("item", {}))
        if block.data is not None:
            if block.media_type is None and "media_type" not in item:
                self.losses.add(index, f"{block.kind}.media_type", "approximated", "sent as application/octet-stream")
            return {"data": _b64(block.data), "media_type": block.media_type or "application/octet-stream",
                    "kind": "binary", **item}
        if block.url is not None and allow_url:
            return {"url": block.url, "kind": _URL_KIND[block.kind], **item}
        if block.file_id is not None and allow_url:
            if "provider_name" not in item:
                self.losses.add(index, f"{block.kind}.file_id", "approximated",
                                "an uploaded file of provider 'openai' (the source does not say whose)")
            return {"file_id": block.file_id, "provider_name": "openai", "kind": "uploaded-file", **item}
        return None

    def _result(self, block: ToolResultBlock, kind: str, index: int) -> dict[str, Any]:
        own = _own(block)
        content: Any = block.output
        if own.get("json"):
            content = parse_json(block.output)[0] if isinstance(block.output, str) else content
        elif not isinstance(content, str):
            content = [item for b in block.output if (item := self._item(b, index)) is not None]
        name = block.name if block.name is not None else self.names.get(block.call_id)
        if name is None:
            self.losses.add(index, "tool_result.name", "approximated", "the tool's name is unknown: written as ''")
        part = {"tool_name": name or "", "content": content, "part_kind": kind}
        if not own.get("no_id"):
            part["tool_call_id"] = block.call_id
        if block.is_error and "part" not in own and kind != "retry-prompt":
            part["outcome"] = "failed"
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="Pydantic AI tool returns have only an outcome")
        return part

    def _response_block(self, block: Block, kind: str | None, target: dict[str, Any], index: int) -> None:
        own = _own(block)
        match block:
            case TextBlock():
                self._part(target, block, {"content": block.text, "part_kind": "text"})
            case RefusalBlock():
                self.losses.add(index, "refusal", "approximated", "written as text")
                self._part(target, block, {"content": block.text, "part_kind": "text"})
            case ReasoningBlock() if block.redacted:
                if block.data is None:
                    self.losses.add(index, "reasoning", detail="redacted reasoning without its data")
                    return
                built = {"content": "", "id": "redacted_thinking", "signature": block.data, "part_kind": "thinking"}
                # Anthropic's redacted thinking, as pydantic-ai's Anthropic model reads it in
                self._part(target, block, built if "part" in own else {**built, "provider_name": "anthropic"})
            case ReasoningBlock():
                built = {"content": block.text, "part_kind": "thinking"}
                self._part(target, block, built if block.signature is None else {**built, "signature": block.signature})
            case ToolCallBlock():
                self.names[block.call_id] = block.name
                self._part(target, block, self._call(block, kind or "tool-call"))
            case ToolResultBlock():
                self._part(target, block, self._result(block, kind or "builtin-tool-return", index))
            case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock() if block.data is not None:
                self._part(target, block, {"content": self._media(block, index, allow_url=False), "part_kind": "file"})
            case _:
                self.losses.add(index, block.kind, "approximated", "written as text (a response has no place for it)")
                self._part(target, block, {"content": _stand_in(block), "part_kind": "text"})

    def _call(self, block: ToolCallBlock, kind: str) -> dict[str, Any]:
        part: dict[str, Any] = {"tool_name": block.name, "part_kind": kind}
        if block.arguments_raw is not None:
            part["args"] = block.arguments_raw
        elif isinstance(block.arguments, dict):
            part["args"] = block.arguments
        elif block.arguments is not None:  # args are an object or its JSON text
            part["args"] = dump_json(block.arguments)
        if not _own(block).get("no_id"):
            part["tool_call_id"] = block.call_id
        return part


_STAMPED = {"system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback", "builtin-tool-return"}
"""Parts with a ``timestamp`` of their own."""


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be (a speaker
    reported dropped; an id a response's, a request's reported dropped; its source message type ignored, as
    the canonical path ignores it)."""
    return writable(msg, NAME, texts=ANY_ROLE, ids=True, speakers=True)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as a Pydantic AI history
    (``ModelMessagesTypeAdapter`` JSON)."""
    writer = _Writer(losses)
    write_each(messages, _takes, writer.plain, writer.message)
    return writer.out
