"""Export of the ``anthropic`` format (see :mod:`store.formats.anthropic`): canonical messages
as an Anthropic request body, kept to the API's rules (alternating turns, a user turn first,
every tool_use answered at the start of the next message, no empty text).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, assert_never

from ..lean import Plain, anonymous
from ..model import (
    AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, ErrorBlock, FileBlock, HandoffBlock, ImageBlock,
    Message, ReasoningBlock, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock, UsageBlock, VideoBlock,
)
from ._anthropic_fast import content as _content, native, one_pass
from ._common import Losses, b64encode, dump_json, parse_data_uri, report_extras
from .anthropic import NAME, _PASSTHROUGH

TAKES_PLAIN = True

# --- from canonical --------------------------------------------------------------

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))
_ALLOWED = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image", "document", *_PASSTHROUGH}),
    "assistant": frozenset({"text", "thinking", "redacted_thinking", "tool_use", *_PASSTHROUGH}),
    "result": frozenset({"text", "image", "document", *_PASSTHROUGH}),
}
_ID = re.compile(r"[A-Za-z0-9_-]+")
_START = "(conversation continues)"
_NO_RESULT = "(no result was recorded)"
_NOT_IN_ANTHROPIC = ("external_id", "created_at", "model", "usage", "metadata")
_ROLE = {"tool": "user"}
_NONE: dict[str, Any] = {}  # read only


def _merge(out: dict[str, Any], extras: dict[str, Any], inner_key: str | None = None) -> dict[str, Any]:
    if NAME not in extras:  # most blocks
        return out
    own = extras[NAME]
    if inner_key and own.get("inner") and isinstance(out.get(inner_key), dict):
        out[inner_key].update(own["inner"])
    out.update(own.get("fields") or {})
    return out


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _sniff(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in _MAGIC if data.startswith(magic)), None)


@dataclass(slots=True)
class _Turn:
    """An Anthropic message being assembled; ``index`` is its (first) canonical message's."""

    role: str  # user, assistant, system (the top-level prompt) or inline (a role-system message)
    blocks: list[dict[str, Any]]
    index: int
    form: str | None = None  # "list": the source wrote content as a list
    fields: dict[str, Any] = field(default_factory=dict)
    results: bool = False  # holds tool results only
    joined: bool = False  # the rest of the Anthropic message before it
    separate: bool = False  # a message of its own in the source, though the role repeats
    native: bool = False  # read from Anthropic: written back as it was


