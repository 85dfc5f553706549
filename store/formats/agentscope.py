"""AgentScope 1.x ``Msg`` (``Msg.to_dict()`` / ``Msg.from_dict()``), and the seed's Java JSON.

Reads ``{"id", "name", "role", "content", "metadata", "timestamp"}`` messages whose
content is a string or a list of ``text``, ``thinking``, ``image``/``audio``/``video``
(URL or base64 source), ``tool_use`` and ``tool_result`` blocks. AgentScope puts each
tool result in a message of its own (``{"name": "system", "role": "system"}``); those
become canonical ``tool`` messages. The Java JSON (upper-case roles, a ``TOOL`` role,
``usage``, block ``metadata``/``state``, ``toolUseId``) is read too; export always
writes the Python 1.x shape.

What AgentScope has no field for travels in ``metadata["convstore"]``: canonical
message fields (via :func:`_common.carry`), ``patch`` (per block: the canonical fields
the block cannot hold, or the whole block behind a text stand-in) and ``continues``
(this message belongs to the previous canonical one, e.g. its second tool result).
The writer is :mod:`._agentscope_write`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, Union

import pydantic
from pydantic import BeforeValidator, ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments, same_json
from ..model import BLOCK, Block, Message, Usage
from ._common import (CARRY_KEY, b64decode_exact, made, message_list, notes_bag, parse_data_uri, restore,
                      unknown_keys, validate_others)

NAME = "agentscope"


_OPEN = ConfigDict(extra="allow")

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader).


@with_config(_OPEN)
class TextPart(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_OPEN)
class ThinkingPart(TypedDict):
    type: Literal["thinking"]
    thinking: str


@with_config(_OPEN)
class URLSource(TypedDict):
    type: Literal["url"]
    url: str


@with_config(_OPEN)
class Base64Source(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


@with_config(_OPEN)
class MediaPart(TypedDict):
    type: Literal["image", "audio", "video"]
    source: Annotated[Union[URLSource, Base64Source], Field(discriminator="type")]


@with_config(_OPEN)
class ToolUsePart(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    raw_input: NotRequired[str | None]


@with_config(_OPEN)
class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    id: str
    name: NotRequired[str | None]  # required in Python 1.x; Java writes null for an error made without a name
    output: str | list[Annotated[Union[TextPart, MediaPart], Field(discriminator="type")]]


def _seed_id(data: Any) -> Any:
    """The seed's Java builder names a result's call id ``toolUseId``."""
    if isinstance(data, dict) and "id" not in data and "toolUseId" in data:
        return {**data, "id": data["toolUseId"]}
    return data


Part = Annotated[
    Union[TextPart, ThinkingPart, MediaPart, ToolUsePart,
          Annotated[ToolResultPart, BeforeValidator(_seed_id)]],
    Field(discriminator="type"),
]


@with_config(_OPEN)
class Msg(TypedDict):
    name: str | None
    role: Literal["user", "assistant", "system", "USER", "ASSISTANT", "SYSTEM", "TOOL"]
    content: str | list[Part]  # type: ignore[valid-type]
    metadata: NotRequired[dict[str, Any] | None]
    timestamp: NotRequired[str | None]
    id: NotRequired[str | None]


_KEYS = {"text": frozenset(TextPart.__annotations__), "thinking": frozenset(ThinkingPart.__annotations__),
         "media": frozenset(MediaPart.__annotations__), "tool_use": frozenset(ToolUsePart.__annotations__),
         "tool_result": frozenset(ToolResultPart.__annotations__), "msg": frozenset(Msg.__annotations__),
         "url": frozenset(URLSource.__annotations__), "base64": frozenset(Base64Source.__annotations__)}
"""The declared keys of each part type (media: "media"), source type and a Msg."""
MESSAGES = TypeAdapter(list[Msg])
_JAVA_ROLES = {"USER": "user", "ASSISTANT": "assistant", "SYSTEM": "system", "TOOL": "system"}
_ROLES_IN = {"user": "user", "assistant": "assistant", "system": "system", **_JAVA_ROLES}
"""The canonical role of a message's blocks other than tool results (those make a ``tool`` message)."""
_ROLE_OUT = {"user": "user", "assistant": "assistant", "system": "system", "tool": "system"}
_PY_ROLES = {"user", "assistant", "system"}
_OUTPUT_KINDS = {"text", "image", "audio", "video"}
Patch: TypeAlias = "dict[str, Any] | None"
Written: TypeAlias = "tuple[dict[str, Any], Patch]"
T = TypeVar("T")


