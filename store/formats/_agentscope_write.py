"""Export of the ``agentscope`` format (see :mod:`store.formats.agentscope`): canonical messages
as AgentScope 1.x ``Msg.to_dict()`` dicts, each tool result in a ``system`` message of its own,
with what AgentScope has no field for carried in ``metadata["convstore"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import to_jsonable_python
from typing_extensions import assert_never

from ..lean import Call, Plain, writable, write_each
from ..model import (AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, ErrorBlock, FileBlock,
                     HandoffBlock, ImageBlock, Message, ReasoningBlock, RefusalBlock, TextBlock,
                     ToolCallBlock, ToolResultBlock, UsageBlock, VideoBlock)
from ._common import CARRY_KEY, Losses, b64encode, carry, data_uri, dump_json
from .agentscope import (NAME, Patch, Written, _OUTPUT_KINDS, _PY_ROLES, _ROLES_IN, _ROLE_OUT, _runs,
                         _timestamp)


TAKES_PLAIN = True

# --- from canonical ----------------------------------------------------------------------


def _fields(extras: dict[str, Any]) -> dict[str, Any]:
    """Our own markers, unless they came from Java JSON (not written back, carried instead)."""
    own = extras.get(NAME) if extras else None
    return {} if own is None or own.get("java") else own


def _set(block: Block, lost: list[str]) -> Patch:
    """A patch with the block's ``lost`` fields, and its extras unless the written block gives them back."""
    if block.extras and (block.extras.keys() != {NAME} or block.extras[NAME].get("java")):
        lost = [*lost, "extras"]
    return {"set": block.model_dump(mode="json", include=set(lost))} if lost else None


def _dump(block: Block) -> dict[str, Any]:
    return block.model_dump(mode="json", exclude_defaults=True) | {"kind": block.kind}


def _media_name(block: Any) -> str:
    what = block.filename or block.file_id or block.url or block.media_type or "no source"
    return f"[{block.kind}: {what}]"


_STAND_INS: dict[str, Callable[[Any], str]] = {
    "refusal": lambda b: b.text,
    "error": lambda b: f"[error{' ' + b.code if b.code else ''}] {b.message}",
    "data": lambda b: f"[data{' ' + b.media_type if b.media_type else ''}] {dump_json(b.data)}",
    "code": lambda b: f"```{b.language or ''}\n{b.code}\n```",
    "code_result": lambda b: f"[code result{'' if b.exit_code is None else f', exit code {b.exit_code}'}]\n"
                             f"{b.output}",
    "handoff": lambda b: f"[handoff to {b.target}]",
    "usage": lambda b: "[usage]",
    "reasoning": lambda b: f"[reasoning] {b.text}",
    "tool_call": lambda b: f"[tool call {b.name} {b.call_id}]",
    "tool_result": lambda b: f"[tool result {b.call_id}]",
    **{kind: _media_name for kind in ("image", "audio", "video", "file")},
}
"""A clear text stand-in for a block AgentScope cannot hold (the block itself is carried)."""


def _stand_in(block: Block) -> Written:
    return {"type": "text", "text": _STAND_INS[block.kind](block)}, {"block": _dump(block)}


def _media_out(block: ImageBlock | AudioBlock | VideoBlock) -> Written:
    own = _fields(block.extras)
    lost = [f for f in ("filename", "file_id") if getattr(block, f) is not None]
    if own.get("raw") is not None:
        source: dict[str, Any] = {"type": "base64", "media_type": block.media_type or "", "data": own["raw"]}
    elif block.data is not None and own.get("data_uri"):
        source = {"type": "url", "url": data_uri(block.media_type, block.data)}
    elif block.data is not None:
        source = {"type": "base64", "media_type": block.media_type or "application/octet-stream",
                  "data": b64encode(block.data)}
        lost += ["media_type"] * (block.media_type is None) + ["url"] * (block.url is not None)
    elif block.url is not None:
        source = {"type": "url", "url": block.url}  # 1.x URL sources have no media type
        lost += ["media_type"] * (block.media_type is not None)
    else:
        return _stand_in(block)
    source.update(own.get("source") or {})
    return {"type": block.kind, "source": source, **(own.get("fields") or {})}, _set(block, lost)


