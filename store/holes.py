"""What a stored document leaves out, and how a load puts it back (``store.docs`` writes them).

A document (``messages.doc``) leaves out what the message's rows keep: the JSON string of
:data:`HOLE` stands in for it, and a string starting with HOLE leads the document as an item of its
own, naming what fills it: a key of the item for the text of the message's first block (revision
0010; "" where it is deeper), ``@k`` for the arguments of the item's k-th call (revision 0014),
``#k`` for its k-th call whole (revision 0016). An empty document (:data:`PLAIN`) is an item its row
says all of. A load reads the documents of a range (:func:`stored`), takes what they leave out from
the message rows and, where needed, the block rows (one range scan), and parses them all in one
call (:func:`parse`): no text is encoded or parsed as JSON on the way.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import orjson
import sqlalchemy as sa

from .chains import Chain, within
from .codec import raw_arguments
from .formats import FORMATS
from .lean import Call
from .limits import MAX_COUNT
from .prepared import Prepared
from .schema import BlockRow, ConversationRow, JSONDocument, MessageRow, Name

HOLE = "\x01"
"""What a document holds in place of what it leaves out (as a JSON string), and what its leads
start with."""
HOLE_JSON = '"\\u0001"'  # HOLE as orjson writes it
OPEN = HOLE_JSON[:-1]  # a string starting with HOLE: a document holding one keeps none
CONTENT = OPEN + 'content",'  # the lead of a document whose item's "content" is left out
_AFTER_CONTENT = len(CONTENT)
PLAIN = ""
"""The document of an OpenAI message whose item is ``{"role": its role, "content": the text of its
first block}`` (revision 0015): half of an agent's messages, whose rows say all their documents say.
So is a tool result's ``{"role": "tool", "tool_call_id": its call id, "content": its text}``
(revision 0016), both taken from its message row (from its block row where written before
revision 0020)."""
PLAIN_ITEMS = {role: orjson.dumps({"role": role, "content": HOLE}).decode() for role in ("system", "user", "assistant")}
TOOL_ITEM = orjson.dumps({"role": "tool", "tool_call_id": HOLE, "content": HOLE}).decode()
CALL_LEADS = ("@", "#")  # a call's arguments (revision 0014), a whole call (revision 0016)
_DECODER = json.JSONDecoder()

# Only writers with no state across messages qualify (openai, langchain): the others merge or reorder
# messages, pair results with earlier calls, take names from them or number ids by position.
PER_MESSAGE = frozenset(name for name, fmt in FORMATS.items() if fmt.write_message is not None)
"""The formats whose messages get a document."""


def from_call(key: str, call: Any) -> Any:
    """What a call's lead ``key`` takes from the call (a block, or its block row's
    ``(call_id, tool_name, text, payload)``)."""
    if isinstance(call, tuple) and not isinstance(call, Call):  # a row (a lean Call is a named tuple too)
        call_id, name, text, payload = call
        raw = raw_arguments(payload, text)
    else:
        call_id, name, raw = call.call_id, call.name, call.arguments_raw
    if key[0] == "@" or raw is None:
        return raw
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def put(value: Any, text: str) -> str | None:
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
    return next(("" for item in inner if isinstance(item, (dict, list)) and put(item, text) is not None), None)


_m, _b = MessageRow.__table__, BlockRow.__table__
_DOCUMENTS = Prepared(sa.select(_m.c.seq, _m.c.doc, _m.c.text, _m.c.role, _m.c.call_id).where(
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
    are), and what they leave out (a text in its message row, or in its first block row; a
    call or a result in its block row): per segment of ``chain`` one statement, and one more where
    a document left out what its message row does not hold; None when one of them has none (none
    is read when the formats tell so already)."""
    if target not in PER_MESSAGE or source_format not in (target, None):
        return None
    found = Stored([], [])
    for owner, lo, hi in within(chain, start, min(stop, count)):
        rows = _DOCUMENTS.run(conn, cid=owner, start=lo, stop=hi, fmt=target)
        if len(rows) != hi - lo:
            return None
        wanted = _holes(rows, found)
        if wanted is None or wanted and not _from_blocks(conn, owner, found.holes, wanted):
            return None
    return found


class Window(NamedTuple):
    """What :func:`window` read: the items (None where a message has no document in the format),
    and the conversation's row as the rest of a read needs it."""

    items: list[Any] | None
    source_format: str | None
    message_count: int
    start: int


