"""Canonical messages as LangChain message dicts (the ``langchain`` format's writer).

Messages read from LangChain are written back in the shape they came in (``messages_to_dict``
item, ``dumpd`` constructor or bare dict) with the keys they had; all others become
``messages_to_dict`` items with every key ``messages_to_dict`` writes. What is written is
what ``messages_from_dict`` loads and what ``convert_to_openai_messages`` accepts: media
LangChain's OpenAI translation refuses (video, audio without inline data, files known only
by URL, images known only by a file id) become a text stand-in when they come from another
format (reported as approximated). LangChain messages have no timestamps or metadata: those
are reported dropped, never silently lost.
"""

from __future__ import annotations

from typing import Any

from ..lean import Call, Plain, writable, write_each
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
from ._common import Losses, b64encode, call_text, data_uri, dump_json, report_extras
from .langchain import CLASS_NAMES, FULL_KEYS, NAME

TAKES_PLAIN = True

_TYPES = {"system": "system", "user": "human", "assistant": "ai", "tool": "human"}
"""Canonical role -> LangChain message type (a tool message's non-result content speaks as a human)."""


def _own(block: Any) -> dict[str, Any]:
    return block.extras.get(NAME, {})


def _finish(out: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the source's unknown keys put back and the keys it left out removed."""
    out.update(notes.get("fields") or {})
    for key in notes.get("absent", ()):
        out.pop(key, None)
    return out


# --- blocks --------------------------------------------------------------------------------

_STAND_INS = {
    DataBlock: lambda b: b.data if isinstance(b.data, str) else dump_json(b.data),
    CodeBlock: lambda b: f"```{b.language or ''}\n{b.code}\n```",
    CodeResultBlock: lambda b: b.output if b.exit_code is None else f"[exit code {b.exit_code}]\n{b.output}",
    ErrorBlock: lambda b: f"[error{' ' + b.code if b.code else ''}: {b.message}]",
    HandoffBlock: lambda b: f"[handoff to {b.target}]",
}
"""Text for the blocks LangChain has no block for: what they say stays readable."""


def _media_stand_in(block: Any) -> str:
    where = block.url or block.filename or block.file_id or f"{len(block.data or b'')} bytes inline"
    return f"[{block.kind}{' ' + block.media_type if block.media_type else ''}: {where}]"


def _openai_accepts(block: Any) -> bool:
    """Whether LangChain's OpenAI translation takes this media block (it refuses the others)."""
    if isinstance(block, ImageBlock):
        return block.data is not None or block.url is not None
    if isinstance(block, AudioBlock):
        return block.data is not None and block.media_type is not None
    if isinstance(block, FileBlock):
        return block.data is not None or block.file_id is not None
    return False


def _media_out(block: Any) -> dict[str, Any]:
    notes = _own(block)
    if "image_url" in notes:  # an OpenAI-style part, as it came
        url = block.url if block.data is None else data_uri(block.media_type, block.data)
        inner = notes["image_url"]
        return _finish({"type": "image_url", "image_url": url if inner == "str" else {"url": url, **inner}}, notes)
    out: dict[str, Any] = {"type": block.kind}
    if block.url is not None:
        out["url"] = block.url
    if block.data is not None or "base64" in notes:
        out["base64"] = notes.get("base64") or b64encode(block.data or b"")
    if block.file_id is not None:
        out["file_id"] = block.file_id
    if block.media_type is not None:
        out["mime_type"] = block.media_type
    out = _finish(out, notes)
    if block.filename is not None:
        out["extras"] = {**(out.get("extras") or {}), "filename": block.filename}
    return out


def _call_part(block: ToolCallBlock) -> dict[str, Any]:
    notes = _own(block)
    if notes.get("invalid"):
        out = {"type": "invalid_tool_call", "id": None if "id" in notes else block.call_id,
               "name": None if "name" in notes else block.name, "args": block.arguments_raw,
               "error": notes.get("error")}
    else:
        out = {"name": block.name, "args": block.arguments, "id": None if "id" in notes else block.call_id,
               "type": "tool_call"}
    return _finish(out, notes)


def _call_out(block: ToolCallBlock, index: int, losses: Losses) -> tuple[str, dict[str, Any]]:
    """``("tool_calls" | "invalid_tool_calls", call)``: arguments that are not a JSON object
    (unparsable or another value) make an invalid tool call holding their text."""
    notes = _own(block)
    if notes:
        return ("invalid_tool_calls" if notes.get("invalid") else "tool_calls"), _call_part(block)
    if isinstance(block.arguments, dict) and not block.parse_error:
        return "tool_calls", {"name": block.name, "args": block.arguments, "id": block.call_id, "type": "tool_call"}
    raw = call_text(block)
    why = block.parse_error or "arguments are not a JSON object"
    if not block.parse_error:
        losses.add(index, "tool_call.arguments", "approximated",
                   "LangChain tool call arguments are an object; written as an invalid tool call with their text")
    return "invalid_tool_calls", {"type": "invalid_tool_call", "id": block.call_id, "name": block.name,
                                  "args": raw, "error": why}


def _part_out(block: Block, index: int, losses: Losses, where: str) -> dict[str, Any] | str | None:
    notes = _own(block)
    if isinstance(block, TextBlock):
        return block.text if notes.get("str") else _finish({"type": "text", "text": block.text}, notes)
    if isinstance(block, RefusalBlock):
        return _finish({"type": "refusal", "refusal": block.text}, notes)
    if isinstance(block, ReasoningBlock):
        if block.redacted:
            return {"type": "non_standard", "value": {"type": "redacted_thinking", "data": block.data or ""}}
        out = _finish({"type": "reasoning", "reasoning": block.text}, notes)
        if block.signature is not None:
            out["extras"] = {**(out.get("extras") or {}), "signature": block.signature}
        return out
    if isinstance(block, (ImageBlock, AudioBlock, VideoBlock, FileBlock)):
        if notes or _openai_accepts(block):
            return _media_out(block)
        losses.add(index, block.kind, "approximated", f"LangChain's OpenAI translation refuses this {block.kind} "
                   "(no inline data, or a kind it has no part for); text stand-in")
        return {"type": "text", "text": _media_stand_in(block)}
    if isinstance(block, DataBlock) and notes.get("block"):
        return block.data
    if isinstance(block, ToolCallBlock):  # in a tool result's output
        losses.add(index, "tool_call", "approximated", f"{where} holds no tool calls; rendered as text")
        return {"type": "text", "text": f"[tool call {block.name} ({block.call_id}): {dump_json(block.arguments)}]"}
    if isinstance(block, UsageBlock):
        losses.add(index, "usage", detail="LangChain content has no usage block")
        return None
    if isinstance(block, ToolResultBlock):  # nested in a result's output
        losses.add(index, "tool_result", "approximated", "a result inside a result; rendered as text")
        text = block.output if isinstance(block.output, str) else " ".join(getattr(b, "text", "") for b in block.output)
        return {"type": "text", "text": f"[tool result of {block.call_id}: {text}]"}
    losses.add(index, block.kind, "approximated", "LangChain has no block for it; rendered as text")
    return {"type": "text", "text": _STAND_INS[type(block)](block)}


def _content(parts: list[Any], as_list: bool) -> str | list[Any]:
    if not as_list and not parts:
        return ""
    if not as_list and len(parts) == 1 and isinstance(parts[0], dict) and parts[0].keys() == {"type", "text"} \
            and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


# --- messages ------------------------------------------------------------------------------


def _base(kind: str, msg: Message, content: Any, name: str | None, external_id: str | None) -> dict[str, Any]:
    notes = msg.extras.get(NAME, {})
    response = dict(notes.get("response_metadata") or {})
    if msg.model is not None:
        response["model_name"] = msg.model
    return {"content": content, "additional_kwargs": dict(notes.get("additional_kwargs") or {}),
            "response_metadata": response, "type": kind, "name": name, "id": external_id}


def _wrap(data: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
    """The message in the shape it came in (``messages_to_dict`` item by default)."""
    data = _finish(data, notes)
    kind = data["type"]
    if notes.get("no_type"):
        data.pop("type")
    if "lc" in notes:
        return {**notes["lc"], "kwargs": data}
    if notes.get("bare"):
        return data
    return {"type": kind, "data": data}


class _Writer:
    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.out: list[dict[str, Any]] = []

    def message(self, msg: Message, index: int) -> None:
        self._report(msg, index)
        results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
        rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
        own = {b.call_id for b in rest if isinstance(b, ToolCallBlock)}
        alone = len(results) == 1 and not rest
        for block in results:
            if block.call_id not in own:
                self.out.append(self._result(block, msg, index, alone))
        if rest or msg.role != "tool":
            self._body(msg, rest, index)
        for block in results:
            if block.call_id in own:  # results inside the calling message come after its calls
                self.out.append(self._result(block, msg, index, alone))

    def _report(self, msg: Message, index: int) -> None:
        if msg.created_at is not None:
            self.losses.add(index, "created_at", detail="LangChain messages have no timestamp")
        if msg.metadata:
            self.losses.add(index, "metadata", detail="LangChain messages have no such field")
        if msg.name is not None and msg.role == "tool" and not any(not isinstance(b, ToolResultBlock) for b in msg.content):
            self.losses.add(index, "name", detail="a ToolMessage's name is its tool's")
        if msg.usage is not None and msg.role != "assistant":
            self.losses.add(index, "usage", detail="only an AIMessage has usage_metadata")
        report_extras(msg, index, self.losses, NAME)

    def _body(self, msg: Message, blocks: list[Block], index: int) -> None:
        notes = msg.extras.get(NAME, {})
        chat = notes.get("kind") == "chat"
        kind = "chat" if chat else _TYPES[msg.role]
        if msg.role == "tool":
            self.losses.add(index, "role", "approximated", "a tool message's content besides results "
                            "becomes a HumanMessage")
        calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
        if calls and kind != "ai":
            self.losses.add(index, "tool_call", "approximated", f"a {msg.role} message cannot call tools; "
                            "the calls become an AIMessage after it")
            blocks = [b for b in blocks if not isinstance(b, ToolCallBlock)]
        fields: dict[str, list[Any]] = {"tool_calls": [], "invalid_tool_calls": []}
        parts: list[Any] = []
        legacy = None
        for block in blocks:
            if isinstance(block, ToolCallBlock):
                if _own(block).get("legacy"):  # OpenAI's function_call, where LangChain keeps it
                    legacy = {"name": block.name, "arguments": block.arguments_raw or dump_json(block.arguments)}
                    continue
                if _own(block).get("in_content"):
                    parts.append(_call_part(block))
                    if not _own(block).get("listed"):
                        continue
                key, call = _call_out(block, index, self.losses)
                fields[key].append(call)
            elif (part := _part_out(block, index, self.losses, "a message")) is not None:
                parts.append(part)
        content = _content(parts, notes.get("content") == "list")
        data = _base(kind, msg, content, msg.name, msg.external_id)
        if kind == "ai":
            data.update(fields, usage_metadata=self._usage(msg, index))
            if legacy is not None:
                data["additional_kwargs"]["function_call"] = legacy
        elif kind == "chat":
            data["role"] = msg.source_role if msg.source_role is not None else msg.role
        elif kind == "system" and msg.source_role is not None:  # as langchain-openai marks a developer message
            data["additional_kwargs"]["__openai_role__"] = msg.source_role
        if blocks or not calls or notes:
            self.out.append(_wrap(data, notes))
        if calls and kind != "ai":
            loose = Message(role="assistant", content=calls)
            self._body(loose, calls, index)

    def _usage(self, msg: Message, index: int) -> dict[str, Any] | None:
        if msg.usage is None:
            return None
        u = msg.usage
        total = u.total_tokens if u.total_tokens is not None else (u.input_tokens or 0) + (u.output_tokens or 0)
        if u.input_tokens is None or u.output_tokens is None:
            self.losses.add(index, "usage", "approximated", "LangChain usage needs input and output token "
                            "counts; a missing one is written as 0")
        rest = u.extras.get(NAME, {})
        if any(k != NAME for k in u.extras):
            self.losses.add(index, "usage.extras", detail="usage details of another format")
        return {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
                "total_tokens": total, **rest}

    def _result(self, block: ToolResultBlock, msg: Message, index: int, alone: bool) -> dict[str, Any]:
        notes = msg.extras.get(NAME, {}) if alone else {}
        if isinstance(block.output, str):
            content: Any = block.output
        else:
            parts = [_part_out(b, index, self.losses, "a ToolMessage") for b in block.output]
            content = [p for p in parts if p is not None]
            if not _own(block).get("list"):
                content = _content(content, False)
        if block.error:
            self.losses.add(index, "tool_result.error", detail="a ToolMessage has only status='error'")
        external_id = msg.external_id if alone else None
        if notes.get("kind") == "function":
            return _wrap(_base("function", msg, content, block.name, external_id), notes)
        data = _base("tool", msg if alone else Message(role="tool"), content, block.name, external_id)
        data.update(tool_call_id=block.call_id, artifact=notes.get("artifact"),
                     status="error" if block.is_error else "success")
        return _wrap(data, notes)

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same item and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        report_extras(msg, index, self.losses, NAME)
        content = msg.content
        if content and content[0].__class__ is not Call:  # a tool result
            result = content[0]
            self.out.append({"type": "tool", "data": {
                "content": msg.text, "additional_kwargs": {}, "response_metadata": {}, "type": "tool",
                "name": msg.name, "id": msg.external_id, "tool_call_id": result.call_id, "artifact": None,
                "status": "error" if result.is_error else "success"}})
            return
        kind = _TYPES[msg.role]
        data = {"content": msg.text or "", "additional_kwargs": {}, "response_metadata": {}, "type": kind,
                "name": msg.speaker, "id": msg.external_id}
        if kind == "ai":
            fields: dict[str, list[Any]] = {"tool_calls": [], "invalid_tool_calls": []}
            for call in content:
                key, item = self._plain_call(call, index)  # type: ignore[arg-type]
                fields[key].append(item)
            data.update(fields, usage_metadata=None)
        self.out.append({"type": kind, "data": data})

    def _plain_call(self, call: Call, index: int) -> tuple[str, dict[str, Any]]:
        """:func:`_call_out` of a plain call (its arguments parse: ``lean.bare_arguments``)."""
        arguments = call.parsed()
        if arguments.__class__ is dict:
            return "tool_calls", {"name": call.name, "args": arguments, "id": call.call_id, "type": "tool_call"}
        self.losses.add(index, "tool_call.arguments", "approximated",
                        "LangChain tool call arguments are an object; written as an invalid tool call with their text")
        return "invalid_tool_calls", {"type": "invalid_tool_call", "id": call.call_id, "name": call.name,
                                      "args": call.arguments_raw, "error": "arguments are not a JSON object"}

    def finish(self) -> list[dict[str, Any]]:
        return self.out


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be (its id and its
    speaker written)."""
    # its canonical path ignores source_type
    return writable(msg, NAME, ids=True, speakers=True)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as LangChain message dicts (``messages_from_dict`` loads them); plain ones
    among them (``store.lean``) written without their canonical message."""
    writer = _Writer(losses)
    write_each(messages, _takes, writer.plain, writer.message)
    return writer.finish()


def write_message(msg: Message, index: int, losses: Losses) -> list[dict[str, Any]]:
    """One message's items: ``from_canonical`` is their concatenation (``store.docs``); the
    writer keeps nothing from one message to the next."""
    writer = _Writer(losses)
    writer.message(msg, index)
    return writer.finish()


assert set(CLASS_NAMES) == set(FULL_KEYS)  # every type has its class and its keys