_ODD_ROLE = {
    True: "a tool message without tool results reads back as a system message",
    False: "a message of only tool results reads back as a tool message",
}
_WHY_CARRIED = {
    "name": "AgentScope needs a speaker name: the role is written as the name",
    "source_role": "AgentScope roles are user, assistant and system",
    "created_at": "AgentScope timestamps are local times to the millisecond",
    "blocks": "usage is not content in AgentScope",
    "extras": "fields of another format",
}
_NO_FIELD = "AgentScope messages have no field for it"


class _Writer:
    """Converts one batch; remembers tool names by call id (a result must name its tool)."""

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.names: dict[str, str] = {}
        self.out: list[dict[str, Any]] = []

    def block(self, block: Block) -> Written:
        """The AgentScope block, and what it cannot hold (a patch), if anything."""
        fields = _fields(block.extras).get("fields") or {}
        match block:
            case TextBlock():
                return {"type": "text", "text": block.text, **fields}, _set(block, [])
            case ReasoningBlock():
                lost = [f for f in ("signature", "data") if getattr(block, f) is not None]
                return {"type": "thinking", "thinking": block.text, **fields}, \
                    _set(block, lost + ["redacted"] * block.redacted)
            case ImageBlock() | AudioBlock() | VideoBlock():
                return _media_out(block)
            case ToolCallBlock():
                return self.tool_call(block, fields)
            case ToolResultBlock():
                return self.tool_result(block, fields)
            case FileBlock() | RefusalBlock() | ErrorBlock() | DataBlock() | CodeBlock() | CodeResultBlock() \
                    | HandoffBlock() | UsageBlock():
                return _stand_in(block)
            case _:
                assert_never(block)

    def tool_call(self, block: ToolCallBlock, fields: dict[str, Any]) -> Written:
        self.names[block.call_id] = block.name
        is_object = isinstance(block.arguments, dict)
        part = {"type": "tool_use", "id": block.call_id, "name": block.name,
                "input": block.arguments if is_object else {}}
        if block.arguments_raw is not None:
            part["raw_input"] = block.arguments_raw
        lost = ["arguments"] * (not is_object) + ["parse_error"] * (block.parse_error is not None) \
            + ["call_id_synthesized"] * block.call_id_synthesized
        return {**part, **fields}, _set(block, lost)

    def tool_result(self, block: ToolResultBlock, fields: dict[str, Any]) -> Written:
        lost = ["name"] * (block.name is None) + ["is_error"] * block.is_error
        lost += ["error"] * (block.error is not None)
        output: Any = block.output
        if not isinstance(output, str):
            written = [self.block(b) if b.kind in _OUTPUT_KINDS else _stand_in(b) for b in block.output]
            output = [part for part, _ in written]
            # a patch inside the output would need a position inside the block: carry the whole output
            lost += ["output"] * any(patch is not None for _, patch in written)
        name = block.name if block.name is not None else self.names.get(block.call_id, "")
        return {"type": "tool_result", "id": block.call_id, "name": name, "output": output, **fields}, \
            _set(block, lost)

    def message(self, msg: Message, index: int) -> None:
        own = _fields(msg.extras)
        items: list[tuple[Written, bool]] = []
        usage: dict[int, Block] = {}
        for at, block in enumerate(msg.content):
            if isinstance(block, UsageBlock):
                usage[at] = block  # not content in AgentScope: carried whole, without a stand-in
                continue
            written = self.block(block)
            self._report(index, at, block, written[1])
            items.append((written, isinstance(block, ToolResultBlock)))
        # tool results read from a user or assistant message go back into one
        role = msg.source_role if msg.role == "tool" and msg.source_role in _PY_ROLES else _ROLE_OUT[msg.role]
        payload = self._payload(msg, index, role, usage)
        if own.get("continues") and not payload and self.out and isinstance(self.out[-1]["content"], list):
            _append(self.out[-1], [written for written, _ in items])  # split off one AgentScope message
            return
        runs = _runs(items, lambda item: item[1], grouped=bool(own.get("grouped"))) \
            if any(is_result for _, is_result in items) else [(False, items)]
        if ("tool" if runs[0][0] else _ROLES_IN[role]) != msg.role:
            self.losses.add(index, "role", "approximated", _ODD_ROLE[msg.role == "tool"])
        name = msg.name if msg.name is not None else role
        stamp = own.get("timestamp") or (_timestamp(msg.created_at) if msg.created_at is not None else None)
        for k, (is_result, run) in enumerate(runs):
            parts = [part for (part, _), _ in run]
            patch = _patch_key([written for written, _ in run])
            run_role = role if msg.role == "tool" or not is_result else "system"
            if k == 0:
                self.out.append(_body(msg, own, name, run_role, parts, {**payload, **patch}, stamp))
                continue
            body = {"name": name, "role": run_role, "content": parts,
                    "metadata": {CARRY_KEY: {"continues": True, **patch}}}
            self.out.append(body | ({"timestamp": stamp} if stamp is not None else {}))

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same item and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        content, patches = msg.content, []
        if content and content[0].__class__ is not Call:  # a tool result, in a system message of its own
            call_id, role = content[0].call_id, "system"
            name = msg.name if msg.name is not None else self.names.get(call_id, "")
            parts: list[dict[str, Any]] = [{"type": "tool_result", "id": call_id, "name": name, "output": msg.text}]
            if msg.name is None:
                patches.append({"at": 0, "set": {"name": None}})
                self.losses.add(index, "content[0].name", "carried", "the AgentScope tool_result block has no "
                                f"field for it: kept in metadata.{CARRY_KEY}")
        else:
            role = msg.role
            parts = [] if msg.text is None else [{"type": "text", "text": msg.text}]
            for call in content:
                self.names[call.call_id] = call.name  # type: ignore[union-attr]
                arguments = call.parsed()  # type: ignore[union-attr]
                is_object = arguments.__class__ is dict
                if not is_object:
                    patches.append({"at": len(parts), "set": {"arguments": arguments}})
                    self.losses.add(index, f"content[{len(parts)}].arguments", "carried", "the AgentScope tool_call "
                                    f"block has no field for it: kept in metadata.{CARRY_KEY}")
                parts.append({"type": "tool_use", "id": call.call_id, "name": call.name,  # type: ignore[union-attr]
                              "input": arguments if is_object else {}})
                if call.arguments_raw is not None:  # type: ignore[union-attr]
                    parts[-1]["raw_input"] = call.arguments_raw  # type: ignore[union-attr]
        payload: dict[str, Any] = {"name": None} if msg.speaker is None else {}
        if role != msg.role:
            payload["source_role"] = None
        if msg.source_type is not None:
            payload["source_type"] = msg.source_type
        if msg.extras:
            payload["extras"] = to_jsonable_python(dict(msg.extras))
        for key in payload:
            why = _WHY_CARRIED.get(key, _NO_FIELD)
            for field in [f"extras.{k}" for k in payload[key]] if key == "extras" else [key]:
                self.losses.add(index, field, "carried", f"{why}: kept in metadata.{CARRY_KEY}")
        if patches:
            payload["patch"] = patches
        ident = {} if msg.external_id is None else {"id": msg.external_id}
        self.out.append({**ident, "name": role if msg.speaker is None else msg.speaker, "role": role,
                         "content": parts, "metadata": {CARRY_KEY: payload} if payload else {}})

    def _payload(self, msg: Message, index: int, role: str, usage: dict[int, Block]) -> dict[str, Any]:
        """What ``metadata["convstore"]`` must carry for ``msg`` to read back as it is."""
        created = msg.created_at
        odd_time = created is not None and (created.tzinfo or created.microsecond % 1000)
        if role == msg.role and not (msg.name is None or msg.source_role or msg.extras or usage or msg.model
                                     or msg.usage or msg.source_type or odd_time):
            return {}  # the common case: the written message says it all
        own = _fields(msg.extras)
        payload: dict[str, Any] = {}
        if msg.name is None:
            payload["name"] = None
        if msg.source_role != (role if role != msg.role else None):
            payload["source_role"] = msg.source_role
        stamp_exact = msg.created_at is None or own.get("timestamp") is not None or (
            msg.created_at.tzinfo is None and msg.created_at.microsecond % 1000 == 0)
        java = msg.extras.get(NAME, {}).get("java")  # Java JSON is not written back: carry all of it
        foreign = {k: v for k, v in msg.extras.items() if k != NAME or java} if msg.extras else {}
        if msg.model or msg.usage or msg.source_type or foreign or usage or not stamp_exact:
            native = {"name", "external_id", "metadata", "source_format", "source_role", "extras"}
            native |= {"created_at"} if stamp_exact else set()
            payload.update(carry(msg, native=native, blocks=usage) or {})
            payload.update({"extras": to_jsonable_python(foreign)} if foreign else {})
        for key in payload:
            fields = [f"extras.{k}" for k in payload[key]] if key == "extras" else \
                [f"content[{b['at']}]" for b in payload[key]] if key == "blocks" else [key]
            for field in fields:
                why = _WHY_CARRIED.get(key, _NO_FIELD)
                self.losses.add(index, field, "carried", f"{why}: kept in metadata.{CARRY_KEY}")
        return payload

    def _report(self, index: int, at: int, block: Block, patch: Patch) -> None:
        if patch is None:
            return
        if "block" in patch:
            self.losses.add(index, f"content[{at}]", "carried", f"AgentScope 1.x has no {block.kind} block: "
                            f"a text stand-in is written, the block kept in metadata.{CARRY_KEY}")
            return
        for field in patch["set"]:
            self.losses.add(index, f"content[{at}].{field}", "carried", f"the AgentScope {block.kind} block "
                            f"has no field for it: kept in metadata.{CARRY_KEY}")