class _Writer:
    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.origin: dict[int, int] = {}  # id() of a written tool_result -> index of its message

    def turns(self, msg: Message, index: int) -> list[_Turn]:
        """``msg`` as Anthropic turns: its tool results (a user turn, before the rest, or after
        it in an assistant message, whose own calls they answer) and the rest."""
        own, native = msg.extras.get(NAME, _NONE), msg.source_format == NAME
        values = msg.__dict__  # pydantic's attribute access, five times a message, costs more
        for name in _NOT_IN_ANTHROPIC:
            if values[name]:
                self.losses.add(index, name, detail="Anthropic messages have no such field")
        report_extras(msg, index, self.losses, NAME)
        rest: list[Block] = []
        results: list[ToolResultBlock] = []
        for b in msg.content:
            (results if b.kind == "tool_result" else rest).append(b)  # type: ignore[arg-type]
        if msg.role == "system":
            role = "inline" if own.get("inline") else "system"
        else:
            role = _ROLE.get(msg.role, msg.role)
        where = "system" if msg.role == "system" else role
        body = _Turn(role, [p for b in rest if (p := self.placed(b, where, index, native))], index,
                     own.get("content"), native=native)
        if msg.name is not None:
            self._name(msg, body, index)
        out = [body]
        if results:
            answers = _Turn("user", [self.result(b, index, native) for b in results], index, "list",
                            results=True, native=native)
            out = [body, answers] if msg.role == "assistant" else [answers, body]
        if own:
            out[0].fields, out[0].joined = own.get("fields") or {}, own.get("joined", False)
            out[0].separate = own.get("separate", False)
        if not (body.blocks or results or native) and all(isinstance(b, TextBlock) and not b.text
                                                            for b in rest):
            self.losses.add(index, "content", detail="an empty message: Anthropic rejects empty content")
        if body.blocks and not results:
            return out
        return [t for t in out if t.blocks or (native and t is out[0])]

    def plain(self, msg: Plain, index: int) -> list[_Turn]:
        """:meth:`turns` of a plain message (``store.lean``): the same turns and losses, made
        without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        if native(msg):
            return self.turns(Message.model_validate(msg.fields()), index)
        self.lost_notes(msg, index)
        content, text = msg.content, msg.text
        if content and content[0].kind == "tool_result":
            part = self.plain_result(msg)
            self.origin[id(part)] = index
            return [_Turn("user", [part], index, "list", results=True)]
        blocks = [{"type": "text", "text": text}] if text and not text.isspace() else []  # isspace: strip() is ""
        if text and not blocks:
            self.losses.add(index, "text", detail="whitespace-only text: the API rejects it")
        if content:  # an assistant's calls
            blocks += self.plain_uses(msg, index)
        if blocks:
            return [_Turn(msg.role, blocks, index, None)]
        if text == "":
            self.losses.add(index, "content", detail="an empty message: Anthropic rejects empty content")
        return []

    def lost_notes(self, msg: Plain, index: int) -> None:
        """Report what of a plain message Anthropic has no place for, as :meth:`turns` does: its source's id
        (an empty one is none), the notes of other formats (a reasoning text)."""
        if msg.external_id:
            self.losses.add(index, "external_id", detail="Anthropic messages have no such field")
        report_extras(msg, index, self.losses, NAME)

    def plain_result(self, msg: Plain) -> dict[str, Any]:
        """The ``tool_result`` part of a plain tool result."""
        part: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.wire_id(msg.content[0].call_id)}
        if msg.text:
            part["content"] = msg.text
        return part

    def plain_uses(self, msg: Plain, index: int) -> list[dict[str, Any]]:
        """The ``tool_use`` parts of a plain message's calls."""
        return [self._use(call.call_id, call.name, call.parsed(), call.arguments_raw, index)  # type: ignore[union-attr]
                for call in msg.content]

    def _name(self, msg: Message, turn: _Turn, index: int) -> None:
        """A speaker name as a ``[name] `` prefix of the first text: Anthropic has no name field."""
        if msg.name is None or msg.name.lower() == msg.role:
            return
        text = next((p for p in turn.blocks if p["type"] == "text" and turn.role != "inline"), None)
        if text is None or turn.role == "system":
            self.losses.add(index, "name", detail="Anthropic messages have no speaker names")
            return
        text["text"] = f"[{msg.name}] {text['text']}"
        self.losses.add(index, "name", "approximated", f"written as a [{msg.name}] prefix of the text")

    def placed(self, block: Block, where: str, index: int, native: bool) -> dict[str, Any] | None:
        """``block`` as an Anthropic block, if a block of its type may stand ``where``."""
        part = self.part(block, index, native)
        if part is None or native or part["type"] in _ALLOWED[where]:
            return part
        self.losses.add(index, block.kind, detail=f"Anthropic takes no {part['type']} in {where} messages")
        return None

    def part(self, block: Block, index: int, native: bool) -> dict[str, Any] | None:
        match block:
            case TextBlock():
                if native or block.text.strip():
                    return _merge(_text(block.text), block.extras)
                if block.text:
                    self.losses.add(index, "text", detail="whitespace-only text: the API rejects it")
            case ToolCallBlock():
                return self._tool_use(block, index)
            case RefusalBlock():
                return self._stand_in(index, "refusal", block.text)
            case ReasoningBlock():
                if block.redacted and block.data is not None:
                    return _merge({"type": "redacted_thinking", "data": block.data}, block.extras)
                if not block.redacted and block.signature is not None:
                    return _merge({"type": "thinking", "thinking": block.text, "signature": block.signature},
                                  block.extras)
                self.losses.add(index, "reasoning", detail="Anthropic takes only signed or redacted thinking")
            case ImageBlock() | FileBlock():
                return self._media(block, index)
            case AudioBlock() | VideoBlock() | UsageBlock() | ToolResultBlock():
                self.losses.add(index, block.kind, detail="Anthropic has no place for it here")
            case ErrorBlock():
                return self._stand_in(index, "error", f"[error] {block.message}")
            case DataBlock():
                if block.extras.get(NAME, {}).get("block") and isinstance(block.data, dict):
                    return dict(block.data)
                return self._stand_in(index, "data", dump_json(block.data))
            case CodeBlock():
                return self._stand_in(index, "code", f"```{block.language or ''}\n{block.code}\n```")
            case CodeResultBlock():
                return self._stand_in(index, "code_result", block.output)
            case HandoffBlock():
                return self._stand_in(index, "handoff", f"[handoff to {block.target}]")
            case _:
                assert_never(block)
        return None

    def _stand_in(self, index: int, kind: str, text: str) -> dict[str, Any] | None:
        if not text.strip():
            self.losses.add(index, kind, detail="empty, and Anthropic rejects empty text")
            return None
        self.losses.add(index, kind, "approximated", "rendered as text")
        return _text(text)

    def _media(self, block: ImageBlock | FileBlock, index: int) -> dict[str, Any] | None:
        image = isinstance(block, ImageBlock)
        source = self._source(block, index, image)
        if source is None:
            return None
        part: dict[str, Any] = {"type": "image" if image else "document", "source": source}
        if block.filename is not None and image:
            self.losses.add(index, "image.filename", detail="Anthropic images have no file name")
        elif block.filename is not None:
            part["title"] = block.filename
        return _merge(part, block.extras, "source")

    def _source(self, block: ImageBlock | FileBlock, index: int, image: bool) -> dict[str, Any] | None:
        own = block.extras.get(NAME, {})
        data, media = block.data, block.media_type
        if isinstance(own.get("source"), dict):
            return dict(own["source"])
        if own.get("raw") is not None:
            return {"type": "base64", "media_type": media or "", "data": own["raw"]}
        if data is None and block.url and (decoded := parse_data_uri(block.url)):
            media, data = decoded
        if data is not None and image:
            return self._image_data(data, media, index)
        if data is not None:
            return self._document_data(data, media, own, index)
        if block.url is not None:
            return {"type": "url", "url": block.url}
        if block.file_id is not None:
            return {"type": "file", "file_id": block.file_id}
        self.losses.add(index, block.kind, detail=f"a {block.kind} without data, URL or file id")
        return None

    def _image_data(self, data: bytes, media: str | None, index: int) -> dict[str, Any] | None:
        found = media if media in _IMAGE_TYPES else _sniff(data)
        if found is None:
            self.losses.add(index, "image", detail=f"a {media or 'untyped'} image: Anthropic takes jpeg/png/gif/webp")
            return None
        if media is not None and found != media:
            self.losses.add(index, "image.media_type", "approximated", f"{media} sent as {found}")
        return {"type": "base64", "media_type": found, "data": b64encode(data)}

    def _document_data(self, data: bytes, media: str | None, own: dict[str, Any],
                       index: int) -> dict[str, Any] | None:
        if own.get("source") == "text":
            return {"type": "text", "media_type": media, "data": data.decode("utf-8", "replace")}
        if media == "application/pdf":
            return {"type": "base64", "media_type": media, "data": b64encode(data)}
        if (media or "").startswith("text/"):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                if media != "text/plain":
                    self.losses.add(index, "file.media_type", "approximated", f"{media} sent as text/plain")
                return {"type": "text", "media_type": "text/plain", "data": text}
        self.losses.add(index, "file", detail=f"a {media or 'untyped'} file: Anthropic takes PDF or plain text")
        return None

    def _tool_use(self, block: ToolCallBlock, index: int) -> dict[str, Any]:
        return _merge(self._use(block.call_id, block.name, block.arguments, block.arguments_raw, index), block.extras)

    def _use(self, call_id: str, name: str, arguments: Any, raw: str | None, index: int) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            if arguments is not None or (raw or "").strip():
                raw = raw if raw is not None else dump_json(arguments)
                self.losses.add(index, "tool_call.arguments", "approximated",
                                f"tool_use input must be a JSON object; sent {{}} instead of {raw[:80]!r}")
            arguments = {}
        return {"type": "tool_use", "id": self.wire_id(call_id, index), "name": name, "input": arguments}

    def wire_id(self, call_id: str, index: int | None = None) -> str:
        """``call_id`` if the API takes it (``[A-Za-z0-9_-]+``), else a stable stand-in."""
        if _ID.fullmatch(call_id):
            return call_id
        digest = hashlib.sha1(call_id.encode()).hexdigest()[:8]
        safe = f"{re.sub(r'[^A-Za-z0-9_-]', '_', call_id)[:48]}_{digest}"
        if index is not None:
            self.losses.add(index, "call_id", "approximated", f"{call_id!r} sent as {safe!r} (the API's pattern)")
        return safe

    def result(self, block: ToolResultBlock, index: int, native: bool) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        part: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.wire_id(block.call_id)}
        if isinstance(block.output, str):
            if block.output or own.get("content") == "empty":
                part["content"] = block.output
        elif (parts := [p for b in block.output if (p := self.placed(b, "result", index, native))]) or native:
            part["content"] = parts
        if block.is_error or own.get("no_error"):
            part["is_error"] = block.is_error
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="Anthropic tool results have only is_error")
        self.origin[id(part)] = index
        return _merge(part, block.extras)

    # --- the API's ordering rules ---------------------------------------------------

    def alternate(self, turns: list[_Turn]) -> list[_Turn]:
        """Merge consecutive same-role turns (silently the parts of one source message, and
        tool results with the user turn after them, Anthropic's own grouping), and start
        with a user turn."""
        out: list[_Turn] = []
        for turn in turns:
            prev = out[-1] if out else None
            if prev is None or prev.role != turn.role or (turn.separate and not turn.joined):
                out.append(turn)
                continue
            if not (turn.joined or turn.results or (prev.results and turn.role == "user")):
                self.losses.add(turn.index, "role", "approximated",
                                f"merged into the previous {turn.role} message (Anthropic roles alternate)")
            prev.blocks += turn.blocks
            prev.form, prev.results = "list", prev.results and turn.results
            prev.native = prev.native and turn.native
        first = next((i for i, t in enumerate(out) if t.role != "inline"), None)
        if first is not None and out[first].role == "assistant" and not out[first].native:
            self.losses.add(out[first].index, "role", "approximated",
                            f"a user turn {_START!r} put before it: Anthropic starts with the user")
            out.insert(first, _Turn("user", [_text(_START)], out[first].index))
        return out

    def link(self, turns: list[_Turn]) -> list[_Turn]:
        """Answer every tool_use at the start of the next turn, which must be a user one."""
        out: list[_Turn] = []
        calls: list[str] = []
        for turn in turns:
            if out and out[-1].native and turn.native:
                pass
            elif calls and turn.role != "user":
                out.append(self._answer(_Turn("user", [], out[-1].index, "list"), calls))
            elif turn.role == "user":
                self._answer(turn, calls)
            calls = [p["id"] for p in turn.blocks if p.get("type") == "tool_use"] if turn.role == "assistant" else []
            out.append(turn)
        return out

    def _answer(self, turn: _Turn, calls: list[str]) -> _Turn:
        blocks = turn.blocks
        if len(blocks) == len(calls) and all(p.get("type") == "tool_result" and p["tool_use_id"] == c
                                             for p, c in zip(blocks, calls)) and len(set(calls)) == len(calls):
            turn.form = "list"  # each call answered in order, and nothing else: most of an agent's turns
            return turn
        results = [p for p in blocks if p.get("type") == "tool_result"]
        if not (results or calls):
            return turn
        answered: dict[str, dict[str, Any]] = {}
        orphans = []
        for part in results:
            if part["tool_use_id"] in calls and part["tool_use_id"] not in answered:
                answered[part["tool_use_id"]] = part
            else:
                orphans.append(part)
        missing = [c for c in calls if c not in answered]
        first, stray = {id(p) for p in answered.values()}, {id(p) for p in orphans}
        if missing:
            self.losses.add(turn.index, "tool_result", "approximated",
                            f"no result for tool_use {', '.join(missing)}: answered with {_NO_RESULT!r}")
        if turn.blocks[: len(answered)] != list(answered.values()):
            self.losses.add(turn.index, "tool_result", "approximated", "moved before the other content")
        turn.blocks = [
            *answered.values(),
            *({"type": "tool_result", "tool_use_id": c, "content": _NO_RESULT, "is_error": True}
              for c in missing),
            # a result that answers no call becomes text where it stood, after the text before it
            *(p for part in turn.blocks if id(part) not in first
              for p in (self._orphan(part) if id(part) in stray else [part])),
        ]
        turn.form = "list"
        return turn

    def _orphan(self, part: dict[str, Any]) -> list[dict[str, Any]]:
        """A result answering no call of the turn before, as text (the API would reject it)."""
        self.losses.add(self.origin.get(id(part), 0), "tool_result", "approximated",
                        "answers no tool_use of the message before it; rendered as text")
        label = f"[result of tool call {part['tool_use_id']}]"
        content = part.get("content", "")
        if isinstance(content, str):
            return [_text(f"{label} {content}" if content.strip() else label)]
        return [_text(label), *(p for p in content if p.get("type") in ("text", "image", "document"))]


