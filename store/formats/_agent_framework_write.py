"""Export of the ``agent-framework`` format (see :mod:`store.formats.agent_framework`): canonical
messages as ``agent_framework.Message.to_dict()`` dicts in the release's shape. What the package
has no field for travels under ``additional_properties["convstore"]`` (reported as carried);
blocks it has no content for become text stand-ins that carry the whole block.
"""

from __future__ import annotations

from typing import Any, assert_never

from ..lean import ANY_ROLE, Call, Plain, writable, write_each
from ..model import (AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, ErrorBlock, FileBlock,
                     HandoffBlock, ImageBlock, Message, ReasoningBlock, RefusalBlock, TextBlock,
                     ToolCallBlock, ToolResultBlock, Usage, UsageBlock, VideoBlock)
from ._common import CARRY_KEY, Losses, carry, data_uri, dump_json, parse_data_uri, parse_json
from .agent_framework import EXCEPTION_MARKER, NAME, _WILDCARD_TYPES, _is_refusal, _joined, _media_class

TAKES_PLAIN = True

_NATIVE: dict[str, frozenset[str]] = {
    "text": frozenset({"text"}),
    "refusal": frozenset({"text"}),
    "reasoning": frozenset({"text", "signature", "redacted", "data"}),
    "tool_call": frozenset({"call_id", "name", "arguments", "arguments_raw", "parse_error"}),
    "tool_result": frozenset({"call_id", "name", "output", "is_error"}),
    "error": frozenset({"message", "code", "details"}),
    "usage": frozenset({"usage"}),
    "media": frozenset({"url", "data", "media_type", "filename", "file_id"}),
}
_CARRIED = f"kept in additional_properties.{CARRY_KEY}"
_STAND_INS = {
    "code": lambda b: f"```{b.language or ''}\n{b.code}\n```",
    "code_result": lambda b: b.output,
    "handoff": lambda b: f"[handoff to {b.target}]",
    "data": lambda b: dump_json(b.data),
}


def _usable_uri(uri: str) -> bool:
    """Whether the package's URI check (``_validate_uri``) lets ``uri`` through."""
    if not uri.startswith("data:"):
        return ":" in uri
    prefix, comma, _ = uri.partition(",")
    params = prefix.split(";")[1:]
    return bool(comma) and all(p == "base64" and i == len(params) - 1 or not p or "=" in p
                               for i, p in enumerate(params))


def _out(content: dict[str, Any], extras: dict[str, Any], carried: dict[str, Any] | None = None
         ) -> dict[str, Any]:
    """``content`` with its kept fields, ``additional_properties`` and the carried payload."""
    own = extras.get(NAME)
    if own and own.get("fields"):
        content.update(own["fields"])
    ap = dict(content.get("additional_properties") or {})
    if carried:
        ap[CARRY_KEY] = carried
    content["additional_properties"] = ap
    return content


