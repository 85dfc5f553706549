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
The writer is :mod:`._agent_framework_write`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, model_validator

from ..errors import SchemaError
from ..model import (BLOCK, AudioBlock, Block, DataBlock, ErrorBlock, FileBlock, ImageBlock, Message,
                     ReasoningBlock, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock, Usage,
                     UsageBlock, VideoBlock)
from ._common import (CARRY_KEY, data_uri, dump_json, message_list, parse_data_uri, parse_json, restore,
                      validate)

NAME = "agent-framework"
EXCEPTION_MARKER = "FunctionInvocationError"
"""What ``Content.to_dict()`` writes for any function exception (the text is redacted)."""

CONTENT_TYPES = frozenset({
    "text", "text_reasoning", "data", "uri", "error", "function_call", "function_result", "usage",
    "hosted_file", "hosted_vector_store", "code_interpreter_tool_call", "code_interpreter_tool_result",
    "image_generation_tool_call", "image_generation_tool_result", "mcp_server_tool_call",
    "mcp_server_tool_result", "search_tool_call", "search_tool_result", "shell_tool_call",
    "shell_tool_result", "shell_command_output", "computer_tool_call", "computer_tool_result",
    "function_approval_request", "function_approval_response", "oauth_consent_request",
})
"""agent-framework-core 1.23's ``ContentType`` literal."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Content(_Open):
    type: str | None = None
    additional_properties: dict[str, Any] | None = None


class TextContent(_Content):
    text: str | None = None


class ReasoningContent(_Content):
    text: str | None = None
    protected_data: str | None = None


class _MediaContent(_Content):
    media_type: str | None = None
    name: str | None = None
    file_id: str | None = None


class DataContent(_MediaContent):
    """``data`` and ``uri`` contents; the seed's DataContent gives base64 ``data`` / ``base64`` instead."""

    uri: str

    @model_validator(mode="before")
    @classmethod
    def _seed_data(cls, value: Any) -> Any:
        payload = value.get("data", value.get("base64")) if isinstance(value, dict) else None
        if isinstance(payload, str) and "uri" not in value:
            value = {k: v for k, v in value.items() if k not in ("data", "base64")}
            value["uri"] = f"data:{value.get('media_type') or 'application/octet-stream'};base64,{payload}"
        return value


class HostedFileContent(_MediaContent):
    file_id: str


class FunctionCallContent(_Content):
    call_id: str
    name: str
    arguments: str | dict[str, Any] | None = None


class FunctionResultContent(_Content):
    call_id: str
    result: Any = None
    items: list[AnyContent] | None = None
    exception: str | None = None


class ErrorContent(_Content):
    message: str | None = None
    error_code: str | None = None
    error_details: str | None = None
    details: str | None = None  # the seed's name for error_details


class UsageContent(_Content):
    usage_details: dict[str, int | None] | None = None
    details: dict[str, Any] | None = None  # the seed's UsageDetails (with additional_counts)


class OtherContent(_Content):
    """Any other content type of the package (approvals, hosted tools, ...), kept as data."""

    type: str


_ALIASES = {  # the seed's MEAI class names
    "TextContent": "text", "TextReasoningContent": "text_reasoning", "DataContent": "data",
    "UriContent": "uri", "ErrorContent": "error", "FunctionCallContent": "function_call",
    "FunctionResultContent": "function_result", "UsageContent": "usage", "HostedFileContent": "hosted_file",
}
_INFER = (  # the seed's contents carry no `type`: tell them by their fields, most specific first
    (("call_id", "name"), "function_call"), (("call_id",), "function_result"), (("text",), "text"),
    (("uri",), "uri"), (("data",), "data"), (("base64",), "data"), (("file_id",), "hosted_file"),
    (("error_code",), "error"), (("message",), "error"), (("usage_details",), "usage"),
    (("details",), "usage"),
)
_TAGS = {  # content type -> the model that reads it (tags are class names: no clash with field names)
    "text": "TextContent", "text_reasoning": "ReasoningContent", "data": "DataContent", "uri": "DataContent",
    "hosted_file": "HostedFileContent", "function_call": "FunctionCallContent",
    "function_result": "FunctionResultContent", "error": "ErrorContent", "usage": "UsageContent",
}


_TAG_OF = {
    **{t: "OtherContent" for t in CONTENT_TYPES}, **_TAGS, **{a: _TAGS[t] for a, t in _ALIASES.items()},
}