def _system(turns: list[_Turn], first_chat: int | None, losses: Losses) -> Any:
    """The one top-level system prompt, from every system message in order."""
    for n, turn in enumerate(turns):
        if first_chat is not None and turn.index > first_chat:
            losses.add(turn.index, "role", "approximated", "moved to the top-level system prompt")
        elif n:
            losses.add(turn.index, "role", "approximated", "merged into the one top-level system prompt")
    blocks = [p for t in turns for p in t.blocks]
    form = turns[0].form if len(turns) == 1 else "list"
    return _content(blocks, form) if blocks or form else None


def from_canonical(messages: list[Message | Plain], losses: Losses) -> dict[str, Any] | list[dict[str, Any]]:
    """Canonical messages as an Anthropic request body ``{"system"?, "messages"}`` (or as
    the bare list they were read from)."""
    writer = _Writer(losses)
    messages = anonymous(messages)  # type: ignore[assignment]
    prompt, body = one_pass(messages, writer) or _passes(messages, writer)
    head = (messages[0].extras or _NONE).get(NAME, _NONE) if messages else _NONE
    if head.get("form") == "list":
        return ([{"role": "system", "content": prompt}] if prompt is not None else []) + body
    out: dict[str, Any] = dict(head.get("request") or {})
    if prompt is not None:
        out["system"] = prompt
    out["messages"] = body
    return out


def _passes(messages: list[Message | Plain], writer: _Writer) -> tuple[Any, list[dict[str, Any]]]:
    """(the system prompt or None, the messages): every message's turns, then the API's rules."""
    turns = [t for index, msg in enumerate(messages)  # type: ignore[arg-type]
             for t in (writer.plain(msg, index) if msg.__class__ is Plain else writer.turns(msg, index))]
    system = [t for t in turns if t.role == "system"]
    lead = len(system)  # most often the system prompt comes first: the rest is then a slice
    chat = turns[lead:] if all(t.role == "system" for t in turns[:lead]) else [t for t in turns if t.role != "system"]
    body = [
        {"role": "system" if t.role == "inline" else t.role, "content": _content(t.blocks, t.form), **t.fields}
        for t in writer.link(writer.alternate(chat))
    ]
    prompt = _system(system, chat[0].index if chat else None, writer.losses) if system else None
    return prompt, body