def _unknown(value: dict[str, Any], of: str) -> dict[str, Any]:
    """Keys the canonical model has no field for: unknown ones, and known ones given as null."""
    fields = unknown_keys(value, _KEYS[of])
    return {"fields": fields} if fields else {}


def _own(java: bool, extras: dict[str, Any], **markers: Any) -> dict[str, Any]:
    """The ``extras["agentscope"]`` entry. ``java`` marks what came from Java JSON: export
    writes the Python shape, so that part is carried instead of written back."""
    kept = {**extras, **{k: v for k, v in markers.items() if v not in (None, False)}}
    return {NAME: {**kept, "java": True} if java else kept} if kept else {}


def _timestamp(value: datetime) -> str:
    """``Msg``'s own format, ``%Y-%m-%d %H:%M:%S.fff``: wall-clock time, no zone."""
    return (value if value.tzinfo is None else value.replace(tzinfo=None)).isoformat(" ", "milliseconds")


def _parse_time(raw: str) -> datetime | None:
    try:
        return datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
    except ValueError:
        return None


def _runs(items: list[T], is_result: Callable[[T], bool], grouped: bool = True) -> list[tuple[bool, list[T]]]:
    """Consecutive items split into runs of tool results and runs of the rest; with
    ``grouped`` false, each tool result is a run of its own."""
    runs: list[tuple[bool, list[T]]] = []
    for item in items:
        result = is_result(item)
        if runs and runs[-1][0] == result and (grouped or not result):
            runs[-1][1].append(item)
        else:
            runs.append((result, [item]))
    return runs or [(False, [])]


# --- to canonical ----------------------------------------------------------------------


def _media_in(part: dict[str, Any], java: bool) -> dict[str, Any]:
    own, src, kind = _unknown(part, "media"), part["source"], part["type"]
    if not src.keys() <= _KEYS[src["type"]]:
        own["source"] = {k: v for k, v in src.items() if k not in _KEYS[src["type"]]}
    if src["type"] == "url":
        decoded = parse_data_uri(src["url"])
        if decoded is None:
            return {"kind": kind, "url": src["url"], "extras": _own(java, own)}
        return {"kind": kind, "media_type": decoded[0], "data": decoded[1],
                "extras": _own(java, own, data_uri=True)}
    data = b64decode_exact(src["data"])  # kept as given when not canonical base64
    raw = src["data"] if data is None else None
    return {"kind": kind, "media_type": src["media_type"], "data": data, "extras": _own(java, own, raw=raw)}


def _tool_use_in(part: dict[str, Any], java: bool) -> dict[str, Any]:
    raw = part.get("raw_input")
    if raw is None and java and isinstance(part.get("content"), str):
        raw = part["content"]  # Java keeps the model's raw argument string in `content`
    return {"kind": "tool_call", "call_id": part["id"], "name": part["name"], "arguments": part["input"],
            "arguments_raw": raw, "extras": _own(java, _unknown(part, "tool_use"))}


def _tool_result_in(part: dict[str, Any], java: bool) -> dict[str, Any]:
    output = part["output"]
    return {"kind": "tool_result", "call_id": part["id"], "name": part.get("name"),
            "output": output if isinstance(output, str) else [_part_in(p, java) for p in output],
            "extras": _own(java, _unknown(part, "tool_result")),
            "is_error": java and part.get("state") == "error"}


_PARTS_IN: dict[str, Callable[[Any, bool], dict[str, Any]]] = {
    "text": lambda p, java: {"kind": "text", "text": p["text"], "extras": _own(java, _unknown(p, "text"))},
    "thinking": lambda p, java: {"kind": "reasoning", "text": p["thinking"],
                                 "extras": _own(java, _unknown(p, "thinking"))},
    "image": _media_in, "audio": _media_in, "video": _media_in, "tool_use": _tool_use_in,
    "tool_result": _tool_result_in,
}
"""A part's canonical block, as fields (validated with the messages, ``made``), by its type."""


def _part_in(part: dict[str, Any], java: bool) -> dict[str, Any]:
    return _PARTS_IN[part["type"]](part, java)


def _java_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    ints = {k: v for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}
    return Usage(input_tokens=ints.get("inputTokens"), output_tokens=ints.get("outputTokens"),
                 total_tokens=ints.get("totalTokens"))


def _is_result(block: Any) -> bool:
    return (block["kind"] if block.__class__ is dict else block.kind) == "tool_result"


