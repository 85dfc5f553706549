"""Stored documents: each message also kept as its own format writes it (revision 0008).

A conversation is most often read back in the format it came in: an agent reloading its
memory. For formats whose writer turns each message into its items on its own, with no
state carried from one message to the next (``PER_MESSAGE`` in the adapter), a message row
holds ``doc``: those items as JSON, written once when the message is stored. Loading a
range whose messages all hold one in the wanted format is then one range scan and one JSON
parse, with no canonical model built. Everything else takes the canonical path, which gives
the very same value: a message of another format, one whose writing reports a loss (loss
reports come from the canonical path only), one that orjson would not read back exactly, one
above :data:`MAX_DOC`, and every row stored before revision 0008.

Where the writer would give an input item back as it is (``Format.verbatim``: most OpenAI
messages), the item itself is the document (:func:`read`), not written again: a save then
writes no message twice.

Nor does it store what its rows keep (:mod:`store.holes`: how a load puts it back): where the
first block of a message written as one item keeps a text of :data:`MIN_HOLE` characters or more
in its ``text`` column (a text, a tool result's output) and the item holds that text as a JSON
string, the document holds :data:`HOLE`'s string there instead and starts with another
(:func:`hollow`, revision 0010). So do an OpenAI item's calls, each whole where it is what its
block row says (revision 0016), else its arguments of that length (revision 0014). An OpenAI item
that is its role and its text alone, half of an agent's messages, is stored as an empty document
(:data:`PLAIN`, revision 0015): its row says it all; so is a tool result of its call id and its
text (revision 0016). Such an item is read as a :class:`~store.lean.Plain`, not a canonical message:
its rows are built straight from it.

Nor does a message's ``extras`` repeat a long string its document keeps (revision 0012,
:mod:`store.kept_once`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

import orjson

from .codec import first_text
from .errors import ConvstoreError
from .exactjson import has_nonfinite
from .formats import FORMATS, NEEDS_CALL_IDS, Format, Losses, read_marked, read_stream_marked
from .formats._common import message_list
from .formats._ids import missing_ids
from .holes import (
    CALL_LEADS, CONTENT as _CONTENT, HOLE, HOLE_JSON as _MARK, OPEN as _OPEN, PER_MESSAGE, PLAIN, PLAIN_ITEMS,
    TOOL_ITEM, Stored, from_call, leads, parse, put)
from .lean import Plain, Result, Writable, other_item, plain_item
from .model import Message

MIN_HOLE = 64
"""The shortest text left out of a document: a shorter one costs a load more to fetch
than it saves."""
MAX_DOC = 256 * 1024
"""The longest document kept (bytes of JSON): beyond it the JSON parse is the whole cost
either way, and a row stays far below MariaDB's packet limit."""

_WRITERS = {name: FORMATS[name].write_message for name in PER_MESSAGE}
_PLAIN_LEADS = {role: _CONTENT + item for role, item in PLAIN_ITEMS.items()}  # as stored before revision 0015


class Batch(list[Writable]):
    """Messages read from input, with ``given``: for each, its source item as its document
    where the writer would give that item back as it is (``Format.verbatim``), else None.
    A slice is a batch of the slice's messages and documents."""

    def __init__(self, msgs: Sequence[Writable], given: Sequence[str | None]) -> None:
        super().__init__(msgs)
        self.given = list(given)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return Batch(list.__getitem__(self, index), self.given[index])
        return list.__getitem__(self, index)


def picked(msgs: Sequence[Writable], offsets: Sequence[int]) -> list[Writable]:
    """The messages at ``offsets``: a :class:`Batch` of them, with their documents, from a batch."""
    take = list.__getitem__
    chosen = [take(msgs, i) for i in offsets]  # type: ignore[arg-type]
    return Batch(chosen, [msgs.given[i] for i in offsets]) if isinstance(msgs, Batch) else chosen


