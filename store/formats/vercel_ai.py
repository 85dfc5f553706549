"""Vercel AI SDK (5+) ``UIMessage[]``, as ``useChat`` keeps them and ``validateUIMessages`` accepts them.

A UIMessage is ``{id, role: system|user|assistant, metadata?, parts}``. Parts: ``text``,
``reasoning``, ``file`` (a URL or a data URL), ``step-start``, tool parts (``tool-<name>``,
or ``dynamic-tool`` with ``toolName``) holding ``toolCallId``, ``state``, ``input`` and, once
the tool ran, ``output`` or ``errorText``; ``data-<name>`` parts; and parts without a canonical
counterpart (``source-url``, ``source-document``, ``custom``, ``reasoning-file``, ...), which are
kept unchanged in a :class:`~store.model.DataBlock` (``part``).

One assistant UIMessage holds a whole multi-step turn: the calls *and* their results, each
step opened by ``step-start``. On import it is split per step into a canonical assistant
message (text, reasoning, calls, in order) followed by one ``tool`` message per finished call
(``output-available``, ``output-error``, ``output-denied``), so every other format sees each
call answered before the next step. The pieces after the first are marked ``joined``, and
export merges them back into one UIMessage (results go back into their call's part); an
assistant message from another format that follows tool results continues the same
UIMessage as a new step, as the SDK itself writes a turn.

``id`` is the message's ``external_id`` (a message from another format without one gets
``msg_<index>``: UIMessages need an id, and a made-up one hides nothing of the source). Tool
names come from ``tool-<name>``. A non-string output is kept as its JSON text in the result
(``json`` marks it, so export gives the value back). What a part holds beyond the canonical
fields (``providerMetadata``, ``state`` of text, ``callProviderMetadata``, ``approval``, ...)
is kept in the block's ``extras["vercel-ai"]["fields"]``. Canonical blocks with no UI form
(refusal, error, code, usage, handoff, data from other formats) are carried whole in a
``data-convstore`` part (the SDK's own extension point: ``convertToModelMessages`` skips it)
and restored on import. UIMessages have no name, timestamp, model or usage: those are reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError

from ..model import BLOCK, Block, Message
from ._common import (
    CARRY_KEY, Losses, dump_json, made, message_list, parse_data_uri, unknown_fields, validate,
)

NAME = "vercel-ai"
CARRIED_PART = f"data-{CARRY_KEY}"
"""The data part that carries a canonical block the UI has no part for."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextPart(_Open):
    type: Literal["text"]
    text: str


class ReasoningPart(_Open):
    type: Literal["reasoning"]
    text: str


class FilePart(_Open):
    type: Literal["file"]
    mediaType: str
    url: str
    filename: str | None = None


class StepStart(_Open):
    type: Literal["step-start"]


ToolState = Literal["input-streaming", "input-available", "approval-requested", "approval-responded",
                    "output-available", "output-error", "output-denied"]


class ToolPart(_Open):
    type: str
    toolCallId: str
    state: ToolState
    toolName: str | None = None  # dynamic-tool only
    input: Any = None
    output: Any = None
    errorText: str | None = None


class DataPart(_Open):
    type: str
    id: str | None = None
    data: Any = None


class OtherPart(_Open):
    type: str


_KNOWN: dict[str, type[BaseModel]] = {"text": TextPart, "reasoning": ReasoningPart, "file": FilePart,
                                      "step-start": StepStart}