def window(conn: sa.Connection, namespace: str, conversation_id: str, last: int, target: str) -> Window | None:
    """The items of the window of the ``last`` messages in ``target``, read as :func:`stored` and
    :func:`parse` read them, in one statement (a snapshot by itself: no transaction, so on a server
    no BEGIN and COMMIT of its own): the conversation's row with the window's start, the documents,
    and the block rows their holes may need. None where there is no such conversation, or it is a
    fork (whose window may reach its parent's rows), or ``target`` keeps no documents; and on SQLite,
    which has no round trips to save: its three statements cost less than this one's sorted
    ``UNION ALL`` (a window of 50 in 168 against 218 us; on PostgreSQL 713 against 435-451 us)."""
    # a ``last`` it cannot take goes the general way, whose check says what is wrong with it
    if target not in PER_MESSAGE or last.__class__ is not int or not 0 <= last <= MAX_COUNT \
            or conn.dialect.name == "sqlite":
        return None
    rows = WINDOW_ROWS.run(conn, cid=conversation_id, ns=namespace, last=last, fmt=target)
    if not rows or rows[-1][0] != _OWNER:
        return None
    _, count, start, source_format, *_ = rows[-1]
    seen = Window(None, source_format, count, start)
    docs = [(r[1], r[4], r[5], r[3], r[6]) for r in rows if r[0] == _DOC]
    if source_format not in (target, None) or len(docs) != count - start:
        return seen
    found = Stored([], [])
    wanted = _holes(docs, found)
    blocks = [(r[1], r[2], r[3], r[5], r[6], r[7], r[8]) for r in rows if r[0] == _BLOCK]
    if wanted is None or wanted and not _fill(found.holes, wanted, blocks):
        return seen
    return seen._replace(items=parse(found))


_DOC, _BLOCK, _OWNER, _FORK = 1, 2, 3, 4  # the parts of the window's statement, in this order


_c = ConversationRow.__table__
_LAST = sa.bindparam("last", type_=sa.Integer)
EARLIEST = sa.select(sa.func.min(_m.c.window_start)).where(
    _m.c.conversation_id == _c.c.id, _m.c.seq >= _c.c.message_count - _LAST).scalar_subquery()
"""Where the window of a conversation's last ``last`` messages starts, its calls' results kept with
them (a scalar subquery over ``conversations``; NULL where it has no such message)."""


def _window_rows() -> Prepared:
    c, last = _c, _LAST
    owned = (c.c.id == sa.bindparam("cid"), c.c.namespace == sa.bindparam("ns"))
    start = sa.case((last == 0, c.c.message_count), else_=sa.func.coalesce(EARLIEST, 0))
    # computed once for the three parts (a CTE referenced thrice is materialized): as a subquery in
    # each, PostgreSQL ran it thrice, 36 of a window's 48 buffer reads
    w = sa.select(start.label("start"), c.c.message_count, c.c.source_format, c.c.parent_id).where(*owned).cte("w")
    own_start = sa.select(w.c.start).where(w.c.parent_id.is_(None)).scalar_subquery()

    def null(type_: Any) -> Any:
        return sa.type_coerce(sa.null(), type_)

    in_window = (_m.c.conversation_id == sa.bindparam("cid"), _m.c.seq >= own_start)
    docs = sa.select(sa.literal(_DOC, sa.Integer).label("part"), _m.c.seq, null(sa.Integer).label("position"),
                     _m.c.role.label("kind"), _m.c.doc, _m.c.text, _m.c.call_id, null(Name).label("tool_name"),
                     null(JSONDocument()).label("payload")).where(
        *in_window, _m.c.source_format == sa.bindparam("fmt"), _m.c.doc.is_not(None))
    blocks = sa.select(sa.literal(_BLOCK, sa.Integer), _b.c.seq, _b.c.position, _b.c.kind, sa.null(), _b.c.text,
                       _b.c.call_id, _b.c.tool_name,
                       sa.case((_b.c.kind == sa.literal_column("'tool_call'"), _b.c.payload))).where(
        _b.c.conversation_id == sa.bindparam("cid"), _b.c.seq >= own_start,
        sa.or_(_b.c.position == sa.literal_column("0"), _b.c.kind == sa.literal_column("'tool_call'")))
    owner = sa.select(sa.case((w.c.parent_id.is_(None), _OWNER), else_=_FORK), w.c.message_count, w.c.start,
                      w.c.source_format, sa.null(), sa.null(), sa.null(), sa.null(), sa.null())
    union = sa.union_all(docs, blocks, owner)
    return Prepared(union.order_by(*(union.selected_columns[k] for k in ("part", "seq", "position"))))


WINDOW_ROWS = _window_rows()


_TEXT, _CALL_ID = "", "id"  # what a hole takes from its message's first block row (else a lead's key)


