"""Qwen-Agent messages (``qwen_agent.llm.schema.Message``).

Roles system/user/assistant/function; ``content`` (and ``reasoning_content``) a
string or a list of ``ContentItem``s holding exactly one of text/image/file/audio/
video; one ``function_call`` per message with JSON-string arguments; a free
``extra`` dict, where qwen-agent keeps call ids as ``extra.function_id``.

Import: the consecutive assistant messages of one speaker (reasoning, text, one
message per parallel call: how qwen-agent writes a model turn) become ONE
canonical assistant message; function messages become ``tool`` messages. Calls
without ``function_id`` get stable synthesized ids, and a result without one
answers the earliest unanswered call of its name. How a turn was split, and what
the canonical fields do not hold, is kept in ``extras["qwen"]`` so that export
gives the input back.

Export: one call per message, results as function messages named after their
call, ``extra.function_id`` = the call id unless convstore made it up. What Qwen
cannot express travels in ``extra["convstore"]`` (reported as carried), and
importing such messages restores it.
The writer is :mod:`._qwen_write`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..lean import Call, Plain, Result, Writable, bare_arguments
from ..model import (
    BLOCK, AudioBlock, Block, FileBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock,
    VideoBlock,
)
from ._common import (CARRY_KEY, made, message_list, notes_bag, parse_data_uri, parse_json, restore,
                      undeclared, validate_others)

NAME = "qwen"

_OPEN = ConfigDict(extra="allow")
"""qwen-agent's models allow keys they do not declare: kept (``extras["qwen"]["fields"]``)."""

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# an item (see the Anthropic reader).


@with_config(_OPEN)
class ContentItem(TypedDict):
    """Exactly one of the five fields (``text`` may be empty, the others not): :func:`_item_kind`
    checks that outside pydantic, where a model validator would cost a third of the import time."""

    text: NotRequired[str | None]
    image: NotRequired[str | None]
    file: NotRequired[str | None]
    audio: NotRequired[str | dict[str, Any] | None]
    video: NotRequired[str | list[Any] | None]


@with_config(_OPEN)
class FunctionCall(TypedDict):
    name: str
    arguments: str


@with_config(_OPEN)
class QwenMessage(TypedDict):
    role: Literal["system", "user", "assistant", "function"]
    content: str | list[ContentItem] | None
    reasoning_content: NotRequired[str | list[ContentItem] | None]
    name: NotRequired[str | None]
    function_call: NotRequired[FunctionCall | None]
    extra: NotRequired[dict[str, Any] | None]


class _Carried(BaseModel):
    """Our own keys in ``extra["convstore"]``; the others are a :func:`_common.carry` payload. A model,
    not a dict: validated only where a message carries notes, read as attributes."""

    model_config = _OPEN

    split: bool = False
    """This message starts a new canonical message, though it would merge with the one before."""
    join: bool = False
    """This function message belongs to the canonical tool message of the one before."""
    patch: dict[int, dict[str, Any]] = {}
    """Position among this message's blocks -> the whole canonical block it stands for."""


MESSAGES = TypeAdapter(list[QwenMessage])
CARRIED = TypeAdapter(_Carried)
_NOTHING_CARRIED = _Carried()
_OWN_KEYS = frozenset({"split", "join", "patch"})
_ITEM_KEYS = frozenset(ContentItem.__annotations__)
_CALL_KEYS = frozenset(FunctionCall.__annotations__)
_MESSAGE_KEYS = frozenset(QwenMessage.__annotations__)
"""The declared keys of an item, a call and a message; a value's others are its unknown ones."""

Kind = Literal["reasoning", "content", "call"]
_KINDS: dict[type, Kind] = {ToolCallBlock: "call", ReasoningBlock: "reasoning", TextBlock: "content"}
_MEDIA: dict[str, type[ImageBlock | FileBlock | AudioBlock | VideoBlock]] = {
    "image": ImageBlock, "file": FileBlock, "audio": AudioBlock, "video": VideoBlock,
}
_MEDIA_FIELD = {cls: name for name, cls in _MEDIA.items()}
_NULLABLE = ("reasoning_content", "name", "function_call", "extra")
_FIELD_OF: dict[str, Kind] = {"tool_call": "call", "reasoning": "reasoning", "text": "content"}
""":data:`_KINDS` for a block's fields, by its kind."""


