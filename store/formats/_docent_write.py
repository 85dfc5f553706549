"""Export of the ``docent`` format (see :mod:`store.formats.docent`): canonical messages as
Docent chat message dicts in ``model_dump(mode="json")`` shape. What Docent has no field for is
kept in ``metadata["convstore"]``, blocks it cannot hold are shown as text stand-ins, and
messages are merged, padded, relabelled and reordered (Docent's ordering rules) so that
``check_messages()`` has nothing to warn about; each change is reported.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from ..lean import Call, Plain, canonical, writable
from ..model import Block, Message, ReasoningBlock, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ._common import CARRY_KEY, Losses, carry, dump_json
from .docent import NAME, _skeleton, _text

TAKES_PLAIN = True


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _media_standin(block: Any) -> str:
    where = block.url or (f"file {block.file_id}" if block.file_id else None) or (
        f"{len(block.data)} bytes" if block.data is not None else "no data")
    about = ", ".join(x for x in (block.filename, block.media_type) if x)
    return f"[{block.kind}: {where}{f' ({about})' if about else ''}]"


_STANDINS: dict[str, Callable[[Any], str | None]] = {
    "text": lambda b: b.text,  # beside a tool message's result: a tool message holds that alone
    "refusal": lambda b: b.text,
    "reasoning": lambda b: None,
    "image": _media_standin,
    "audio": _media_standin,
    "video": _media_standin,
    "file": _media_standin,
    "error": lambda b: f"[error{f' {b.code}' if b.code else ''}: {b.message}]",
    "data": lambda b: f"[data: {_short(dump_json(b.data))}]",
    "code": lambda b: f"```{b.language or ''}\n{b.code}\n```",
    "code_result": lambda b: f"[code output{f', exit code {b.exit_code}' if b.exit_code is not None else ''}]"
                             f"\n{b.output}",
    "handoff": lambda b: f"[handoff to {b.target}]",
    "tool_call": lambda b: f"[tool call {b.name} {_short(b.arguments_raw or dump_json(b.arguments))}]",
    "tool_result": lambda b: f"[tool result for call {b.call_id}]",
    "usage": lambda b: None,  # kept in metadata only: it is no conversation text
}
"""What Docent shows for a block it cannot hold (the block itself goes to metadata.convstore)."""

_NATIVE = {
    "text": frozenset({"text"}),
    "refusal": frozenset({"text"}),
    "reasoning": frozenset({"text", "signature", "redacted"}),
    "tool_call": frozenset({"call_id", "name", "arguments", "arguments_raw", "parse_error"}),
    "tool_result": frozenset({"call_id", "name", "output", "is_error", "error"}),
}
"""Per block kind, the fields Docent holds itself (the rest is carried)."""


def _leftover(block: Block) -> dict[str, Any]:
    """What of ``block`` no Docent field holds, JSON-ready (empty when nothing)."""
    native = _NATIVE[block.kind]
    if not (block.model_fields_set - native - {"kind", "extras"}) and block.extras.keys() <= {NAME}:
        return {}
    left = block.model_dump(mode="json", exclude_defaults=True, exclude={"kind", *native})
    if "extras" in left:
        left["extras"].pop(NAME, None)
        if not left["extras"]:
            del left["extras"]
    return left


def _part_out(block: TextBlock | RefusalBlock | ReasoningBlock) -> tuple[dict[str, Any], dict[str, Any]]:
    own = block.extras.get(NAME, {})
    left = _leftover(block)
    if isinstance(block, ReasoningBlock):
        signature = block.signature
        if block.redacted:  # Docent's blob field is ``signature``; keep both when both are set
            signature = block.data if block.data is not None else block.signature
            left.pop("data", None)
            if block.signature is not None:
                left.update(signature=block.signature, **({"data": None} if block.data is None else {}))
        part = {"type": "reasoning", "reasoning": block.text, "summary": own.get("summary"),
                "signature": signature, "redacted": block.redacted}
    else:
        part = _text(block.text)
        part["refusal"] = True if isinstance(block, RefusalBlock) else own.get("refusal")
    part.update(own.get("fields") or {})
    return part, left


def _call_out(block: ToolCallBlock, index: int, losses: Losses) -> tuple[dict[str, Any], dict[str, Any]]:
    own = block.extras.get(NAME, {})
    left = _leftover(block)
    args = block.arguments
    if not isinstance(args, dict):
        args, left["arguments"] = {}, args
        losses.add(index, "tool_call.arguments", "carried",
                   f"Docent arguments are a JSON object; call {block.call_id} gets {{}}, "
                   "the original is kept")
    if block.arguments_raw is not None:
        left["arguments_raw"] = block.arguments_raw  # the source had a string: give it back byte-exact
    call = {"id": block.call_id, "function": block.name, "arguments": args, "type": own.get("type"),
            "parse_error": block.parse_error, "view": own.get("view"),
            "google_thought_signature": own.get("google_thought_signature")}
    call.update(own.get("fields") or {})
    return call, left


@dataclass
class _Out:
    """A Docent message on its way out: the canonical message it came from, and what merged into it."""

    index: int
    d: dict[str, Any]
    native: bool
    group: list[dict[str, Any]] | None = None


def _standin(block: Block, index: int, losses: Losses, why: str) -> str | None:
    text = _STANDINS[block.kind](block)
    shown = "shown as a text stand-in, " if text is not None else ""
    losses.add(index, block.kind, "carried", f"{why}: {shown}kept in metadata.{CARRY_KEY}")
    return text


def _message_marks(msg: Message, index: int, losses: Losses, blocks: dict[int, Block]) -> dict[str, Any]:
    """The carry payload of ``msg``: what Docent's message fields do not hold."""
    assistant = msg.role == "assistant"
    if not (msg.name or msg.created_at or msg.usage or msg.source_role or msg.source_type or blocks
            or (msg.model and not assistant) or msg.extras.keys() - {NAME}):
        return {}
    native = {"external_id", "metadata", "source_format", *(("model",) if assistant else ())}
    payload = carry(msg, native=native, blocks=blocks) or {}
    extras = payload.pop("extras", {})
    extras.pop(NAME, None)
    if extras:
        payload["extras"] = extras
    for field in [f for f in ("name", "created_at", "usage", "model") if f in payload] + [f"extras.{f}"
                                                                                         for f in extras]:
        losses.add(index, field, "carried",
                   f"Docent {msg.role} messages have no such field; kept in metadata.{CARRY_KEY}")
    return payload