def _tag(value: Any) -> str | None:
    if type(value) is dict:
        kind = value.get("type")
        if kind is None:
            kind = next((t for keys, t in _INFER if all(k in value for k in keys)), None)
        return _TAG_OF.get(kind) if isinstance(kind, str) else None
    return "str" if isinstance(value, str) else None


AnyContent = Annotated[
    Union[
        Annotated[str, Tag("str")],
        Annotated[TextContent, Tag("TextContent")],
        Annotated[ReasoningContent, Tag("ReasoningContent")],
        Annotated[DataContent, Tag("DataContent")],
        Annotated[HostedFileContent, Tag("HostedFileContent")],
        Annotated[FunctionCallContent, Tag("FunctionCallContent")],
        Annotated[FunctionResultContent, Tag("FunctionResultContent")],
        Annotated[ErrorContent, Tag("ErrorContent")],
        Annotated[UsageContent, Tag("UsageContent")],
        Annotated[OtherContent, Tag("OtherContent")],
    ],
    Discriminator(_tag, custom_error_type="content_type",
                  custom_error_message="not a content: expected a string or an object whose `type` is one of "
                                       "agent-framework's content types"),
]
FunctionResultContent.model_rebuild()


class RoleObject(_Open):
    """Pre-1.0 releases serialized the role as ``{"type": "role", "value": "user"}``."""

    value: str


class AFMessage(_Open):
    type: Literal["message", "chat_message"] | None = None
    role: str | RoleObject
    contents: list[AnyContent] | str | None = None  # the package reads a lone string as one text
    author_name: str | None = None
    author: str | None = None  # the seed's name for author_name
    message_id: str | None = None
    additional_properties: dict[str, Any] | None = None


MESSAGES = TypeAdapter(list[AFMessage])

_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool", "developer": "system"}
_MEDIA_KINDS = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
_WILDCARD_TYPES = {
    "image": "image/*", "audio": "audio/*", "video": "video/*", "file": "application/octet-stream",
}


def _media_class(media_type: str | None) -> type[ImageBlock | AudioBlock | VideoBlock | FileBlock]:
    return _MEDIA_KINDS.get((media_type or "").split("/", 1)[0], FileBlock)


def _own(fields: dict[str, Any] | None = None, **found: Any) -> dict[str, Any]:
    """An ``extras["agent-framework"]`` entry: kept ``fields`` and shape notes, empty parts left out."""
    kept = {k: v for k, v in found.items() if v is not None and v is not False and v != {}} if found else {}
    if fields:
        kept["fields"] = fields
    return {NAME: kept} if kept else {}


def _split_fields(c: _Content | AFMessage, ap_native: bool = False) -> tuple[dict[str, Any], Any]:
    """The keys of ``c`` the canonical model has no field for, and its carried payload."""
    fields = dict(c.model_extra) if c.model_extra else {}
    ap = c.additional_properties
    carried = None
    if ap and CARRY_KEY in ap:
        ap = {k: v for k, v in ap.items() if k != CARRY_KEY}
        carried = c.additional_properties[CARRY_KEY]  # type: ignore[index]
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


# --- to canonical --------------------------------------------------------------


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


def _text_in(c: TextContent, fields: dict[str, Any]) -> Block:
    ap = c.additional_properties
    if not (ap and _is_refusal(ap)):
        return TextBlock(text=c.text or "", extras=_own(fields=fields))
    core = ap.get("core")
    if isinstance(core, dict) and core.get("model_output_kind") == "refusal":
        fields = _without(fields, ("core", "model_output_kind"))
    return RefusalBlock(text=c.text or "", extras=_own(fields=fields))


def _reasoning_in(c: ReasoningContent, fields: dict[str, Any]) -> Block:
    own = _own(fields=fields, text_empty=c.text == "")
    if (c.additional_properties or {}).get("anthropic_redacted_thinking") is True:
        own = _own(fields=_without(fields, ("anthropic_redacted_thinking",)), text_empty=c.text == "")
        return ReasoningBlock(text=c.text or "", redacted=True, data=c.protected_data, extras=own)
    return ReasoningBlock(text=c.text or "", signature=c.protected_data, extras=own)


