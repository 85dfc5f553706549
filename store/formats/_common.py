"""Pieces every format adapter shares: validation errors, JSON arguments, data URIs, loss reports."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic
from pydantic_core import to_jsonable_python

from .. import exactjson
from ..errors import LossError, SchemaError
from ..limits import MAX_DEPTH, json_problem

StandIn = Callable[[Any, dict[str, str]], Any]
"""``formats.read_marked``'s ``stand_in``: what to take for an input item instead of its canonical
message (None: the message), given the item and the tool names of the calls read before it (by
call id; a stand-in for an item with calls adds theirs, as the reader would)."""

_TYPE_LABEL = re.compile(r"^(str|int|float|bool|none|dict|list|bytes)$|[\[\]]|^function-")


def validate(adapter: pydantic.TypeAdapter[Any], data: Any, format: str, first: int = 0) -> Any:
    """Validate ``data`` with a format's own models; raise :class:`SchemaError` naming
    the message index and field path of every problem. ``data`` is a chunk of a longer
    list when ``first`` (its first message's index in that list) is given."""
    try:
        return adapter.validate_python(data)
    except pydantic.ValidationError as exc:
        problems = _problems(exc, data)
        raise SchemaError(format, [(i if i is None else i + first, path, why) for i, path, why in problems]) from None


def validate_others(adapter: pydantic.TypeAdapter[Any], items: Any, plain: Sequence[Any], format: str,
                    others: Any = None) -> Any:
    """:func:`validate` of the ``items`` a lean read (``to_writable``) did not read as plain ones (those whose
    ``plain`` entry is None; or ``others``, ``items`` without them), in one call; an error is located in the
    whole input, validated again for it (its plain items are valid: the very same errors)."""
    if not any(p is not None for p in plain):
        return validate(adapter, items, format)
    try:
        return adapter.validate_python([item for item, p in zip(items, plain) if p is None] if others is None
                                       else others)
    except pydantic.ValidationError:
        validate(adapter, items, format)
        raise


def note_first(read: list[Any], format: str, notes: dict[str, Any]) -> None:
    """``read`` (a reader's canonical fields and plain messages, for :func:`made`) with ``notes`` merged into
    its first message's notes of ``format`` (how the input was wrapped, what it left out); a plain first
    message becomes its fields."""
    first = read[0] if read[0].__class__ is dict else read[0].fields()
    extras = first["extras"] = dict(first.get("extras") or {})
    extras[format] = {**extras.get(format, {}), **notes}
    read[0] = first


def made(read: list[Any]) -> list[Any]:
    """The messages a reader read, those it gave as canonical fields (dicts) validated in one call; where
    one is at fault, the first such raises as it would alone (its error names the message's fields)."""
    from ..model import MESSAGES, Message  # local: the model imports nothing from here

    fields = [m for m in read if m.__class__ is dict]
    try:
        validated = iter(MESSAGES.validate_python(fields))
    except pydantic.ValidationError:
        for one in fields:
            Message(**one)
        raise
    return [next(validated) if m.__class__ is dict else m for m in read]


def validated(fields: list[Any], every: Callable[[], list[dict[str, Any]]]) -> list[Any]:
    """Canonical messages of the fields (dicts) among a reader's messages, validated in one call; the others
    (plain messages, stand-ins) as they are. An error is located in the whole input: ``every`` gives all its
    messages as fields, validated again for it."""
    from ..model import MESSAGES  # local, as in made

    if all(f.__class__ is dict for f in fields):
        return MESSAGES.validate_python(fields)
    try:
        made = iter(MESSAGES.validate_python([f for f in fields if f.__class__ is dict]))
    except ValueError:
        MESSAGES.validate_python(every())
        raise
    return [next(made) if f.__class__ is dict else f for f in fields]


def _problems(exc: pydantic.ValidationError, data: Any) -> list[tuple[int | None, str, str]]:
    found: list[tuple[int | None, tuple[Any, ...], str]] = []
    for err in exc.errors(include_url=False):
        index, loc = _split_index(err["loc"], data)
        if err["type"] == "union_tag_not_found":  # the discriminator field itself is missing
            loc = (*loc, str(err.get("ctx", {}).get("discriminator", "")).strip("'"))
        found.append((index, _field_path(loc, data[index] if index is not None else data), err["msg"]))
    # A union reports every branch it tried; keep the deepest path per message.
    deepest = [
        p for p in found
        if not any(q[0] == p[0] and len(q[1]) > len(p[1]) and q[1][: len(p[1])] == p[1] for q in found)
    ]
    seen: set[tuple[Any, ...]] = set()
    problems: list[tuple[int | None, str, str]] = []
    for index, path, msg in deepest:
        if (index, path) not in seen:
            seen.add((index, path))
            problems.append((index, _render(path), msg))
    return problems


def _split_index(loc: tuple[Any, ...], data: Any) -> tuple[int | None, tuple[Any, ...]]:
    if loc and isinstance(loc[0], int) and isinstance(data, list):
        return loc[0], loc[1:]
    return None, loc


def _field_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """Drop pydantic's union labels (tags, ``str``, ``list[...]``) from a location."""
    path: list[Any] = []
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(part, int) and isinstance(data, list):
            path.append(part)
            data = data[part] if part < len(data) else None
        elif isinstance(data, dict) and i + 1 < len(loc) and loc[i + 1] == part and part in data.values():
            continue  # a union tag named like the field after it ({"type": "text", "text": 5}: "text.text")
        elif isinstance(data, dict) and part in data:
            path.append(part)
            data = data[part]
        elif isinstance(part, str) and last and not _TYPE_LABEL.search(part):
            path.append(part)  # a missing field
    return tuple(path)


def _render(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def unknown_fields(model: pydantic.BaseModel, skip: str | None = None) -> dict[str, Any] | None:
    """What a validated source model holds beyond its declared values: its unknown keys (the
    model allows extras) and the declared fields given explicitly as null (``skip`` aside).
    Read from the model's dicts: pydantic's ``__getattr__`` is slow for extras."""
    values = model.__dict__
    nulls = {f: None for f in model.model_fields_set if f != skip and f in values and values[f] is None}
    extra = model.__pydantic_extra__
    if not nulls:
        return extra or None
    return {**(extra or {}), **nulls}


def undeclared(value: dict[str, Any], keys: frozenset[str]) -> dict[str, Any] | None:
    """A source TypedDict's validated dict's keys not among ``keys`` (its declared ones: a model's
    ``model_extra``), or None; most values have none: one test in C."""
    return None if value.keys() <= keys else {k: v for k, v in value.items() if k not in keys}


def unknown_keys(value: dict[str, Any], keys: frozenset[str], skip: str | None = None,
                 ) -> dict[str, Any] | None:
    """:func:`unknown_fields` of a source TypedDict's validated dict: its keys not among ``keys`` (its
    declared ones), then the declared ones given as null (``skip`` aside). Most values have neither: two
    tests in C."""
    extra = undeclared(value, keys)
    if None not in value.values():
        return extra
    nulls = {k: None for k, v in value.items() if v is None and k in keys and k != skip}
    return {**(extra or {}), **nulls} if nulls else extra


def message_list(data: Any, format: str) -> list[Any]:
    """The list of messages in ``data``: the value itself or its ``messages`` member."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise SchemaError(format, [(None, "", f"expected a list of messages, got {type(data).__name__}")])
    return data


def parse_json(raw: str) -> tuple[Any, str | None]:
    """Parse tool-call arguments: ``(value, None)`` or ``(None, why it failed)``."""
    try:  # integers beyond 64 bits and NaN / Infinity (as Python's json writes them) read exactly
        value = exactjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # the json module's message, as before
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return None, f"arguments are not valid JSON: {exc}"
    # Too deep to write back in every format: kept as the text it came as. Counting
    # brackets first spares the check to all but the rare deep value.
    if raw.count("[") + raw.count("{") > MAX_DEPTH and (why := json_problem(value)) is not None:
        return None, f"arguments are kept as text only: {why}"
    return value, None


def call_text(call: Any) -> str:
    """A call's arguments as text (a ``ToolCallBlock``, or a plain ``lean.Call``): as the source wrote them,
    or, where it had no text, the JSON of its arguments."""
    return call.arguments_raw if call.arguments_raw is not None else dump_json(call.arguments)


def dump_json(value: Any) -> str:
    """Compact JSON text; NaN, Infinity and integers beyond 64 bits written as they are."""
    try:
        return exactjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, ensure_ascii=False)


def b64decode_exact(text: str) -> bytes | None:
    """Decode base64 only when encoding the bytes again gives ``text`` back exactly,
    so a stored image always exports byte-identical to what came in."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?;base64,", re.ASCII)


def parse_data_uri(url: str) -> tuple[str | None, bytes] | None:
    """``data:<type>;base64,<data>`` -> (media type, bytes); None for anything else."""
    match = _DATA_URI.match(url)
    if not match:
        return None
    data = b64decode_exact(url[match.end():])
    return None if data is None else (match.group(1), data)


def data_uri(media_type: str | None, data: bytes) -> str:
    return f"data:{media_type or 'application/octet-stream'};base64,{b64encode(data)}"


@dataclass(frozen=True, init=False)
class Loss:
    """One thing a conversion dropped or approximated."""

    index: int
    """Index of the source message."""
    field: str
    action: str
    """``dropped``, ``carried`` (kept in the target's extension field) or ``approximated``."""
    detail: str = ""

    def __init__(self, index: int, field: str, action: str, detail: str = "") -> None:
        # Set once through the instance's dict: the generated frozen __init__ (object.__setattr__ a field)
        # takes twice as long, and a conversion reports a loss or more for most messages of a rich source.
        values = self.__dict__
        values["index"], values["field"], values["action"], values["detail"] = index, field, action, detail

    def __str__(self) -> str:
        return f"message {self.index}: {self.field} {self.action}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Losses:
    """Collects what a conversion could not express; strict mode raises on the first."""

    target: str
    strict: bool = False
    items: list[Loss] = field(default_factory=list)

    def add(self, index: int, field: str, action: str = "dropped", detail: str = "") -> None:
        loss = Loss(index, field, action, detail)
        if self.strict and action != "carried":
            raise LossError(f"converting to {self.target} would lose something: {loss}")
        self.items.append(loss)

    def __iter__(self) -> Iterator[Loss]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# --- carrying what a target cannot express -------------------------------------------

CARRY_KEY = "convstore"
"""The key under which a target's extension field (qwen ``extra``, agent-framework
``additional_properties``, AgentScope/Docent ``metadata``) carries canonical data it
has no field for, so that X -> Y -> X gives X back."""


def carry(msg: Any, *, native: set[str], blocks: dict[int, Any] | None = None,
          update: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The JSON-ready part of canonical message ``msg`` that target fields ``native`` do not hold.

    ``native`` names the Message fields the target expresses itself (``role``,
    ``name``, ...); ``content`` never travels here except for the ``blocks`` given
    (position -> block) that the target cannot express at all. ``update``: fields taken as
    these JSON values instead of the message's (a copy of the message with them would cost more).
    """
    skip = {"content", "role", *native}
    payload = msg.model_dump(mode="json", exclude_defaults=True, exclude=skip | update.keys() if update else skip)
    if update:
        defaults = _defaults(type(msg))
        payload.update((k, to_jsonable_python(v)) for k, v in update.items() if k not in skip and v != defaults[k])
        payload = {k: payload[k] for k in defaults if k in payload}  # the fields' order, as a dump has it
    if blocks:
        payload["blocks"] = [
            # exclude_none, not exclude_defaults: nested blocks must keep their "kind"
            {"at": at, "block": b.model_dump(mode="json", exclude_none=True)}
            for at, b in sorted(blocks.items())
        ]
    return payload or None


@functools.cache
def _defaults(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """Each field's default, in the fields' order (asking a field is slow: it inspects its factory)."""
    return {name: f.get_default(call_default_factory=True) for name, f in model.model_fields.items()}


def _bag(value: Any) -> bool:
    return value.__class__ is dict and all(key.__class__ is str for key in value)


def notes_bag(value: Any) -> bool:
    """Whether ``value`` is an ``extras`` bag: each format's notes, an object, under its name."""
    return value.__class__ is dict and all(key.__class__ is str and notes.__class__ is dict
                                           for key, notes in value.items())


def carried_notes(holder: Any, fmt: str) -> dict[str, Any] | None:
    """Other formats' notes, where they are all ``holder`` holds (``{"convstore": {"extras": {...}}}``: a
    Docent item's metadata, an Agent Framework message's properties, as convstore carries an OpenAI
    message's ``reasoning_content``); None for any other, and where they hold notes of ``fmt`` itself."""
    payload = holder.get(CARRY_KEY) if holder.__class__ is dict and len(holder) == 1 else None
    if payload.__class__ is not dict or len(payload) != 1 or not (notes := payload.get("extras")) \
            or not notes_bag(notes) or fmt in notes:
        return None
    return notes  # type: ignore[no-any-return]


def _text(value: Any) -> bool:
    return value is None or value.__class__ is str


def _no(value: Any) -> bool:
    return False


def _merged(carried: Any, current: Any) -> Any:
    """A carried field's value beside the message's: dicts merged, the message's own winning."""
    if carried.__class__ is dict:
        return {**carried, **current}
    return carried if current is None else current


_BAGS: dict[str, Callable[[Any], bool]] = {
    "extras": notes_bag, "metadata": _bag, "source_role": _text, "name": _text, "source_format": _text,
    "source_type": _text, "external_id": _text, "model": _text}
"""The message fields a payload may bring back without validating the message again, and how each
value is checked instead: dicts of any values (of dicts, for each format's notes), strings (or null)."""


def restore(message: Any, carried: Any) -> Any:
    """``message`` with the fields a :func:`carry` payload brought back (the payload wins
    over defaults, never over what the target's own fields said)."""
    if not isinstance(carried, dict):
        return message
    from ..model import BLOCK, Message  # local: the model imports nothing from here

    if all(_BAGS.get(key, _no)(value) for key, value in carried.items() if key in Message.model_fields) \
            and "blocks" not in carried:
        # dicts of any values (another format's notes) and strings: the merge is the whole validation
        return message.model_copy(update={key: _merged(value, getattr(message, key))
                                          for key, value in carried.items() if key in _BAGS and value is not None})

    fields = {k: v for k, v in carried.items() if k != "blocks" and k in Message.model_fields}
    current = message.model_dump(exclude_defaults=True)
    merged = {**fields, **current}
    for key in ("metadata", "extras"):
        if key in fields and key in current and isinstance(fields[key], dict):  # else the message's own wins
            merged[key] = {**fields[key], **current[key]}
    content = list(message.content)
    for item in carried.get("blocks", []):
        content.insert(min(item["at"], len(content)), BLOCK.validate_python(item["block"]))
    merged["content"] = content
    return Message.model_validate(merged)


# --- what another format's extras hold -----------------------------------------------

SPELLING: dict[str, dict[str, str | None]] = {
    "openai": {"content": None, "empty_tool_calls": None},
    "openai-responses": {"content": None},
    "anthropic": {"content": None, "joined": None, "separate": None, "inline": None, "form": None},
    "qwen": {"content": None, "reasoning": None, "parts": None},
    "autogen": {"absent": None, "created_at": "created_at"},
    "autogen-core": {"content": None, "absent": None},
    "agentscope": {"content": None, "metadata": None, "continues": None, "grouped": None, "java": None,
                   "timestamp": "created_at"},
    "agentscope2": {"part": None, "created_at": "created_at"},
    "agent-framework": {"role": "source_role", "split": None},
    "docent": {"content": None, "as_is": None, "metadata": None, "tool_calls": None},
    "langchain": {"content": None, "absent": None, "lc": None, "bare": None, "no_type": None, "kind": None},
    "gemini": {"content": None, "joined": None, "form": None, "system_role": None, "role": None},
    "pydantic-ai": {"kind": None, "joined": None, "defaults": None, "timestamp": "created_at"},
    "otel-genai": {"form": None, "absent": None, "instructions": None, "output": None},
    "vercel-ai": {"joined": None, "step": None},
}
"""Per format, the keys of its message ``extras`` entry that only say how the source spelled
what the canonical message holds anyway (string or list content, null or absent, how messages
were split or joined, a timestamp's exact text): a target that cannot write them back loses
nothing. A key mapped to a canonical field is spelling only while that field is set (an
unparsable timestamp is kept as text and is then the only record). Keys not listed count as
information, so a new note is reported until it is listed here."""
SPELLING_FIELDS: dict[str, frozenset[str]] = {"openai-responses": frozenset({"type"})}
"""Per format, unknown source keys (its ``fields`` note) that are spelling: the Responses
``"type": "message"`` of a typed message item, which the easy form leaves out."""
_EMPTY = (None, [], {})
_NONE: dict[str, Any] = {}  # read only
_NO_KEYS: frozenset[str] = frozenset()


def lost_extras(msg: Any, target: str) -> list[str]:
    """The information in ``msg.extras`` of formats other than ``target``, named as a loss report
    names a field: ``extras.<format>.<key>``, an unknown source key by its own name
    (``extras.openai.audio``). Spelling notes (:data:`SPELLING`) and keys given as null or
    empty are no information: an OpenAI ``"content": null`` loses nothing."""
    lost: list[str] = []
    for fmt, own in msg.extras.items():
        if fmt == target:
            continue
        if not isinstance(own, dict):
            lost.append(f"extras.{fmt}")
            continue
        spelling = SPELLING.get(fmt, _NONE)
        for key, value in own.items():
            if key == "fields" and isinstance(value, dict):
                skip = SPELLING_FIELDS.get(fmt, _NO_KEYS)
                for k, v in value.items():  # a loop, not a comprehension: one per reasoning message of a load
                    if k not in skip and v not in _EMPTY:
                        lost.append(f"extras.{fmt}.{k}")
            elif value in _EMPTY or (key in spelling and (spelling[key] is None
                                                           or getattr(msg, spelling[key], None) is not None)):
                continue
            else:
                lost.append(f"extras.{fmt}.{key}")
    return lost


def report_fields(msg: Any, index: int, losses: Losses, target: str, fields: Sequence[str], detail: str) -> None:
    """Report the message fields of ``fields`` that ``msg`` sets (and its metadata, when not
    empty), which ``target`` has no place for (``detail`` says so), then the fields of other
    formats in its extras (:func:`lost_extras`)."""
    for name in fields:
        if getattr(msg, name) is not None:
            losses.add(index, name, detail=detail)
    if msg.metadata:
        losses.add(index, "metadata", detail=detail)
    report_extras(msg, index, losses, target)


def report_extras(msg: Any, index: int, losses: Losses, target: str) -> None:
    """Report the fields of other formats in the extras of ``msg`` (a canonical or plain message,
    :func:`lost_extras`), which ``target`` has no place for."""
    if msg.extras:
        for name in lost_extras(msg, target):
            losses.add(index, name, detail="a field of another format")


def merge_own(out: dict[str, Any], extras: dict[str, Any], inner: str | None = None, *, fmt: str) -> dict[str, Any]:
    """``out`` with what the source in ``fmt`` had beside the fields convstore reads: its
    unknown keys (``fields``) and, under ``out[inner]``, those of a nested object (``inner``)."""
    own = extras.get(fmt, {})
    if inner and (nested := own.get("inner")).__class__ is dict:
        out[inner].update(nested)
    if (fields := own.get("fields")).__class__ is dict:  # notes of other code may hold anything: not merged
        out.update(fields)
    return out
