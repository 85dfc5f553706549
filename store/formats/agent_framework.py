"""Microsoft Agent Framework messages (``agent_framework.Message.to_dict()``, agent-framework-core 1.x).

A message is ``{"type": "message", "role", "contents", "author_name", "message_id",
"additional_properties"}``; each content is ``{"type": ..., "additional_properties": {}}``
with kind-specific fields: text, text_reasoning, data, uri, hosted_file,
function_call, function_result, error, usage, the approval request/response pair
and the package's other content types. Also read: the seed's MEAI-aligned shape
(``chat_message``, ``author``, ``TextContent``-style names, contents without
``type``, error/usage ``details``, base64 ``data``) and plain-string contents;
always written: the release's shape.

Message ``additional_properties`` map to :attr:`Message.metadata`. What the
canonical model has no field for stays in ``extras["agent-framework"]``, and what
this format has no field for travels under ``additional_properties["convstore"]``
(on the message or on a content), so other formats survive a trip through it.
The source models are in :mod:`._agent_framework_schema`, the writer is :mod:`._agent_framework_write`.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import SchemaError
from ..model import BLOCK, AudioBlock, Block, FileBlock, ImageBlock, Message, Usage, VideoBlock
from ._agent_framework_schema import _AF_KEYS, _ALIASES, _KEYS, MESSAGES, _tag
from ._common import (CARRY_KEY, data_uri, dump_json, made, message_list, parse_data_uri, parse_json, restore,
                      undeclared, validate)

NAME = "agent-framework"
EXCEPTION_MARKER = "FunctionInvocationError"
"""What ``Content.to_dict()`` writes for any function exception (the text is redacted)."""

_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool", "developer": "system"}
_MEDIA_KINDS = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
_WILDCARD_TYPES = {
    "image": "image/*", "audio": "audio/*", "video": "video/*", "file": "application/octet-stream",
}


def _media_kind(media_type: str | None) -> str:
    kind = (media_type or "").split("/", 1)[0]
    return kind if kind in _MEDIA_KINDS else "file"


def _media_class(media_type: str | None) -> type[ImageBlock | AudioBlock | VideoBlock | FileBlock]:
    return _MEDIA_KINDS.get((media_type or "").split("/", 1)[0], FileBlock)


def _own(fields: dict[str, Any] | None = None, **found: Any) -> dict[str, Any]:
    """An ``extras["agent-framework"]`` entry: kept ``fields`` and shape notes, empty parts left out."""
    kept = {k: v for k, v in found.items() if v is not None and v is not False and v != {}} if found else {}
    if fields:
        kept["fields"] = fields
    return {NAME: kept} if kept else {}


def _split_fields(c: dict[str, Any], keys: frozenset[str], ap_native: bool = False) -> tuple[dict, Any]:
    """The keys of ``c`` (its model declares ``keys``) the canonical model has no field for, and its
    carried payload."""
    fields = undeclared(c, keys) or {}
    ap = c.get("additional_properties")
    carried = None
    if ap and CARRY_KEY in ap:
        carried = ap[CARRY_KEY]
        ap = {k: v for k, v in ap.items() if k != CARRY_KEY}
    if ap and not ap_native:
        fields["additional_properties"] = ap
    return fields, carried


def _merge_carried(current: Any, carried: Any) -> Any:
    if isinstance(current, dict) and isinstance(carried, dict):
        return {**current, **{k: _merge_carried(current.get(k), v) for k, v in carried.items()}}
    return carried


def _restore_block(block: Block, carried: Any) -> Block:
    """``block`` with the fields a content's carried payload brings back."""
    if not isinstance(carried, dict):
        return block
    if isinstance(carried.get("block"), dict):
        return BLOCK.validate_json(dump_json(carried["block"]))
    fields = {k: v for k, v in carried.items() if k != "message_usage"}
    merged = _merge_carried(block.model_dump(mode="json"), fields)
    return BLOCK.validate_json(dump_json(merged))


def _get(block: Any, key: str) -> Any:
    """A field of a block read as fields (a dict) or, where a carried payload restored it, as a model."""
    return block.get(key) if block.__class__ is dict else getattr(block, key)


# --- to canonical --------------------------------------------------------------
# Canonical fields, validated in one call (``made``); a content's carried payload is restored on its block
# (a model) as it is read, since the block's kind decides where the reader puts it.


def _is_refusal(ap: dict[str, Any]) -> bool:
    """The package marks a refusal as text with ``model_output_kind`` (namespaced under ``core``, or flat)."""
    core = ap.get("core")
    namespaced = core.get("model_output_kind") if isinstance(core, dict) else None
    return "refusal" in (namespaced, ap.get("model_output_kind"))


