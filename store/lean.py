"""Plain messages, stored and loaded without a canonical message.

Half of an agent's OpenAI messages are an item of its role and its text alone, and a
quarter a tool result of its call id and its text. Their rows say all of them (their
document is ``holes.PLAIN``), so a write builds those rows straight from the item: no
canonical :class:`~store.model.Message` validated, dumped and walked again. A
:class:`Plain` stands in for such a message between the read (``store.docs.read``) and
the rows (``store.rows``). So does an assistant's item of calls whose arguments parse to exactly
their text, or an item with keys OpenAI has no field for (``reasoning_content``): their rows and
links come from the :class:`Plain` (:func:`other_item`), their document is the item.
Every other message takes the canonical path. A property test holds the two to the very same rows
and the very same errors (tests/test_lean.py).

A load reads such rows the other way: a message row of its text, a tool result's one block row, an
assistant's calls (with a text before them or not), with nothing else in their rows but the source's
own notes (``extras``), each as a :class:`Plain` (``codec.readable_from_rows``). Every format's writer
takes them (``Format.takes_plain``) and turns those :func:`writable` says it may straight into its
items, the others into canonical messages first (:func:`canonical`); ``formats.convert`` reads plain
items so, from OpenAI (:func:`convertible`) and from the formats with a ``to_writable`` reader. Tests
hold every writer's output and losses, and every such reader, to the canonical path's
(tests/test_lean_load.py, tests/test_lean_read.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

import orjson

from .limits import MAX_DEPTH, Limits
from .model import MESSAGES, Message
from .schema import needs_escape


class Result(NamedTuple):
    """A plain tool result as ``store.links`` reads a result block."""

    call_id: str
    kind: str = "tool_result"
    is_error: bool = False


class Call(NamedTuple):
    """A tool call as its block row keeps it: its arguments as the source wrote them, JSON whose
    parse is exactly the call's arguments (``codec`` keeps them so). Or, only between a conversion's
    read and its writer (every writer's plain path takes it), a call whose source
    gave its arguments as a JSON object without text (``arguments_raw`` None, ``arguments`` that object:
    a Vercel tool part's ``input``, a LangChain call's ``args``)."""

    call_id: str
    name: str
    arguments_raw: str | None
    kind: str = "tool_call"
    arguments: dict[str, Any] | None = None

    def parsed(self) -> Any:
        """Its arguments: the parse of their text, or the object the source gave."""
        return self.arguments if self.arguments_raw is None else orjson.loads(self.arguments_raw)


@dataclass(slots=True)
class Plain:
    """A message that is its role and its text (``content`` empty); a tool result (``content``
    its one :class:`Result`, ``text`` its output; ``name``, the tool's name where known); or an
    assistant's calls (``content`` its :class:`Call` s, ``text`` the text before them, or None: the
    calls' positions then start at 1, see :func:`first_position`). ``extras``: the source's own
    notes, as a canonical message keeps them (or None)."""

    role: str
    text: str | None
    source_format: str | None
    content: tuple[Result, ...] | tuple[Call, ...] = ()
    name: str | None = None
    extras: Mapping[str, Any] | None = None
    checked: Limits | None = field(default=None, compare=False)
    """The limits its values were sized and checked against as it was read (``store.onepass``):
    its rows are then built with no budget, by a write under the very same limits."""
    row: tuple[str | None, str] | None = field(default=None, compare=False)
    """Of an assistant's item ``store.onepass`` read: its message row's ``extras`` and its document, as the
    general path makes them (which takes the document from here, ``docs.documents``)."""
    source_type: str | None = None
    """The source's message type (LangChain's ``human``, AutoGen's ``TextMessage``): only between a
    conversion's read and its writer, whose plain path carries or ignores it as its canonical path does."""
    external_id: str | None = None
    """The source's id of the message (a Vercel UIMessage's): only between a conversion's read and a writer
    whose plain path writes or carries it as its canonical path does (``writable(..., ids=True)``)."""
    speaker: str | None = None
    """Who wrote a text or calls, the canonical message's ``name`` (an autogen-core message's ``source``):
    only between a conversion's read and a writer whose plain path writes or carries it as its canonical
    path does (``writable(..., speakers=True)``). A result's tool name is ``name``, not this."""

    def named(self) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
        """Its canonical message's ``name`` and ``external_id``, as (field, value): of the fields a writer
        may have no place for, those a plain message has (a writer reports them as its canonical path does)."""
        return ("name", self.speaker), ("external_id", self.external_id)

    def fields(self) -> dict[str, Any]:
        """The canonical message's fields."""
        calls = [part for part in self.content if part.__class__ is Call]
        if self.content and not calls:  # a tool result
            result = {"kind": "tool_result", "call_id": self.content[0].call_id, "output": self.text}
            blocks = [result if self.name is None else {**result, "name": self.name}]
        else:
            blocks = [] if self.text is None else [{"kind": "text", "text": self.text}]
            blocks += [{"kind": "tool_call", "call_id": call.call_id, "name": call.name,
                        "arguments": orjson.loads(call.arguments_raw), "arguments_raw": call.arguments_raw}
                       if call.arguments_raw is not None else
                       {"kind": "tool_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments}
                       for call in calls]
        fields = {"role": self.role, "content": blocks, "source_format": self.source_format}
        if self.source_type is not None:
            fields["source_type"] = self.source_type
        if self.external_id is not None:
            fields["external_id"] = self.external_id
        if self.speaker is not None:
            fields["name"] = self.speaker
        if self.extras:
            fields["extras"] = dict(self.extras)
        return fields


class Part(NamedTuple):
    """A text or an image of a :class:`Parts`, as its block row keeps it (``kind`` as ``store.links``
    reads a block's)."""

    kind: str  # "text" or "image"
    text: str | None
    media_type: str | None = None
    data: bytes | None = None


LIST_NOTES = {"openai": {"content": "list"}}
"""The notes the OpenAI reader keeps of an item whose content is a list of parts."""


@dataclass(slots=True)
class Parts:
    """A user's OpenAI item of texts and images (``store.onepass``): a block row a part, an image's bytes
    in a blob, the item its document. ``row``: its message row's ``extras`` and document, as the
    general path makes them. Only between a read and its rows; a write under other limits than
    ``checked`` takes it as its canonical message (:meth:`fields`)."""

    role: str
    content: tuple[Part, ...]
    checked: Limits
    row: tuple[str, str]
    source_format: str = "openai"

    def fields(self) -> dict[str, Any]:
        """The canonical message's fields."""
        blocks = [{"kind": "text", "text": part.text} if part.kind == "text" else
                  {"kind": "image", "media_type": part.media_type, "data": part.data} for part in self.content]
        return {"role": self.role, "content": blocks, "source_format": self.source_format,
                "extras": {name: dict(notes) for name, notes in LIST_NOTES.items()}}


def first_position(msg: Writable) -> int:
    """The position of ``msg.content[0]`` among the message's blocks: 1 for the calls of a plain
    message with a text before them (its text block is 0), else 0."""
    return 1 if msg.__class__ is Plain and msg.text is not None and msg.content \
        and msg.content[0].__class__ is Call else 0


PLAIN_ROLES = frozenset({"system", "user", "assistant"})
ANY_ROLE = PLAIN_ROLES | {"tool"}
TEXT_KEYS = ["role", "content"]
RESULT_KEYS = ["role", "tool_call_id", "content"]


def plain_item(item: dict[str, Any], names: Mapping[str, str]) -> Plain | None:
    """An OpenAI item that is its role and its text (``{"role", "content"}``, a string, for a
    system, user or assistant message), or a tool result of its call id and its text (``{"role":
    "tool", "tool_call_id", "content"}``), each in that key order, as a :class:`Plain`; else None.
    ``names``: the tool names of the calls read before it, by call id (``read_marked``'s stand-in)."""
    if len(item) == 2 and item.get("role") in PLAIN_ROLES and list(item) == TEXT_KEYS \
            and (text := item["content"]).__class__ is str:
        return Plain(item["role"], text, "openai")
    if len(item) == 3 and item.get("role") == "tool" and list(item) == RESULT_KEYS \
            and (text := item["content"]).__class__ is str and (call_id := item["tool_call_id"]).__class__ is str:
        return Plain("tool", text, "openai", (Result(call_id),), names.get(call_id))
    return None


OWN_KEYS = frozenset({"role", "content", "tool_calls"})


def other_item(item: dict[str, Any], names: dict[str, str]) -> Plain | None:
    """A system, user or assistant OpenAI item ``Format.verbatim`` accepted, without a name, with
    calls (an assistant's: each its id, name and arguments) or keys OpenAI has no field for (strings,
    as ``reasoning_content``), as a :class:`Plain` whose extras note those keys and a
    missing text as the reader notes them, where each call's arguments parse to exactly what its
    block row keeps as text (:func:`bare_arguments`): the rows, the document and the links of its
    canonical message, without one. Adds the calls' names to ``names``, as the reader does for
    the results after them."""
    if (role := item["role"]) not in PLAIN_ROLES or "name" in item:
        return None
    calls = []
    for call in item.get("tool_calls") or ():
        function = call["function"]
        if not bare_arguments(raw := function["arguments"]):
            return None
        calls.append(Call(call["id"], function["name"], raw))
    fields = {key: value for key, value in item.items() if key not in OWN_KEYS}
    if not (calls or fields) or ("tool_calls" in item and not calls):  # plain_item's, or calls noted empty
        return None
    for call in calls:
        names[call.call_id] = call.name
    shape: dict[str, Any] = {"fields": fields} if fields else {}
    if (text := item.get("content")) is None:
        shape["content"] = "null" if "content" in item else "absent"
    return Plain(role, text, "openai", tuple(calls), extras={"openai": shape} if shape else None)


def convertible(item: dict[str, Any], names: dict[str, str]) -> Plain | None:
    """:func:`plain_item` or :func:`other_item` of an item, for a writer that takes plain messages
    (``formats.convert``); None for one with neither a text nor calls, which no stored row reads as one."""
    if (plain := plain_item(item, names)) is not None:
        return plain
    other = other_item(item, names)
    return None if other is None or (other.text is None and not other.content) else other


def bare_arguments(raw: str) -> bool:
    """Whether a call read from ``raw`` keeps ``raw`` alone as its block row's text: what
    ``codec._parsed`` says of it and its parse (``formats._common.parse_json``, without an error), in
    one parse and one dump. False also where that is not quickly known (the canonical path decides)."""
    # Fewer characters than MAX_DEPTH cannot nest deeper: most arguments are not counted. An integer
    # orjson rounds (beyond 64 bits, where exactjson reads it otherwise) is dumped as a float of 1e+19
    # or more, which needs_escape finds: the text need not be searched for long digits first.
    if len(raw) > MAX_DEPTH and raw.count("[") + raw.count("{") > MAX_DEPTH:
        return False
    try:
        value = orjson.loads(raw)
        text = orjson.dumps(value).decode()
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return False
    # null is the arguments' default: a dump leaves it out, and the row keeps the raw text in its payload
    return value is not None and not needs_escape(text, value)


def same_json(value: Any, text: str) -> bool:
    """Whether ``text`` is JSON of exactly ``value`` (a source's arguments object and their text: 1 and 1.0,
    or 1 and true, are not the same here)."""
    try:
        return orjson.dumps(value) == orjson.dumps(orjson.loads(text))
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return False


Writable: TypeAlias = Message | Plain | Parts
"""What a write takes (and a load gives a writer that takes it): canonical messages, with
plain ones standing in for some (and on a write, :class:`Parts`)."""


def writable(msg: Any, fmt: str, *, texts: frozenset[str] = PLAIN_ROLES, own: bool = True, ids: bool = False,
             speakers: bool = False) -> bool:
    """Whether ``msg`` is a :class:`Plain` that a writer of ``fmt`` writes itself, without its canonical
    message (the writer's ``plain`` path; others are made canonical first, :func:`canonical`): one without
    ``fmt``'s notes (nor read from ``fmt``, unless ``own``; nor with an id, unless ``ids``; nor with a
    speaker, unless ``speakers``, and never a tool message's: a writer's plain path writes a text's or
    calls' speaker, a result's name is its tool's), a text of a role in ``texts``, an assistant's calls (of
    arguments as text or as an object: :class:`Call`) or a tool's result. Its source message type, if any, the plain path
    carries or ignores as the canonical path does. A writer may add conditions of its own;
    tests/test_lean_load.py and tests/test_lean_read.py hold every writer's output and losses to the
    canonical path's."""
    if msg.__class__ is not Plain or msg.extras and fmt in msg.extras \
            or not own and msg.source_format == fmt or msg.external_id is not None and not ids \
            or msg.speaker is not None and not (speakers and msg.role != "tool"):
        return False
    if not msg.content:
        return msg.text is not None and msg.role in texts
    return msg.role == ("assistant" if msg.content[0].__class__ is Call else "tool")


def write_each(msgs: Sequence[Writable], takes: Callable[[Any], bool], plain: Callable[[Any, int], None],
               other: Callable[[Any, int], None]) -> None:
    """Each of ``msgs`` with its index to a writer: to ``plain`` where ``takes`` it (the writer's own
    :func:`writable` test), else, made canonical (:func:`canonical`), to ``other``."""
    for index, msg in enumerate(canonical(msgs, unless=takes)):
        (plain if msg.__class__ is Plain else other)(msg, index)


def anonymous(msgs: Sequence[Writable]) -> Sequence[Writable]:
    """``msgs`` with each :class:`Plain` that holds a speaker as its canonical message: for a writer that
    takes every other plain message as it is (not by :func:`writable`), whose plain path has no speaker."""
    return canonical(msgs, of=(Plain,), unless=_anonymous)


def _anonymous(msg: Any) -> bool:
    return msg.speaker is None


def canonical(msgs: Sequence[Writable], of: tuple[type, ...] = (Plain, Parts),
              unless: Callable[[Writable], bool] | None = None) -> list[Writable]:
    """``msgs`` with each of the classes ``of`` (by default every :class:`Plain` and :class:`Parts`)
    as its canonical message, validated in one call, but those ``unless`` takes (a writer's own plain
    path); ``msgs`` itself where none is left to make."""
    made_of = [msg.__class__ in of and (unless is None or not unless(msg)) for msg in msgs]
    if True not in made_of:
        return msgs  # type: ignore[return-value]
    fields = [msg.fields() for msg, make in zip(msgs, made_of) if make]  # type: ignore[union-attr]
    made = iter(MESSAGES.validate_python(fields))
    return [next(made) if make else msg for msg, make in zip(msgs, made_of)]
