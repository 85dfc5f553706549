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

Nor does it store a message's text twice (revision 0010): where the first block of a message
written as one item keeps a text of :data:`MIN_HOLE` characters or more in its ``text`` column
(a text, a tool result's output) and the item holds that text as a JSON string, the document
holds :data:`HOLE`'s string there instead and starts with another (:func:`hollow`). So do an
OpenAI item's call arguments of that length, which the calls' block rows keep (revision 0014).
A load reads those strings from the message rows (a text kept there, revision 0013) or the
block rows (one more range scan) and puts them into the parsed items (:func:`parse`): no text
is encoded or parsed as JSON on the way. Texts are most of a message's bytes. An OpenAI item
that is its role and its text alone, half of an agent's messages, is stored as an empty
document (:data:`PLAIN`, revision 0015): its row says it all.

Nor does a message's ``extras`` repeat a long string its document keeps (revision 0012,
:mod:`store.kept_once`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import orjson
import sqlalchemy as sa

from .chains import Chain, within
from .codec import first_text, raw_arguments
from .errors import ConvstoreError
from .exactjson import has_nonfinite
from .formats import FORMATS, NEEDS_CALL_IDS, Losses, read_marked
from .formats._common import message_list
from .formats._ids import missing_ids
from .model import Message
from .prepared import Prepared
from .schema import BlockRow, MessageRow

HOLE = "\x01"
"""Where a document leaves its text out: the JSON string of this character stands in for it,
and a string starting with it leads the document as an item of its own, HOLE followed by the
key of the item that holds the text (empty when it is deeper), so a load puts each text in
place without looking into the other items (:func:`hollow`, :func:`parse`)."""
_MARK = '"\\u0001"'  # HOLE as orjson writes it
_OPEN = _MARK[:-1]  # a string starting with HOLE: a document holding one keeps none
_CONTENT = _OPEN + 'content",'  # the lead of a document whose item's "content" is left out
_AFTER_CONTENT = len(_CONTENT)
PLAIN = ""
"""The document of an OpenAI message whose item is ``{"role": its role, "content": the text of its
first block}`` (revision 0015): half of an agent's messages, whose rows say all their documents say.
So is a tool result's ``{"role": "tool", "tool_call_id": its call id, "content": its text}``
(revision 0016), both taken from its block row."""
_PLAIN_ITEMS = {role: orjson.dumps({"role": role, "content": HOLE}).decode()
                for role in ("system", "user", "assistant")}
_TOOL_ITEM = orjson.dumps({"role": "tool", "tool_call_id": HOLE, "content": HOLE}).decode()
_TOOL_KEYS = ["role", "tool_call_id", "content"]
_PLAIN_LEADS = {role: _CONTENT + item for role, item in _PLAIN_ITEMS.items()}  # as stored before revision 0015
_DECODER = json.JSONDecoder()
MIN_HOLE = 64
"""The shortest text left out of a document: a shorter one costs a load more to fetch
than it saves."""
MAX_DOC = 256 * 1024
"""The longest document kept (bytes of JSON): beyond it the JSON parse is the whole cost
either way, and a row stays far below MariaDB's packet limit."""

# Only writers with no state across messages qualify (openai, langchain): the others merge or reorder
# messages, pair results with earlier calls, take names from them or number ids by position.
_WRITERS = {name: fmt.write_message for name, fmt in FORMATS.items() if fmt.write_message is not None}
PER_MESSAGE = frozenset(_WRITERS)
"""The formats whose messages get a document."""


class Batch(list[Message]):
    """Messages read from input, with ``given``: for each, its source item as its document
    where the writer would give that item back as it is (``Format.verbatim``), else None.
    A slice is a batch of the slice's messages and documents."""

    def __init__(self, msgs: Sequence[Message], given: Sequence[str | None]) -> None:
        super().__init__(msgs)
        self.given = list(given)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return Batch(list.__getitem__(self, index), self.given[index])
        return list.__getitem__(self, index)


def read(data: Any, format: str) -> list[Message]:
    """``formats.read``, keeping as documents the input items its writer would give back as
    they are (a :class:`Batch`): those messages are not written again to get their document."""
    msgs, fmt, plain = read_marked(data, format)
    if plain is None:
        return msgs
    items = message_list(data, fmt.name)
    if len(items) != len(msgs):
        return msgs
    return Batch(msgs, [_given(item) if kept else None for item, kept in zip(items, plain)])


def _given(item: Any) -> str | None:
    if len(item) == 2 and item.get("role") in _PLAIN_ITEMS and list(item) == _ROLE_CONTENT \
            and (text := item["content"]).__class__ is str and text[:1] != HOLE:
        return PLAIN  # known without writing it: no JSON of its text made, nor searched
    if len(item) == 3 and item.get("role") == "tool" and list(item) == _TOOL_KEYS \
            and (text := item["content"]).__class__ is str and (call_id := item["tool_call_id"]).__class__ is str \
            and text[:1] != HOLE and call_id[:1] != HOLE:
        return PLAIN
    data = orjson.dumps(item)
    return data.decode() if len(data) <= MAX_DOC else None


_ROLE_CONTENT = ["role", "content"]


def documents(msgs: Sequence[Message], skip: Collection[int] = ()) -> list[str | None]:
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
        else:
            out.append(hollow(*_document(msg, index, sinks), msg))
    return out


def hollow(doc: str | None, items: int, msg: Message, flat: bool = False) -> str | None:
    """A document of ``items`` items as stored: where it holds one, and the text its
    message's first block row keeps (``codec.first_text``) is long enough and the item holds
    it as a JSON string, that string is :data:`HOLE`'s, and the document is led by another;
    so are the arguments of an OpenAI item's calls (:func:`_call_holes`). A document holding
    a string that starts with HOLE keeps none (a load would take it for a hole). ``flat``: the
    document is an input item ``Format.verbatim`` accepts; in an OpenAI one (objects only in
    its calls, none with a "content"), a ``"content":`` outside a string is the item's own key."""
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
    if not calls and msg.role in _PLAIN_ITEMS and _plain(lead + hollowed, msg):
        return PLAIN
    # A written item may hold more objects than its calls (extras): it is checked by reading it back.
    if calls and not flat and not _reads_back(lead + calls + without, msg, doc):
        return lead + hollowed
    return lead + calls + without


def _plain(stored: str, msg: Message) -> bool:
    """Whether a message's stored document is ``{"role": its role, "content": the text of its first
    block}`` (see :data:`PLAIN`): led by the text's lead, or holding a short text itself."""
    if stored[:1] == '"':
        return stored == _PLAIN_LEADS[msg.role]
    text = first_text(msg)
    try:
        return text is not None and stored == orjson.dumps({"role": msg.role, "content": text}).decode()
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


def _reads_back(stored: str, msg: Message, doc: str) -> bool:
    """Whether a load reads ``doc``'s items from its stored form."""
    try:
        return restore([stored], [msg]) == orjson.loads("[" + doc + "]")
    except (LookupError, TypeError, ValueError):  # a hole where no call's arguments are
        return False


def restore(stored: Sequence[str], msgs: Sequence[Message]) -> list[Any]:
    """The items a load reads from the stored documents of ``msgs`` (what their rows keep
    taken from the messages themselves)."""
    found = Stored([], [])
    for index, (doc, msg) in enumerate(zip(stored, msgs)):
        if not doc and msg.role == "tool":
            found.docs.append(_TOOL_ITEM)
            found.holes.extend([(index, "tool_call_id", msg.content[0].call_id), (index, "content", first_text(msg))])
            continue
        doc = doc or _PLAIN_LEADS[msg.role]
        keys, end = leads(doc)
        calls = [block for block in msg.content if block.kind == "tool_call"]
        found.docs.append(doc[end:])
        found.holes.extend((index, key, _from_call(key, calls[int(key[1:])]) if key[:1] in _CALL_LEADS
                            else first_text(msg)) for key in keys)
    return parse(found)


_CALL_LEADS = ("@", "#")  # a call's arguments (revision 0014), a whole call (revision 0016)


def _from_call(key: str, call: Any) -> Any:
    """What a call's lead ``key`` takes from the call (a block, or its block row's
    ``(call_id, tool_name, payload)``)."""
    if isinstance(call, tuple):
        call_id, name, payload = call
        raw = raw_arguments(payload or {})
    else:
        call_id, name, raw = call.call_id, call.name, call.arguments_raw
    if key[0] == "@" or raw is None:
        return raw
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


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
    if len(parsed) != 1 or not isinstance(parsed[0], dict) or (key := _put(parsed[0], HOLE)) is None \
            or key[:1] in _CALL_LEADS:  # a call's lead
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
        objects = [orjson.dumps(_from_call("#", block)) for block in blocks]
    except orjson.JSONEncodeError:  # a lone surrogate: no document holds it either
        return None
    head, found, tail = doc.partition('"tool_calls":[' + b",".join(objects).decode() + "]")
    if not found:
        return None
    leads = "".join(f'{_OPEN}#{k}",' for k in range(len(blocks)))
    return leads, head + '"tool_calls":[' + ",".join([_MARK] * len(blocks)) + "]" + tail


def _put(value: Any, text: str) -> str | None:
    """Put ``text`` in place of the one string HOLE in ``value``: the key that held it
    where ``value`` is an object holding it itself, "" where it was deeper, None where
    there was none."""
    if isinstance(value, dict):
        for key, item in value.items():
            if item == HOLE:
                value[key] = text
                return key
        inner = value.values()
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if item == HOLE:
                value[index] = text
                return ""
        inner = value
    else:
        return None
    return next(("" for item in inner if isinstance(item, (dict, list)) and _put(item, text) is not None), None)


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


_m, _b = MessageRow.__table__, BlockRow.__table__
_DOCUMENTS = Prepared(sa.select(_m.c.seq, _m.c.doc, _m.c.text, _m.c.role).where(
    _m.c.conversation_id == sa.bindparam("cid"), _m.c.seq >= sa.bindparam("start"), _m.c.seq < sa.bindparam("stop"),
    _m.c.source_format == sa.bindparam("fmt"), _m.c.doc.is_not(None)).order_by(_m.c.seq))
_BLOCKS = Prepared(sa.select(  # a call's payload only: a result's is not parsed for nothing
    _b.c.seq, _b.c.position, _b.c.kind, _b.c.text, _b.c.call_id, _b.c.tool_name,
    sa.case((_b.c.kind == sa.literal_column("'tool_call'"), _b.c.payload)).label("call")).where(
    _b.c.conversation_id == sa.bindparam("cid"), _b.c.seq >= sa.bindparam("start"), _b.c.seq < sa.bindparam("stop"),
    sa.or_(_b.c.position == sa.literal_column("0"), _b.c.kind == sa.literal_column("'tool_call'"))
).order_by(_b.c.seq, _b.c.position))


class Stored(NamedTuple):
    """A range's documents without their leads, and their holes: (the document's index,
    the key its lead names, the string or the call object it takes)."""

    docs: list[str]
    holes: list[tuple[int, str, Any]]


def stored(conn: sa.Connection, chain: Chain, start: int, stop: int, target: str, source_format: str | None,
           count: int) -> Stored | None:
    """The documents in ``target`` of the messages with ``start <= seq < stop`` of a
    conversation of ``count`` messages stored as ``source_format`` (``chain``: where its rows
    are), and the texts they leave out (a text in its message row, or in its first block row
    before revision 0013; a call's arguments in its block row): per segment of ``chain`` one
    statement, and one more where a document left out what its message row does not hold;
    None when one of them has none (none is read when the formats tell so already)."""
    if target not in PER_MESSAGE or source_format not in (target, None):
        return None
    found = Stored([], [])
    for owner, lo, hi in within(chain, start, min(stop, count)):
        rows = _DOCUMENTS.run(conn, cid=owner, start=lo, stop=hi, fmt=target)
        if len(rows) != hi - lo:
            return None
        docs, holes, wanted = found.docs, found.holes, []  # wanted: (hole, seq, what block rows keep)
        for seq, doc, text, role in rows:
            if not doc:  # PLAIN: the item is its role and its text (a result: and its call id)
                if role == "tool":
                    wanted.append((len(holes), seq, _CALL_ID))
                    holes.append((len(docs), "tool_call_id", None))
                    item = _TOOL_ITEM
                elif role in _PLAIN_ITEMS:
                    item = _PLAIN_ITEMS[role]
                else:
                    return None  # never so: the canonical path
            elif doc[:7] != _OPEN:  # no lead: a whole document
                docs.append(doc)
                continue
            elif doc.startswith(_CONTENT) and doc[_AFTER_CONTENT] != '"':  # most documents: one lead, "content"
                item = doc[_AFTER_CONTENT:]
            else:
                keys, end = leads(doc)
                for key in keys:
                    if key[:1] in _CALL_LEADS:
                        wanted.append((len(holes), seq, key))
                    elif text is None:
                        wanted.append((len(holes), seq, _TEXT))
                    holes.append((len(docs), key, text))
                docs.append(doc[end:])
                continue
            if text is None:  # in its first block row: a tool result's, or stored before revision 0013
                wanted.append((len(holes), seq, _TEXT))
            holes.append((len(docs), "content", text))
            docs.append(item)
        if wanted and not _from_blocks(conn, owner, holes, wanted):
            return None
    return found


_TEXT, _CALL_ID = "", "id"  # what a hole takes from its message's first block row (else a call's lead)


def _from_blocks(conn: sa.Connection, owner: str, holes: list[tuple[int, str, Any]],
                 wanted: list[tuple[int, int, str]]) -> bool:
    """Fill each wanted hole ``(index in holes, seq, what)``: the text or the call id of the first
    block of message ``seq``, or what a lead ``@k`` / ``#k`` takes from its k-th call; False where
    one is missing (never so: a document and its blocks are written and removed together), for
    the canonical path."""
    firsts: dict[int, tuple[str | None, str | None]] = {}
    calls: dict[int, list[tuple[str, str, Any]]] = {}
    for seq, position, kind, text, call_id, name, payload in _BLOCKS.run(
            conn, cid=owner, start=wanted[0][1], stop=wanted[-1][1] + 1):
        if position == 0:
            firsts[seq] = (text, call_id)
        if kind == "tool_call":
            calls.setdefault(seq, []).append((call_id, name, payload))
    for h, seq, what in wanted:
        index, key, _ = holes[h]
        if what[:1] in _CALL_LEADS:
            those = calls.get(seq) or ()
            value = _from_call(what, those[k]) if (k := int(what[1:])) < len(those) else None
        else:
            value = (firsts.get(seq) or (None, None))[what == _CALL_ID]
        if value is None:
            return False
        holes[h] = (index, key, value)
    return True


def leads(doc: str) -> tuple[list[str], int]:
    """The keys named by a document's leads (a key of its item, "" for a text deeper in it,
    ``@`` and the index of a call whose arguments it leaves out), and where its item begins."""
    keys, at = [], 0
    while doc.startswith(_OPEN, at):
        end = doc.index('",', at)  # a quote inside a string is escaped: then the key is read as JSON
        if "\\" in (key := doc[at + len(_OPEN):end]):  # escapes: decoded, up to the string's true end
            lead, after = _DECODER.raw_decode(doc, at)
            key, end = lead[1:], after - 1
        keys.append(key)
        at = end + 2
    return keys, at


def parse(found: Stored) -> list[Any]:
    """The items of consecutive messages' documents, in order, with their holes filled."""
    per_doc = orjson.loads("[[" + "],[".join(found.docs) + "]]")  # a document with a hole is one item
    for index, key, text in found.holes:
        item = per_doc[index][0]
        if key[:1] == "@":
            item["tool_calls"][int(key[1:])]["function"]["arguments"] = text
        elif key[:1] == "#":
            item["tool_calls"][int(key[1:])] = text
        elif key:
            item[key] = text
        else:
            _put(item, text)
    return [item for items in per_doc for item in items]