def _split(m: dict[str, Any], java: bool, metadata: dict[str, Any], blocks: list[Any],
           ) -> list[dict[str, Any]]:
    """One canonical message per run of tool results or other blocks; the first holds the
    message's own fields, the others say they continue it."""
    timestamp, source = m.get("timestamp"), m["role"]
    created = _parse_time(timestamp) if timestamp is not None else None
    shape = {
        "content": "str" if isinstance(m["content"], str) else None,
        "timestamp": timestamp if created is None or _timestamp(created) != timestamp else None,
        "metadata": "absent" if "metadata" not in m else None,
    }
    usage = _java_usage(m.get("usage")) if java else None
    out = []
    for k, (is_result, run) in enumerate(_runs(blocks, _is_result)):
        role = "tool" if is_result else _ROLES_IN[source]
        markers = shape if k == 0 else {"continues": True, "timestamp": shape["timestamp"]}
        extras = _own(java, _unknown(m, "msg") if k == 0 else {}, **markers,
                      grouped=is_result and len(run) > 1)
        first = {"external_id": m.get("id"), "metadata": metadata, "usage": usage} if k == 0 else {}
        out.append({"role": role, "content": run, "source_role": None if source == role else source,
                    "name": m["name"], "source_format": NAME, "created_at": created, "extras": extras,
                    **first})
    return out  # fields: validated with the others, in one call


_CARRIED_ERRORS = (pydantic.ValidationError, TypeError, KeyError, IndexError, ValueError, AttributeError)


def _bad_carry(index: int, where: str, exc: Exception) -> SchemaError:
    """A ``metadata["convstore"]`` that is not what an export writes (edited by hand, say)."""
    if isinstance(exc, pydantic.ValidationError):
        err = exc.errors(include_url=False)[0]
        why = f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    else:
        why = f"{type(exc).__name__}: {exc}"
    return SchemaError(NAME, [(index, f"metadata.{CARRY_KEY}{where}", f"not what convstore carries: {why}")])


def _patched(blocks: list[Block], patches: Any, index: int) -> list[Block]:
    """Blocks with the canonical fields (or whole blocks) an export carried put back."""
    out = list(blocks)
    try:
        for patch in patches:
            at = patch["at"]
            if "block" in patch:
                out[at] = BLOCK.validate_python(patch["block"])
            else:
                current = out[at] if out[at].__class__ is dict else out[at].model_dump()
                out[at] = BLOCK.validate_python({**current, **patch["set"], "kind": current["kind"]})
    except _CARRIED_ERRORS as exc:
        raise _bad_carry(index, ".patch", exc) from None
    return out


_STAND_INS = frozenset({"name", "source_role", "created_at"})
"""Fields a written message holds a stand-in for (a name, a role, a time), null by default."""


def _restored(fields: dict[str, Any], payload: dict[str, Any], index: int) -> Message | dict[str, Any]:
    """The message of ``fields`` with the fields an export carried; a carried name, role name or
    time wins over what the written message said (it was a stand-in)."""
    carried = {k: v for k, v in payload.items() if k not in ("patch", "continues")}
    if not carried:
        return fields
    fields.update((k, None) for k in _STAND_INS if k in carried)
    if carried.keys() <= _STAND_INS and all(value is None for value in carried.values()):
        return fields  # what restore gives: fields set to null, their default (an unnamed message's name)
    base = Message(**fields)
    try:
        extras = carried.get("extras")
        if isinstance(extras, dict) and isinstance(extras.get(NAME), dict) and NAME in base.extras:
            carried["extras"] = {**extras, NAME: {**extras[NAME], **base.extras[NAME]}}
        return restore(base, carried)
    except _CARRIED_ERRORS as exc:
        raise _bad_carry(index, "", exc) from None