def read(data: Any, format: str) -> list[Writable]:
    """``formats.read``, keeping as documents the input items its writer would give back as
    they are (a :class:`Batch`): those messages are not written again to get their document.
    An item its row says all of (:data:`PLAIN`) is read as a :class:`~store.lean.Plain`."""
    msgs, fmt, plain = read_marked(data, format, _stand_in)
    if plain is None:
        return msgs
    return batch(message_list(data, fmt.name), msgs, plain)


def read_stream(chunks: Iterable[list[Any]], fmt: Format) -> Iterator[Batch]:
    """:func:`read` of a stream of chunks of input items in ``fmt`` (which has
    ``read_fields_stream``): a batch a chunk, one reader spanning them."""
    for items, msgs, plain in read_stream_marked(chunks, fmt, _stand_in):
        yield batch(items, msgs, plain)


def batch(items: list[Any], msgs: list[Writable], plain: list[bool]) -> Batch:
    return Batch(msgs, [PLAIN if _says_all(msg) else _item_doc(item) if kept else None
                        for item, msg, kept in zip(items, msgs, plain)])


def _says_all(msg: Writable | None) -> bool:
    """Whether ``msg`` is a plain text or tool result, whose document is :data:`PLAIN`."""
    return msg.__class__ is Plain and not msg.extras \
        and (not msg.content or msg.content[0].__class__ is Result)  # type: ignore[union-attr]


def _stand_in(item: dict[str, Any], names: dict[str, str]) -> Plain | None:
    """An item its row says all of (:data:`PLAIN`): a plain one (``lean.plain_item``) whose text and
    call id do not start with HOLE (a load would take them for holes). Known without writing it, no
    JSON of its text made, nor searched. Or an item with calls or keys of its own
    (``lean.other_item``), whose document is the item, hollowed as a canonical message's."""
    plain = plain_item(item, names)
    if plain is None:
        return other_item(item, names)
    if plain.text[:1] == HOLE or (plain.content and plain.content[0].call_id[:1] == HOLE):
        return None
    return plain


def _given(item: Any) -> str | None:
    """The document of an item ``Format.verbatim`` accepts."""
    return PLAIN if _says_all(_stand_in(item, {})) else _item_doc(item)


def _item_doc(item: Any) -> str | None:
    data = orjson.dumps(item)
    return data.decode() if len(data) <= MAX_DOC else None


def documents(msgs: Sequence[Writable], skip: Collection[int] = ()) -> list[str | None]:
    """Each message as its source format writes it: JSON items separated by commas (a
    message may write several), or None where the canonical path has to write it, with the
    text of its first block left out (:func:`hollow`). ``skip``: the indexes of messages
    holding a result that answers no call (``links.plan``), which the writers report only in
    a list. A :class:`Batch` gives some documents already (one item each)."""
    sinks: dict[str, Losses] = {}
    given = msgs.given if isinstance(msgs, Batch) else [None] * len(msgs)
    out: list[str | None] = []
    for index, (msg, doc) in enumerate(zip(msgs, given)):
        if index in skip:
            out.append(None)
        elif doc is not None:
            out.append(doc if doc == PLAIN else hollow(doc, 1, msg, flat=True))
        elif msg.__class__ is Plain:  # read by store.onepass, its document made then; else its item was too long
            out.append(None if msg.row is None else msg.row[1])  # type: ignore[union-attr]
        else:
            out.append(hollow(*_document(msg, index, sinks), msg))
    return out


