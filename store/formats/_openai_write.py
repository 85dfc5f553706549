"""Export of the ``openai`` format (see :mod:`store.formats.openai`): canonical messages as
OpenAI Chat Completions message dicts, tool results as ``tool`` messages of their own.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..lean import Call, Plain
from ..model import (
    AudioBlock, Block, FileBlock, ImageBlock, Message, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock,
)
from ._common import Losses, b64encode, call_text, data_uri, dump_json, merge_own, report_extras, report_fields
from .openai import _AUDIO_FORMATS, NAME

TAKES_PLAIN = True

# --- from canonical --------------------------------------------------------------


_merge = partial(merge_own, fmt=NAME)


def _part_out(block: Block, index: int, losses: Losses) -> dict[str, Any] | None:
    match block:
        case TextBlock():
            return _merge({"type": "text", "text": block.text}, block.extras)
        case RefusalBlock():
            return _merge({"type": "refusal", "refusal": block.text}, block.extras)
        case ImageBlock():
            url = block.url if block.data is None else data_uri(block.media_type, block.data)
            if url is None:
                losses.add(index, "image", detail="an image without URL or data (a file id) has no OpenAI form")
                return None
            return _merge({"type": "image_url", "image_url": {"url": url}}, block.extras, "image_url")
        case AudioBlock():
            return _audio_out(block, index, losses)
        case FileBlock():
            ref: dict[str, Any] = {}
            raw = block.extras.get(NAME, {}).get("file_data")
            if block.data is not None or raw:
                ref["file_data"] = raw or data_uri(block.media_type, block.data or b"")
            for key in ("file_id", "filename"):
                if getattr(block, key) is not None:
                    ref[key] = getattr(block, key)
            return _merge({"type": "file", "file": ref}, block.extras, "file")
    losses.add(index, block.kind, detail="OpenAI messages have no place for it")
    return None


def _audio_out(block: AudioBlock, index: int, losses: Losses) -> dict[str, Any] | None:
    raw = block.extras.get(NAME, {}).get("raw")
    if raw:
        return _merge({"type": "input_audio", "input_audio": raw}, block.extras)
    fmt = _AUDIO_FORMATS.get(block.media_type or "")
    if block.data is None or fmt is None:
        losses.add(index, "audio", detail="OpenAI takes only inline wav or mp3 audio")
        return None
    audio = {"data": b64encode(block.data), "format": fmt}
    return _merge({"type": "input_audio", "input_audio": audio}, block.extras, "input_audio")


def _content_out(parts: list[dict[str, Any]], form: str | None) -> Any:
    if form in ("null", "absent") and not parts:
        return None
    if form != "list" and len(parts) == 1 and parts[0].get("type") == "text" and len(parts[0]) == 2:
        return parts[0]["text"]
    return parts if parts or form == "list" else None


def _tool_call_out(block: ToolCallBlock) -> dict[str, Any]:
    own = block.extras.get(NAME, {})
    if own.get("type") == "custom":
        call = {"id": block.call_id, "type": "custom", "custom": {"name": block.name, "input": block.arguments_raw or ""}}
        return _merge(call, block.extras, "custom")
    arguments = call_text(block)
    call = {"id": block.call_id, "type": "function", "function": {"name": block.name, "arguments": arguments}}
    return _merge(call, block.extras, "function")


# Which part types each role takes (images, audio and files only in user messages).
_ROLE_PARTS = {
    "system": {"text"}, "developer": {"text"}, "tool": {"text"},
    "user": {"text", "image_url", "input_audio", "file"}, "assistant": {"text", "refusal"},
}


def _stand_in(block: Block) -> str:
    if isinstance(block, (ImageBlock, AudioBlock, FileBlock)) or block.kind == "video":
        ref = block.url or block.filename or block.file_id or f"{len(block.data or b'')} bytes inline"
        return f"[{block.kind}{' ' + block.media_type if block.media_type else ''}: {ref}]"
    return getattr(block, "text", None) or f"[{block.kind}]"


def _parts_for(role: str, blocks: list[Block], index: int, losses: Losses) -> list[dict[str, Any]]:
    """Parts for a message of ``role``: what the role does not take becomes a text stand-in."""
    allowed = _ROLE_PARTS[role]
    parts = []
    for block in blocks:
        part = _part_out(block, index, losses)
        if part is None:
            continue
        if part["type"] not in allowed:
            losses.add(index, block.kind, "approximated", f"OpenAI {role} messages take no {part['type']}: text stand-in")
            part = {"type": "text", "text": _stand_in(block)}
        parts.append(part)
    return parts


def _result_out(block: ToolResultBlock, index: int, msg: Message, losses: Losses) -> dict[str, Any]:
    content: Any = block.output
    if not isinstance(block.output, str):
        content = _parts_for("tool", block.output, index, losses)
    if block.is_error:
        losses.add(index, "tool_result.is_error", "approximated", "OpenAI tool results have no error flag")
    legacy = msg.source_format == NAME and msg.source_role == "function"
    if legacy or block.extras.get(NAME, {}).get("content") == "null":
        null = block.extras.get(NAME, {}).get("content") == "null"
        return _merge({"role": "function", "name": block.name or "", "content": None if null else content}, msg.extras)
    out = {"role": "tool", "tool_call_id": block.call_id, "content": content}
    # a tool message's unknown keys go back on it (not on each result of a message holding several)
    alone = msg.role == "tool" and len(msg.content) == 1
    return _merge(out, msg.extras) if alone else out


def _message_out(msg: Message, index: int, losses: Losses) -> list[dict[str, Any]]:
    """One canonical message becomes its tool results (one message each) and then the rest."""
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    legacy: dict[str, Any] | None = None
    refusal: str | None = None
    rest: list[Block] = []
    for block in msg.content:
        if isinstance(block, ToolResultBlock):
            out.append(_result_out(block, index, msg, losses))
        elif isinstance(block, ToolCallBlock):
            if block.extras.get(NAME, {}).get("legacy"):
                legacy = {"name": block.name, "arguments": block.arguments_raw or dump_json(block.arguments)}
                legacy.update(block.extras[NAME].get("fields") or {})
            else:
                calls.append(_tool_call_out(block))
        elif isinstance(block, RefusalBlock) and block.extras.get(NAME, {}).get("field"):
            refusal = block.text
        else:
            rest.append(block)
    _report_message_fields(msg, index, losses)  # a tool message's fields too: never dropped in silence
    if msg.role == "tool" and not rest:
        return out
    role = "user" if msg.role == "tool" else _role(msg)
    parts = _parts_for(role, rest, index, losses)
    if not (parts or calls or legacy or refusal is not None or NAME in msg.extras):
        if msg.content:  # everything in it was dropped (reported above): no empty message
            return out
    return out + [_body(msg, parts, calls, legacy, refusal, index, losses)]


def _role(msg: Message) -> str:
    return msg.source_role if msg.source_role in ("system", "developer") and msg.role == "system" else msg.role


def _body(msg: Message, parts: list[dict[str, Any]], calls: list[dict[str, Any]], legacy: Any,
          refusal: str | None, index: int, losses: Losses) -> dict[str, Any]:
    own = msg.extras.get(NAME, {})
    role = "user" if msg.role == "tool" else _role(msg)
    if role != "assistant" and calls:
        losses.add(index, "tool_calls", detail=f"a {role} message cannot call tools in OpenAI")
    bare = role == "assistant" and not calls and legacy is None and refusal is None
    if (role in ("system", "developer", "user") or bare) and not parts and own.get("content") is None:
        parts = [{"type": "text", "text": ""}]
    body: dict[str, Any] = {"role": role}
    form = own.get("content")
    content = _content_out(parts, form)
    if form != "absent" or content is not None:
        body["content"] = content
    if refusal is not None:
        body["refusal"] = refusal
    if msg.name is not None:
        body["name"] = msg.name
    if role == "assistant" and (calls or own.get("empty_tool_calls")):
        body["tool_calls"] = calls
    if legacy is not None:
        body["function_call"] = legacy
    return _merge(body, msg.extras)


_NOT_IN_OPENAI = ("external_id", "created_at", "model", "usage")


_NO_FIELD = "OpenAI messages have no such field"


def _report_message_fields(msg: Message, index: int, losses: Losses) -> None:
    report_fields(msg, index, losses, NAME, _NOT_IN_OPENAI, _NO_FIELD)


def _plain_out(msg: Plain, index: int, losses: Losses) -> dict[str, Any]:
    """:func:`_message_out` of a plain message (``store.lean``): its one item, and the same losses,
    made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
    extras = msg.extras or _NONE
    if msg.external_id is not None:
        losses.add(index, "external_id", detail=_NO_FIELD)
    report_extras(msg, index, losses, NAME)
    content = msg.content
    if content and content[0].kind == "tool_result":
        return _merge({"role": "tool", "tool_call_id": content[0].call_id, "content": msg.text}, extras)
    own = extras.get(NAME, _NONE)
    form = own.get("content")
    body: dict[str, Any] = {"role": msg.role}
    if not content:  # its role and its text
        text: Any = [{"type": "text", "text": msg.text}] if form == "list" else msg.text
    else:  # an assistant's calls, a text before them or not
        text = _content_out([] if msg.text is None else [{"type": "text", "text": msg.text}], form)
    if form != "absent" or text is not None:
        body["content"] = text
    if msg.speaker is not None:
        body["name"] = msg.speaker
    if content or (msg.role == "assistant" and own.get("empty_tool_calls")):
        body["tool_calls"] = [_call_item(call) for call in content]  # type: ignore[arg-type]
    return _merge(body, extras)


