"""Export of the ``qwen`` format (see :mod:`store.formats.qwen`): canonical messages as
Qwen-Agent message dicts, one call per message, results as function messages, and what Qwen
cannot express carried in ``extra["convstore"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from typing_extensions import assert_never

from ..lean import Call, Plain, writable, write_each
from ..model import (
    AudioBlock, Block, FileBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock,
    ToolResultBlock, VideoBlock,
)
from ._common import CARRY_KEY, Losses, call_text, carry, data_uri
from .qwen import NAME, _KINDS, _MEDIA_FIELD, Kind, _dict, _kind, _layout, _of

TAKES_PLAIN = True

# --- from canonical --------------------------------------------------------------


def _item_out(block: Block) -> dict[str, Any] | None:
    """A block as a ContentItem, or None when Qwen cannot hold it."""
    own = _of(block)
    if isinstance(block, (TextBlock, ReasoningBlock)):
        item: dict[str, Any] = {"text": block.text}
    elif isinstance(block, (ImageBlock, FileBlock, AudioBlock, VideoBlock)):
        value = data_uri(block.media_type, block.data) if block.data is not None else block.url
        if value is not None and isinstance(own.get("dict"), dict):
            value = {"data": value, **own["dict"]}
        value = own.get("raw") if value is None else value
        if not value:
            return None
        item = {_MEDIA_FIELD[type(block)]: value}
    else:
        return None
    return {**item, **_dict(own.get("fields"))}


def _value_out(blocks: list[Block], form: Any, cls: type) -> Any:
    if form == "null" and not blocks:
        return None
    if form != "list":
        if not blocks and cls is TextBlock:
            return ""
        if len(blocks) == 1 and type(blocks[0]) is cls and not _of(blocks[0]).get("fields"):
            return blocks[0].text
    return [item for item in map(_item_out, blocks) if item is not None]


def _exact(block: Block) -> bool:
    """Whether the Qwen form of an expressible block gives it back whole on import."""
    if block.extras and any(k != NAME for k in block.extras):
        return False
    match block:
        case TextBlock():
            return True
        case ToolCallBlock():
            return block.parse_error is None or block.arguments_raw is not None
        case ReasoningBlock():
            return block.signature is None and not block.redacted and block.data is None
        case ImageBlock() | FileBlock() | AudioBlock() | VideoBlock():
            inline = block.data is not None
            return block.filename is None and block.file_id is None and (
                block.url is None and block.media_type is not None if inline else block.media_type is None)
        case ToolResultBlock():
            return not block.is_error and block.error is None and (isinstance(block.output, str) or all(
                _item_out(b) is not None and _exact(b) for b in block.output))
    return True


def _dump(block: Block) -> dict[str, Any]:
    """A block as JSON, defaults left out but every ``kind`` kept (nested result blocks too)."""
    dumped = block.model_dump(mode="json", exclude_defaults=True) | {"kind": block.kind}
    if isinstance(block, ToolResultBlock) and isinstance(block.output, list):
        dumped["output"] = [_dump(b) for b in block.output]
    return dumped


def _foreign(msg: Message) -> bool:
    """Whether ``msg`` has message fields that Qwen has no place for."""
    return bool(
        msg.external_id is not None or msg.created_at is not None or msg.model is not None
        or msg.usage is not None or msg.metadata or msg.source_type is not None or msg.source_role is not None
        or any(k != NAME for k in msg.extras) or (msg.role == "tool" and msg.name is not None)
    )


_RANK: dict[Kind, int] = {"reasoning": 0, "content": 1, "call": 2}


def _parts(marker: Any, blocks: list[Block]) -> list[tuple[int, dict[str, Any]]] | None:
    """The recorded split of a turn, if it still fits its blocks (None: use qwen-agent's own)."""
    if not isinstance(marker, list) or not all(isinstance(p, dict) and type(p.get("n")) is int and p["n"] >= 0
                                               for p in marker) or sum(p["n"] for p in marker) != len(blocks):
        return None
    at = 0
    for p in marker:
        ranks = [_RANK[_kind(b)] for b in blocks[at:at + p["n"]]]
        at += p["n"]
        if ranks != sorted(ranks) or ranks.count(2) > 1:
            return None
    return [(p["n"], {k: v for k, v in p.items() if k != "n"}) for p in marker]


@dataclass
class _Out:
    """One Qwen message being written, and what its ``extra["convstore"]`` will carry."""

    body: dict[str, Any]
    carried: dict[str, Any] = field(default_factory=dict)


class _Writer:
    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.out: list[_Out] = []
        self.calls: dict[str, tuple[str, bool]] = {}
        """call id -> (tool name, id synthesized), for the results that follow."""

    def message(self, msg: Message, index: int) -> None:
        native: list[Block] = []
        results: list[ToolResultBlock] = []
        lost: dict[int, Block] = {}
        for at, block in enumerate(msg.content):
            if isinstance(block, ToolResultBlock):
                results.append(block)
            elif isinstance(block, ToolCallBlock) and msg.role != "assistant" and any(
                    isinstance(b, ToolCallBlock) for b in native):
                lost[at] = block  # outside the assistant's turn one call fits, on the message itself
            elif isinstance(block, TextBlock) and not block.text and msg.source_format != NAME:
                lost[at] = block  # Qwen's content "" is no block at all: only a carried "" comes back
            elif type(block) in _KINDS or _item_out(block) is not None:
                native.append(block)
            else:
                lost[at] = block
        main: int | None
        match msg.role:
            case "assistant":
                main = self._turn(msg, native, index)
                self._results(results, index)
            case "tool":
                main = self._results(results, index)
                if native:
                    main = len(self.out) if main is None else main
                    self.out.append(self._single("user", None, native, {}, index))
                    self.losses.add(index, "content", "approximated", "what a tool message holds besides "
                                    "results became a user message: a Qwen function message is one result")
            case "system" | "user":
                self._results(results, index)
                main = len(self.out)
                self.out.append(self._single(msg.role, msg.name, native, _of(msg), index))
            case other:
                assert_never(other)
        if main is None and (lost or _foreign(msg)):
            main = len(self.out)
            self.out.append(_Out({"role": "user", "content": ""}))
            self.losses.add(index, "message", "approximated",
                            "an empty tool message became an empty user message")
        if main is not None:
            self._carry(msg, lost, main, index)

    def _turn(self, msg: Message, native: list[Block], index: int) -> int:
        own = _of(msg)
        parts = _parts(own.get("parts"), native)
        if parts is None:
            sizes = _layout([_kind(b) for b in native])
            flat = own if len(sizes) == 1 and "parts" not in own else {}
            parts = list(zip(sizes, [flat] + [{}] * (len(sizes) - 1)))
        start, at = len(self.out), 0
        for n, info in parts:
            self.out.append(self._single("assistant", msg.name, native[at:at + n], info, index))
            at += n
        prev = self.out[start - 1].body if start else None
        if prev and prev["role"] == "assistant" and prev.get("name") == msg.name:
            self.out[start].carried["split"] = True
        return start

    def _single(self, role: str, name: str | None, blocks: list[Block], info: dict[str, Any],
                index: int) -> _Out:
        reasoning: list[Block] = []
        content: list[Block] = []
        calls: list[Block] = []
        for b in blocks:
            match _kind(b):
                case "reasoning":
                    reasoning.append(b)
                case "content":
                    content.append(b)
                case "call":
                    calls.append(b)
                case other:
                    assert_never(other)
        body: dict[str, Any] = {"role": role, "content": _value_out(content, info.get("content"), TextBlock)}
        if reasoning or info.get("reasoning"):
            body["reasoning_content"] = _value_out(reasoning, info.get("reasoning"), ReasoningBlock)
        if name is not None:
            body["name"] = name
        extra = dict(info["extra"]) if isinstance(info.get("extra"), dict) else None
        for call in calls[:1]:
            assert isinstance(call, ToolCallBlock)
            arguments = call_text(call)
            fields = _dict(_of(call).get("fields"))
            body["function_call"] = {"name": call.name, "arguments": arguments, **fields}
            self.calls[call.call_id] = (call.name, call.call_id_synthesized)
            if not call.call_id_synthesized:
                extra = {**(extra or {}), "function_id": call.call_id}
        if extra is not None:
            body["extra"] = extra
        body.update(_dict(info.get("fields")))
        return self._patches(_Out(body), reasoning + content + calls[:1], index)

    def _results(self, results: list[ToolResultBlock], index: int) -> int | None:
        first = len(self.out) if results else None
        for k, block in enumerate(results):
            own = _of(block)
            known = self.calls.get(block.call_id)
            name = block.name or (known[0] if known and not own.get("anonymous") else None)
            if isinstance(block.output, str):
                content: Any = None if own.get("content") == "null" and not block.output else block.output
            else:
                content = [item for item in map(_item_out, block.output) if item is not None]
            body: dict[str, Any] = {"role": "function", "content": content}
            if name is not None:
                body["name"] = name
            extra = dict(own["extra"]) if isinstance(own.get("extra"), dict) else None
            if not own.get("no_id") and not (known and known[1]):
                extra = {**(extra or {}), "function_id": block.call_id}
            if extra is not None:
                body["extra"] = extra
            body.update(_dict(own.get("fields")))
            self.out.append(self._patches(_Out(body, {"join": True} if k else {}), [block], index))
        return first

    def _patches(self, out: _Out, blocks: list[Block], index: int) -> _Out:
        for at, block in enumerate(blocks):
            if not _exact(block):
                out.carried.setdefault("patch", {})[at] = _dump(block)
                self.losses.add(index, block.kind, "carried",
                                f"what Qwen has no field for is kept in extra.{CARRY_KEY}")
        return out

    def _carry(self, msg: Message, lost: dict[int, Block], main: int, index: int) -> None:
        if not (lost or _foreign(msg)):
            return
        payload = carry(msg, native={"name", "source_format"} if msg.role != "tool" else {"source_format"},
                        blocks=lost, update={"extras": {k: v for k, v in msg.extras.items() if k != NAME}}) or {}
        for key, value in payload.items():
            for what in ([f"content[{b['at']}] {b['block']['kind']}" for b in value] if key == "blocks"
                         else [f"extras.{k}" for k in value] if key == "extras" else [key]):
                self.losses.add(index, what, "carried",
                                f"Qwen has no place for it; kept in extra.{CARRY_KEY}")
        if payload and msg.source_format not in (None, NAME):
            # provenance, not content: lets the source format read its own extras back as its own
            payload["source_format"] = msg.source_format
        self.out[main].carried.update(payload)

    def finish(self) -> list[dict[str, Any]]:
        for out in self.out:
            if out.carried:
                out.body["extra"] = {**(out.body.get("extra") or {}), CARRY_KEY: out.carried}
        return [out.body for out in self.out]


    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same items and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        content, main = msg.content, len(self.out)
        if content and content[0].__class__ is not Call:  # a tool result
            call_id = content[0].call_id
            known = self.calls.get(call_id)
            body: dict[str, Any] = {"role": "function", "content": msg.text}
            if (name := msg.name or (known[0] if known else None)) is not None:
                body["name"] = name
            if not (known and known[1]):
                body["extra"] = {"function_id": call_id}
            self.out.append(_Out(body))
        else:
            prev = self.out[-1].body if self.out else None
            named = {} if msg.speaker is None else {"name": msg.speaker}
            if msg.text is not None:
                self.out.append(_Out({"role": msg.role, "content": msg.text, **named}))
            for call in content:
                self.calls[call.call_id] = (call.name, False)
                self.out.append(_Out({"role": "assistant", "content": "", **named,
                                      "function_call": {"name": call.name, "arguments": call_text(call)},
                                      "extra": {"function_id": call.call_id}}))
            if msg.role == "assistant" and prev is not None and prev["role"] == "assistant" \
                    and prev.get("name") == msg.speaker:
                self.out[main].carried["split"] = True
        if msg.extras or msg.source_type is not None or msg.external_id is not None:
            self.out[main].carried.update(self._carried(msg, index))  # as _carry carries them

    def _carried(self, msg: Plain, index: int) -> dict[str, Any]:
        """Another format's notes, the message's type and id: the payload :meth:`_carry` makes of them."""
        payload: dict[str, Any] = {} if msg.source_type is None else {"source_type": msg.source_type}
        if msg.external_id is not None:
            payload["external_id"] = msg.external_id
        reported = list(payload) + [f"extras.{name}" for name in msg.extras or ()]
        if msg.extras:
            payload["extras"] = dict(msg.extras)  # none of Qwen's own (_takes)
        for what in reported:
            self.losses.add(index, what, "carried", f"Qwen has no place for it; kept in extra.{CARRY_KEY}")
        if msg.source_format not in (None, NAME):
            payload["source_format"] = msg.source_format
        return payload


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be: not an empty
    text (the general path drops or carries it), not an error; its speaker its name, its source message type
    and id carried as the general path carries them."""
    return writable(msg, NAME, ids=True, speakers=True) and msg.text != "" \
        and not (msg.role == "tool" and msg.content[0].is_error)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as Qwen-Agent message dicts (``Message(**d)`` accepts each); plain ones among
    them (``store.lean``) written without their canonical message where nothing of them is lost."""
    writer = _Writer(losses)
    write_each(messages, _takes, writer.plain, writer.message)
    return writer.finish()