def hollow(doc: str | None, items: int, msg: Message, flat: bool = False) -> str | None:
    """A document of ``items`` items as stored: where it holds one, and the text its
    message's first block row keeps (``codec.first_text``) is long enough and the item holds
    it as a JSON string, that string is :data:`HOLE`'s, and the document is led by another;
    so are an OpenAI item's calls (:func:`_call_holes`), and an OpenAI item its row says all of is
    :data:`PLAIN`. A document holding a string that starts with HOLE keeps none (a load would take
    it for a hole). ``flat``: the document is an input item ``Format.verbatim`` accepts; in an
    OpenAI one (objects only in its calls, none with a "content"), a ``"content":`` outside a
    string is the item's own key."""
    if doc is None or _OPEN in doc:
        return None
    if items != 1:
        return doc
    openai = msg.source_format == "openai"
    if openai and msg.role == "tool" and _plain_tool(doc, msg):
        return PLAIN
    lead, hollowed = _text_hole(doc, msg, flat and openai)
    if not openai:
        return lead + hollowed
    calls, without = _call_holes(hollowed, msg)
    if not calls and msg.role in PLAIN_ITEMS and _plain(lead + hollowed, msg):
        return PLAIN
    # A written item may hold more objects than its calls (extras): it is checked by reading it back.
    if calls and not flat and not _reads_back(lead + calls + without, msg, doc):
        return lead + hollowed
    return lead + calls + without


def _plain(kept: str, msg: Message) -> bool:
    """Whether a message's stored document is ``{"role": its role, "content": the text of its first
    block}`` (see :data:`PLAIN`): led by the text's lead, or holding a short text itself."""
    if kept[:1] == '"':
        return kept == _PLAIN_LEADS[msg.role]
    text = first_text(msg)
    try:
        return text is not None and kept == orjson.dumps({"role": msg.role, "content": text}).decode()
    except orjson.JSONEncodeError:  # a lone surrogate: no document holds it either
        return False


def _plain_tool(doc: str, msg: Message) -> bool:
    """Whether a tool message's document is ``{"role": "tool", "tool_call_id": its call id, "content": its
    text}`` of its first block (see :data:`PLAIN`)."""
    block = msg.content[0] if msg.content else None
    if block is None or block.kind != "tool_result" or block.output.__class__ is not str \
            or block.output[:1] == HOLE or block.call_id[:1] == HOLE:
        return False
    try:
        return doc == orjson.dumps({"role": "tool", "tool_call_id": block.call_id, "content": block.output}).decode()
    except orjson.JSONEncodeError:  # a lone surrogate: no document holds it either
        return False


def _reads_back(kept: str, msg: Message, doc: str) -> bool:
    """Whether a load reads ``doc``'s items from its stored form."""
    try:
        return restore([kept], [msg]) == orjson.loads("[" + doc + "]")
    except (LookupError, TypeError, ValueError):  # a hole where no call's arguments are
        return False


def restore(kept: Sequence[str], msgs: Sequence[Message]) -> list[Any]:
    """The items a load reads from the stored documents of ``msgs`` (what their rows keep
    taken from the messages themselves)."""
    found = Stored([], [])
    for index, (doc, msg) in enumerate(zip(kept, msgs)):
        if not doc and msg.role == "tool":
            found.docs.append(TOOL_ITEM)
            found.holes.extend([(index, "tool_call_id", msg.content[0].call_id), (index, "content", first_text(msg))])
            continue
        doc = doc or _PLAIN_LEADS[msg.role]
        keys, end = leads(doc)
        calls = [block for block in msg.content if block.kind == "tool_call"]
        found.docs.append(doc[end:])
        found.holes.extend((index, key, from_call(key, calls[int(key[1:])]) if key[:1] in CALL_LEADS
                            else first_text(msg)) for key in keys)
    return parse(found)


def _text_hole(doc: str, msg: Message, verbatim_openai: bool) -> tuple[str, str]:
    """The lead (with its comma) and the document without the text of its first block, or
    ("", the document) where it keeps it (``verbatim_openai``: see :func:`hollow`)."""
    text = first_text(msg)
    if text is None or len(text) < MIN_HOLE:
        return "", doc
    try:
        head, found, tail = doc.partition(orjson.dumps(text).decode())
    except orjson.JSONEncodeError:  # a lone surrogate: no document holds it either
        return "", doc
    if not found:
        return "", doc
    hollowed = head + _MARK + tail
    if verbatim_openai and head.endswith('"content":'):  # no need to parse it to know
        return _CONTENT, hollowed
    # The string found may be a key, or a part of a longer string: then no value is HOLE.
    try:
        parsed = orjson.loads("[" + hollowed + "]")
    except orjson.JSONDecodeError:
        return "", doc
    if len(parsed) != 1 or not isinstance(parsed[0], dict) or (key := put(parsed[0], HOLE)) is None \
            or key[:1] in CALL_LEADS:  # a call's lead
        return "", doc
    return orjson.dumps(HOLE + key).decode() + ",", hollowed


