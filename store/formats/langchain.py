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
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, TypeAdapter

from ..errors import SchemaError
from ..model import MESSAGES as CANONICAL
from ..model import Message
from ._common import b64decode_exact, message_list, parse_data_uri, parse_json, validate

NAME = "langchain"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- the schema: message data ------------------------------------------------------------


class ToolCall(_Open):
    name: str
    args: dict[str, Any]
    id: str | None
    type: Literal["tool_call"] = "tool_call"


class InvalidToolCall(_Open):
    type: Literal["invalid_tool_call"] = "invalid_tool_call"
    id: str | None = None
    name: str | None = None
    args: str | None = None
    error: str | None = None


class _Data(_Open):
    content: str | list[str | dict[str, Any]]
    additional_kwargs: dict[str, Any] = {}
    response_metadata: dict[str, Any] = {}
    name: str | None = None
    id: str | None = None


class HumanData(_Data):
    type: Literal["human"]


class SystemData(_Data):
    type: Literal["system"]


class AIData(_Data):
    type: Literal["ai"]
    tool_calls: list[ToolCall] = []
    invalid_tool_calls: list[InvalidToolCall] = []
    usage_metadata: dict[str, Any] | None = None


class ToolData(_Data):
    type: Literal["tool"]
    tool_call_id: str
    artifact: Any = None
    status: Literal["success", "error"] = "success"


class ChatData(_Data):
    type: Literal["chat"]
    role: str


class FunctionData(_Data):
    type: Literal["function"]
    name: str


_DATA = (HumanData, SystemData, AIData, ToolData, ChatData, FunctionData)
TYPES = {c.model_fields["type"].annotation.__args__[0]: c for c in _DATA}  # "human" -> HumanData
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


class TextPart(_Open):
    type: Literal["text"]
    text: str


class ReasoningPart(_Open):
    type: Literal["reasoning"]
    reasoning: str = ""


class RefusalPart(_Open):
    type: Literal["refusal"]
    refusal: str


class MediaPart(_Open):
    type: Literal["image", "audio", "video", "file"]
    url: str | None = None
    base64: str | None = None
    file_id: str | None = None
    mime_type: str | None = None


class ImageUrlPart(_Open):
    """OpenAI's part, which LangChain messages built for OpenAI models hold."""

    type: Literal["image_url"]
    image_url: str | dict[str, Any]


class ToolCallPart(ToolCall):
    type: Literal["tool_call"]


class InvalidToolCallPart(InvalidToolCall):
    type: Literal["invalid_tool_call"]


_PART_MODELS: dict[str, type[_Open]] = {
    "text": TextPart, "reasoning": ReasoningPart, "refusal": RefusalPart, "image": MediaPart, "audio": MediaPart,
    "video": MediaPart, "file": MediaPart, "image_url": ImageUrlPart, "tool_call": ToolCallPart,
    "invalid_tool_call": InvalidToolCallPart,
}
_PARTS = {t: TypeAdapter(m) for t, m in _PART_MODELS.items()}


