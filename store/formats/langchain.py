"""LangChain messages (``langchain_core.messages``), as ``messages_to_dict`` writes them.

Reads a list of ``{"type": "human" | "ai" | "system" | "tool" | "chat" | "function",
"data": {...}}`` items, and also the two other shapes LangChain serializes messages in:
``dumpd``'s constructor dicts (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
"kwargs": {...}}``) and bare message dicts (``message.model_dump()``: the ``data`` without
its wrapper). Each message is written back in the shape it came in; other formats' messages
are written as ``messages_to_dict`` items.

Content is a string or a list of strings and blocks: the v1 standard blocks (text,
reasoning, refusal, image/audio/video/file, tool_call, invalid_tool_call) map to canonical
blocks; an OpenAI-style ``image_url`` part becomes an image; every other block (server tool
calls and results, ``non_standard``, provider blocks, v0 ``source_type`` media) is kept
unchanged in a :class:`~store.model.DataBlock` (a ``non_standard`` redacted thinking block,
as LangChain's Anthropic translator writes it, is redacted reasoning). ``AIMessage.tool_calls``
and ``invalid_tool_calls`` become tool calls (a call listed both in the v1 content and in
``tool_calls`` is one call); ``ToolMessage`` becomes a tool result (``status="error"`` is
``is_error``; ``artifact`` is kept in ``extras``). ``id`` is the external id,
``response_metadata.model_name`` the model, ``usage_metadata`` the usage; the rest of
``additional_kwargs`` and ``response_metadata`` is kept in ``extras["langchain"]``.
The writer is :mod:`._langchain_write`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union, get_args, get_type_hints

from pydantic import ConfigDict, Discriminator, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import Message
from ._common import b64decode_exact, message_list, parse_data_uri, parse_json, undeclared, validate

NAME = "langchain"


_OPEN = ConfigDict(extra="allow")

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader). A key a message leaves at its default is absent from its dict.


# --- the schema: message data ------------------------------------------------------------


@with_config(_OPEN)
class ToolCall(TypedDict):
    name: str
    args: dict[str, Any]
    id: str | None
    type: NotRequired[Literal["tool_call"]]


@with_config(_OPEN)
class InvalidToolCall(TypedDict, total=False):
    type: Literal["invalid_tool_call"]
    id: str | None
    name: str | None
    args: str | None
    error: str | None


@with_config(_OPEN)
class _Data(TypedDict):
    content: str | list[str | dict[str, Any]]
    additional_kwargs: NotRequired[dict[str, Any]]
    response_metadata: NotRequired[dict[str, Any]]
    name: NotRequired[str | None]
    id: NotRequired[str | None]


@with_config(_OPEN)
class HumanData(_Data):
    type: Literal["human"]


@with_config(_OPEN)
class SystemData(_Data):
    type: Literal["system"]


@with_config(_OPEN)
class UsageMetadata(TypedDict):
    """The counts the canonical usage takes (their errors named here, not in the canonical model)."""

    input_tokens: NotRequired[int | None]
    output_tokens: NotRequired[int | None]
    total_tokens: NotRequired[int | None]


@with_config(_OPEN)
class AIData(_Data):
    type: Literal["ai"]
    tool_calls: NotRequired[list[ToolCall]]
    invalid_tool_calls: NotRequired[list[InvalidToolCall]]
    usage_metadata: NotRequired[UsageMetadata | None]


@with_config(_OPEN)
class ToolData(_Data):
    type: Literal["tool"]
    tool_call_id: str
    artifact: NotRequired[Any]
    status: NotRequired[Literal["success", "error"]]


@with_config(_OPEN)
class ChatData(_Data):
    type: Literal["chat"]
    role: str


@with_config(_OPEN)
class FunctionData(_Data):
    type: Literal["function"]
    name: str  # type: ignore[misc]  # required here


_DATA = (HumanData, SystemData, AIData, ToolData, ChatData, FunctionData)
TYPES = {get_args(get_type_hints(c)["type"])[0]: c for c in _DATA}  # "human" -> HumanData
CLASS_NAMES = {"human": "HumanMessage", "ai": "AIMessage", "system": "SystemMessage", "tool": "ToolMessage",
               "chat": "ChatMessage", "function": "FunctionMessage"}
TYPE_OF_CLASS = {v: k for k, v in CLASS_NAMES.items()}
BASE_KEYS = ("content", "additional_kwargs", "response_metadata", "type", "name", "id")
FULL_KEYS = {"human": BASE_KEYS, "system": BASE_KEYS, "function": BASE_KEYS, "chat": (*BASE_KEYS, "role"),
             "ai": (*BASE_KEYS, "tool_calls", "invalid_tool_calls", "usage_metadata"),
             "tool": (*BASE_KEYS, "tool_call_id", "artifact", "status")}
"""The keys ``messages_to_dict`` writes per type; the keys an input leaves out are noted (``absent``)."""
MESSAGES = TypeAdapter(list[Annotated[Union[tuple(_DATA)], Discriminator("type")]])  # type: ignore[misc]


# --- the schema: content blocks ----------------------------------------------------------


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_OPEN)
class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    reasoning: NotRequired[str]


@with_config(_OPEN)
class RefusalPart(TypedDict):
    type: Literal["refusal"]
    refusal: str


@with_config(_OPEN)
class MediaPart(TypedDict):
    type: Literal["image", "audio", "video", "file"]
    url: NotRequired[str | None]
    base64: NotRequired[str | None]
    file_id: NotRequired[str | None]
    mime_type: NotRequired[str | None]


@with_config(_OPEN)
class ImageUrlPart(TypedDict):
    """OpenAI's part, which LangChain messages built for OpenAI models hold."""

    type: Literal["image_url"]
    image_url: str | dict[str, Any]