def _part_kind(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return None
    if kind.startswith("tool-") or kind == "dynamic-tool":
        return "tool"
    if kind.startswith("data-"):
        return "data"
    return kind if kind in _KNOWN else "other"


_TAGGED = [*_KNOWN.items(), ("tool", ToolPart), ("data", DataPart), ("other", OtherPart)]
Part = Annotated[Union[tuple(Annotated[m, Tag(t)] for t, m in _TAGGED)],  # type: ignore[misc]
                 Discriminator(_part_kind, custom_error_type="vercel_ai_part",
                               custom_error_message="part type is missing or not a string")]


class UIMessage(_Open):
    id: str
    role: Literal["system", "user", "assistant"]
    metadata: Any = None
    parts: list[Part]


MESSAGES = TypeAdapter(list[UIMessage])

# State of a finished tool part -> (the result is an error, the part key holding the result)
FINISHED: dict[str, tuple[bool, str | None]] = {
    "output-available": (False, "output"), "output-error": (True, "errorText"), "output-denied": (True, None),
}
_CALL_KEYS = {"type", "toolCallId", "state", "toolName", "input", "output", "errorText"}
_RESULT_FIELDS = ("resultProviderMetadata", "preliminary")  # part keys about the result, not the call
Fields = dict[str, Any]
"""A canonical message or block as the fields its model validates."""
_MEDIA_KINDS = (("image/", "image"), ("audio/", "audio"), ("video/", "video"))
DENIED = "The tool call was denied."


def _note(**shape: Any) -> dict[str, Any]:
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


def _fields(part: BaseModel, *skip: str) -> dict[str, Any] | None:
    extra = {k: v for k, v in (unknown_fields(part) or {}).items() if k not in skip}
    return extra or None


# --- to canonical ------------------------------------------------------------------------


def _media(part: FilePart) -> Fields:
    kind = next((k for prefix, k in _MEDIA_KINDS if part.mediaType.startswith(prefix)), "file")
    decoded = parse_data_uri(part.url)
    # Bytes only when the data URL says the same media type: else the URL is kept as it came.
    where = {"data": decoded[1]} if decoded is not None and decoded[0] == part.mediaType else {"url": part.url}
    return {"kind": kind, **where, "media_type": part.mediaType, "filename": part.filename,
            "extras": _note(fields=_fields(part))}


def _data(part: DataPart) -> Block | Fields:
    if part.type == CARRIED_PART and isinstance(part.data, dict) and part.id is None:
        try:
            return BLOCK.validate_python(part.data)  # a block convstore carried here
        except ValidationError:
            pass
    return {"kind": "data", "data": part.data, "extras": _note(
        type=part.type, id=part.id, fields=_fields(part, "id"), no_data="data" not in part.model_fields_set or None)}


def _call(part: ToolPart) -> Fields:
    dynamic = part.type == "dynamic-tool"
    name = (part.toolName or "") if dynamic else part.type.removeprefix("tool-")
    given = part.model_fields_set
    fields = {k: v for k, v in (unknown_fields(part) or {}).items() if k not in _RESULT_FIELDS and k not in _CALL_KEYS}
    if "toolName" in given and (not dynamic or part.toolName is None):  # not the name's own place
        fields["toolName"] = part.toolName
    # open: the part holds no result, so export gives it none (ids may repeat: results find their
    # call by id, the oldest call still waiting for one)
    return {"kind": "tool_call", "call_id": part.toolCallId, "name": name, "arguments": part.input, "extras": _note(
        dynamic=dynamic, open=part.state not in FINISHED, state=part.state if part.state not in FINISHED and part.state != "input-available" else None,
        no_input="input" not in given, fields=fields or None)}


def _result(part: ToolPart) -> Fields:
    is_error, key = FINISHED[part.state]
    value = getattr(part, key) if key else (part.model_extra or {}).get("approval", {})
    json_text = None
    if key is None:  # denied: the reason the user gave, for formats that show a text
        reason = value.get("reason") if isinstance(value, dict) else None
        output = reason if isinstance(reason, str) else DENIED
    elif isinstance(value, str):
        output = value
    else:  # any JSON: kept as its text, which every format can hold
        output, json_text = ("" if value is None else dump_json(value)), True
    kept = {k: (part.model_extra or {})[k] for k in _RESULT_FIELDS if k in (part.model_extra or {})}
    name = (part.toolName or "") if part.type == "dynamic-tool" else part.type.removeprefix("tool-")
    return {"kind": "tool_result", "call_id": part.toolCallId, "name": name, "output": output, "is_error": is_error,
            "extras": _note(state="output-denied" if key is None else None, json=json_text, fields=kept or None,
                            no_output=key is not None and key not in part.model_fields_set or None)}


def _block(part: BaseModel) -> Block | Fields:
    match part:
        case TextPart():
            return {"kind": "text", "text": part.text, "extras": _note(fields=_fields(part))}
        case ReasoningPart():
            return {"kind": "reasoning", "text": part.text, "extras": _note(fields=_fields(part))}
        case FilePart():
            return _media(part)
        case DataPart():
            return _data(part)
        case ToolPart():
            return _call(part)
    return _as_data(part)


def _as_data(part: BaseModel) -> Fields:
    """A part kept as it came."""
    return {"kind": "data", "data": part.model_dump(mode="json", exclude_unset=True), "extras": _note(part=True)}


def _head(m: UIMessage) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical metadata and the message's note: metadata that is not a non-empty object
    (``{}``, ``null``, a string) is kept as it came."""
    if isinstance(m.metadata, dict) and m.metadata:
        metadata, raw = m.metadata, None
    else:
        metadata, raw = {}, ({"value": m.metadata} if "metadata" in m.model_fields_set else None)
    return metadata, _note(metadata=raw, fields=_fields(m, "metadata"))


def _message(m: UIMessage) -> list[Fields]:
    """A UIMessage's canonical messages, as the fields the canonical model validates (in one call, for
    the whole input: a model a block costs more)."""
    metadata, note = _head(m)
    if m.role != "assistant":  # a step or tool part here is kept as it came
        blocks = [_block(p) if not isinstance(p, (ToolPart, StepStart)) else _as_data(p) for p in m.parts]
        return [{"role": m.role, "content": blocks, "source_format": NAME, "external_id": m.id,
                 "metadata": metadata, "extras": note}]
    out: list[Fields] = []
    step: Fields | None = None
    finished: list[ToolPart] = []

    def close() -> None:
        out.extend({"role": "tool", "content": [_result(p)], "source_format": NAME, "extras": _note(joined=True)}
                   for p in finished)
        finished.clear()

    for part in m.parts:
        if isinstance(part, StepStart) or step is None:
            if step is not None:
                close()
            step = {"role": "assistant", "content": [], "source_format": NAME, "extras": _note(joined=True)} if out \
                else {"role": "assistant", "content": [], "source_format": NAME, "external_id": m.id,
                      "metadata": metadata, "extras": note}
            out.append(step)
            if isinstance(part, StepStart):
                own = step["extras"].setdefault(NAME, {})
                own["step"] = True
                if unknown_fields(part):
                    own["step_fields"] = unknown_fields(part)
                continue
        step["content"].append(_block(part))
        if isinstance(part, ToolPart) and part.state in FINISHED:
            finished.append(part)
    if step is None:  # no parts at all
        out.append({"role": "assistant", "source_format": NAME, "external_id": m.id, "metadata": metadata,
                    "extras": note})
    close()
    return out


def _fields_of(items: list[Any], first: int = 0) -> list[Fields]:
    return [c for m in validate(MESSAGES, items, NAME, first=first) for c in _message(m)]


def to_canonical(data: Any) -> list[Message]:
    """Validate ``UIMessage[]`` (or ``{"messages": [...]}``) and convert them to canonical messages."""
    return finish(data, _fields_of(message_list(data, NAME)))


def finish(data: Any, out: list[Any]) -> list[Any]:
    """The canonical messages of the fields ``out`` read from ``data``, validated in one call (a
    wrapper's other keys noted on the first; plain messages among them as they are)."""
    if isinstance(data, dict) and out:
        out[0]["extras"].setdefault(NAME, {})["wrapper"] = {k: v for k, v in data.items() if k != "messages"}
    return made(out)


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` of a bare list, chunk by chunk: a UIMessage holds the results of
    its own calls, so each chunk reads alone; errors name the index in the whole list."""
    base = 0
    for chunk in chunks:
        yield made(_fields_of(chunk, base))
        base += len(chunk)


def _looks_like_message(m: Any) -> bool:
    return (isinstance(m, dict) and {"id", "role", "parts"} <= m.keys() <= {"id", "role", "parts", "metadata"}
            and m["role"] in ("system", "user", "assistant") and isinstance(m["parts"], list)
            and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in m["parts"]))


def looks_like(data: Any) -> bool:
    """``{id, role, parts[, metadata]}`` items whose parts all have a ``type`` string (Gemini's
    ``{role, parts}`` has neither ``id`` nor typed parts); or ``{"messages": [...]}`` of them."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    return isinstance(data, list) and bool(data) and all(_looks_like_message(m) for m in data)


# --- from canonical ----------------------------------------------------------------------


TAKES_PLAIN = True


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]] | dict[str, Any]:
    """Canonical messages as ``UIMessage[]`` (a multi-step turn merged back into one message)."""
    from ._vercel_ai_write import write  # the writer imports the models above

    return write(messages, losses)


from ._vercel_ai_lean import to_writable  # noqa: E402  (it reads with the reader above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_canonical_stream", "to_writable"]