def _call_item(call: Call) -> dict[str, Any]:
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call_text(call)}}


_NONE: dict[str, Any] = {}  # read only


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as OpenAI Chat Completions message dicts (plain ones among them)."""
    out = _Placed()
    called: set[str] = set()
    for index, msg in enumerate(messages):
        items = [_plain_out(msg, index, losses)] if msg.__class__ is Plain else _message_out(msg, index, losses)  # type: ignore[arg-type]
        results = [b.call_id for b in msg.content if b.kind == "tool_result"]
        for call_id in results:
            if call_id not in called:
                losses.add(index, "tool_result", "approximated", f"answers no call before it ({call_id!r}): "
                           "written where it stood, as a tool message the API refuses without its call")
        if not out.place(items, results, msg.source_format != NAME):
            losses.add(index, "tool_result", "approximated",
                       "moved right after its call: the API refuses other messages between them")
        calls = [b.call_id for b in msg.content if b.kind == "tool_call"]
        called.update(calls)
        out.opened(calls)
    return out.items


class _Placed:
    """The output, and where each call's run (its assistant message and the tool messages answering it
    so far) ends: a result of another format that other messages have come between goes there (one of
    OpenAI's own is written where it stood, so that a same-format round trip is exact)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.ends: dict[str, int] = {}  # call id -> the index just after its run

    def place(self, items: list[dict[str, Any]], results: list[str], movable: bool) -> bool:
        """Add one message's items (its tool messages first); False where its results were moved."""
        runs = [self.ends[c] for c in results if c in self.ends]
        end, size = (max(runs) if runs else None), len(self.items)
        lead = sum(1 for item in items if item.get("role") == "tool") if runs else 0
        if end is None or end == size or not movable or not lead:
            self.items += items
            if end == size:  # its results continue the run
                self._grow(end, lead)
            return True
        self.items[end:end] = items[:lead]
        self.items += items[lead:]
        self._grow(end, lead)
        return False

    def _grow(self, at: int, by: int) -> None:
        for call_id, end in self.ends.items():
            if end >= at:
                self.ends[call_id] = end + by

    def opened(self, calls: list[str]) -> None:
        for call_id in calls:
            self.ends[call_id] = len(self.items)


write_message = _message_out
"""One message's items: ``from_canonical`` is their concatenation (``store.docs``) for messages of this
format; only a result answering no call before it is reported in a list and not alone."""