def _carried(meta: dict[str, Any] | None) -> dict[str, Any]:
    """What an output message's metadata carries so far: its ``convstore`` notes, where they are ours (a
    message's own metadata may hold anything under that key, which the notes then replace)."""
    marks = (meta or {}).get(CARRY_KEY)
    return marks if isinstance(marks, dict) else {}


def _set_metadata(d: dict[str, Any], msg: Message, marks: dict[str, Any]) -> None:
    meta = {**msg.metadata, CARRY_KEY: marks} if marks else dict(msg.metadata)
    d["metadata"] = meta if meta or msg.extras.get(NAME, {}).get("metadata") == "empty" else None


def _result_out(block: ToolResultBlock, index: int, losses: Losses) -> dict[str, Any]:
    left = _leftover(block)
    content: Any = block.output
    if not isinstance(block.output, str):
        content, exact = [], True
        for b in block.output:
            if isinstance(b, (TextBlock, RefusalBlock, ReasoningBlock)):
                part, part_left = _part_out(b)
                content.append(part)
                exact = exact and not part_left
            else:
                exact = False
                text = _standin(b, index, losses, "Docent tool output holds only text and reasoning")
                content.extend([_text(text)] if text is not None else [])
        if not exact:
            left["output"] = [b.model_dump(mode="json", exclude_defaults=True) | {"kind": b.kind}
                              for b in block.output]
    error = block.error
    if block.is_error and error is None:  # Docent says "failed" with an error object only
        shown = block.output if isinstance(block.output, str) else ""
        error, left["error"] = {"type": "unknown", "message": shown or "the tool call failed"}, None
    elif not block.is_error and error is not None:
        left["is_error"] = False
    d = _skeleton("tool")
    no_id = block.extras.get(NAME, {}).get("no_call_id")
    d.update(content=content, tool_call_id=None if no_id else block.call_id, function=block.name, error=error,
             metadata={CARRY_KEY: {"result": left}} if left else None)
    return d