class _Writer:
    """Converts one batch; remembers call names, so a result's name is carried only when it differs."""

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.names: dict[str, str] = {}
        self.out: list[dict[str, Any]] = []

    def leftovers(self, block: Block, native: frozenset[str], index: int, more: dict[str, Any] | None = None,
                  shape: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """What of ``block`` the written content does not express, to carry: its other fields and
        ``more`` (both reported), and ``shape``: notes that only restore the canonical form of
        something written natively (not reported)."""
        fields = block.model_fields_set - native - {"kind", "extras"}
        payload = block.model_dump(mode="json", include=fields, exclude_defaults=True) if fields else {}
        others = {k: v for k, v in block.extras.items() if k != NAME}
        if others:
            payload["extras"] = others
        payload.update(more or {})
        for key in [*(payload.keys() - {"extras"}), *(f"extras.{k}" for k in others)]:
            self.losses.add(index, f"{block.kind}.{key}", "carried", _CARRIED)
        payload.update(shape or {})
        return payload or None

    def content(self, block: Block, index: int) -> dict[str, Any]:
        match block:
            case TextBlock():
                carried = self.leftovers(block, _NATIVE["text"], index)
                return _out({"type": "text", "text": block.text}, block.extras, carried)
            case RefusalBlock():
                return self._refusal_out(block, index)
            case ReasoningBlock():
                return self._reasoning_out(block, index)
            case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock():
                return self._media_out(block, index)
            case ToolCallBlock():
                return self._call_out(block, index)
            case ToolResultBlock():
                return self._result_out(block, index)
            case ErrorBlock():
                return self._error_out(block, index)
            case UsageBlock():
                return self._usage_out(block.usage, block, index)
            case DataBlock() if block.extras.get(NAME, {}).get("other") and isinstance(block.data, dict):
                return _out(dict(block.data), block.extras, self.leftovers(block, frozenset({"data"}), index))
            case DataBlock() | CodeBlock() | CodeResultBlock() | HandoffBlock():
                return self._stand_in(block, index)
            case _:
                assert_never(block)

    def _refusal_out(self, block: RefusalBlock, index: int) -> dict[str, Any]:
        carried = self.leftovers(block, _NATIVE["refusal"], index)
        out = _out({"type": "text", "text": block.text}, block.extras, carried)
        ap = out["additional_properties"]
        if not _is_refusal(ap):
            core = ap.get("core") if isinstance(ap.get("core"), dict) else {}
            ap["core"] = {**core, "model_output_kind": "refusal"}
        return out

    def _reasoning_out(self, block: ReasoningBlock, index: int) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "text_reasoning"}
        if block.text or block.extras.get(NAME, {}).get("text_empty"):
            out["text"] = block.text
        native = _NATIVE["reasoning"] - ({"signature"} if block.redacted else {"data"})
        protected = block.data if block.redacted else block.signature
        if protected is not None:
            out["protected_data"] = protected
        out = _out(out, block.extras, self.leftovers(block, native, index))
        if block.redacted:
            out["additional_properties"].setdefault("anthropic_redacted_thinking", True)
        return out

    def _media_out(self, block: ImageBlock | AudioBlock | VideoBlock | FileBlock, index: int
                   ) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        media_type = block.media_type or _WILDCARD_TYPES[block.kind]
        more: dict[str, Any] = {} if block.media_type else {"media_type": None}
        if block.data is not None:
            media_type = block.media_type or "application/octet-stream"
            out: dict[str, Any] = {"type": "data", "uri": data_uri(media_type, block.data),
                                   "media_type": media_type}
            native = _NATIVE["media"] - {"url"}
        elif block.url is not None and _usable_uri(block.url):
            kind = "data" if block.url.startswith("data:") else "uri"
            out = {"type": kind, "uri": block.url, "media_type": media_type}
            native = _NATIVE["media"] - {"data"}
            decodable = parse_data_uri(block.url) if block.url.startswith("data:") else None
            if decodable is not None:  # left undecoded by its source: reading it back would decode it
                more.update(url=block.url, data=None)
                out["media_type"] = block.media_type or decodable[0]
        elif block.file_id is not None and block.url is None:
            out, more = {"type": "hosted_file", "file_id": block.file_id}, {}
            if block.media_type is not None:
                out["media_type"] = block.media_type
            native = _NATIVE["media"] - {"url", "data"}
        else:
            return self._stand_in(block, index)
        if _media_class(out.get("media_type")) is not type(block):
            more["kind"] = block.kind
        if block.filename is not None:
            out["name"] = block.filename
        if block.file_id is not None:
            out["file_id"] = block.file_id
        out["type"] = own.get("type", out["type"])
        return _out(out, block.extras, self.leftovers(block, native, index, shape=more))

    def _call_out(self, block: ToolCallBlock, index: int) -> dict[str, Any]:
        self.names[block.call_id] = block.name
        out: dict[str, Any] = {"type": "function_call", "call_id": block.call_id, "name": block.name}
        shape: dict[str, Any] = {}
        native = _NATIVE["tool_call"]
        if block.parse_error is not None and (block.arguments_raw is None
                                              or parse_json(block.arguments_raw)[1] != block.parse_error):
            native = native - {"parse_error"}  # not what reading the arguments back would say
        if block.arguments_raw is not None:
            out["arguments"] = block.arguments_raw
        elif isinstance(block.arguments, dict):
            out["arguments"] = block.arguments
        elif block.arguments is not None:
            out["arguments"], shape["arguments_raw"] = dump_json(block.arguments), None
            self.losses.add(index, "tool_call.arguments", "approximated",
                            "agent-framework takes an object or a JSON string; written as a JSON string")
        out["hosted"] = False
        return _out(out, block.extras, self.leftovers(block, native, index, shape=shape))

    def _result_out(self, block: ToolResultBlock, index: int) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        more: dict[str, Any] = {}
        shape: dict[str, Any] = {}
        if isinstance(block.output, str):
            items = [{"type": "text", "text": block.output, "additional_properties": {}}]
            result = block.output
        else:
            items = [self.content(b, index) for b in block.output]
            result = _joined(block.output)
            first = block.output[0] if len(block.output) == 1 else None
            if type(first) is TextBlock and not first.extras:  # it would read back as a plain string
                shape["output"] = [{"kind": "text", "text": first.text}]
        if block.name != self.names.get(block.call_id):  # reading back names a result after its call
            (more if block.name is not None else shape)["name"] = block.name
        out: dict[str, Any] = {"type": "function_result", "call_id": block.call_id,
                               "result": own.get("result", result), "items": items}
        if block.is_error:
            out["exception"] = own.get("exception", EXCEPTION_MARKER)
        return _out(out, block.extras, self.leftovers(block, _NATIVE["tool_result"], index, more, shape))

    def _error_out(self, block: ErrorBlock, index: int) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "error"}
        if block.message or not block.extras.get(NAME, {}).get("no_message"):
            out["message"] = block.message
        if block.code is not None:
            out["error_code"] = block.code
        more: dict[str, Any] = {}
        if block.details is not None:
            text = isinstance(block.details, str)
            out["error_details"] = block.details if text else dump_json(block.details)
            if not text:
                more["details"] = block.details
        return _out(out, block.extras, self.leftovers(block, _NATIVE["error"], index, more))

    def _usage_out(self, usage: Usage, block: UsageBlock | None, index: int) -> dict[str, Any]:
        details = {key: value for key, value in (("input_token_count", usage.input_tokens),
                   ("output_token_count", usage.output_tokens), ("total_token_count", usage.total_tokens))
                   if value is not None}
        details.update(usage.extras.get(NAME, {}).get("counts", {}))
        others = {k: v for k, v in usage.extras.items() if k != NAME}
        more: dict[str, Any] = {"usage": {"extras": others}} if others else {}
        if block is None:
            payload = {"message_usage": True, **more}
            if others:
                self.losses.add(index, "usage.extras", "carried", _CARRIED)
            return _out({"type": "usage", "usage_details": details}, {}, payload)
        return _out({"type": "usage", "usage_details": details}, block.extras,
                    self.leftovers(block, _NATIVE["usage"], index, more))

    def _stand_in(self, block: Block, index: int) -> dict[str, Any]:
        """A text the package can show, carrying the whole block so it comes back."""
        render = _STAND_INS.get(block.kind)
        text = render(block) if render else f"[{block.kind}]"
        self.losses.add(index, block.kind, "carried",
                        f"written as text; the block is kept in additional_properties.{CARRY_KEY}")
        dumped = block.model_dump(mode="json", exclude_defaults=True) | {"kind": block.kind}
        return {"type": "text", "text": text, "additional_properties": {CARRY_KEY: {"block": dumped}}}

    def message(self, msg: Message, index: int) -> None:
        contents: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for block in msg.content:
            target = results if isinstance(block, ToolResultBlock) and msg.role != "tool" else contents
            target.append(self.content(block, index))
        if msg.usage is not None:
            contents.append(self._usage_out(msg.usage, None, index))
        own = msg.extras.get(NAME, {})
        split = own.get("split")
        if split is not None and self.out and len(split) == len(contents) and msg.role == "tool":
            previous = self.out[-1]["contents"]
            for pos, content in zip(split, contents):
                previous.insert(pos, content)
            return
        body: dict[str, Any] = {"type": "message", "role": own.get("role", msg.role), "contents": contents}
        if msg.name is not None:
            body["author_name"] = msg.name
        if msg.external_id is not None:
            body["message_id"] = msg.external_id
        ap = dict(msg.metadata)
        carried = self._carry(msg, index)
        if carried:
            ap[CARRY_KEY] = carried
        body["additional_properties"] = ap
        body.update(own.get("fields") or {})
        if not results:
            self.out.append(body)
        elif not contents:  # the package wants results in tool messages
            body["role"], body["contents"] = "tool", results
            self.losses.add(index, "role", "approximated",
                            f"a {msg.role} message of tool results is written as a tool message")
            self.out.append(body)
        else:  # results answer earlier calls, unless this very message made them
            tool = {"type": "message", "role": "tool", "contents": results, "additional_properties": {}}
            self.out.extend([body, tool] if msg.role == "assistant" else [tool, body])

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same item and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        content = msg.content
        if content and content[0].__class__ is not Call:  # a tool result
            contents = [self._plain_result(msg, index)]
        else:
            contents = [] if msg.text is None else [{"type": "text", "text": msg.text, "additional_properties": {}}]
            for call in content:
                self.names[call.call_id] = call.name  # type: ignore[union-attr]
                contents.append({"type": "function_call", "call_id": call.call_id, "name": call.name,  # type: ignore[union-attr]
                                 "arguments": call.arguments_raw if call.arguments_raw is not None  # type: ignore[union-attr]
                                 else call.arguments, "hosted": False, "additional_properties": {}})  # type: ignore[union-attr]
        carried: dict[str, Any] = {} if msg.source_type is None else {"source_type": msg.source_type}
        reported = list(carried) + [f"extras.{k}" for k in msg.extras or ()]
        if msg.extras:  # none of this format's own (_takes)
            carried["extras"] = dict(msg.extras)
        for field in reported:
            self.losses.add(index, field, "carried", _CARRIED)
        body: dict[str, Any] = {"type": "message", "role": msg.role, "contents": contents}
        if msg.speaker is not None:
            body["author_name"] = msg.speaker
        if msg.external_id is not None:
            body["message_id"] = msg.external_id
        body["additional_properties"] = {CARRY_KEY: carried} if carried else {}
        self.out.append(body)

    def _plain_result(self, msg: Plain, index: int) -> dict[str, Any]:
        call_id, name = msg.content[0].call_id, msg.name
        out: dict[str, Any] = {"type": "function_result", "call_id": call_id, "result": msg.text,
                               "items": [{"type": "text", "text": msg.text, "additional_properties": {}}]}
        if msg.content[0].is_error:  # type: ignore[union-attr]
            out["exception"] = EXCEPTION_MARKER
        if name != self.names.get(call_id):  # reading back names a result after its call
            if name is not None:
                self.losses.add(index, "tool_result.name", "carried", _CARRIED)
            out["additional_properties"] = {CARRY_KEY: {"name": name}}
        else:
            out["additional_properties"] = {}
        return out

    def _carry(self, msg: Message, index: int) -> dict[str, Any] | None:
        others = {k: v for k, v in msg.extras.items() if k != NAME}
        role_native = msg.source_role is None or msg.source_role == msg.extras.get(NAME, {}).get("role")
        unset = msg.source_type is None and msg.created_at is None and msg.model is None
        if not others and role_native and unset:
            return None
        native = {"name", "external_id", "metadata", "source_format", "usage", "extras"}
        payload = carry(msg, native=native | ({"source_role"} if role_native else set())) or {}
        reported = [*payload, *(f"extras.{k}" for k in others)]
        if others:
            payload["extras"] = others
        for field in reported:
            self.losses.add(index, field, "carried", _CARRIED)
        return payload or None


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be (its source
    message type carried as the canonical path carries it, its id and speaker written)."""
    return writable(msg, NAME, texts=ANY_ROLE, ids=True, speakers=True)


def from_canonical(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as ``agent_framework.Message.to_dict()``
    dicts."""
    writer = _Writer(losses)
    write_each(messages, _takes, writer.plain, writer.message)
    return writer.out