@with_config(_OPEN)
class ToolCallPart(TypedDict):
    name: str
    args: dict[str, Any]
    id: str | None
    type: Literal["tool_call"]


@with_config(_OPEN)
class InvalidToolCallPart(InvalidToolCall):
    type: Literal["invalid_tool_call"]  # type: ignore[misc]  # required here


_PART_MODELS: dict[str, type] = {
    "text": TextPart, "reasoning": ReasoningPart, "refusal": RefusalPart, "image": MediaPart, "audio": MediaPart,
    "video": MediaPart, "file": MediaPart, "image_url": ImageUrlPart, "tool_call": ToolCallPart,
    "invalid_tool_call": InvalidToolCallPart,
}
_PARTS = {t: TypeAdapter(m) for t, m in _PART_MODELS.items()}
_DECLARED = {model: (tuple(model.__annotations__), frozenset(model.__annotations__))
             for model in (*_DATA, *_PART_MODELS.values(), ToolCall, InvalidToolCall)}
"""Each model's declared keys, in order and as a set (a value's others are its unknown ones)."""


def _notes(value: dict[str, Any], model: type, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Unknown keys (``fields``) and defaulted keys the input left out (``absent``)."""
    notes: dict[str, Any] = {}
    declared, keys = _DECLARED[model]
    if (fields := undeclared(value, keys)) is not None:
        notes["fields"] = fields
    absent = [f for f in declared if f not in value and f not in skip]
    if absent:
        notes["absent"] = absent
    return notes


def _own(notes: dict[str, Any]) -> dict[str, Any]:
    return {NAME: notes} if notes else {}


# --- to canonical: blocks ------------------------------------------------------------------

BlockDict = dict[str, Any]


def _call_in(call: dict[str, Any], model: type, **shape: Any) -> BlockDict:
    in_content = model is ToolCallPart or model is InvalidToolCallPart
    notes = {**_notes(call, model, skip=("type",) if in_content else ()), **shape}
    call_id, name = call.get("id"), call.get("name")
    if call_id is None:
        notes["id"] = None
    if model is InvalidToolCall or model is InvalidToolCallPart:
        notes["invalid"] = True
        if name is None:
            notes["name"] = None
        raw, error = call.get("args"), call.get("error")
        arguments, parsed = parse_json(raw) if raw is not None else (None, None)
        return {"kind": "tool_call", "call_id": call_id or "", "name": name or "", "arguments": arguments,
                "arguments_raw": raw, "parse_error": error or parsed or "an invalid tool call",
                "extras": _own({**notes, "error": error})}
    return {"kind": "tool_call", "call_id": call_id or "", "name": name, "arguments": call["args"],
            "extras": _own(notes)}


def _media_in(part: dict[str, Any]) -> BlockDict:
    notes = _notes(part, MediaPart)
    block: BlockDict = {"kind": part["type"], "url": part.get("url"), "file_id": part.get("file_id"),
                        "media_type": part.get("mime_type")}
    if (b64 := part.get("base64")) is not None:
        data = b64decode_exact(b64)
        if data is None:  # not canonical base64: written back as it came
            notes["base64"] = b64
        block["data"] = data
    extras = notes.get("fields", {}).get("extras")
    if isinstance(extras, dict) and isinstance(extras.get("filename"), str):  # where LangChain keeps it
        block["filename"] = extras["filename"]
        rest = {k: v for k, v in extras.items() if k != "filename"}
        notes["fields"] = {**notes["fields"], "extras": rest}
        notes["filename_in_extras"] = True
    return {**block, "extras": _own(notes)}


def _image_url_in(part: dict[str, Any]) -> BlockDict:
    image_url = part["image_url"]
    url = image_url if isinstance(image_url, str) else image_url.get("url")
    inner = {} if isinstance(image_url, str) else {k: v for k, v in image_url.items() if k != "url"}
    notes = {**_notes(part, ImageUrlPart), "image_url": "str" if isinstance(image_url, str) else inner}
    if not isinstance(url, str):
        return {"kind": "data", "data": part, "extras": _own({"block": True})}
    decoded = parse_data_uri(url)
    if decoded is None:
        return {"kind": "image", "url": url, "extras": _own(notes)}
    return {"kind": "image", "media_type": decoded[0], "data": decoded[1], "extras": _own(notes)}


def _reasoning_in(part: dict[str, Any]) -> BlockDict:
    notes = _notes(part, ReasoningPart)
    extras = notes.get("fields", {}).get("extras")
    signature = None
    if isinstance(extras, dict) and isinstance(extras.get("signature"), str):
        signature = extras["signature"]
        notes["fields"] = {**notes["fields"], "extras": {k: v for k, v in extras.items() if k != "signature"}}
    return {"kind": "reasoning", "text": part.get("reasoning", ""), "signature": signature,
            "extras": _own(notes)}


_MEDIA = ("image", "audio", "video", "file")
_PART_IN = {
    "text": lambda p: {"kind": "text", "text": p["text"], "extras": _own(_notes(p, TextPart))},
    "refusal": lambda p: {"kind": "refusal", "text": p["refusal"], "extras": _own(_notes(p, RefusalPart))},
    "reasoning": _reasoning_in,
    **dict.fromkeys(_MEDIA, _media_in),
    "image_url": _image_url_in,
    "tool_call": lambda p: _call_in(p, ToolCallPart, in_content=True),
    "invalid_tool_call": lambda p: _call_in(p, InvalidToolCallPart, in_content=True),
}


def _redacted(part: dict[str, Any]) -> bool:
    """LangChain's Anthropic translator keeps redacted thinking as a ``non_standard`` block."""
    value = part.get("value")
    return (part.keys() == {"type", "value"} and isinstance(value, dict) and value.keys() == {"type", "data"}
            and value["type"] == "redacted_thinking" and isinstance(value["data"], str))


def _part_in(part: str | dict[str, Any], index: int, pos: int, where: str) -> BlockDict:
    if isinstance(part, str):
        return {"kind": "text", "text": part, "extras": _own({"str": True})}
    kind = part.get("type")
    if kind == "non_standard" and _redacted(part):
        return {"kind": "reasoning", "redacted": True, "data": part["value"]["data"]}
    # a v0 media block (source_type) or any block without a canonical counterpart: kept as it is
    if kind.__class__ is not str or kind not in _PARTS or (kind in _MEDIA and "source_type" in part):
        return {"kind": "data", "data": part, "extras": _own({"block": True})}
    try:
        valid = _PARTS[kind].validate_python(part)
    except Exception as exc:
        raise SchemaError(NAME, [(index, f"{where}[{pos}]", str(exc).splitlines()[-1].strip())]) from None
    return _PART_IN[kind](valid)


def _content_in(data: dict[str, Any], index: int, where: str = "content",
                ) -> tuple[list[BlockDict], str | None]:
    content = data["content"]
    if isinstance(content, str):
        return ([{"kind": "text", "text": content}] if content else []), None
    return [_part_in(p, index, pos, where) for pos, p in enumerate(content)], "list"


# --- to canonical: messages ----------------------------------------------------------------

_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
               "system": "system", "developer": "system"}