def _tool_out(msg: Message, index: int, losses: Losses) -> list[dict[str, Any]]:
    """One Docent tool message per result; the first holds the message's own fields."""
    dicts, carried = [], {}
    for pos, block in enumerate(msg.content):
        if isinstance(block, ToolResultBlock):
            dicts.append(_result_out(block, index, losses))
        else:
            carried[pos] = block
            _standin(block, index, losses, "a Docent tool message holds one tool result only")
    marks = _message_marks(msg, index, losses, carried)
    if len(dicts) > 1:
        marks["join"] = len(dicts) - 1
    first = dicts[0]
    first.update(id=msg.external_id, **(msg.extras.get(NAME, {}).get("fields") or {}))
    _set_metadata(first, msg, {**marks, **_carried(first["metadata"])})
    return dicts


def _body_out(msg: Message, blocks: list[Block], index: int, losses: Losses) -> dict[str, Any]:
    role = "user" if msg.role == "tool" else msg.role
    own = msg.extras.get(NAME, {})
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    marks: dict[str, Any] = {}
    standins, carried, seq = [], {}, []  # seq: for each part or call, whether it is a call
    for pos, block in enumerate(blocks):
        if isinstance(block, (TextBlock, RefusalBlock, ReasoningBlock)):
            part, left = _part_out(block)
            if left:
                marks.setdefault("parts", {})[str(seq.count(False))] = left
            parts.append(part)
            seq.append(False)
        elif isinstance(block, ToolCallBlock) and role == "assistant":
            call, left = _call_out(block, index, losses)
            if left:
                marks.setdefault("calls", {})[str(len(calls))] = left
            calls.append(call)
            seq.append(True)
        else:
            carried[pos] = block
            text = _standin(block, index, losses, f"Docent {role} messages cannot hold {block.kind} content")
            if text is not None:
                standins.append(len(parts))
                parts.append(_text(text))
    at = [i for i, is_call in enumerate(seq) if is_call]
    if at and not all(seq[at[0]:]):
        marks["calls_at"] = at
    if standins:
        marks["standins"] = standins
    if msg.role != role:
        marks["role"] = msg.role
        losses.add(index, "role", "approximated",
                   "a tool message without tool results: written as a user message")
    d = _skeleton(role)
    d.update(id=msg.external_id, content=_content_out(parts, own.get("content"), marks))
    if role == "assistant":
        d.update(model=msg.model, tool_calls=calls or ([] if own.get("tool_calls") == "empty" else None))
    elif role == "user":
        d["tool_call_id"] = own.get("tool_call_id")
    d.update(own.get("fields") or {})
    _set_metadata(d, msg, {**_message_marks(msg, index, losses, carried), **marks})
    return d


def _content_out(parts: list[dict[str, Any]], form: str | None, marks: dict[str, Any]) -> Any:
    if form == "list" or len(parts) > 1:
        return parts
    if not parts:
        return ""
    plain = parts[0].keys() == {"type", "text", "refusal"} and parts[0]["type"] == "text"
    if not plain or parts[0]["refusal"] is not None:
        return parts
    if parts[0]["text"] == "":
        marks["empty_text"] = True  # a real empty text block, not just "no content"
    return parts[0]["text"]


def _message_out(msg: Message, index: int, losses: Losses) -> list[_Out]:
    native = bool(msg.extras.get(NAME, {}).get("as_is"))
    results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
    if msg.role == "tool" and results:
        return [_Out(index, d, native) for d in _tool_out(msg, index, losses)]
    rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
    body = _Out(index, _body_out(msg, rest, index, losses), native)
    if not results:
        return [body]
    # Results outside a tool message become tool messages: before it, or after it when it made the call.
    own_calls = {b.call_id for b in msg.content if isinstance(b, ToolCallBlock)}
    outs = [(r.call_id in own_calls, _Out(index, _result_out(r, index, losses), native)) for r in results]
    return [o for after, o in outs if not after] + [body] + [o for after, o in outs if after]