def _holes(rows: list[list[Any]], found: Stored) -> list[tuple[int, int, str]] | None:
    """Add the documents of message rows ``(seq, doc, text, role, call_id)`` to ``found``, with their holes;
    the holes whose strings block rows keep: ``(index in holes, seq, what)``. None where a row has
    no document it can be read from (never so)."""
    docs, holes, wanted = found.docs, found.holes, []
    for seq, doc, text, role, call_id in rows:
        if not doc:  # PLAIN: the item is its role and its text (a result: and its call id)
            if role == "tool":
                if call_id is None:  # in its block row: stored before revision 0020
                    wanted.append((len(holes), seq, _CALL_ID))
                holes.append((len(docs), "tool_call_id", call_id))
                item = TOOL_ITEM
            elif role in PLAIN_ITEMS:
                item = PLAIN_ITEMS[role]
            else:
                return None
        elif doc[:7] != OPEN:  # no lead: a whole document
            docs.append(doc)
            continue
        elif doc.startswith(CONTENT) and doc[_AFTER_CONTENT] != '"':  # most documents: one lead, "content"
            item = doc[_AFTER_CONTENT:]
        else:
            keys, end = leads(doc)
            for key in keys:
                if key[:1] in CALL_LEADS:
                    wanted.append((len(holes), seq, key))
                elif text is None:
                    wanted.append((len(holes), seq, _TEXT))
                holes.append((len(docs), key, text))
            docs.append(doc[end:])
            continue
        if text is None:  # in its first block row: stored before revision 0013 (a result's: 0020)
            wanted.append((len(holes), seq, _TEXT))
        holes.append((len(docs), "content", text))
        docs.append(item)
    return wanted


def _from_blocks(conn: sa.Connection, owner: str, holes: list[tuple[int, str, Any]],
                 wanted: list[tuple[int, int, str]]) -> bool:
    """Fill each wanted hole ``(index in holes, seq, what)``: the text or the call id of the first
    block of message ``seq``, or what a lead ``@k`` / ``#k`` takes from its k-th call; False where
    one is missing (never so: a document and its blocks are written and removed together), for
    the canonical path."""
    return _fill(holes, wanted, _BLOCKS.run(conn, cid=owner, start=wanted[0][1], stop=wanted[-1][1] + 1))


def _fill(holes: list[tuple[int, str, Any]], wanted: list[tuple[int, int, str]], blocks: Any) -> bool:
    """:func:`_from_blocks` with the block rows ``(seq, position, kind, text, call_id, tool_name,
    a call's payload)`` read already."""
    firsts: dict[int, tuple[str | None, str | None]] = {}
    calls: dict[int, list[tuple[str, str, str | None, Any]]] = {}
    for seq, position, kind, text, call_id, name, payload in blocks:
        if position == 0:
            firsts[seq] = (text, call_id)
        if kind == "tool_call":
            calls.setdefault(seq, []).append((call_id, name, text, payload))
    for h, seq, what in wanted:
        if what == _TEXT or what == _CALL_ID:  # the most: texts, and results' call ids
            value = (firsts.get(seq) or (None, None))[what == _CALL_ID]
        else:
            those = calls.get(seq) or ()
            value = from_call(what, those[k]) if (k := int(what[1:])) < len(those) else None
        if value is None:
            return False
        holes[h] = (holes[h][0], holes[h][1], value)
    return True


def leads(doc: str) -> tuple[list[str], int]:
    """The keys named by a document's leads (see the module's docstring), and where its item begins."""
    keys, at = [], 0
    while doc.startswith(OPEN, at):
        end = doc.index('",', at)  # a quote inside a string is escaped: then the key is read as JSON
        if "\\" in (key := doc[at + len(OPEN):end]):  # escapes: decoded, up to the string's true end
            lead, after = _DECODER.raw_decode(doc, at)
            key, end = lead[1:], after - 1
        keys.append(key)
        at = end + 2
    return keys, at


def parse(found: Stored) -> list[Any]:
    """The items of consecutive messages' documents, in order, with their holes filled."""
    per_doc = orjson.loads("[[" + "],[".join(found.docs) + "]]")  # a document with a hole is one item
    for index, key, value in found.holes:
        item = per_doc[index][0]
        first = key[:1]
        if first == "#":
            item["tool_calls"][int(key[1:])] = value
        elif first == "@":
            item["tool_calls"][int(key[1:])]["function"]["arguments"] = value
        elif key:
            item[key] = value
        else:
            put(item, value)
    return [item for items in per_doc for item in items]