def _notes(model: BaseModel, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Unknown keys (``fields``) and defaulted keys the input left out (``absent``)."""
    notes: dict[str, Any] = {}
    if model.__pydantic_extra__:
        notes["fields"] = dict(model.__pydantic_extra__)
    given = model.__pydantic_fields_set__
    absent = [f for f in type(model).model_fields if f not in given and f not in skip]
    if absent:
        notes["absent"] = absent
    return notes


def _own(notes: dict[str, Any]) -> dict[str, Any]:
    return {NAME: notes} if notes else {}


# --- to canonical: blocks ------------------------------------------------------------------

BlockDict = dict[str, Any]


def _call_in(call: ToolCall | InvalidToolCall, **shape: Any) -> BlockDict:
    notes = {**_notes(call, skip=("type",) if isinstance(call, ToolCallPart | InvalidToolCallPart) else ()),
             **shape}
    if call.id is None:
        notes["id"] = None
    if isinstance(call, InvalidToolCall):
        notes["invalid"] = True
        if call.name is None:
            notes["name"] = None
        raw = call.args
        arguments, error = parse_json(raw) if raw is not None else (None, None)
        return {"kind": "tool_call", "call_id": call.id or "", "name": call.name or "", "arguments": arguments,
                "arguments_raw": raw, "parse_error": call.error or error or "an invalid tool call",
                "extras": _own({**notes, "error": call.error})}
    return {"kind": "tool_call", "call_id": call.id or "", "name": call.name, "arguments": call.args,
            "extras": _own(notes)}


def _media_in(part: MediaPart) -> BlockDict:
    notes = _notes(part)
    block: BlockDict = {"kind": part.type, "url": part.url, "file_id": part.file_id, "media_type": part.mime_type}
    if part.base64 is not None:
        data = b64decode_exact(part.base64)
        if data is None:  # not canonical base64: written back as it came
            notes["base64"] = part.base64
        block["data"] = data
    extras = notes.get("fields", {}).get("extras")
    if isinstance(extras, dict) and isinstance(extras.get("filename"), str):  # where LangChain keeps it
        block["filename"] = extras["filename"]
        rest = {k: v for k, v in extras.items() if k != "filename"}
        notes["fields"] = {**notes["fields"], "extras": rest}
        notes["filename_in_extras"] = True
    return {**block, "extras": _own(notes)}


def _image_url_in(part: ImageUrlPart) -> BlockDict:
    url = part.image_url if isinstance(part.image_url, str) else part.image_url.get("url")
    inner = {} if isinstance(part.image_url, str) else {k: v for k, v in part.image_url.items() if k != "url"}
    notes = {**_notes(part), "image_url": "str" if isinstance(part.image_url, str) else inner}
    if not isinstance(url, str):
        return {"kind": "data", "data": part.model_dump(), "extras": _own({"block": True})}
    decoded = parse_data_uri(url)
    if decoded is None:
        return {"kind": "image", "url": url, "extras": _own(notes)}
    return {"kind": "image", "media_type": decoded[0], "data": decoded[1], "extras": _own(notes)}


def _reasoning_in(part: ReasoningPart) -> BlockDict:
    notes = _notes(part)
    extras = notes.get("fields", {}).get("extras")
    signature = None
    if isinstance(extras, dict) and isinstance(extras.get("signature"), str):
        signature = extras["signature"]
        notes["fields"] = {**notes["fields"], "extras": {k: v for k, v in extras.items() if k != "signature"}}
    return {"kind": "reasoning", "text": part.reasoning, "signature": signature, "extras": _own(notes)}


_PART_IN = {
    TextPart: lambda p: {"kind": "text", "text": p.text, "extras": _own(_notes(p))},
    RefusalPart: lambda p: {"kind": "refusal", "text": p.refusal, "extras": _own(_notes(p))},
    ReasoningPart: _reasoning_in,
    MediaPart: _media_in,
    ImageUrlPart: _image_url_in,
    ToolCallPart: lambda p: _call_in(p, in_content=True),
    InvalidToolCallPart: lambda p: _call_in(p, in_content=True),
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
    if kind.__class__ is not str or kind not in _PARTS or (kind in ("image", "audio", "video", "file")
                                                          and "source_type" in part):
        return {"kind": "data", "data": part, "extras": _own({"block": True})}
    try:
        model = _PARTS[kind].validate_python(part)
    except Exception as exc:
        raise SchemaError(NAME, [(index, f"{where}[{pos}]", str(exc).splitlines()[-1].strip())]) from None
    return _PART_IN[type(model)](model)


def _content_in(data: _Data, index: int, where: str = "content") -> tuple[list[BlockDict], str | None]:
    if isinstance(data.content, str):
        return ([{"kind": "text", "text": data.content}] if data.content else []), None
    return [_part_in(p, index, pos, where) for pos, p in enumerate(data.content)], "list"


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

    def message(self, m: _Data, shape: dict[str, Any], index: int) -> dict[str, Any]:
        blocks, form = _content_in(m, index)
        notes: dict[str, Any] = {**shape, **_notes(m, skip=("type",))}
        if m.type in ("chat", "function"):  # read as user and tool messages: the type says how to write them
            notes["kind"] = m.type
        if form:
            notes["content"] = form
        for key in ("additional_kwargs", "response_metadata"):
            if getattr(m, key):
                notes[key] = dict(getattr(m, key))
        model = notes.get("response_metadata", {}).pop("model_name", None)
        if model is not None and not isinstance(model, str):  # not a model name: kept where it was
            notes["response_metadata"]["model_name"], model = model, None
        if notes.get("response_metadata") == {}:
            notes.pop("response_metadata")
        out: dict[str, Any] = {"role": _ROLES.get(m.type), "name": m.name, "external_id": m.id, "model": model,
                               "source_format": NAME, "source_type": m.type}
        if isinstance(m, AIData):
            blocks = self._calls(m, blocks)
            if (legacy := self._legacy_call(notes.get("additional_kwargs", {}), index)) is not None:
                blocks.append(legacy)
                if not notes["additional_kwargs"]:
                    notes.pop("additional_kwargs")
            out["usage"] = _usage_in(m.usage_metadata)
        elif isinstance(m, ToolData | FunctionData):
            blocks, form = [self._result(m, blocks, form, index)], None
            notes.pop("content", None)
            out["name"] = None
            if isinstance(m, ToolData) and m.artifact is not None:
                notes["artifact"] = m.artifact
        elif isinstance(m, ChatData):
            out["role"] = _CHAT_ROLES.get(m.role, "user")
            out["source_role"] = m.role if m.role != out["role"] else None
        out["content"] = blocks
        out["extras"] = _own(notes)
        return out

    def _calls(self, m: AIData, blocks: list[BlockDict]) -> list[BlockDict]:
        """The content's blocks, then the listed calls not in the content already (v1 content
        holds each call both as a block and in ``tool_calls``)."""
        in_content = {b["call_id"]: b for b in blocks if b["kind"] == "tool_call" and b["call_id"]}
        for call in [*m.tool_calls, *m.invalid_tool_calls]:
            block = _call_in(call)
            twin = in_content.pop(call.id, None) if call.id else None
            if twin is not None and _same_call(twin, block):
                twin["extras"][NAME]["listed"] = True
            else:
                blocks.append(block)
        return blocks

    def _result(self, m: ToolData | FunctionData, blocks: list[BlockDict], form: str | None,
                index: int) -> BlockDict:
        output: Any = blocks if form == "list" else (blocks[0]["text"] if blocks else "")
        if isinstance(m, FunctionData):  # no call id in a legacy function message: its call's, by name
            pending = self.legacy.get(m.name) or []
            call_id = pending.pop(0) if pending else f"function-{index}"
            return {"kind": "tool_result", "call_id": call_id, "name": m.name, "output": output}
        return {"kind": "tool_result", "call_id": m.tool_call_id, "name": m.name, "output": output,
                "is_error": m.status == "error", "extras": _own({"list": True} if form == "list" else {})}


def _same_call(content: BlockDict, listed: BlockDict) -> bool:
    """Whether a call in ``tool_calls`` is exactly the one in the content (then it is one call)."""
    keys = ("name", "arguments", "arguments_raw", "parse_error")
    a, b = content["extras"][NAME], listed["extras"].get(NAME, {})
    return (all(content.get(k) == listed.get(k) for k in keys) and not a.get("fields") and not b.get("fields")
            and not a.get("absent") and not b.get("absent"))


def _parse(items: list[Any], base: int) -> list[tuple[_Data, dict[str, Any]]]:
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