def _data_in(c: DataContent, fields: dict[str, Any]) -> Block:
    raw = c.uri
    decoded = parse_data_uri(raw) if raw.startswith("data:") else None
    media_type = c.media_type or (decoded[0] if decoded else None)
    cls = _media_class(media_type)
    if decoded is None:
        block = cls(url=raw, media_type=media_type, filename=c.name, file_id=c.file_id)
        wanted = "data" if raw.startswith("data:") else "uri"
    else:
        block = cls(data=decoded[1], media_type=media_type, filename=c.name, file_id=c.file_id)
        wanted = "data"
        if data_uri(media_type, decoded[1]) != c.uri:
            fields = {**fields, "uri": c.uri}  # e.g. a URI whose media type differs from the field
    source = (_ALIASES.get(c.type, c.type) if c.type else None) or wanted
    block.extras = _own(fields=fields, type=source if source != wanted else None)
    return block


def _hosted_file_in(c: HostedFileContent, fields: dict[str, Any]) -> Block:
    cls = _media_class(c.media_type)
    return cls(file_id=c.file_id, media_type=c.media_type, filename=c.name, extras=_own(fields=fields))


def _usage_in(c: UsageContent, fields: dict[str, Any]) -> Block:
    details = dict(c.usage_details or {})
    if c.usage_details is None and c.details:  # the seed's UsageDetails: counts plus additional_counts
        details = {k: v for k, v in c.details.items() if k != "additional_counts"}
        details.update(c.details.get("additional_counts") or {})
    usage = Usage(
        input_tokens=details.pop("input_token_count", None),
        output_tokens=details.pop("output_token_count", None),
        total_tokens=details.pop("total_token_count", None),
        extras=_own(counts=details),
    )
    return UsageBlock(usage=usage, extras=_own(fields=fields))


def _error_in(c: ErrorContent, fields: dict[str, Any]) -> Block:
    details = c.details if c.error_details is None else c.error_details
    return ErrorBlock(message=c.message or "", code=c.error_code, details=details,
                      extras=_own(fields=fields, no_message=c.message is None))


def _other_in(c: OtherContent, fields: dict[str, Any]) -> Block:
    data = c.model_dump(exclude={"additional_properties"}, exclude_none=False)
    ap = fields.get("additional_properties")
    return DataBlock(data=data, extras=_own(other=True, fields={"additional_properties": ap} if ap else None))