"""A ChatMessage's free-form role as a canonical role (any other role speaks as a user)."""
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


def _usage_in(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    counts = ("input_tokens", "output_tokens", "total_tokens")
    rest = {k: v for k, v in usage.items() if k not in counts}
    return {**{k: usage.get(k) for k in counts}, "extras": _own(rest)}


def _unwrap(item: Any, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The message data of one item, and a note of the shape it came in."""
    if not isinstance(item, dict):
        raise SchemaError(NAME, [(index, "", f"expected an object, got {type(item).__name__}")])
    if item.get("lc") == 1 and item.get("type") == "constructor":
        path = item.get("id")
        cls = path[-1] if isinstance(path, list) and path else None
        kwargs = item.get("kwargs")
        if cls not in TYPE_OF_CLASS or not isinstance(kwargs, dict):
            raise SchemaError(NAME, [(index, "id", "not a LangChain message class (or no kwargs)")])
        wrapper = {k: v for k, v in item.items() if k != "kwargs"}
        if "type" in kwargs:
            return kwargs, {"lc": wrapper}
        return {**kwargs, "type": TYPE_OF_CLASS[cls]}, {"lc": wrapper, "no_type": True}
    if "data" in item and isinstance(item.get("data"), dict) and item.keys() <= {"type", "data"}:
        data = item["data"]
        if "type" in data:
            return data, {}
        return {**data, "type": item.get("type")}, {"no_type": True}
    return item, {"bare": True}


class _Reader:
    """Converts messages one batch at a time (the stream reader keeps it across chunks); keeps
    the legacy function calls still waiting for their FunctionMessage."""

    def __init__(self) -> None:
        self.legacy: dict[str, list[str]] = {}

    def _legacy_call(self, kwargs: dict[str, Any], index: int) -> BlockDict | None:
        """OpenAI's legacy ``function_call``, which LangChain keeps in ``additional_kwargs``: a call
        with an id made from its place (a FunctionMessage names only the function)."""
        call = kwargs.get("function_call")
        if not (isinstance(call, dict) and call.keys() == {"name", "arguments"}
                and isinstance(call["name"], str) and isinstance(call["arguments"], str)):
            return None
        del kwargs["function_call"]
        call_id = f"function-{index}"
        self.legacy.setdefault(call["name"], []).append(call_id)
        arguments, error = parse_json(call["arguments"])
        return {"kind": "tool_call", "call_id": call_id, "name": call["name"], "arguments": arguments,
                "arguments_raw": call["arguments"], "parse_error": error, "call_id_synthesized": True,
                "extras": _own({"legacy": True})}

    def message(self, m: dict[str, Any], shape: dict[str, Any], index: int) -> dict[str, Any]:
        blocks, form = _content_in(m, index)
        kind = m["type"]
        notes: dict[str, Any] = {**shape, **_notes(m, TYPES[kind], skip=("type",))}
        if kind in ("chat", "function"):  # read as user and tool messages: the type says how to write them
            notes["kind"] = kind
        if form:
            notes["content"] = form
        for key in ("additional_kwargs", "response_metadata"):
            if m.get(key):
                notes[key] = dict(m[key])
        # langchain-openai's mark of a developer message, which LangChain reads as a system message
        role = notes.get("additional_kwargs", {}).pop("__openai_role__", None) if kind == "system" else None
        if role is not None and not isinstance(role, str):  # not a role: kept where it was
            notes["additional_kwargs"]["__openai_role__"], role = role, None
        if notes.get("additional_kwargs") == {}:
            notes.pop("additional_kwargs")
        model = notes.get("response_metadata", {}).pop("model_name", None)
        if model is not None and not isinstance(model, str):  # not a model name: kept where it was
            notes["response_metadata"]["model_name"], model = model, None
        if notes.get("response_metadata") == {}:
            notes.pop("response_metadata")
        out: dict[str, Any] = {"role": _ROLES.get(kind), "name": m.get("name"), "external_id": m.get("id"),
                               "model": model, "source_format": NAME, "source_type": kind}
        if role is not None:
            out["source_role"] = role
        if kind == "ai":
            blocks = self._calls(m, blocks)
            if (legacy := self._legacy_call(notes.get("additional_kwargs", {}), index)) is not None:
                blocks.append(legacy)
                if not notes["additional_kwargs"]:
                    notes.pop("additional_kwargs")
            out["usage"] = _usage_in(m.get("usage_metadata"))
        elif kind == "tool" or kind == "function":
            blocks, form = [self._result(m, blocks, form, index)], None
            notes.pop("content", None)
            out["name"] = None
            if kind == "tool" and (artifact := m.get("artifact")) is not None:
                notes["artifact"] = artifact
        elif kind == "chat":
            out["role"] = _CHAT_ROLES.get(m["role"], "user")
            out["source_role"] = m["role"] if m["role"] != out["role"] else None
        out["content"] = blocks
        out["extras"] = _own(notes)
        return out

    def _calls(self, m: dict[str, Any], blocks: list[BlockDict]) -> list[BlockDict]:
        """The content's blocks, then the listed calls not in the content already (v1 content
        holds each call both as a block and in ``tool_calls``)."""
        in_content = {b["call_id"]: b for b in blocks if b["kind"] == "tool_call" and b["call_id"]}
        listed = [(call, ToolCall) for call in m.get("tool_calls", ())]
        listed += [(call, InvalidToolCall) for call in m.get("invalid_tool_calls", ())]
        for call, model in listed:
            block = _call_in(call, model)
            call_id = call.get("id")
            twin = in_content.pop(call_id, None) if call_id else None
            if twin is not None and _same_call(twin, block):
                twin["extras"][NAME]["listed"] = True
            else:
                blocks.append(block)
        return blocks

    def _result(self, m: dict[str, Any], blocks: list[BlockDict], form: str | None, index: int) -> BlockDict:
        output: Any = blocks if form == "list" else (blocks[0]["text"] if blocks else "")
        name = m.get("name")
        if m["type"] == "function":  # no call id in a legacy function message: its call's, by name
            pending = self.legacy.get(name) or []  # type: ignore[arg-type]
            call_id = pending.pop(0) if pending else f"function-{index}"
            return {"kind": "tool_result", "call_id": call_id, "name": name, "output": output}
        return {"kind": "tool_result", "call_id": m["tool_call_id"], "name": name, "output": output,
                "is_error": m.get("status") == "error",
                "extras": _own({"list": True} if form == "list" else {})}


def _same_call(content: BlockDict, listed: BlockDict) -> bool:
    """Whether a call in ``tool_calls`` is exactly the one in the content (then it is one call)."""
    keys = ("name", "arguments", "arguments_raw", "parse_error")
    a, b = content["extras"][NAME], listed["extras"].get(NAME, {})
    return (all(content.get(k) == listed.get(k) for k in keys) and not a.get("fields") and not b.get("fields")
            and not a.get("absent") and not b.get("absent"))


def _parse(items: list[Any], base: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    unwrapped = [_unwrap(item, base + i) for i, item in enumerate(items)]
    parsed = validate(MESSAGES, [d for d, _ in unwrapped], NAME, first=base)
    return [(m, shape) for m, (_, shape) in zip(parsed, unwrapped)]


def to_canonical(data: Any) -> list[Message]:
    """Validate LangChain message dicts (any of the three shapes) and convert them."""
    return next(to_canonical_stream([message_list(data, NAME)]), [])


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` chunk by chunk: each message stands alone, errors name the index
    in the whole stream."""
    reader = _Reader()
    base = 0
    for chunk in chunks:
        parsed = _parse(chunk, base)
        yield CANONICAL.validate_python([reader.message(m, shape, base + i) for i, (m, shape) in enumerate(parsed)])
        base += len(chunk)


def _looks_like_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if m.get("lc") == 1 and m.get("type") == "constructor":
        path = m.get("id")
        return isinstance(path, list) and bool(path) and path[-1] in TYPE_OF_CLASS and isinstance(m.get("kwargs"), dict)
    if m.keys() == {"type", "data"}:
        return m["type"] in TYPES and isinstance(m["data"], dict) and "content" in m["data"]
    # bare model_dump(): LangChain's own keys beside the type (no other format has these)
    return m.get("type") in TYPES and "content" in m and ("additional_kwargs" in m or "response_metadata" in m)


def looks_like(data: Any) -> bool:
    """A list of LangChain messages in any of the three shapes."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(_looks_like_message(m) for m in msgs)


from ._langchain_lean import to_writable  # noqa: E402
from ._langchain_write import TAKES_PLAIN, from_canonical, write_message  # noqa: E402  (both need the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_canonical_stream", "to_writable"]