_ARGUMENTS = '"arguments":'


def _call_holes(doc: str, msg: Message) -> tuple[str, str]:
    """The leads (with their commas) and the document without its calls: each whole, where the
    item's ``"tool_calls"`` are what the calls' block rows say, as ``{"id", "type": "function",
    "function": {"name", "arguments"}}`` (revision 0016), else without their arguments (revision
    0014): in an OpenAI input item, the k-th ``"arguments":`` outside a string is the k-th call's
    (objects only in its calls; a quote inside a string is escaped), and the call's block keeps the
    same string (``codec.raw_arguments``). Arguments shorter than :data:`MIN_HOLE` stay; where a
    call's are not where they should be, all stay."""
    blocks = [block for block in msg.content if block.kind == "tool_call"]
    if not blocks:
        return "", doc
    if (whole := _whole_calls(doc, blocks)) is not None:
        return whole
    calls = [block.arguments_raw for block in blocks]
    leads, parts, at = [], [], 0
    for k, raw in enumerate(calls):
        found = doc.find(_ARGUMENTS, at)
        if found < 0 or not isinstance(raw, str):
            return "", doc
        start = found + len(_ARGUMENTS)
        try:
            value = orjson.dumps(raw).decode()
        except orjson.JSONEncodeError:
            return "", doc
        if not doc.startswith(value, start):
            return "", doc
        if len(raw) >= MIN_HOLE:
            parts += (doc[at:start], _MARK)
            leads.append(f"{_OPEN}@{k}\",")
        else:
            parts.append(doc[at:start + len(value)])
        at = start + len(value)
    parts.append(doc[at:])
    return "".join(leads), "".join(parts)


def _whole_calls(doc: str, blocks: Sequence[Any]) -> tuple[str, str] | None:
    """``_call_holes`` where the document's ``"tool_calls"`` are the calls' objects as the block
    rows make them, in order and nothing else (a key outside a string is unescaped: found, it is
    the item's own), else None."""
    if any(block.arguments_raw is None for block in blocks):
        return None
    try:
        objects = [orjson.dumps(from_call("#", block)) for block in blocks]
    except orjson.JSONEncodeError:  # a lone surrogate: no document holds it either
        return None
    head, found, tail = doc.partition('"tool_calls":[' + b",".join(objects).decode() + "]")
    if not found:
        return None
    leads = "".join(f'{_OPEN}#{k}",' for k in range(len(blocks)))
    return leads, head + '"tool_calls":[' + ",".join([_MARK] * len(blocks)) + "]" + tail


def _document(msg: Message, index: int, sinks: dict[str, Losses]) -> tuple[str | None, int]:
    """The message's document, and how many items it holds."""
    name = msg.source_format
    write = _WRITERS.get(name)  # type: ignore[arg-type]
    if write is None or (name in NEEDS_CALL_IDS and missing_ids([msg])):  # ids made up at export
        return None, 0
    if (losses := sinks.get(name)) is None:  # type: ignore[arg-type]
        losses = sinks[name] = Losses(name)  # type: ignore[arg-type]
    reported = len(losses)
    try:
        items = write(msg, index, losses)
        data = orjson.dumps(items)
    except (ConvstoreError, ValueError, TypeError, RecursionError):  # e.g. an integer beyond 64 bits
        return None, 0
    # No item, a loss (reported by the canonical path only), too long, or orjson wrote null for NaN.
    # Every integer orjson writes it reads back exactly: no check for those.
    if len(losses) != reported or data == b"[]" or len(data) > MAX_DOC or (b"null" in data and has_nonfinite(items)):
        return None, 0
    return data[1:-1].decode(), len(items)