def to_canonical(data: Any) -> list[Message]:
    """Validate AgentScope 1.x (or Java) ``Msg`` dicts and convert them to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each ``Msg`` of one text,
    of one tool result, or of an assistant's calls (after a text or not, each with its ``raw_input``), that
    convstore wrote for an unnamed message (its name, a stand-in, carried as null), for a writer that
    takes them (``formats.convert``): read from the item itself, whose plain
    types are its validation. A property test holds it to :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


_UNNAMED = {"text": {CARRY_KEY: {"name": None}}, "tool_result": {CARRY_KEY: {"name": None, "source_role": None}}}
"""The metadata convstore writes on a plain message's ``Msg``: its name (and a result's role) a stand-in."""


def _plain(m: Any) -> Plain | None:
    if m.__class__ is not dict or len(m) != 4 or (content := m.get("content")).__class__ is not list \
            or len(content) != 1 or (part := content[0]).__class__ is not dict or m.get("name").__class__ is not str:
        return None
    kind = part.get("type")
    role = m.get("role")
    if kind == "text" and len(part) == 2 and role.__class__ is str and role in _PY_ROLES \
            and (text := part.get("text")).__class__ is str and m.get("metadata") == _UNNAMED["text"]:
        return Plain(role, text, NAME)
    if kind == "tool_result" and len(part) == 4 and role == "system" \
            and m.get("metadata") == _UNNAMED["tool_result"] and (text := part.get("output")).__class__ is str \
            and (call_id := part.get("id")).__class__ is str and (name := part.get("name")).__class__ is str:
        return Plain("tool", text, NAME, (Result(call_id),), name)
    return None


_USE_KEYS = ["type", "id", "name", "input", "raw_input"]


def _plain_calls(m: Any) -> Plain | None:
    """A ``Msg`` convstore wrote for an unnamed assistant's calls (a text before them or not; other formats'
    notes carried): each ``tool_use`` with its arguments' text (``raw_input``) that parses to exactly its
    ``input``; None for any other."""
    if m.__class__ is not dict or len(m) != 4 or m.get("role") != "assistant" \
            or m.get("name") != "assistant" \
            or (content := m.get("content")).__class__ is not list or not content \
            or (meta := m.get("metadata")).__class__ is not dict or len(meta) != 1 \
            or (payload := meta.get(CARRY_KEY)).__class__ is not dict or payload.get("name", 0) is not None \
            or not payload.keys() <= {"name", "extras"} or not notes_bag(extras := payload.get("extras", {})):
        return None
    first = content[0]
    text = first["text"] if first.__class__ is dict and len(first) == 2 and first.get("type") == "text" \
        and first.get("text").__class__ is str else None
    calls = []
    for part in content[text is not None:]:
        if part.__class__ is not dict or list(part) != _USE_KEYS or part["type"] != "tool_use" \
                or part["id"].__class__ is not str or part["name"].__class__ is not str \
                or part["input"].__class__ is not dict or (raw := part["raw_input"]).__class__ is not str \
                or not bare_arguments(raw) or not same_json(part["input"], raw):
            return None
        calls.append(Call(part["id"], part["name"], raw))
    return Plain("assistant", text, NAME, tuple(calls), extras=extras or None) if calls else None


def _read(data: Any, lean: bool) -> list[Writable]:
    raw = message_list(data, NAME)
    plain = [_plain(m) or _plain_calls(m) for m in raw] if lean else [None] * len(raw)
    parsed = iter(validate_others(MESSAGES, raw, plain, NAME))
    out: list[Any] = []  # canonical fields (or, restored, a canonical message; or a plain one)
    pending: tuple[int, int, dict[str, Any]] | None = None  # a carried payload waits for its continuations
    for index, p in enumerate(plain):
        payload: dict[str, Any] = {}  # a plain item's (an unnamed message's) is read already
        if p is None:
            m = next(parsed)
            java = m["role"] in _JAVA_ROLES
            metadata = dict(m.get("metadata") or {})
            payload = metadata.pop(CARRY_KEY) if isinstance(metadata.get(CARRY_KEY), dict) else {}
            content = m["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            blocks = [_part_in(part, java) for part in content]
            if payload.get("patch"):
                blocks = _patched(blocks, payload["patch"], index)
            if payload.get("continues") and out:
                if out[-1].__class__ is Plain:
                    out[-1] = out[-1].fields()
                out[-1]["content"].extend(blocks)  # the last Msg's: restored only once its continuations are in
                continue
        if pending:
            out[pending[0]] = _restored(out[pending[0]], pending[2], pending[1])
        pending = (len(out), index, payload) if payload else None
        if p is None:
            out.extend(_split(m, java, metadata, blocks))
        else:
            out.append(p)
    if pending:
        out[pending[0]] = _restored(out[pending[0]], pending[2], pending[1])
    return made(out)


_BLOCK_TYPES = {"text", "thinking", "image", "audio", "video", "tool_use", "tool_result"}
_FOREIGN_KEYS = {"type", "created_at", "tool_calls", "function_call", "extra", "tool_call_id", "contents"}


def looks_like(data: Any) -> bool:
    """Named ``Msg`` dicts with AgentScope roles, an id, metadata or timestamp, and AgentScope blocks."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(_looks_like_msg(m) for m in msgs)


def _looks_like_msg(m: Any) -> bool:
    if not isinstance(m, dict) or m.get("role") not in _ROLES_IN or "name" not in m:
        return False
    if _FOREIGN_KEYS & m.keys() or not {"id", "metadata", "timestamp"} & m.keys():
        return False
    content = m.get("content")
    return isinstance(content, str) or isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in content)


from ._agentscope_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