def _patch_key(written: list[Written], offset: int = 0) -> dict[str, Any]:
    """The ``patch`` entry for blocks written at ``offset`` onwards in one AgentScope message."""
    patches = [{"at": offset + at, **patch} for at, (_, patch) in enumerate(written) if patch is not None]
    return {"patch": patches} if patches else {}


def _append(body: dict[str, Any], written: list[Written]) -> None:
    """Blocks of a canonical message that was split off an AgentScope message go back into it."""
    patch = _patch_key(written, len(body["content"]))
    body["content"].extend(part for part, _ in written)
    if patch:
        metadata = body["metadata"] = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        metadata.setdefault(CARRY_KEY, {}).setdefault("patch", []).extend(patch["patch"])


def _body(msg: Message, own: dict[str, Any], name: str, role: str, parts: list[dict[str, Any]],
          payload: dict[str, Any], stamp: str | None) -> dict[str, Any]:
    """The first AgentScope message of a canonical one, in ``Msg.to_dict()`` key order."""
    body: dict[str, Any] = {} if msg.external_id is None else {"id": msg.external_id}
    plain = len(parts) == 1 and parts[0].keys() == {"type", "text"} and parts[0]["type"] == "text"
    body.update(name=name, role=role,
                content=parts[0]["text"] if own.get("content") == "str" and plain and not payload else parts)
    if own.get("metadata") != "absent" or msg.metadata or payload:
        body["metadata"] = dict(msg.metadata)
    if stamp is not None:
        body["timestamp"] = stamp
    body.update(own.get("fields") or {})
    if payload:
        body["metadata"] = {**(body.get("metadata") or {}), CARRY_KEY: payload}
    return body


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be (its source
    message type carried as the canonical path carries it, its id written, its speaker its name)."""
    return writable(msg, NAME, ids=True, speakers=True)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as AgentScope 1.x ``Msg.to_dict()``
    dicts (each tool result in a ``system`` message of its own, as ``ReActAgent`` writes them)."""
    writer = _Writer(losses)
    write_each(messages, _takes, writer.plain, writer.message)
    return writer.out
