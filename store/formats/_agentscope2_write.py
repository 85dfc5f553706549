"""Export of the ``agentscope2`` format (see :mod:`store.formats.agentscope2`): canonical messages
as AgentScope 2.x ``Msg.model_dump(mode="json")`` dicts.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from pydantic_core import to_jsonable_python

from ..lean import Call, Plain, canonical, writable
from ..model import (
    BLOCK, AudioBlock, Block, FileBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock,
    ToolResultBlock, Usage, VideoBlock,
)
from ._common import CARRY_KEY, Losses, b64encode, call_text, carry, dump_json, parse_json
from .agentscope2 import (
    NAME, PART, _BLOCKS_IN, _CACHE, _KINDS, _MEDIA, _MSG_LEFTOVERS, _ROLE_OF, _absolute_url, _segments,
)


TAKES_PLAIN = True


class _Part:
    """One canonical message (or plain one: ``store.lean``) placed into an output Msg, from block ``at`` on."""

    __slots__ = ("at", "carried", "checks", "how", "index", "kind", "msg", "named", "texted", "ts", "written")

    def __init__(self, msg: Message | Plain, index: int, at: int, kind: str, how: str, ts: str | None) -> None:
        self.msg, self.index, self.at, self.kind, self.how, self.ts = msg, index, at, kind, how, ts
        self.carried: dict[int, Block] = {}
        self.checks: list[tuple[int, Block, dict[str, Any]]] = []  # foreign blocks to read back
        self.written = 0
        self.named = False  # a plain result written with its call's name, which reading back would give it
        self.texted: list[int] = []  # positions of plain calls of object arguments, written as their text


class _Out:
    __slots__ = ("idx", "msg", "parts")

    def __init__(self, idx: int, msg: dict[str, Any]) -> None:
        self.idx, self.msg, self.parts = idx, msg, []  # type: list[_Part]


def _ts(m: Message, own: dict[str, Any]) -> str | None:
    if "created_at" in own:
        return own["created_at"]
    return None if m.created_at is None else m.created_at.isoformat()


def _stamp(d: dict[str, Any], meta: dict[str, Any], ts: str | None) -> dict[str, Any]:
    if "id" in meta:
        d["id"] = meta["id"]
    if (created := meta["created_at"] if "created_at" in meta else ts) is not None:
        d["created_at"] = created
    d["finished_at"] = meta.get("finished_at")
    d.update(meta.get("fields") or {})
    return d


def _usage_exact(u: Usage | None) -> bool:
    return u is None or (u.input_tokens is not None and u.output_tokens is not None
                         and u.total_tokens is None and u.extras.keys() <= {NAME})


def _usage_out(u: Usage | None) -> dict[str, Any] | None:
    if u is None:
        return None
    own = u.extras.get(NAME) or {}
    out = {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0}
    return out | {k: own.get(k, 0) for k in _CACHE} | (own.get("fields") or {})


def _source(block: Any, meta: dict[str, Any]) -> dict[str, Any] | None:
    """A 2.x data source; 2.x requires a media type: guessed from the file name or URL if unknown."""
    media_type = block.media_type or mimetypes.guess_type(block.filename or block.url or "", strict=False)[0] \
        or (f"{block.kind}/*" if block.kind in _MEDIA else "application/octet-stream")
    if block.data is not None or "b64" in meta:
        data = meta["b64"] if "b64" in meta else b64encode(block.data)
        source = {"type": "base64", "data": data, "media_type": media_type}
    elif block.url is not None:
        try:
            source = {"type": "url", "url": _absolute_url(block.url), "media_type": media_type}
        except ValueError:
            return None
    else:
        return None
    return source | (meta.get("source_fields") or {})


def _plain(block: Block, notes: bool = False) -> bool:
    """Whether ``block`` surely reads back as it is (no need to check it by reading it back); with ``notes``,
    all of it but its extras (other formats' notes: the caller knows it has none of this format's)."""
    if block.extras and not notes:
        return False
    if isinstance(block, TextBlock):
        return True
    if isinstance(block, ToolCallBlock):
        return block.arguments_raw is not None and not block.call_id_synthesized and \
            parse_json(block.arguments_raw) == (block.arguments, block.parse_error)
    return isinstance(block, ToolResultBlock) and isinstance(block.output, str) and block.name is not None \
        and block.error is None


def _notes(block: Block) -> dict[str, Any]:
    """The patch of a block's notes (other formats' extras), which reading its 2.x form back does not give."""
    return block.model_dump(mode="json", include={"extras"}) if block.extras else {}


def _known_patch(block: Block, d: dict[str, Any]) -> dict[str, Any] | None:
    """The patch of a reasoning, media or result block without this format's notes, written as ``d``, where
    it is known without reading ``d`` back (most foreign blocks); None where it is not."""
    if isinstance(block, ToolResultBlock):
        return _known_result_patch(block, d)
    if NAME in block.extras:
        return None
    if isinstance(block, ReasoningBlock):  # redacted reasoning writes its data, other reasoning none
        known, guessed = block.redacted == (block.data is not None), False
    elif isinstance(block, (ImageBlock, AudioBlock, VideoBlock, FileBlock)):
        # one of its data and url written, with a media type whose major type gives back its kind
        known = block.file_id is None and (block.url is None) != (block.data is None) \
            and _MEDIA.get(d["source"]["media_type"].split("/", 1)[0], FileBlock) is type(block)
        guessed = block.media_type is None
    else:
        return None
    if not known:
        return None
    patch = _notes(block)
    if guessed:  # the media type written was guessed: reading back would give it
        patch["media_type"] = None
    return patch


def _known_result_patch(block: ToolResultBlock, d: dict[str, Any]) -> dict[str, Any] | None:
    """:func:`_known_patch` of a result of blocks, known where each of its blocks' is: its output is then
    patched where a block of it was dropped or reads back otherwise, its name where its call's was written."""
    if block.error is not None or isinstance(block.output, str):
        return None
    same = len(d["output"]) == len(block.output)  # else a block was dropped: its output comes back otherwise
    if same:
        for part, written in zip(block.output, d["output"]):
            known = {} if part.__class__ is TextBlock and not part.extras else _known_patch(part, written)
            if known is None:
                return None
            same = same and not known
    patch = _notes(block)
    if block.name is None:
        patch["name"] = None
    if not same:
        patch["output"] = block.model_dump(mode="json", include={"output"})["output"]
    return patch