def _own(**notes: Any) -> dict[str, Any]:
    """The ``extras["qwen"]`` entry from notes, empty ones left out."""
    kept = {k: v for k, v in notes.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


def _of(thing: Block | Message) -> dict[str, Any]:
    """``extras["qwen"]`` of a block or message, whatever other code put there."""
    own = thing.extras.get(NAME) if thing.extras else None
    return own if isinstance(own, dict) else {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _kind(block: Block) -> Kind:
    """Where a block goes in a Qwen message: ``reasoning_content``, ``content`` or ``function_call``."""
    kind = _KINDS.get(type(block))
    return kind or ("reasoning" if _of(block).get("reasoning") else "content")


def _layout(kinds: list[Kind]) -> list[int]:
    """How qwen-agent splits one turn: reasoning alone, text and media together, one message per call."""
    sizes, last = [0], None
    for kind in kinds:
        if sizes[-1] and (kind == "call" or kind != last):
            sizes.append(0)
        sizes[-1] += 1
        last = kind
    return sizes


# --- to canonical --------------------------------------------------------------
# Canonical fields, validated in one call (``made``).


def _media_in(kind: str, value: str, extras: dict[str, Any]) -> dict[str, Any]:
    decoded = parse_data_uri(value)
    if decoded is None:
        return {"kind": kind, "url": value, "extras": extras}
    return {"kind": kind, "media_type": decoded[0], "data": decoded[1], "extras": extras}


def _item_kind(item: dict[str, Any]) -> str | None:
    """The one field an item holds, counted as qwen-agent counts; None for none or several."""
    if item.get("text") is not None:
        media = item.get("image") or item.get("file") or item.get("audio") or item.get("video")
        return None if media else "text"
    given = [f for f in ("image", "file", "audio", "video") if item.get(f)]
    return given[0] if len(given) == 1 else None


def _item_in(item: dict[str, Any], kind: str, reasoning: bool) -> dict[str, Any]:
    """An item's block; a media item's kind is its field's name."""
    value = item[kind]
    notes: dict[str, Any] = {"fields": undeclared(item, _ITEM_KEYS),
                             "reasoning": reasoning and kind != "text"}
    if kind == "text":
        return {"kind": "reasoning" if reasoning else "text", "text": value, "extras": _own(**notes)}
    if isinstance(value, str):
        return _media_in(kind, value, _own(**notes))
    if kind == "audio" and isinstance(value.get("data"), str):  # {"data": <uri>, "format": "wav"}
        rest = {k: v for k, v in value.items() if k != "data"}
        return _media_in("audio", value["data"], _own(**notes, dict=rest))
    return {"kind": kind, "extras": _own(**notes, raw=value)}  # video frames, or an audio dict without data


def _items_in(value: str | list[dict[str, Any]] | None, index: int, reasoning: bool = False,
              ) -> tuple[list[dict[str, Any]], str | None]:
    """Blocks, and the form of the field where the blocks alone do not say it."""
    plain = "reasoning" if reasoning else "text"  # only these would be written back as a string
    if value is None:
        return [], "null"
    if isinstance(value, str):  # an empty reasoning is a block, an empty text none
        return [{"kind": plain, "text": value}] if value or reasoning else [], None
    blocks = []
    for at, item in enumerate(value):
        kind = _item_kind(item)
        if kind is None:
            where = f"{'reasoning_content' if reasoning else 'content'}[{at}]"
            why = "exactly one of 'text', 'image', 'file', 'audio' or 'video' must be given"
            raise SchemaError(NAME, [(index, where, why)])
        blocks.append(_item_in(item, kind, reasoning))
    single = len(blocks) == 1 and blocks[0]["kind"] == plain and not blocks[0]["extras"]
    return blocks, "list" if not blocks or single else None


@dataclass
class _Part:
    """One Qwen message, converted."""

    index: int
    role: str
    name: str | None
    blocks: list[dict[str, Any]]
    """Canonical fields, validated with their message's (``made``)."""
    info: dict[str, Any]
    carried: dict[str, Any] | None = None
    split: bool = False
    join: bool = False
    plain: Plain | None = None
    """Of an item read as it is (:func:`_plain_item`): its message alone; ``blocks`` are then made
    only where its group is not a plain message (:meth:`made`)."""

    def made(self) -> _Part:
        """This part with its blocks."""
        if self.plain is None or self.blocks:
            return self
        self.blocks = self.plain.fields()["content"]
        return self


def _fields(m: dict[str, Any]) -> dict[str, Any] | None:
    """Unknown keys, and known ones given as null: kept as they were."""
    extra = undeclared(m, _MESSAGE_KEYS)
    # role and content are always there: with no other key, none is null
    nulls = {f: None for f in _NULLABLE if f in m and m[f] is None} if len(m) > 2 else {}
    return {**(extra or {}), **nulls} if extra or nulls else None


def _problem(index: int, path: str, exc: Exception) -> SchemaError:
    return SchemaError(NAME, [(index, path, (str(exc).splitlines() or [type(exc).__name__])[0])])


def _carried_in(value: Any, index: int) -> tuple[_Carried, dict[str, Any]]:
    try:
        own = CARRIED.validate_python(value)
    except pydantic.ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        path = ".".join(map(str, ("extra", CARRY_KEY, *err["loc"])))
        raise SchemaError(NAME, [(index, path, err["msg"])]) from None
    return own, {k: v for k, v in (own.model_extra or {}).items() if k not in _OWN_KEYS}


def _patched(blocks: list[dict[str, Any]], patch: dict[int, dict[str, Any]], index: int,
             ) -> list[dict[str, Any]]:
    """``blocks`` with the whole blocks a note kept, checked here for an error naming the note (their
    fields are validated again with the message's, ``made``: a block's fields are all it has)."""
    for at, block in patch.items():
        if 0 <= at < len(blocks):
            try:
                BLOCK.validate_python(block)
            except pydantic.ValidationError as exc:
                raise _problem(index, f"extra.{CARRY_KEY}.patch.{at}", exc) from None
            blocks[at] = block
    return blocks


class _Reader:
    """Converts one batch; keeps the calls still waiting for a result, by tool name."""

    def __init__(self) -> None:
        self.pending: dict[str, list[str]] = {}

    def part(self, m: dict[str, Any], raw: dict[str, Any], index: int) -> _Part:
        given, call, role = m.get("extra"), m.get("function_call"), m["role"]
        extra = dict(given) if given is not None else None
        function_id, own, carried = None, _NOTHING_CARRIED, None
        if extra is not None:
            answers = call is not None or role == "function"
            if answers and isinstance(extra.get("function_id"), str):
                function_id = extra.pop("function_id")
            if CARRY_KEY in extra:
                own, carried = _carried_in(extra.pop(CARRY_KEY), index)
        info: dict[str, Any] = {
            # an empty ``extra`` is only worth noting when it was empty in the source
            "extra": extra if extra or (extra is not None and not given) else None,
            "fields": _fields(m),
        }
        if role == "function":
            block = self._result(m, raw, index, function_id, info, own.patch)
            return _Part(index, "tool", None, [block], {}, carried or None, own.split, own.join)
        reasoning = m.get("reasoning_content")
        blocks, info["reasoning"] = _items_in(reasoning, index, reasoning=True) \
            if reasoning is not None else ([], None)
        content, info["content"] = _items_in(m["content"], index)
        blocks += content
        if call is not None:
            blocks.append(self._call(call, function_id, index))
        if own.patch:
            blocks = _patched(blocks, own.patch, index)
        for block in blocks if call is not None or own.patch else ():
            if block["kind"] == "tool_call":
                self.pending.setdefault(block["name"], []).append(block["call_id"])
        info = {k: v for k, v in info.items() if v is not None}
        return _Part(index, role, m.get("name"), blocks, info, carried or None, own.split, own.join)

    @staticmethod
    def _call(fc: dict[str, Any], function_id: str | None, index: int) -> dict[str, Any]:
        arguments, error = parse_json(fc["arguments"])
        call_id = function_id if function_id is not None else f"call_qwen_{index}"
        return {"kind": "tool_call", "call_id": call_id, "name": fc["name"], "arguments": arguments,
                "arguments_raw": fc["arguments"], "parse_error": error,
                "call_id_synthesized": function_id is None,
                "extras": _own(fields=undeclared(fc, _CALL_KEYS))}

    def _result(self, m: dict[str, Any], raw: dict[str, Any], index: int, function_id: str | None,
                info: dict[str, Any], patch: dict[int, dict[str, Any]]) -> dict[str, Any]:
        content, name = m["content"], m.get("name")
        blocks, form = _items_in(content, index)
        output = content if isinstance(content, str) else "" if content is None else blocks
        # A function message has no place for reasoning or a call: keep them as given.
        odd = {f: raw[f] for f in ("reasoning_content", "function_call") if raw.get(f) is not None}
        if function_id is None and 0 not in patch:
            call_id = self._answer(name) or f"call_qwen_{index}"
        else:
            call_id = function_id or f"call_qwen_{index}"
        fields = {**(info["fields"] or {}), **odd} or None
        block = {"kind": "tool_result", "call_id": call_id, "name": name, "output": output, "extras": _own(
            content="null" if form == "null" else None, extra=info["extra"], fields=fields,
            no_id=function_id is None, anonymous=name is None,
        )}
        if patch:
            block = _patched([block], patch, index)[0]
        if function_id is not None or 0 in patch:
            self._answered(block.get("call_id", call_id), name)  # a patch of another kind has none
        return block

    def lean(self, plain: Plain, index: int) -> _Part:
        """The part of an item :func:`_plain_item` read, noting its call or result as :meth:`part` does."""
        if plain.role == "tool":
            self._answered(plain.content[0].call_id, plain.name)
        for call in plain.content if plain.role == "assistant" else ():
            self.pending.setdefault(call.name, []).append(call.call_id)  # type: ignore[union-attr]
        # what it carried, restored where its group is not a plain message (_read)
        carried = {"extras": plain.extras or {}, "source_format": plain.source_format} \
            if plain.extras or plain.source_format != NAME else None
        return _Part(index, plain.role, None, [], {}, carried, plain=plain)

    def _answer(self, name: str | None) -> str | None:
        pending = self.pending.get(name or "")
        return pending.pop(0) if pending else None

    def _answered(self, call_id: str, name: str | None) -> None:
        for key in ([name] if name in self.pending else []) + list(self.pending):
            if call_id in self.pending[key]:
                self.pending[key].remove(call_id)
                return


def _field_of(block: dict[str, Any]) -> Kind:
    """:func:`_kind` of a block's fields."""
    kind = _FIELD_OF.get(block["kind"])
    if kind is not None:
        return kind
    extras = block.get("extras")
    own = extras.get(NAME) if extras else None
    return "reasoning" if isinstance(own, dict) and own.get("reasoning") else "content"


def _turn_extras(group: list[_Part]) -> dict[str, Any]:
    """``extras["qwen"]`` of a merged assistant turn: its split, unless it is qwen-agent's own."""
    sizes = [len(p.blocks) for p in group]
    default = _layout([_field_of(b) for p in group for b in p.blocks]) == sizes
    if default and len(group) == 1:
        return group[0].info
    if default and not any(p.info for p in group):
        return {}
    return {"parts": [{"n": n, **p.info} for n, p in zip(sizes, group)]}


def _message(group: list[_Part]) -> dict[str, Any]:
    """The canonical message of a group, as fields; what it carried is restored after ``made``
    (:func:`_restored`)."""
    first = group[0]
    own = _turn_extras(group) if first.role == "assistant" else first.info
    # a carried source format (where the message came from before Qwen) wins over ours
    source = None if first.carried and "source_format" in first.carried else NAME
    return {"role": first.role, "name": first.name, "content": [b for p in group for b in p.blocks],
            "source_format": source, "extras": {NAME: own} if own else {}}


def _restored(msg: Message, first: _Part) -> Message:
    """``msg`` with the fields its first part carried; a malformed payload names that part's message."""
    try:
        return restore(msg, first.carried)
    except (KeyError, TypeError, ValueError) as exc:
        raise _problem(first.index, f"extra.{CARRY_KEY}", exc) from None


def _merges(last: _Part, part: _Part) -> bool:
    if part.role == "assistant":
        return last.role == "assistant" and last.name == part.name and not part.split
    return part.role == "tool" and last.role == "tool" and part.join


def to_canonical(data: Any) -> list[Message]:
    """Validate Qwen-Agent messages and convert them to canonical ones."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each message of plain
    items (a text; an assistant's calls, after a text or not; a result of its call's id), for a
    writer that takes them (``formats.convert``): read from the items themselves, whose plain types
    are their validation. A property test holds it to :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


def _read(data: Any, lean: bool) -> list[Writable]:
    """The messages, those not plain built as fields and validated in one call (``made``); carried
    fields are restored after it, into the canonical messages."""
    raw = message_list(data, NAME)
    plain = [_plain_item(item) for item in raw] if lean else [None] * len(raw)
    parsed = iter(validate_others(MESSAGES, raw, plain, NAME))
    reader = _Reader()
    groups: list[list[_Part]] = []
    for index, (p, r) in enumerate(zip(plain, raw)):
        part = reader.part(next(parsed), r, index) if p is None else reader.lean(p, index)
        if groups and _merges(groups[-1][-1], part):
            groups[-1].append(part)
        else:
            groups.append([part])
    out = made([_plain_message(group) or _message([p.made() for p in group]) for group in groups])
    for at, group in enumerate(groups):
        if group[0].carried and out[at].__class__ is not Plain:  # a plain message holds what it carried
            out[at] = _restored(out[at], group[0])
    return out


_TEXT_ROLES = frozenset({"system", "user", "assistant"})


def _plain_item(item: Any) -> Plain | None:
    """An item of one of qwen-agent's plain shapes as its message alone, read from the item itself: a
    text (``{"role", "content"}``, not empty), a call (an assistant's ``{"role", "content": "", "function_call",
    "extra": {"function_id"}}`` whose arguments parse to exactly their text) or a result (``{"role":
    "function", "name", "content", "extra": {"function_id"}}``, an id not empty), every value a string,
    its ``extra`` holding besides at most other formats' notes as convstore carries them
    (:func:`_carried_notes`); None for any other."""
    if item.__class__ is not dict or (text := item.get("content")).__class__ is not str:
        return None
    role, extra = item.get("role"), item.get("extra")
    source, notes, carrying = NAME, None, extra.__class__ is dict and CARRY_KEY in extra
    if carrying:  # other formats' notes alone, as convstore carries them
        if (carried := _carried_notes(extra[CARRY_KEY])) is None:
            return None
        source, notes = carried
    if len(item) == 2 + carrying and role.__class__ is str and role in _TEXT_ROLES:
        if carrying and len(extra) != 1:
            return None
        return Plain(role, text, source, extras=notes) if text else None  # an empty text has no block
    if len(item) != 4 or extra.__class__ is not dict or len(extra) != 1 + carrying \
            or (call_id := extra.get("function_id")).__class__ is not str:
        return None
    if role == "function" and (name := item.get("name")).__class__ is str and call_id:  # else one is made up
        return Plain("tool", text, source, (Result(call_id),), name, notes)
    call = item.get("function_call")
    if role != "assistant" or text or call.__class__ is not dict or len(call) != 2:
        return None
    name, arguments = call.get("name"), call.get("arguments")
    if name.__class__ is not str or arguments.__class__ is not str or not bare_arguments(arguments):
        return None
    return Plain("assistant", None, source, (Call(call_id, name, arguments),), extras=notes)


def _carried_notes(payload: Any) -> tuple[str, dict[str, Any] | None] | None:
    """The source format and other formats' notes of a carried payload that holds nothing else (as
    convstore carries an OpenAI message's ``reasoning_content``), which a plain message holds as its
    canonical one does; None for any other."""
    if payload.__class__ is not dict or not payload or not payload.keys() <= _PLAIN_CARRIED:
        return None
    notes, source = payload.get("extras"), payload.get("source_format", NAME)
    if source.__class__ is not str or "extras" in payload and (not notes_bag(notes) or NAME in notes):
        return None
    return source, notes or None


_PLAIN_CARRIED = frozenset({"extras", "source_format"})


def _plain_message(group: list[_Part]) -> Plain | None:
    """The message of a group of plain parts, where it is a plain one: a part alone, or an assistant's
    calls after a text or not (qwen-agent's own split of a turn, noted nowhere); else None."""
    first = group[0].plain
    if first is None or len(group) == 1:
        return first
    # what a later part carried, its canonical message leaves out too (its first part's is restored)
    calls = [p.plain.content[0] for p in group[1:] if p.plain is not None and p.plain.content]
    if len(calls) < len(group) - 1 or first.role != "assistant":
        return None  # a text after a call, or texts one after another: their split is noted
    calls = (*first.content, *calls)
    return Plain("assistant", first.text, first.source_format, calls,  # type: ignore[arg-type]
                 extras=first.extras)


_ROLES = frozenset({"system", "user", "assistant", "function"})
_NOT_QWEN = frozenset({"type", "tool_calls", "tool_call_id", "refusal", "contents", "source"})


def _qwen_items(content: Any) -> bool:
    return not isinstance(content, list) or all(
        isinstance(p, dict) and "type" not in p and any(f in p for f in _ITEM_KEYS)
        for p in content
    )


def looks_like(data: Any) -> bool:
    """Qwen roles and keys only, and something only Qwen writes: an ``extra`` dict or
    ``ContentItem`` lists (items keyed by text/image/..., without ``type``)."""
    try:
        msgs = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(msgs) and all(
        isinstance(m, dict) and m.get("role") in _ROLES and not m.keys() & _NOT_QWEN
        and _qwen_items(m.get("content")) for m in msgs
    ) and any("extra" in m or isinstance(m.get("content"), list) and m["content"] for m in msgs)


from ._qwen_write import TAKES_PLAIN, from_canonical  # noqa: E402  (the writer imports the names above)

__all__ = ["NAME", "TAKES_PLAIN", "from_canonical", "looks_like", "to_canonical", "to_writable"]