def _plain_out(msg: Plain, index: int, losses: Losses) -> _Out:
    """:func:`_message_out` of a plain message (``store.lean``) that :func:`_takes`: the same message
    and losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
    content, marks = msg.content, {}
    if content and content[0].__class__ is not Call:  # a tool result
        d = _skeleton("tool")
        d.update(content=msg.text, tool_call_id=content[0].call_id, function=msg.name)
    else:
        calls = []
        for n, call in enumerate(content):
            arguments, left = call.parsed(), {}  # type: ignore[union-attr]
            if arguments.__class__ is not dict:
                arguments, left["arguments"] = {}, arguments
                losses.add(index, "tool_call.arguments", "carried", f"Docent arguments are a JSON object; call "
                           f"{call.call_id} gets {{}}, the original is kept")
            if call.arguments_raw is not None:  # type: ignore[union-attr]
                left["arguments_raw"] = call.arguments_raw  # type: ignore[union-attr]
            if left:
                marks.setdefault("calls", {})[str(n)] = left
            calls.append({"id": call.call_id, "function": call.name, "arguments": arguments, "type": None,  # type: ignore[union-attr]
                          "parse_error": None, "view": None, "google_thought_signature": None})
        d = _skeleton(msg.role)
        d["content"] = msg.text or ""
        if msg.text == "":
            marks["empty_text"] = True  # a real empty text block, not just "no content"
        if msg.role == "assistant":
            d.update(model=None, tool_calls=calls or None)
        elif msg.role == "user":
            d["tool_call_id"] = None
    if msg.extras or msg.source_type is not None or msg.speaker:  # as _message_marks has them: its speaker
        head: dict[str, Any] = {}  # (an empty one only beside something else), its type, other formats' notes
        if msg.speaker is not None:
            head["name"] = msg.speaker
            losses.add(index, "name", "carried",
                       f"Docent {msg.role} messages have no such field; kept in metadata.{CARRY_KEY}")
        if msg.source_type is not None:
            head["source_type"] = msg.source_type
        for name in msg.extras or ():
            losses.add(index, f"extras.{name}", "carried",
                       f"Docent {msg.role} messages have no such field; kept in metadata.{CARRY_KEY}")
        if msg.extras:
            head["extras"] = to_jsonable_python(dict(msg.extras))
        marks = {**head, **marks}
    d["id"] = msg.external_id
    d["metadata"] = {CARRY_KEY: marks} if marks else None
    return _Out(index, d, False)


def _takes(msg: Any) -> bool:
    """Whether :func:`_plain_out` writes a plain message as its canonical one would be: not an error (its
    source message type and its speaker carried as the canonical path carries them, its id written)."""
    return writable(msg, NAME, ids=True, speakers=True) and not (msg.role == "tool" and msg.content[0].is_error)


# --- Docent's ordering rules -------------------------------------------------------


class _Arranger:
    """Reorders, merges and relabels messages so that Docent's ``check_messages()`` has
    nothing to warn about; ``native`` messages (Docent input with warts) stay as they are."""

    def __init__(self, items: list[_Out], losses: Losses) -> None:
        self.items, self.losses = items, losses
        self.answers: dict[Any, deque[int]] = {}  # call id -> positions of tool messages answering it
        for i, it in enumerate(items):
            if it.d["role"] == "tool":
                self.answers.setdefault(it.d.get("tool_call_id"), deque()).append(i)
        self.taken: set[int] = set()
        self.out: list[_Out] = []
        self.pending: dict[str, tuple[_Out, str, int]] = {}  # call id -> (caller, function, source index)

    def run(self) -> list[dict[str, Any]]:
        started = False
        for i, it in enumerate(self.items):
            if i in self.taken:
                continue
            role = it.d["role"]
            if role == "tool":
                if it.d.get("tool_call_id") in self.pending:
                    del self.pending[it.d["tool_call_id"]]
                    self.out.append(it)
                    continue
                if not it.native:
                    it, role = self._relabel(it, "a tool result that answers no open call"), "user"
            elif role == "system" and started and not it.native:
                it, role = self._relabel(it, "a system message after the conversation started"), "user"
            started = started or role != "system"
            prev = self.out[-1] if self.out else None
            continues = role == "assistant" and prev is not None and prev.d["role"] == "assistant"
            if self.pending and not continues:  # the open calls must be answered before this message
                self._settle(i)
            if prev is not None and role in ("assistant", "user") and prev.d["role"] == role \
                    and not (prev.native and it.native):
                self._merge(prev, it)
            else:
                self.out.append(it)
            # only an assistant's tool_calls are validated calls; elsewhere it is an unknown key
            for call in (it.d.get("tool_calls") or ()) if it.d["role"] == "assistant" else ():
                self.pending[call["id"]] = (self.out[-1], call["function"], it.index)
        self._settle(len(self.items))
        return [self._finish(o) for o in self.out]

    def _settle(self, i: int) -> None:
        """Answer the open calls before message ``i``: move their later results up, or add placeholders."""
        for call_id, (caller, function, index) in self.pending.items():
            if caller.native:
                continue
            later = self.answers.get(call_id) or deque()
            while later and (later[0] <= i or later[0] in self.taken):
                later.popleft()
            if later:
                self.taken.add(later[0])
                self.out.append(self.items[later[0]])
                self.losses.add(self.items[later[0]].index, "tool_result", "approximated",
                                f"moved up to right after tool call {call_id} (Docent's order)")
                continue
            d = _skeleton("tool")
            d.update(content="(no tool response was recorded)", tool_call_id=call_id, function=function,
                     metadata={CARRY_KEY: {"synthetic": True}})
            self.out.append(_Out(index, d, False))
            self.losses.add(index, "tool_call", "approximated", f"tool call {call_id} has no response: "
                            "added a placeholder tool message (dropped again on import)")
        self.pending = {}

    def _relabel(self, it: _Out, why: str) -> _Out:
        d = it.d
        meta = dict(d.get("metadata") or {})
        meta[CARRY_KEY] = {**_carried(meta), "was": {k: v for k, v in d.items() if k != "metadata"}}
        label = "[system]"
        if d["role"] == "tool":
            function = f" ({d['function']})" if d.get("function") else ""
            label = f"[tool result for call {d.get('tool_call_id')}{function}]"
            label += f" error: {_short(dump_json(d['error']))}" if d.get("error") else ""
        old = d["content"]
        content = f"{label}\n{old}" if isinstance(old, str) else [_text(label), *old]
        new = _skeleton("user")
        new.update(id=d.get("id"), content=content, metadata=meta)
        self.losses.add(it.index, "role", "approximated",
                        f"{why}: written as a user message (restored on import)")
        return _Out(it.index, new, False)

    def _merge(self, prev: _Out, it: _Out) -> None:
        prev.group = (prev.group or [prev.d]) + [it.d]
        prev.native = False
        role = it.d["role"]
        self.losses.add(it.index, "message", "approximated", f"merged into the previous {role} message "
                        f"(Docent flags consecutive {role} messages); split again on import")

    def _finish(self, o: _Out) -> dict[str, Any]:
        d = _merged(o.group) if o.group else o.d
        if not o.native and _empty(d):
            meta = dict(d.get("metadata") or {})
            meta[CARRY_KEY] = {**_carried(meta), "pad": d["content"]}
            d = {**d, "content": f"(empty {d['role']} message)", "metadata": meta}
            self.losses.add(o.index, "content", "approximated",
                            "Docent flags empty messages: wrote a placeholder text (removed on import)")
        return d


def _merged(group: list[dict[str, Any]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    specs = []
    for d in group:
        spec = {k: v for k, v in d.items() if k not in ("role", "content", "tool_calls") and v is not None}
        if isinstance(d["content"], str):
            spec.update(str=True, n=1 if d["content"] else 0)
            content.extend([_text(d["content"])] if d["content"] else [])
        else:
            spec["n"] = len(d["content"])
            content.extend(d["content"])
        if d.get("tool_calls") is not None:
            spec["calls"] = len(d["tool_calls"])
            calls.extend(d["tool_calls"])
        specs.append(spec)
    out = _skeleton(group[0]["role"])
    out.update(id=group[0].get("id"), content=content, metadata={CARRY_KEY: {"merged": specs}})
    if out["role"] == "assistant":
        out.update(model=next((d["model"] for d in group if d.get("model")), None), tool_calls=calls or None)
    else:
        out["tool_call_id"] = [x for d in group for x in d.get("tool_call_id") or ()] or None
    return out


def _visible(part: dict[str, Any]) -> bool:
    if part.get("type") == "text":
        return bool((part.get("text") or "").strip())
    shown = part.get("summary") if part.get("redacted") and part.get("summary") else part.get("reasoning")
    return bool((shown or "").strip())


def _empty(d: dict[str, Any]) -> bool:
    """Docent's own test for an empty message (``checks._message_is_empty``)."""
    if d.get("tool_calls") or (d["role"] == "tool" and d.get("error")):
        return False
    content = d["content"]
    return not content.strip() if isinstance(content, str) else not any(_visible(p) for p in content)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as Docent chat message dicts
    (``model_dump(mode="json")`` shape)."""
    items: list[_Out] = []
    for index, msg in enumerate(canonical(messages, unless=_takes)):
        if msg.__class__ is Plain:
            items.append(_plain_out(msg, index, losses))  # type: ignore[arg-type]
        else:
            items.extend(_message_out(msg, index, losses))  # type: ignore[arg-type]
    return _Arranger(items, losses).run()