class _Writer:
    """Builds Msgs: split-off parts go back into their Msg, tool results into the Msg of their call."""

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.outs: list[_Out] = []
        self.calls: dict[str, tuple[int, dict[str, Any]]] = {}  # call id -> (output Msg, tool_call dict)
        self.call_dicts: list[dict[str, Any]] = []
        self.answered: set[str] = set()

    def add(self, index: int, m: Message) -> None:
        own = m.extras.get(NAME) or {}
        part = own.get("part")
        hint = m.role == "user" and "hint" in own and part is not None
        kind = "tool" if m.role == "tool" else "hint" if hint else "main"
        last = self.outs[-1] if self.outs else None
        if isinstance(part, int) and part > 0 and last is not None and last.msg["role"] == "assistant" \
                and last.msg["content"] and (m.content or hint) and (kind != "main" or m.role == "assistant"):
            self._append(last, index, m, kind, "marker")
        elif kind == "tool" and part is None and (target := self._target(m)) is not None:
            if target is not last:
                self.losses.add(index, "tool_result", "approximated",
                                f"moved into the Msg of its call (Msg {target.idx}), before later messages")
            self._append(target, index, m, kind, "regroup")
        else:
            self._open(index, m, kind)

    def add_plain(self, index: int, m: Plain) -> None:
        """:meth:`add` of a plain message that :func:`_takes`: the same Msgs and losses, made without its
        canonical message (tests/test_lean_load.py holds them to be the same)."""
        content = m.content
        if m.role == "tool":
            found = self.calls.get(content[0].call_id)
            if found is not None:
                target = self.outs[found[0]]
                if target is not self.outs[-1]:
                    self.losses.add(index, "tool_result", "approximated",
                                    f"moved into the Msg of its call (Msg {target.idx}), before later messages")
                self._append_plain(target, index, m, "tool", "regroup")
                return
        role = m.role if m.role != "tool" else "assistant"
        msg: dict[str, Any] = {"name": role if m.speaker is None else m.speaker, "content": [], "role": role}
        if m.external_id is not None:  # (a text's or calls': _takes)
            msg["id"] = m.external_id
        out = _Out(len(self.outs), {**msg, "metadata": {}, "usage": None, **dict.fromkeys(_MSG_LEFTOVERS)})
        self.outs.append(out)
        self._append_plain(out, index, m, "tool" if m.role == "tool" else "main", "head")

    def _append_plain(self, out: _Out, index: int, m: Plain, kind: str, how: str) -> None:
        part = _Part(m, index, len(out.msg["content"]), kind, how, None)
        out.parts.append(part)
        items = out.msg["content"]
        content = m.content
        if content and content[0].__class__ is not Call:  # a result: in the Msg of its call, or carried
            call_id = content[0].call_id
            if call_id in self.calls:
                self.answered.add(call_id)
                part.named = m.name is None
                items.append({"type": "tool_result", "id": call_id,
                              "name": self.calls[call_id][1]["name"] if part.named else m.name, "output": m.text,
                              "state": "error" if content[0].is_error else "success", "metadata": {},  # type: ignore[union-attr]
                              "finished_at": None})
            else:
                part.carried[0] = {"extras": {}, "kind": "tool_result", "call_id": call_id, "name": m.name,
                                   "output": m.text, "is_error": content[0].is_error, "error": None}  # type: ignore[union-attr]
        else:
            if m.text is not None:
                items.append({"type": "text", "text": m.text, "finished_at": None})
            for pos, call in enumerate(content, m.text is not None):
                if call.arguments_raw is None:  # type: ignore[union-attr]
                    part.texted.append(pos)
                d = {"type": "tool_call", "id": call.call_id, "name": call.name, "input": call_text(call),  # type: ignore[union-attr]
                     "state": None, "suggested_rules": [], "finished_at": None}
                self.calls[call.call_id] = (out.idx, d)
                self.call_dicts.append(d)
                items.append(d)
        part.written = len(items) - part.at

    def _plain_leftovers(self, out: _Out, part: _Part, kind: str) -> dict[str, Any]:
        """:meth:`_leftovers` of a plain message's part."""
        m = part.msg
        payload: dict[str, Any] = {} if m.source_type is None else {"source_type": m.source_type}
        if m.extras:
            payload["extras"] = to_jsonable_python(dict(m.extras))
        if part.carried:
            payload["blocks"] = [{"at": at, "block": block} for at, block in part.carried.items()]
        if kind != "tool" and m.speaker is None:  # its name is its Msg's, which reading back would give it
            payload["unset"] = ["name"]
        if m.role != _ROLE_OF.get(kind, out.msg["role"]):
            payload["as_role"] = m.role
        if part.named:
            payload["block_patch"] = {"0": {"name": None}}
        elif part.texted:  # read back with their text, else the same (_takes), as _patch patches them
            payload["block_patch"] = {str(pos): {"arguments_raw": None} for pos in part.texted}
        if payload:
            self._report(part, payload)
        return payload

    def _target(self, m: Message) -> _Out | None:
        found = [self.calls[b.call_id][0] for b in m.content
                 if isinstance(b, ToolResultBlock) and b.call_id in self.calls]
        return self.outs[max(found)] if found else None

    def _open(self, index: int, m: Message, kind: str) -> None:
        own = m.extras.get(NAME) or {}
        role = m.role if kind == "main" and m.role != "tool" else "assistant"
        name = next((n for n in (own.get("msg_name"), m.name) if isinstance(n, str)), role)
        msg: dict[str, Any] = {"name": name, "content": [], "role": role}
        if m.external_id is not None:
            msg["id"] = m.external_id
        msg["metadata"] = dict(m.metadata)
        if (ts := own["msg_created_at"] if "msg_created_at" in own else _ts(m, own)) is not None:
            msg["created_at"] = ts
        msg["usage"] = _usage_out(m.usage)
        msg.update({k: own.get(k) for k in _MSG_LEFTOVERS})
        msg.update(own.get("fields") or {})
        out = _Out(len(self.outs), msg)
        self.outs.append(out)
        self._append(out, index, m, kind, "head")

    def _append(self, out: _Out, index: int, m: Message, kind: str, how: str) -> None:
        own = m.extras.get(NAME) or {}
        part = _Part(m, index, len(out.msg["content"]), kind, how, _ts(m, own))
        out.parts.append(part)
        role = "user" if kind == "hint" else out.msg["role"]  # a hint holds what a user Msg may
        items = []
        for pos, block in enumerate(m.content):
            d = self._block(block, role, part.ts, out)
            if d is None:
                part.carried[pos] = block
                continue
            items.append(d)
            if NAME not in block.extras and not _plain(block):
                part.checks.append((pos, block, d))
        if kind == "hint":
            items = [self._hint(m, own["hint"], items, part.ts)]
        out.msg["content"].extend(items)
        part.written = len(items)
        if how != "head" and not items:  # nothing would mark where it starts: a Msg of its own
            out.parts.pop()
            self._open(index, m, kind)

    @staticmethod
    def _hint(m: Message, info: dict[str, Any], items: list[Any], ts: str | None) -> dict[str, Any]:
        first = m.content[0] if len(m.content) == 1 else None
        plain = info.get("str") and isinstance(first, TextBlock) and not first.extras
        hint: dict[str, Any] = {"type": "hint", "hint": first.text if plain else items}  # type: ignore
        if "id" in info:
            hint["id"] = info["id"]
        hint["source"] = m.name
        if ts is not None:
            hint["created_at"] = ts
        if "finished_at" in info:
            hint["finished_at"] = info["finished_at"]
        return hint | (info.get("fields") or {})

    def _block(self, block: Block, role: str, ts: str | None, out: _Out) -> dict[str, Any] | None:
        """``block`` as a 2.x block dict, or None where a ``role`` Msg cannot hold it."""
        meta = block.extras.get(NAME) or {}
        match block:
            case TextBlock():
                d: dict[str, Any] = {"type": "text", "text": block.text}
            case ReasoningBlock() if role == "assistant":
                d = {"type": "thinking", "thinking": block.text}
                if block.signature is not None:
                    d["signature"] = block.signature
                if block.redacted:
                    d["redacted_thinking_data"] = block.data or ""
            case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock() if role != "system":
                if (source := _source(block, meta)) is None:
                    return None
                d = {"type": "data", "source": source, "name": block.filename}
            case ToolCallBlock() if role == "assistant":
                raw = call_text(block)
                d = {"type": "tool_call", "id": block.call_id, "name": block.name, "input": raw,
                     "state": meta.get("state"), "suggested_rules": meta.get("suggested_rules", [])}
                self.calls[block.call_id] = (out.idx, d)
                self.call_dicts.append(d)
            case ToolResultBlock() if role == "assistant" and block.call_id in self.calls:
                d = self._result(block, meta, ts, out)
            case _:
                return None
        return _stamp(d, meta, ts)

    def _result(self, block: ToolResultBlock, meta: dict[str, Any], ts: str | None, out: _Out) -> dict:
        output: Any = block.output
        if not isinstance(output, str):  # text and data only; the rest is restored from the block's patch
            output = [d for d in (self._block(p, "user", ts, out) for p in output) if d is not None]
        self.answered.add(block.call_id)
        return {"type": "tool_result", "id": block.call_id,
                "name": block.name if block.name is not None else self.calls[block.call_id][1]["name"],
                "output": output, "state": meta.get("state") or ("error" if block.is_error else "success"),
                "metadata": meta.get("metadata", {})}

    def finish(self) -> list[dict[str, Any]]:
        for call in self.call_dicts:
            if call["state"] is None:  # as 2.x has it: finished once answered
                call["state"] = "finished" if call["id"] in self.answered else "pending"
        for out in self.outs:
            if payload := self._payload(out):
                out.msg["metadata"][CARRY_KEY] = payload
        return [out.msg for out in self.outs]

    def _payload(self, out: _Out) -> dict[str, Any]:
        """The Msg's convstore payload: its parts' leftovers and where reading back must cut."""
        m = out.parts[0].msg
        if len(out.parts) == 1 and m.__class__ is Plain and not m.content and not m.extras \
                and m.source_type is None and m.speaker is None:
            return {"unset": ["name"]}  # an unnamed plain text alone (most Msgs): read back, all but its name
        payload = self._leftovers(out, out.parts[0])
        if parts := {str(p.at): lp for p in out.parts[1:] if (lp := self._leftovers(out, p))}:
            payload["parts"] = parts
        types = [b["type"] for b in out.msg["content"]]
        if len(out.parts) == 1 and not types.count("tool_result") and "hint" not in types:
            return payload
        native = {start for _, start, _ in _segments(types)}
        starts = {p.at for p in out.parts}
        if splits := sorted(starts - native):
            payload["splits"] = splits
        if joins := sorted(native - starts):
            payload["joins"] = joins
        if (len(starts) > 1 or _KINDS.get(types[0] if types else "") is not None) \
                and any("part" not in ((p.msg.extras or {}).get(NAME) or {}) for p in out.parts):
            payload["unmarked"] = True  # built from other formats' messages: reading back adds no marks
        return payload

    def _leftovers(self, out: _Out, part: _Part) -> dict[str, Any]:
        """What reading ``part`` back from the Msg would not give."""
        m = part.msg
        kind = _KINDS.get(out.msg["content"][part.at]["type"], "main") if part.written else "main"
        if m.__class__ is Plain:
            return self._plain_leftovers(out, part, kind)
        expected = {"name": None if kind == "tool" else m.name if kind == "hint" else out.msg["name"],
                    "source_role": out.msg["role"] if kind == "hint" else None}
        head = part.how == "head"
        payload: dict[str, Any] = {}
        if m.extras.keys() - {NAME} or m.model is not None or m.source_type is not None \
                or m.name not in (None, expected["name"]) \
                or m.source_role not in (None, expected["source_role"]) \
                or (not _usage_exact(m.usage) if head else m.external_id is not None or m.usage is not None
                    or m.metadata or (m.created_at is not None and not part.written)):
            native = {"source_format", *(f for f, v in expected.items() if getattr(m, f) == v)}
            if head:
                native |= {"external_id", "created_at", "metadata"}
                if _usage_exact(m.usage):
                    native.add("usage")
            elif part.written:
                native.add("created_at")  # it is the first block's
            payload = carry(m, native=native, update={"extras": {k: v for k, v in m.extras.items() if k != NAME}}) or {}
        if part.carried:  # dumped whole: nested blocks (a result's output) need their "kind"
            payload["blocks"] = [{"at": at, "block": b.model_dump(mode="json")}
                                 for at, b in part.carried.items()]
        if unset := [f for f, v in expected.items() if getattr(m, f) is None and v is not None]:
            payload["unset"] = unset
        if m.role != _ROLE_OF.get(kind, out.msg["role"]):
            payload["as_role"] = m.role
        patches = {str(pos): p for pos, block, d in part.checks if (p := self._patch(block, d, part.ts))}
        if patches:
            payload["block_patch"] = patches
        if payload:
            self._report(part, payload)
        return payload

    def _patch(self, block: Block, d: dict[str, Any], ts: str | None) -> dict[str, Any]:
        """The fields of ``block`` that reading its 2.x form back does not give."""
        if _plain(block, notes=True):  # reading back gives all but its notes (none of this format's)
            return _notes(block)
        if (known := _known_patch(block, d)) is not None:
            return known
        if isinstance(block, ToolCallBlock) and block.arguments_raw is None and block.parse_error is None \
                and not block.call_id_synthesized and parse_json(d["input"]) == (block.arguments, None):
            # read back with their text, else the same
            return self._unset(block, "arguments_raw")
        if isinstance(block, ToolResultBlock) and block.name is None and isinstance(block.output, str) \
                and block.error is None:  # read back with its call's name, else the same
            return self._unset(block, "name")
        again = PART.validate_python(d)
        want = block.model_dump(mode="json")
        got = BLOCK.validate_python(_BLOCKS_IN[type(again)](again, ts, self.answered)).model_dump(mode="json")
        return {k: v for k, v in want.items() if got.get(k) != v}

    @staticmethod
    def _unset(block: Block, field: str) -> dict[str, Any]:
        """The patch of a block that reads back as it is but for ``field`` (then set) and its notes."""
        return {**_notes(block), field: None}

    def _report(self, part: _Part, payload: dict[str, Any]) -> None:
        if payload.keys() <= _SILENT:  # a stand-in's name unset, a role: nothing of the message is lost
            return
        where = f"kept in metadata.{CARRY_KEY}"
        found = [(f"extras.{fmt}" if key == "extras" else key) for key in payload
                 if key not in _STRUCTURE for fmt in (payload[key] if key == "extras" else [None])]
        found += [item["block"]["kind"] for item in payload.get("blocks", ())]
        found += [f"{part.msg.content[int(pos)].kind}.{f}"
                  for pos, patch in payload.get("block_patch", {}).items()
                  for f, v in patch.items() if v not in (None, {}, [])]  # an absence is no information
        for field in found:
            self.losses.add(part.index, field, "carried", where)


_STRUCTURE = {"blocks", "block_patch", "unset", "as_role"}
_SILENT = frozenset({"unset", "as_role"})


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.add_plain` writes a plain message as its canonical one would be: a result
    without an id (which only the head of a Msg writes, and a result joins its call's); a text's or calls'
    speaker its Msg's name, its source message type carried as the canonical path carries it."""
    return writable(msg, NAME, ids=msg.role != "tool", speakers=True) and _texts_read_back(msg.content)


def _texts_read_back(content: tuple[Any, ...]) -> bool:
    """Whether each call of object arguments reads back from its text (as 2.x keeps it) as those arguments:
    then its patch is known (else the canonical path reads it back to find it)."""
    for part in content:
        if part.__class__ is Call and part.arguments_raw is None \
                and parse_json(dump_json(part.arguments)) != (part.arguments, None):
            return False
    return True


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as AgentScope 2.x
    ``Msg.model_dump(mode="json")`` dicts."""
    writer = _Writer(losses)
    for index, msg in enumerate(canonical(messages, unless=_takes)):
        if msg.__class__ is Plain:
            writer.add_plain(index, msg)  # type: ignore[arg-type]
        else:
            writer.add(index, msg)  # type: ignore[arg-type]
    return writer.finish()