class _Reader:
    """Converts one batch; remembers call names so results get theirs."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def content(self, c: Any) -> Block:
        if isinstance(c, str):
            return TextBlock(text=c)
        fields, carried = _split_fields(c)
        fields.pop("type", None)
        if isinstance(c, FunctionCallContent):
            block = self._call_in(c, fields)
        elif isinstance(c, FunctionResultContent):
            block = self._result_in(c, fields)
        else:
            block = _CONTENTS_IN[type(c)](c, fields)
        return _restore_block(block, carried) if carried is not None else block

    def _call_in(self, c: FunctionCallContent, fields: dict[str, Any]) -> Block:
        self.names[c.call_id] = c.name
        if fields.get("hosted") is False:  # written on every call: no need to keep it
            del fields["hosted"]
        own = _own(fields=fields)
        if isinstance(c.arguments, str):
            arguments, error = parse_json(c.arguments)
            return ToolCallBlock(call_id=c.call_id, name=c.name, arguments=arguments,
                                 arguments_raw=c.arguments, parse_error=error, extras=own)
        return ToolCallBlock(call_id=c.call_id, name=c.name, arguments=c.arguments, extras=own)

    def _result_in(self, c: FunctionResultContent, fields: dict[str, Any]) -> Block:
        output: str | list[Block]
        items = c.items
        raw_result = None
        if items is None:
            output = c.result if isinstance(c.result, str) else ("" if c.result is None else _dumps(c.result))
        elif len(items) == 1 and type(items[0]) is TextContent and not items[0].model_extra \
                and not items[0].additional_properties:  # the usual single text: no block to build
            output = items[0].text or ""
            raw_result = c.result if c.result != (output or "") else None
        else:
            blocks = [self.content(item) for item in items]
            plain = len(blocks) == 1 and type(blocks[0]) is TextBlock and not blocks[0].extras
            output = blocks[0].text if plain else blocks  # type: ignore[union-attr]
            raw_result = c.result if c.result != _joined(blocks) else None
        own = _own(fields=fields, result=raw_result,
                   exception=c.exception if c.exception not in (None, EXCEPTION_MARKER) else None)
        return ToolResultBlock(call_id=c.call_id, name=self.names.get(c.call_id), output=output,
                               is_error=c.exception is not None, extras=own)

    def message(self, m: AFMessage) -> list[Message]:
        source_role = m.role if isinstance(m.role, str) else m.role.value
        role = _ROLES.get(source_role, "user")
        contents = [m.contents] if isinstance(m.contents, str) else m.contents or []
        blocks, results, positions, usage = self._contents(contents, role)
        if results and not blocks:  # only results: the message is a tool message under another role
            role, blocks, results = "tool", results, []
        fields, carried = _split_fields(m, ap_native=True)
        # defaults are left out: building the message is faster
        found: dict[str, Any] = {"role": role, "content": blocks, "source_format": NAME}
        if source_role != role:
            found["source_role"] = source_role
        name = m.author_name if m.author_name is not None else m.author
        for key, value in (("name", name), ("external_id", m.message_id), ("usage", usage)):
            if value is not None:
                found[key] = value
        if m.additional_properties:
            found["metadata"] = {k: v for k, v in m.additional_properties.items() if k != CARRY_KEY}
        if fields or source_role != role:
            found["extras"] = _own(fields, role=source_role if source_role != role else None)
        msg = Message(**found)
        if carried is not None:
            msg = restore(msg, carried)
        if not results:
            return [msg]
        return [msg, Message(role="tool", content=results, source_format=NAME, extras=_own(split=positions))]

    def _contents(self, contents: list[Any], role: str
                  ) -> tuple[list[Block], list[Block], list[int], Usage | None]:
        """The blocks, the results to split out of a non-tool message (and where they were)
        and the message's own usage."""
        blocks: list[Block] = []
        results: list[Block] = []
        positions: list[int] = []
        usage: Usage | None = None
        for pos, c in enumerate(contents):
            block = self.content(c)
            ap = None if type(c) is str else c.additional_properties
            carried = ap.get(CARRY_KEY) if ap else None
            if isinstance(carried, dict) and carried.get("message_usage") and isinstance(block, UsageBlock):
                usage = block.usage
            elif role != "tool" and isinstance(block, ToolResultBlock):
                results.append(block)
                positions.append(pos)
            else:
                blocks.append(block)
        return blocks, results, positions, usage


_CONTENTS_IN: dict[type, Any] = {
    TextContent: _text_in, ReasoningContent: _reasoning_in, DataContent: _data_in,
    HostedFileContent: _hosted_file_in, ErrorContent: _error_in, UsageContent: _usage_in,
    OtherContent: _other_in,
}


def _dumps(value: Any) -> str:
    """A non-text result as the package encodes it (``json.dumps``, its spacing included)."""
    return json.dumps(value, default=str)


def _joined(blocks: list[Block]) -> str:
    """``result`` as the package derives it from a function result's items."""
    return "\n".join(b.text for b in blocks if type(b) is TextBlock and b.text)


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


def _strays(m: AFMessage, index: int) -> list[tuple[int, str, str]]:
    """Keys of message ``m`` and of its release-shaped contents that agent-framework refuses."""
    found = [(index, key, "agent-framework messages have no such key (text goes in contents)")
             for key in (m.__pydantic_extra__ or {}).keys() - _MESSAGE_KEYS]
    todo = [("contents", i, c) for i, c in enumerate(m.contents if isinstance(m.contents, list) else ())]
    for where, i, c in todo:  # breadth first: a content's items after its siblings
        if not isinstance(c, _Content):
            continue
        extra, items = c.__pydantic_extra__, c.__dict__.get("items")  # no model attribute lookups: faster
        if extra and (odd := extra.keys() - _CONTENT_KEYS):
            found += [(index, f"{where}[{i}].{key}", "agent-framework contents have no such key") for key in sorted(odd)]
        if items:
            todo += [(f"{where}[{i}].items", k, item) for k, item in enumerate(items)]
    return found


def to_canonical(data: Any) -> list[Message]:
    """Validate agent-framework messages and convert them to canonical ones."""
    parsed = validate(MESSAGES, message_list(data, NAME), NAME)
    if problems := [p for i, m in enumerate(parsed) for p in _strays(m, i)]:
        raise SchemaError(NAME, problems)
    reader = _Reader()
    return [msg for m in parsed for msg in reader.message(m)]


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
