"""Pydantic AI message history as ``ModelMessagesTypeAdapter`` writes it (pydantic-ai-slim 2.x).

A history is a list of ``ModelRequest`` (``kind: "request"``) and ``ModelResponse``
(``kind: "response"``), each a list of parts. A request holds system prompts, user prompts
(text or a list of text and multimodal items), tool returns and retries; a response holds
text, thinking, tool calls, builtin (provider-run) tool calls *and their returns*, and
files. On import each message is split into canonical messages by role (system, user,
tool, assistant), the pieces after the first marked ``joined`` so that export puts them
back into one message; a builtin tool return becomes a ``tool`` message inside its
response, so every other format sees the call answered before the text after it.

Conversion works on the validated input itself: what a part or item holds beyond the
canonical fields (part timestamps, ids, provider details, ``outcome``, ...) is kept as it
came in the block's ``extras["pydantic-ai"]`` (``part``: the part's other keys, on its
first block; ``item``: a content item's), message keys in the message's (``fields`` when
they hold information, ``defaults`` when they hold the schema's default), so a same-format
round trip is exact. A part's kind is noted only where the writer would not write that very
part of the block anyway (its role's natural part: a system prompt, a response's text, thinking,
a call, a return, a message's first user prompt), a message's ``kind`` only on a request that
may follow a request (which the writer would join): an agent's messages need no notes. Parts
with no canonical counterpart (compaction, speech, instruction and capability deltas) and items
such as cache points are kept unchanged in a :class:`~store.model.DataBlock` (``raw``).

The legacy ``retry-prompt`` part (1.x histories; 2.x loads it as a tool return with
``outcome="retried"`` or as retry feedback) is read and written back as it came.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments
from ..model import Message
from ._common import b64decode_exact, dump_json, made, message_list, parse_json, validate, validate_others

NAME = "pydantic-ai"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


def _by(key: str, models: dict[str, type[BaseModel]], other: type[BaseModel] | None = None) -> Any:
    """A union picked by ``key`` (``part_kind``, ``kind``); values not listed go to ``other``."""
    def pick(value: Any) -> str | None:
        found = value.get(key) if isinstance(value, dict) else None
        if not isinstance(found, str):  # any JSON may come: a list is no tag (and no dict key)
            return None
        return found if found in models else ("other" if other is not None else None)

    members = [Annotated[m, Tag(tag)] for tag, m in models.items()]
    if other is not None:
        members.append(Annotated[other, Tag("other")])
    return Annotated[Union[tuple(members)], Discriminator(  # type: ignore[misc]
        pick, custom_error_type=f"pydantic_ai_{key}",
        custom_error_message=f"{key} is missing or not one of {', '.join(map(repr, models))}")]


class UrlItem(_Open):
    kind: Literal["image-url", "audio-url", "video-url", "document-url"]
    url: str
    media_type: str | None = None  # the canonical block's: its error named there, not in the canonical model


class BinaryItem(_Open):
    kind: Literal["binary", "binary-image", "binary-audio"] = "binary"
    data: str
    media_type: str


class TextItem(_Open):
    kind: Literal["text-content"]
    content: str


class FileIdItem(_Open):
    kind: Literal["uploaded-file"]
    file_id: str
    provider_name: str


class OtherItem(_Open):
    kind: Literal["cache-point", "structured-content"]


_ITEMS = {"image-url": UrlItem, "audio-url": UrlItem, "video-url": UrlItem, "document-url": UrlItem,
          "binary": BinaryItem, "binary-image": BinaryItem, "binary-audio": BinaryItem, "text-content": TextItem,
          "uploaded-file": FileIdItem, "cache-point": OtherItem, "structured-content": OtherItem}
Item = Union[str, _by("kind", _ITEMS)]  # type: ignore[misc]


class SystemPromptPart(_Open):
    content: str


class UserPromptPart(_Open):
    content: Union[str, list[Item]]  # type: ignore[valid-type]


class ToolReturnPart(_Open):
    tool_name: str
    content: Any
    tool_call_id: str | None = None


class RetryPart(_Open):
    content: Union[str, list[dict[str, Any]]]
    tool_name: str | None = None
    tool_call_id: str | None = None


class TextPart(_Open):
    content: str


class ThinkingPart(_Open):
    content: str
    signature: str | None = None


class ToolCallPart(_Open):
    tool_name: str
    args: Union[str, dict[str, Any], None] = None
    tool_call_id: str | None = None


class FilePart(_Open):
    content: BinaryItem


_OTHER_REQUEST = ("speech", "capability-load-return", "tool-availability-delta", "capability-load-delta",
                  "model-settings-delta", "instruction-delta", "instruction-baseline", "compaction")


class OtherRequestPart(_Open):
    part_kind: Literal[_OTHER_REQUEST]  # type: ignore[valid-type]


class OtherResponsePart(_Open):
    part_kind: Literal["compaction", "speech"]


class ModelRequest(_Open):
    kind: Literal["request"]
    parts: list[_by("part_kind", {  # type: ignore[misc]
        "system-prompt": SystemPromptPart, "user-prompt": UserPromptPart, "tool-return": ToolReturnPart,
        "retry-prompt": RetryPart, "retry-feedback": RetryPart}, OtherRequestPart)]
    timestamp: str | None = None


class ModelResponse(_Open):
    kind: Literal["response"]
    parts: list[_by("part_kind", {  # type: ignore[misc]
        "text": TextPart, "thinking": ThinkingPart, "tool-call": ToolCallPart, "builtin-tool-call": ToolCallPart,
        "builtin-tool-return": ToolReturnPart, "file": FilePart}, OtherResponsePart)]
    timestamp: str | None = None
    model_name: str | None = None
    usage: dict[str, Any] | None = None


MESSAGES = TypeAdapter(list[_by("kind", {"request": ModelRequest, "response": ModelResponse})])  # type: ignore[misc]

# The schema's defaults of message keys without a canonical field: such a key given with its
# default is spelling (``defaults``), otherwise information (``fields``, reported when lost).
_DEFAULTS: dict[str, Any] = {"state": "complete"}
_MEDIA_KIND = {"image-url": "image", "audio-url": "audio", "video-url": "video", "document-url": "file"}
_URL_KIND = {v: k for k, v in _MEDIA_KIND.items()}
_PREFIX_KIND = {"image": "image", "audio": "audio", "video": "video"}
# Which side of the history a part kind stands on, and the canonical role of its blocks.
_ROLE = {"system-prompt": "system", "user-prompt": "user", "tool-return": "tool", "retry-feedback": "user",
         "builtin-tool-return": "tool"}


# --- to canonical --------------------------------------------------------------

def _b64(text: str) -> bytes | None:
    """Bytes from pydantic's URL-safe base64 (or the standard alphabet), only when exact."""
    try:
        data = base64.urlsafe_b64decode(text.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return b64decode_exact(text)
    return data if base64.urlsafe_b64encode(data).decode("ascii") == text else b64decode_exact(text)


def _rest(raw: dict[str, Any], used: Iterable[str]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in used}


def _media(item: dict[str, Any]) -> dict[str, Any]:
    """A binary or URL item as a canonical media block (its other keys kept in ``item``)."""
    if "url" in item:
        return {"kind": _MEDIA_KIND[item["kind"]], "url": item["url"], "media_type": item.get("media_type"),
                "extras": {NAME: {"item": _rest(item, ("url",))}}}
    data = _b64(item["data"])
    kind = _PREFIX_KIND.get(item["media_type"].split("/")[0], "file")
    # Base64 pydantic would not write back the same (standard alphabet, odd padding) stays as text
    exact = data is not None and base64.urlsafe_b64encode(data).decode("ascii") == item["data"]
    used = ("data", "media_type") if exact else ("media_type",)
    return {"kind": kind, "data": data, "media_type": item["media_type"],
            "extras": {NAME: {"item": _rest(item, used)}}}


def _item(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"kind": "text", "text": item}
    kind = item["kind"]
    if kind == "text-content":
        return {"kind": "text", "text": item["content"], "extras": {NAME: {"item": _rest(item, ("content",))}}}
    if kind == "uploaded-file":
        return {"kind": "file", "file_id": item["file_id"], "media_type": item.get("media_type"),
                "extras": {NAME: {"item": _rest(item, ("file_id",))}}}
    if kind in _ITEMS and _ITEMS[kind] in (UrlItem, BinaryItem):
        return _media(item)
    return {"kind": "data", "data": item, "extras": {NAME: {"raw": "item"}}}


def _text_of(content: Any) -> tuple[str, bool]:
    """A part's content as text: a string as it is, anything else as JSON (flagged)."""
    return (content, False) if isinstance(content, str) else (dump_json(content), True)


def _result(part: dict[str, Any], call_id: str) -> dict[str, Any]:
    output, as_json = _text_of(part["content"])
    outcome = part.get("outcome", "retried" if part["part_kind"] == "retry-prompt" else "success")
    return {"kind": "tool_result", "call_id": call_id, "name": part.get("tool_name"), "output": output,
            "is_error": outcome != "success", "extras": {NAME: {"json": as_json or None}}}


def _call(part: dict[str, Any], call_id: str, synthesized: bool) -> dict[str, Any]:
    args = part.get("args")
    if isinstance(args, str):
        arguments, error = parse_json(args)
        return {"kind": "tool_call", "call_id": call_id, "name": part["tool_name"], "arguments": arguments,
                "arguments_raw": args, "parse_error": error, "call_id_synthesized": synthesized}
    return {"kind": "tool_call", "call_id": call_id, "name": part["tool_name"], "arguments": args,
            "call_id_synthesized": synthesized}


def _part_in(part: dict[str, Any], index: int, pos: int) -> tuple[str | None, list[dict[str, Any]], tuple[str, ...]]:
    """A part's canonical role (None: that of its neighbours), blocks and the keys they hold."""
    kind = part["part_kind"]
    call_id = part.get("tool_call_id")
    synthesized = not isinstance(call_id, str)
    call_id = call_id if isinstance(call_id, str) else f"pydantic_ai_{index}_{pos}"
    if kind == "user-prompt" and part["content"] == []:  # no item to hold the part: kept as it is
        return "user", [{"kind": "data", "data": part, "extras": {NAME: {"raw": "part"}}}], ()
    if kind == "user-prompt" and isinstance(part["content"], list):
        blocks = [_item(i) for i in part["content"]]
        blocks[0].setdefault("extras", {}).setdefault(NAME, {})["form"] = "list"
        return "user", blocks, ("content",)
    if kind in ("system-prompt", "user-prompt", "text"):
        return _ROLE.get(kind, "assistant"), [{"kind": "text", "text": part["content"]}], ("content",)
    if kind in ("tool-return", "builtin-tool-return") or (kind == "retry-prompt" and part.get("tool_name")):
        return "tool", [_result(part, call_id)], ("content", "tool_name", "tool_call_id")
    if kind in ("retry-prompt", "retry-feedback"):
        text, as_json = _text_of(part["content"])
        return "user", [{"kind": "text", "text": text, "extras": {NAME: {"json": as_json or None}}}], ("content",)
    if kind == "thinking" and part.get("id") == "redacted_thinking" and not part["content"]:
        return "assistant", [{"kind": "reasoning", "redacted": True, "data": part.get("signature")}], (
            "content", "signature")
    if kind == "thinking":
        return "assistant", [{"kind": "reasoning", "text": part["content"], "signature": part.get("signature")}], (
            "content", "signature")
    if kind in ("tool-call", "builtin-tool-call"):
        return "assistant", [_call(part, call_id, synthesized)], ("tool_name", "args", "tool_call_id")
    if kind == "file":
        return "assistant", [_media(part["content"])], ("content",)
    return None, [{"kind": "data", "data": part, "extras": {NAME: {"raw": "part"}}}], ()


# The part a block is written as when its notes name none (the writer's own choice, by the block's
# message role and kind): a part note that says only this holds no information and is left out, so
# that an agent's messages need no notes at all (and convert as plain ones, see to_writable). A user's
# text is a user prompt of its own only as its message's first block (later ones join the open prompt).
_NATURAL = {("system", "text"): "system-prompt", ("assistant", "text"): "text",
            ("assistant", "reasoning"): "thinking", ("assistant", "tool_call"): "tool-call",
            ("tool", "tool_result"): "tool-return"}


def _natural(role: str, kind: str, first: bool) -> str | None:
    return "user-prompt" if first and role == "user" and kind == "text" else _NATURAL.get((role, kind))


def _with_part(block: dict[str, Any], part: dict[str, Any], used: tuple[str, ...], natural: str | None,
               ) -> dict[str, Any]:
    """``block`` marked as the first of ``part``, with the part's other keys (none where the part is the
    ``natural`` one of a block without notes)."""
    own = {k: v for k, v in block.get("extras", {}).get(NAME, {}).items() if v is not None}
    if own.get("raw") != "part":  # a key given as null stays with the part: the block holds no null
        rest = _rest(part, [k for k in used if part.get(k) is not None])
        if len(rest) != 1 or rest["part_kind"] != natural:
            own["part"] = rest
    if block["kind"] in ("tool_call", "tool_result") and "tool_call_id" not in part:
        own["no_id"] = True
    block["extras"] = {NAME: own} if own else {}
    return block


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    return {"input_tokens": raw.get("input_tokens"), "output_tokens": raw.get("output_tokens"),
            "extras": {NAME: _rest(raw, ("input_tokens", "output_tokens"))}}


def _kind_note(m: dict[str, Any], prev: str | None) -> dict[str, Any]:
    """The message's ``kind``, where the writer needs it: a request that may follow a request (which it
    would join) is one of its own."""
    return {"kind": "request"} if m["kind"] == "request" and prev != "response" else {}


def _message_in(m: dict[str, Any], index: int, prev: str | None) -> list[dict[str, Any]]:
    """The canonical messages (fields) of a message; ``prev``: the kind of the one before (None: unknown)."""
    groups: list[list[Any]] = []  # [role, blocks]
    response = m["kind"] == "response"
    for pos, part in enumerate(m["parts"]):
        role, blocks, used = _part_in(part, index, pos)
        role = role or (groups[-1][0] if groups else ("assistant" if response else "user"))
        first = not groups or groups[-1][0] != role
        blocks[0] = _with_part(blocks[0], part, used, _natural(role, blocks[0]["kind"], first))
        if not first:
            groups[-1][1].extend(blocks)
        else:
            groups.append([role, blocks])
    groups = groups or [["assistant" if response else "user", []]]
    mapped = {"parts", "kind", "timestamp", "metadata", *(("model_name", "usage", "provider_response_id")
                                                         if response else ())}
    rest = _rest(m, mapped)
    own = _kind_note(m, prev)
    if (info := {k: v for k, v in rest.items() if v is not None and v != _DEFAULTS.get(k)}):
        own["fields"] = info
    if (spelling := {k: v for k, v in rest.items() if k not in info}):
        own["defaults"] = spelling
    for key in ("timestamp", "metadata", "model_name", "usage", "provider_response_id"):
        if key in mapped and key in m and (m[key] is None or (key == "metadata" and not isinstance(m[key], dict))):
            own.setdefault("defaults", {})[key] = m[key]
    stamp = m.get("timestamp")
    if isinstance(stamp, str):
        own["timestamp"] = stamp
    first = {"created_at": _datetime(stamp), "metadata": m.get("metadata") if isinstance(m.get("metadata"), dict)
             else {}, "model": m.get("model_name"), "usage": _usage(m.get("usage")),
             "external_id": m.get("provider_response_id") if response else None,
             "extras": {NAME: own} if own else {}}
    return [{"role": role, "content": blocks, "source_format": NAME, **(first if n == 0 else
            {"extras": {NAME: {"joined": True}}})} for n, (role, blocks) in enumerate(groups)]


def _datetime(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None
    except ValueError:
        return None


def _checked(messages: list[Any], base: int = 0) -> list[Any]:
    validate(MESSAGES, messages, NAME, first=base)
    return messages


def to_canonical(data: Any) -> list[Message]:
    """Validate a Pydantic AI message history and convert it to canonical messages."""
    return made(_fields(_checked(message_list(data, NAME))))


def _fields(messages: list[Any], prev: str | None = None, base: int = 0) -> list[dict[str, Any]]:
    """The canonical messages (fields) of validated messages (``prev``: the kind of the one before them)."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages, base):
        out += _message_in(m, i, prev)
        prev = m["kind"]
    return out


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical` for a conversion (``formats.convert``): messages of plain parts, with no keys but
    their own (texts, prompts, tool calls and returns), are not validated with the source models first (their
    plain types are their validation; the reader reads the items themselves either way), and those of their
    canonical messages that are of a plain shape are :class:`~store.lean.Plain` ones. A property test holds it
    to :func:`to_canonical` (tests/test_lean_read.py)."""
    messages = message_list(data, NAME)
    plain = [True if _plain(m) else None for m in messages]
    validate_others(MESSAGES, messages, plain, NAME)
    out: list[Any] = []
    prev = None
    for i, (m, p) in enumerate(zip(messages, plain)):
        out += _plain_in(m, prev) if p else _message_in(m, i, prev)
        prev = m["kind"]
    return made(out)


_PLAIN_PARTS = {"request": ("system-prompt", "user-prompt", "tool-return"), "response": ("text", "tool-call")}
_TEXT_PART = {"content", "part_kind"}
_RETURN_PART = {"tool_name", "content", "part_kind", "tool_call_id"}
_CALL_PART = {"tool_name", "part_kind", "args", "tool_call_id"}


def _plain(m: Any) -> bool:
    """Whether a message is of plain parts only, whose own types (strings; a call's arguments a string or an
    object; a return's content not null) the source models would take."""
    if m.__class__ is not dict or len(m) != 2 or (parts := m.get("parts")).__class__ is not list:
        return False
    kinds = _PLAIN_PARTS.get(kind) if (kind := m.get("kind")).__class__ is str else None
    return kinds is not None and all(p.__class__ is dict and p.get("part_kind") in kinds and _plain_part(p)
                                     for p in parts)


def _plain_part(p: dict[str, Any]) -> bool:
    kind = p["part_kind"]
    if kind in ("tool-return", "tool-call"):  # a null content or args is noted as the part's own
        value = p.get("content" if kind == "tool-return" else "args")
        return p.keys() == (_RETURN_PART if kind == "tool-return" else _CALL_PART) \
            and p["tool_name"].__class__ is str and p["tool_call_id"].__class__ is str and value is not None \
            and (kind == "tool-return" or value.__class__ is str
                 or value.__class__ is dict and all(key.__class__ is str for key in value))
    return p.keys() == _TEXT_PART and p["content"].__class__ is str


def _plain_in(m: dict[str, Any], prev: str | None) -> list[Any]:
    """:func:`_message_in` of a message of plain parts (:func:`_plain`): its canonical messages of a plain
    shape as :class:`~store.lean.Plain` ones, the others as fields."""
    groups: list[list[Any]] = []  # [role, parts]
    for part in m["parts"]:
        role = _ROLE.get(part["part_kind"], "assistant")
        if groups and groups[-1][0] == role:
            groups[-1][1].append(part)
        else:
            groups.append([role, [part]])
    own = _kind_note(m, prev)
    if not groups:
        return [{"role": "assistant" if m["kind"] == "response" else "user", "content": [],
                 "source_format": NAME, "extras": {NAME: own} if own else {}}]
    return [_group(role, parts, ({NAME: own} if own else None) if n == 0 else {NAME: {"joined": True}})
            for n, (role, parts) in enumerate(groups)]


def _group(role: str, parts: list[dict[str, Any]], extras: dict[str, Any] | None) -> Any:
    """The canonical message of plain parts of one role: a text, calls after a text or not, or one result of
    a string, as a :class:`~store.lean.Plain`; else its fields."""
    head = parts[0]
    if role == "tool":
        if len(parts) == 1 and head["content"].__class__ is str:
            return Plain("tool", head["content"], NAME, (Result(head["tool_call_id"]),), head["tool_name"],
                         extras=extras)
    else:
        text = None if head["part_kind"] == "tool-call" else head["content"]
        calls = [_bare_call(p) for p in parts[text is not None:]]
        if None not in calls and (role == "assistant" or len(parts) == 1):
            return Plain(role, text, NAME, tuple(calls), extras=extras)  # type: ignore[arg-type]
    blocks = []
    for at, part in enumerate(parts):
        kind = part["part_kind"]
        if kind == "tool-return":
            block = _result(part, part["tool_call_id"])
            own = {"json": True} if block["extras"][NAME]["json"] else {}
        else:
            block = _call(part, part["tool_call_id"], False) if kind == "tool-call" else {
                "kind": "text", "text": part["content"]}
            own = {}
        if kind != _natural(role, block["kind"], at == 0):
            own["part"] = {"part_kind": kind}
        block["extras"] = {NAME: own} if own else {}
        blocks.append(block)
    return {"role": role, "content": blocks, "source_format": NAME, "extras": extras or {}}


def _bare_call(part: dict[str, Any]) -> Call | None:
    """A call part whose arguments are text that parses to exactly itself, as a :class:`~store.lean.Call`."""
    if part["part_kind"] != "tool-call":
        return None
    raw = part["args"]
    if raw.__class__ is not str or not bare_arguments(raw):
        return None
    return Call(part["tool_call_id"], part["tool_name"], raw)


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` chunk by chunk: each message converts on its own; errors name
    the index in the whole stream."""
    base, prev = 0, None
    for chunk in chunks:
        _checked(chunk, base)
        yield made(_fields(chunk, prev, base))
        base += len(chunk)
        prev = chunk[-1]["kind"] if chunk else prev


def looks_like(data: Any) -> bool:
    """Messages with ``kind`` request/response and a ``parts`` list of ``part_kind`` objects:
    no other format names its parts so."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(
        isinstance(m, dict) and m.get("kind") in ("request", "response") and isinstance(m.get("parts"), list)
        and all(isinstance(p, dict) and "part_kind" in p for p in m["parts"]) for m in msgs)


from ._pydantic_ai_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_canonical_stream", "to_writable"]