def _without(fields: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` without the marker at ``path`` in its additional_properties (the block kind says it)."""
    ap = dict(fields["additional_properties"])
    if len(path) == 2:
        inner = {k: v for k, v in ap[path[0]].items() if k != path[1]}
        ap = {**ap, path[0]: inner} if inner else {k: v for k, v in ap.items() if k != path[0]}
    else:
        del ap[path[0]]
    if ap:
        return {**fields, "additional_properties": ap}
    return {k: v for k, v in fields.items() if k != "additional_properties"}


def _text_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    ap = c.get("additional_properties")
    if not (ap and _is_refusal(ap)):
        return {"kind": "text", "text": c.get("text") or "", "extras": _own(fields=fields)}
    core = ap.get("core")
    if isinstance(core, dict) and core.get("model_output_kind") == "refusal":
        fields = _without(fields, ("core", "model_output_kind"))
    return {"kind": "refusal", "text": c.get("text") or "", "extras": _own(fields=fields)}


def _reasoning_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    text = c.get("text")
    if (c.get("additional_properties") or {}).get("anthropic_redacted_thinking") is True:
        own = _own(fields=_without(fields, ("anthropic_redacted_thinking",)), text_empty=text == "")
        return {"kind": "reasoning", "text": text or "", "redacted": True, "data": c.get("protected_data"),
                "extras": own}
    return {"kind": "reasoning", "text": text or "", "signature": c.get("protected_data"),
            "extras": _own(fields=fields, text_empty=text == "")}


def _data_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    raw, kind = c["uri"], c.get("type")
    decoded = parse_data_uri(raw) if raw.startswith("data:") else None
    media_type = c.get("media_type") or (decoded[0] if decoded else None)
    block = {"kind": _media_kind(media_type), "media_type": media_type, "filename": c.get("name"),
             "file_id": c.get("file_id")}
    if decoded is None:
        block["url"] = raw
        wanted = "data" if raw.startswith("data:") else "uri"
    else:
        block["data"] = decoded[1]
        wanted = "data"
        if data_uri(media_type, decoded[1]) != raw:
            fields = {**fields, "uri": raw}  # e.g. a URI whose media type differs from the field
    source = (_ALIASES.get(kind, kind) if kind else None) or wanted
    block["extras"] = _own(fields=fields, type=source if source != wanted else None)
    return block


def _hosted_file_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    media_type = c.get("media_type")
    return {"kind": _media_kind(media_type), "file_id": c["file_id"], "media_type": media_type,
            "filename": c.get("name"), "extras": _own(fields=fields)}


def _usage_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    given, seed = c.get("usage_details"), c.get("details")
    details = dict(given or {})
    if given is None and seed:  # the seed's UsageDetails: counts plus additional_counts
        details = {k: v for k, v in seed.items() if k != "additional_counts"}
        details.update(seed.get("additional_counts") or {})
    usage = Usage(  # a model: a seed's count that is no integer is refused here, as it was
        input_tokens=details.pop("input_token_count", None),
        output_tokens=details.pop("output_token_count", None),
        total_tokens=details.pop("total_token_count", None),
        extras=_own(counts=details),
    )
    return {"kind": "usage", "usage": usage, "extras": _own(fields=fields)}


def _error_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    message, error_details = c.get("message"), c.get("error_details")
    return {"kind": "error", "message": message or "", "code": c.get("error_code"),
            "details": c.get("details") if error_details is None else error_details,
            "extras": _own(fields=fields, no_message=message is None)}


def _other_in(c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    data = {"type": c["type"], **{k: v for k, v in c.items() if k not in _KEYS["OtherContent"]}}
    ap = fields.get("additional_properties")
    return {"kind": "data", "data": data,
            "extras": _own(other=True, fields={"additional_properties": ap} if ap else None)}


class _Reader:
    """Converts one batch into canonical fields (``read``, where ``to_writable`` adds its stand-ins);
    remembers call names so results get theirs."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.read: list[Any] = []
        self.carried: list[tuple[int, Any, int]] = []  # (where in ``read``, a carried payload, its message)

    def messages(self) -> list[Any]:
        """The messages read, validated in one call, each with the fields its carried payload brings back."""
        out = made(self.read)
        for at, carried, index in self.carried:
            try:
                out[at] = restore(out[at], carried)
            except (KeyError, TypeError, ValueError) as exc:  # hand-edited notes: the input's fault
                raise _malformed(index, f"additional_properties.{CARRY_KEY}", exc) from None
        return out

    def message(self, m: dict[str, Any], index: int) -> None:
        """Read message ``m``, at ``index`` in the input (one message, or two where results are split out),
        into ``read``."""
        try:
            self._message(m, index)
        except Exception:  # m at fault (a content's notes, a seed's counts): an earlier message's bad notes
            self.messages()  # fail first, as when each message was made and restored in turn
            raise

    def content(self, c: Any) -> Any:
        if c.__class__ is not dict:
            return {"kind": "text", "text": c}
        tag = _tag(c)
        fields, carried = _split_fields(c, _KEYS[tag])
        if tag == "FunctionCallContent":
            block = self._call_in(c, fields)
        elif tag == "FunctionResultContent":
            block = self._result_in(c, fields)
        else:
            block = _CONTENTS_IN[tag](c, fields)
        if carried is None:
            return block
        try:
            return _restore_block(BLOCK.validate_python(block), carried)
        except (KeyError, TypeError, ValueError) as exc:
            raise _BadNotes(exc) from None

    def _call_in(self, c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        call_id, name, arguments = c["call_id"], c["name"], c.get("arguments")
        self.names[call_id] = name
        if fields.get("hosted") is False:  # written on every call: no need to keep it
            del fields["hosted"]
        block = {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments,
                 "extras": _own(fields=fields)}
        if isinstance(arguments, str):
            block["arguments"], block["parse_error"] = parse_json(arguments)
            block["arguments_raw"] = arguments
        return block

    def _result_in(self, c: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        output: Any
        items, result, exception = c.get("items"), c.get("result"), c.get("exception")
        raw_result = None
        if items is None:
            output = result if isinstance(result, str) else ("" if result is None else _dumps(result))
        elif len(items) == 1 and (item := items[0]).__class__ is dict and _tag(item) == "TextContent" \
                and item.keys() <= _KEYS["TextContent"] and not item.get("additional_properties"):
            output = item.get("text") or ""  # the usual single text: no block to build
            raw_result = result if result != (output or "") else None
        else:
            blocks = [self.content(item) for item in items]
            plain = len(blocks) == 1 and _get(blocks[0], "kind") == "text" and not _get(blocks[0], "extras")
            output = _get(blocks[0], "text") if plain else blocks
            raw_result = result if result != _joined(blocks) else None
        own = _own(fields=fields, result=raw_result,
                   exception=exception if exception not in (None, EXCEPTION_MARKER) else None)
        return {"kind": "tool_result", "call_id": c["call_id"], "name": self.names.get(c["call_id"]),
                "output": output, "is_error": exception is not None, "extras": own}

    def _message(self, m: dict[str, Any], index: int) -> None:
        given = m["role"]
        source_role = given if isinstance(given, str) else given.value
        role = _ROLES.get(source_role, "user")
        contents = m.get("contents")
        contents = [contents] if isinstance(contents, str) else contents or []
        blocks, results, positions, usage = self._contents(contents, role, index)
        if results and not blocks:  # only results: the message is a tool message under another role
            role, blocks, results = "tool", results, []
        fields, carried = _split_fields(m, _AF_KEYS, ap_native=True)
        # defaults are left out: validating the message is faster
        found: dict[str, Any] = {"role": role, "content": blocks, "source_format": NAME}
        if source_role != role:
            found["source_role"] = source_role
        name = m.get("author_name")
        name = m.get("author") if name is None else name
        for key, value in (("name", name), ("external_id", m.get("message_id")), ("usage", usage)):
            if value is not None:
                found[key] = value
        if ap := m.get("additional_properties"):
            found["metadata"] = {k: v for k, v in ap.items() if k != CARRY_KEY}
        if fields or source_role != role:
            found["extras"] = _own(fields, role=source_role if source_role != role else None)
        if carried is not None:
            self.carried.append((len(self.read), carried, index))
        self.read.append(found)
        if results:
            self.read.append({"role": "tool", "content": results, "source_format": NAME,
                              "extras": _own(split=positions)})

    def _contents(self, contents: list[Any], role: str, index: int,
                  ) -> tuple[list[Any], list[Any], list[int], Any]:
        """The blocks, the results to split out of a non-tool message (and where they were)
        and the message's own usage."""
        blocks: list[Any] = []
        results: list[Any] = []
        positions: list[int] = []
        usage = None
        for pos, c in enumerate(contents):
            try:
                block = self.content(c)
            except _BadNotes as bad:
                where = f"contents[{pos}].additional_properties.{CARRY_KEY}"
                raise _malformed(index, where, bad.args[0]) from None
            ap = c.get("additional_properties") if c.__class__ is dict else None
            carried = ap.get(CARRY_KEY) if ap else None
            kind = _get(block, "kind")
            if isinstance(carried, dict) and carried.get("message_usage") and kind == "usage":
                usage = _get(block, "usage")
            elif role != "tool" and kind == "tool_result":
                results.append(block)
                positions.append(pos)
            else:
                blocks.append(block)
        return blocks, results, positions, usage


class _BadNotes(Exception):
    """A content's convstore notes that do not restore (edited by hand): its message says where."""


def _malformed(index: int, where: str, exc: Exception) -> SchemaError:
    why = " ".join(str(exc).split())[:300] or type(exc).__name__
    return SchemaError(NAME, [(index, where, f"malformed convstore notes ({why})")])


_CONTENTS_IN: dict[str, Any] = {
    "TextContent": _text_in, "ReasoningContent": _reasoning_in, "DataContent": _data_in,
    "HostedFileContent": _hosted_file_in, "ErrorContent": _error_in, "UsageContent": _usage_in,
    "OtherContent": _other_in,
}
"""A content's canonical block, as fields, by its model's tag (calls and results: the reader's own)."""


def _dumps(value: Any) -> str:
    """A non-text result as the package encodes it (``json.dumps``, its spacing included)."""
    return json.dumps(value, default=str)


def _joined(blocks: list[Any]) -> str:
    """``result`` as the package derives it from a function result's items (canonical blocks, or their
    fields)."""
    return "\n".join(text for b in blocks if _get(b, "kind") == "text" and (text := _get(b, "text")))


# What Message.from_dict / Content.from_dict take (plus the seed's names, read as an older shape):
# any other key is a TypeError there, and would be written back where it is one, so it is refused
# here too. A message-level ``text`` is such a key: text is a content.
_MESSAGE_KEYS = frozenset({"type", "role", "contents", "author_name", "author", "message_id",
                           "additional_properties", "raw_representation"})
_CONTENT_KEYS = frozenset({
    "type", "text", "protected_data", "uri", "media_type", "message", "error_code", "error_details",
    "usage_details", "call_id", "name", "arguments", "exception", "informational_only", "result", "items",
    "file_id", "vector_store_id", "inputs", "outputs", "image_id", "commands", "timeout_ms",
    "max_output_length", "status", "actions", "screenshot", "pending_safety_checks",
    "acknowledged_safety_checks", "stdout", "stderr", "exit_code", "timed_out", "tool_name", "server_name",
    "output", "hosted", "id", "function_call", "user_input_request", "approved", "consent_link", "merge_mode",
    "annotations", "additional_properties", "raw_representation", "data"})


def _strays(m: dict[str, Any], index: int) -> list[tuple[int, str, str]]:
    """Keys of message ``m`` and of its release-shaped contents that agent-framework refuses."""
    # the unknown keys as a dict first, then the set: its order, as it was (the model's extras less the keys)
    extra = {} if m.keys() <= _MESSAGE_KEYS else {k: None for k in m if k not in _AF_KEYS}
    found = [(index, key, "agent-framework messages have no such key (text goes in contents)")
             for key in extra.keys() - _MESSAGE_KEYS]
    contents = m.get("contents")
    todo = [("contents", i, c) for i, c in enumerate(contents if isinstance(contents, list) else ())]
    for where, i, c in todo:  # breadth first: a content's items after its siblings
        if c.__class__ is not dict:
            continue
        # the content's tag only where it decides (most contents hold only known keys, and no items)
        if not c.keys() <= _CONTENT_KEYS and (odd := {k for k in c if k not in _KEYS[_tag(c)]} - _CONTENT_KEYS):
            found += [(index, f"{where}[{i}].{key}", "agent-framework contents have no such key")
                      for key in sorted(odd)]
        if (items := c.get("items")) and _tag(c) == "FunctionResultContent":
            todo += [(f"{where}[{i}].items", k, item) for k, item in enumerate(items)]
    return found


def to_canonical(data: Any) -> list[Message]:
    """Validate agent-framework messages and convert them to canonical ones."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    if problems := [p for i, m in enumerate(parsed) for p in _strays(m, i)]:
        raise SchemaError(NAME, problems)
    reader = _Reader()
    for index, m in enumerate(parsed):
        reader.message(m, index)
    return reader.messages()


def looks_like(data: Any) -> bool:
    """A list of dicts with a ``role`` and ``contents`` (or the message ``type``), and no ``content``."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(
        isinstance(m, dict) and "role" in m and "content" not in m
        and ("contents" in m or m.get("type") in ("message", "chat_message"))
        for m in msgs
    )


from ._agent_framework_lean import to_writable  # noqa: E402
from ._agent_framework_write import TAKES_PLAIN, from_canonical  # noqa: E402  (both import the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
