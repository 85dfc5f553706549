"""An OpenAI list read for a write in one pass: nearly every item checked as it is read.

An agent's OpenAI items are, nearly all, its role and its text alone, a tool result of its call id and
its text, or an assistant's text and calls, perhaps with its reasoning. ``docs.read`` takes a dozen
steps over each (the reader's ``verbatim`` test, a stand-in, a :class:`~store.lean.Plain`, its
document) and the rows as many again (a budget, each value sized, the document searched for its
text and calls, the extras searched for what the document keeps). :func:`read` sees such an item
once: its shape, its values' sizes against the store's limits and the columns' bounds, the tool name
of its call, and, for an assistant's, the extras and the document its message row keeps. It makes
it a :class:`~store.lean.Plain` marked ``checked``, whose rows :func:`rows` then builds with no
budget and no search. Every other item goes to the OpenAI reader (one reader, in runs: a result
finds the name of a call read before it), and so does an item that fails a check here: the
general path says what is wrong with it and where, as before. Both give the very same messages,
rows and errors: a property test holds them to it (tests/test_onepass.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import orjson

from . import bulk, docs
from .codec import PLAIN_COLUMNS, BlobSink
from .docs import MAX_DOC, MIN_HOLE
from .errors import ConvstoreError, DuplicateToolCallError
from .formats import openai
from .formats._common import parse_data_uri
from .holes import CONTENT, HOLE, HOLE_JSON, OPEN, PLAIN
from .kept_once import kept_size
from .lean import (
    LIST_NOTES,
    OWN_KEYS,
    PLAIN_ROLES,
    RESULT_KEYS,
    TEXT_KEYS,
    Call,
    Part,
    Parts,
    Plain,
    Result,
    Writable,
    bare_arguments,
)
from .limits import BOUNDS, Limits, check_input, stored_size
from .links import KnownCall, LinkPlan
from .model import MESSAGES as CANONICAL
from .schema import BlockRow, JSONText, MessageRow, dumps

_OWN = len("openai")  # each row's source format, counted in its size as a budget counts it
_BOUND = BOUNDS["call_id"]
assert _BOUND == BOUNDS["tool_name"]


def read(data: Any, limits: Limits) -> list[Writable]:
    """``docs.read(data, "openai")`` of a list, with the plain items that fit within ``limits`` read
    here and marked ``checked``. Where the input holds an error, ``docs.read`` reads it all again:
    its error, located, is the one raised."""
    try:
        return _Pass(data, limits).run()
    except (ConvstoreError, ValueError, RecursionError, OverflowError):  # a lone surrogate too
        return docs.read(data, openai.NAME)


class _Pass:
    """One read: what it made of each item so far, and the OpenAI reader that reads the others, in
    runs (one run before each item of calls read here, whose names the results after it take)."""

    def __init__(self, items: list[Any], limits: Limits) -> None:
        self.items, self.limits = items, limits
        self.out: list[Any] = [None] * len(items)
        self.given: list[str | None] = [PLAIN] * len(items)
        self.names: dict[str, str] = {}  # the tool names of the calls read so far (the reader's, ahead)
        self.sure = True  # False once a call's name is not known ahead (the reader reads no result after it)
        self.pending: list[int] = []  # the items left to the reader, not read yet
        self.ordered = False  # whether one of them may read a call's name (see ``_other``)
        self.fields: list[tuple[int, dict[str, Any]]] = []  # what the reader read as fields, to validate
        self.reader = openai.Reader()

    def run(self) -> docs.Batch:
        out, pending, limits = self.out, self.pending, self.limits
        for index, item in enumerate(self.items):
            plain = None
            if item.__class__ is dict:
                if len(item) == 2 and list(item) == TEXT_KEYS:  # half of an agent's items
                    if item["content"].__class__ is not list:
                        plain = _text(item, limits)
                    elif (plain := _parts(item, limits)) is not None:
                        self.given[index] = None  # its document is its own (``row``)
                else:
                    plain = self._other(index, item)
            if plain is None:
                pending.append(index)
                if item.__class__ is not dict or (role := item.get("role")).__class__ is not str \
                        or role not in _NAMELESS:
                    self.ordered = True
            else:
                out[index] = plain
        self._flush()
        if self.fields:  # the reader's fields, validated in one call
            made = CANONICAL.validate_python([field for _, field in self.fields])
            for (index, _), msg in zip(self.fields, made):
                out[index] = msg
        return docs.Batch(out, self.given)

    def _other(self, index: int, item: dict[str, Any]) -> Plain | None:
        if len(item) == 3 and list(item) == RESULT_KEYS and item["role"] == "tool":
            return _result(item, self.names, self.limits) if self.sure else None
        calls = item.get("tool_calls")
        if item.get("role") != "assistant" or calls is not None and calls.__class__ is not list:
            return None
        plain = _assistant(item, calls, self.limits)
        if plain is None:
            self.sure = self.sure and (calls is None or _named(calls, self.names))
            return None
        if self.ordered:  # the reader's items before it do not see its calls (a user's image never looks)
            self._flush()
        for call in plain.content:
            self.names[call.call_id] = self.reader.names[call.call_id] = call.name  # type: ignore[union-attr]
        self.given[index] = None  # its document is its own (``row``), the general path's too (docs.documents)
        return plain

    def _flush(self) -> None:
        if not self.pending:
            return
        rest = [self.items[i] for i in self.pending]
        check_input(rest, openai.NAME)  # the items read here are sized: a lone surrogate would have raised
        fields, verbatim = self.reader.read(rest, stand_in=docs._stand_in, indexes=self.pending)
        for index, field, doc in zip(self.pending, fields, docs.batch(rest, fields, verbatim).given):
            if field.__class__ is dict:
                self.fields.append((index, field))
            else:
                self.out[index] = field
            self.given[index] = doc
        self.pending.clear()
        self.ordered = False


def _named(calls: list[Any], names: dict[str, str]) -> bool:
    """The names the reader keeps of an assistant's calls (an id and a function's or a custom
    tool's name) for the results after them; False where one is of another shape."""
    for call in calls:
        kind = call.get("type") or "function" if call.__class__ is dict else None
        inner = call.get(kind) if kind.__class__ is str else None
        if inner.__class__ is not dict or (call_id := call.get("id")).__class__ is not str \
                or (name := inner.get("name")).__class__ is not str:
            return False
        names[call_id] = name
    return True


def _text(item: dict[str, Any], limits: Limits) -> Plain | None:
    return Plain(item["role"], item["content"], "openai", (), None, None, limits) if text_fits(item, limits) else None


def text_fits(item: dict[str, Any], limits: Limits) -> bool:
    """Whether an item of a role and its text (``TEXT_KEYS``) is a plain text its row says all of."""
    role, text = item["role"], item["content"]
    return role.__class__ is str and role in PLAIN_ROLES and text.__class__ is str and text[:1] != HOLE \
        and stored_size(text, limits.escaped) <= limits.max_message_bytes - _OWN


def _result(item: dict[str, Any], names: dict[str, str], limits: Limits) -> Plain | None:
    if (name := result_name(item, names, limits)) is REFUSED:
        return None
    return Plain("tool", item["content"], "openai", (Result(item["tool_call_id"]),), name, None, limits)  # type: ignore[arg-type]


REFUSED = object()
"""What :func:`result_name` gives for a result its row does not say all of."""


def result_name(item: dict[str, Any], names: dict[str, str], limits: Limits) -> str | None | object:
    """Of a tool result (``RESULT_KEYS``, role "tool") its row says all of, the tool name it takes (that
    of the call read before it, in ``names``, or None); else :data:`REFUSED`."""
    text, call_id = item["content"], item["tool_call_id"]
    if text.__class__ is not str or call_id.__class__ is not str or not call_id or text[:1] == HOLE \
            or call_id[:1] == HOLE or len(call_id) > _BOUND:
        return REFUSED
    name, escaped = names.get(call_id), limits.escaped
    if name is not None and len(name) > _BOUND:
        return REFUSED
    # the short values sized at once (sizes add up; a lone surrogate raises as it would alone)
    used = stored_size(text, escaped) + stored_size(call_id if name is None else call_id + name, escaped)
    return REFUSED if used > limits.max_message_bytes - _OWN else name


def _assistant(item: dict[str, Any], calls: list[Any] | None, limits: Limits) -> Plain | None:
    """An assistant's item ``lean.other_item`` reads: its text (or null), its calls, each ``{"id", "type":
    "function", "function": {"name", "arguments"}}`` whose arguments parse to exactly their text
    (``lean.bare_arguments``), and keys OpenAI has no field for, holding strings (``reasoning_content``);
    with no HOLE in any of its strings (its document is then known without a search, see :func:`rows`)
    and no other string its text's equal, where its text is left out of the document."""
    text, escaped = item.get("content", HOLE), limits.escaped
    if text is not None and (text.__class__ is not str or HOLE in text) or calls is not None and not calls:
        return None
    long = text is not None and len(text) >= MIN_HOLE
    used, fields = _OWN, {}
    for key, value in item.items():
        if key in OWN_KEYS:
            continue
        if key.__class__ is not str or key in _OPENAI_KEYS or value.__class__ is not str or HOLE in key \
                or HOLE in value or long and (value == text or key == text):
            return None
        fields[key] = value
    if not (calls or fields):
        return None
    made: tuple[Call, ...] = ()
    if calls is not None:
        if (found := _made(calls, text if long else None, escaped)) is None:
            return None
        made, size = found
        used += size
    extras = _extras(fields, text is None)
    for value in (text, extras):
        if value is not None:
            used += stored_size(value, escaped)
    for value in fields.values():  # a long one is left to the document (``_extras``), and still counted
        if len(value) >= MIN_HOLE:
            used += kept_size(value, escaped)
    if used > limits.max_message_bytes or used > MAX_DOC // 8:  # a longer item's JSON may be no document
        return None
    body = {**item, "content": HOLE} if long else dict(item)
    if made:
        body["tool_calls"] = [HOLE] * len(made)
    leads = (CONTENT if long else "") + _call_leads(len(made))
    return Plain("assistant", text, "openai", made, None, _notes(fields, text is None), limits,
                 (extras, leads + orjson.dumps(body).decode()))


@lru_cache(maxsize=64)
def _call_leads(n: int) -> str:
    """The leads of an item's ``n`` calls, each whole in its block row (``#k``)."""
    return "".join(f'{OPEN}#{k}",' for k in range(n))


def _made(calls: list[Any], text: str | None, escaped: bool) -> tuple[tuple[Call, ...], int] | None:
    """The calls of an assistant's item, and the size of their ids, names and arguments (sized at once:
    sizes add up, and a lone surrogate in any of them raises as it would alone); None for one of another shape."""
    made, size = [], 0
    for call in calls:
        if call.__class__ is not dict or list(call) != _CALL_KEYS or call["type"] != "function" \
                or (function := call["function"]).__class__ is not dict or list(function) != _FUNCTION_KEYS:
            return None
        call_id, name, raw = call["id"], function["name"], function["arguments"]
        if call_id.__class__ is not str or name.__class__ is not str or raw.__class__ is not str \
                or not call_id or len(call_id) > _BOUND or len(name) > _BOUND \
                or HOLE in call_id or HOLE in name or HOLE in raw \
                or text in (call_id, name, raw) or not bare_arguments(raw):
            return None
        made.append(Call(call_id, name, raw))
        size += stored_size(call_id + name + raw, escaped)
    return tuple(made), size


def _notes(fields: dict[str, str], null: bool) -> dict[str, Any] | None:
    """The item's notes, as the reader keeps them in a message's extras."""
    shape: dict[str, Any] = {"fields": fields} if fields else {}
    if null:
        shape["content"] = "null"
    return {"openai": shape} if shape else None


def _extras(fields: dict[str, str], null: bool) -> JSONText | None:
    """The notes as a message row keeps them: a long value left to the document (``kept_once``)."""
    if all(len(value) >= MIN_HOLE for value in fields.values()):  # the same for most items: made once
        return _hollow_extras(tuple(fields), null)
    notes = _notes({key: HOLE if len(value) >= MIN_HOLE else value for key, value in fields.items()}, null)
    return None if notes is None else JSONText(dumps(notes))


@lru_cache(maxsize=256)
def _hollow_extras(keys: tuple[str, ...], null: bool) -> JSONText | None:
    notes = _notes(dict.fromkeys(keys, HOLE), null)
    return None if notes is None else JSONText(dumps(notes))


def _parts(item: dict[str, Any], limits: Limits) -> Parts | None:
    """A user's item whose content is texts (``{"type": "text", "text"}``, no HOLE in them) and one image
    or more (``{"type": "image_url", "image_url": {"url": a data URL naming its media type, its base64
    exact}}``): the very item OpenAI's writer writes back. Its document is its JSON, its first text left
    out where that is long enough (``docs.hollow``; no string before that text is as long)."""
    if item["role"] != "user":
        return None
    escaped, made = limits.escaped, []
    used = _OWN + _LIST_SIZE[escaped]
    for part in item["content"]:
        if part.__class__ is not dict or len(part) != 2:
            return None
        if list(part) == _TEXT_PART and part["type"] == "text":
            if (text := part["text"]).__class__ is not str or HOLE in text:
                return None
            used += stored_size(text, escaped)
            made.append(Part("text", text))
        elif list(part) == _IMAGE_PART and part["type"] == "image_url":
            inner = part["image_url"]
            if inner.__class__ is not dict or list(inner) != _URL or inner["url"].__class__ is not str \
                    or (decoded := parse_data_uri(inner["url"])) is None or len(decoded[1]) > limits.max_blob_bytes:
                return None
            media_type, data = decoded  # ASCII, of the data URL's pattern: its length is its stored size
            if media_type is None or len(media_type) > BOUNDS["media_type"]:  # the writer names a type
                return None
            used += len(media_type)
            made.append(Part("image", None, media_type, data))
        else:
            return None
    if used > limits.max_message_bytes or all(part.kind == "text" for part in made):
        return None
    if len(whole := orjson.dumps(item)) > MAX_DOC:  # as ``docs`` keeps an item: the general path decides
        return None
    doc = whole.decode()
    if (first := made[0].text) is not None and len(first) >= MIN_HOLE:
        head, _, tail = doc.partition(orjson.dumps(first).decode())
        doc = _DEEPER + head + HOLE_JSON + tail
    return Parts("user", tuple(made), limits, (_LIST_EXTRAS, doc))


_TEXT_PART, _IMAGE_PART, _URL = ["type", "text"], ["type", "image_url"], ["url"]
_LIST_EXTRAS = JSONText(dumps(LIST_NOTES))
_LIST_SIZE = {escaped: stored_size(_LIST_EXTRAS, escaped) for escaped in (False, True)}
_DEEPER = HOLE_JSON + ","  # the lead of a text left out below the item's own keys (``holes.put``'s "")


_NAMELESS = frozenset({"user", "system", "developer"})  # items that read no call's name or id
_OPENAI_KEYS = openai.FIELDS - OWN_KEYS  # an item holding one of these is read the general way
_CALL_KEYS = ["id", "type", "function"]
_FUNCTION_KEYS = ["name", "arguments"]


def checked(msgs: Sequence[Writable], limits: Limits) -> list[int]:
    """The offsets of the messages :func:`read` checked under ``limits``: their rows come from
    :func:`rows`, with no budget."""
    return [i for i, msg in enumerate(msgs)
            if (msg.__class__ is Plain or msg.__class__ is Parts) and msg.checked is limits]  # type: ignore[union-attr]


def rows(msgs: Sequence[Writable], ready: list[int], conversation_id: str, first_seq: int, plan: LinkPlan,
         blobs: BlobSink) -> tuple[list[list[Any]], tuple[str, ...], list[list[Any]], tuple[str, ...]]:
    """The message and block rows of the checked messages at offsets ``ready``, as ``store.codec``
    makes them, listed (``bulk.listed``), each with the columns its rows set: a text or a tool result
    in its message row, and an empty document (``PLAIN``; none for a result that answers no call, which
    only a list reports); an assistant's calls in block rows, their text before them, and the item as
    its document, without them (``#k``) or its text where it is long enough (``docs.hollow``); a user's
    texts and images (:class:`~store.lean.Parts`) in block rows, each image's bytes in ``blobs``."""
    messages, blocks, starts, unanswered = [], [], plan.window_starts, plan.unanswered
    take = list.__getitem__  # a Batch's own is Python code
    for i in ready:
        msg: Plain | Parts = take(msgs, i)  # type: ignore[arg-type]
        seq, content = first_seq + i, msg.content
        if not content:
            row = [conversation_id, seq, starts[i], msg.role, msg.source_format, None, PLAIN, msg.text, None, None]
        elif content[0].__class__ is Result:
            row = [conversation_id, seq, starts[i], msg.role, msg.source_format, None,
                   None if unanswered and i in unanswered else PLAIN, msg.text, content[0].call_id, msg.name]
        elif msg.__class__ is Plain:
            row = [conversation_id, seq, starts[i], msg.role, msg.source_format, None, PLAIN, None, None, None]
            first = 0
            if msg.text is not None:
                blocks.append([conversation_id, seq, 0, "text", msg.text, None, None, None, None])
                first = 1
            blocks += [[conversation_id, seq, position, "tool_call", call.arguments_raw, None, call.name,
                        call.call_id, None] for position, call in enumerate(content, first)]  # type: ignore[union-attr]
        else:
            row = [conversation_id, seq, starts[i], msg.role, msg.source_format, None, PLAIN, None, None, None]
            # a blob row's media type is the first put's (the block rows keep their own): none reads it
            blocks += [[conversation_id, seq, position, part.kind, part.text, part.media_type, None, None,
                        None if part.data is None else blobs.put(part.data, part.media_type)]
                       for position, part in enumerate(content)]
        if msg.row is not None:
            row[5], row[6] = msg.row
        messages.append(row)
    return (*bulk.trimmed(messages_t, MESSAGE_KEYS, messages), *bulk.trimmed(blocks_t, BLOCK_KEYS, blocks))


def linked_rows(msgs: Sequence[Writable], conversation_id: str, first_seq: int, index_base: int,
                known: dict[str, KnownCall], prior_starts: dict[int, int], blobs: BlobSink,
                null: Any = None) -> tuple[list[list[Any]], tuple[str, ...], list[list[Any]], tuple[str, ...],
                                           list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`rows` of a chunk whose every message :func:`read` checked, with its links (``links.plan``'s
    inserts and updates, in the same order, and its window starts) made in the same pass: one walk of
    the chunk instead of two. The property test holds the two paths to the same rows, links and errors
    (tests/test_onepass.py). With a ``null`` other than None (SQLite's 0, ``bulk._Insert.zeroed``), the
    rows hold it for NULL and every column of :data:`MESSAGE_KEYS` and :data:`BLOCK_KEYS`: the driver's
    parameters as they are, ``conversation_id`` given as the driver binds it (``bulk.bound``)."""
    messages: list[list[Any]] = []
    blocks: list[list[Any]] = []
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    new_calls: dict[str, dict[str, Any]] = {}
    starts: list[int] = []  # this chunk's, by offset
    add, add_start = messages.append, starts.append
    for i, msg in enumerate(msgs):
        seq, content = first_seq + i, msg.content
        if not content:  # a text (an assistant's with notes: ``row``)
            add_start(seq)
            add(text_row(msg, conversation_id, seq, null))
            continue
        kind = content[0].__class__
        if kind is Result:
            call_id, doc, earliest = content[0].call_id, PLAIN, seq
            if (row := new_calls.get(call_id)) is not None:
                if row["result_seq"] is None:
                    row["status"], row["result_seq"], row["result_position"] = "answered", seq, 0
                    earliest = row["call_seq"]
            elif (stored := known.get(call_id)) is not None:
                if not stored.answered:
                    updates.append({"cid": conversation_id, "call": call_id, "status": "answered",
                                    "result_seq": seq, "result_position": 0})
                    stored.answered = True
                    earliest = stored.call_seq
            else:
                doc = null  # answers no call: the reader's document (none) says so
            start = earliest if earliest == seq else _reach(earliest, seq, first_seq, starts, prior_starts)
            add_start(start)
            add([conversation_id, seq, start, "tool", msg.source_format, null, doc, msg.text, call_id,
                 null if msg.name is None else msg.name])
            continue
        add_start(seq)
        add(block_rows(msg, conversation_id, seq, null, blocks, new_calls, known, inserts, blobs, index_base + i))
    return (*listed(messages, blocks, null), inserts, updates)


def listed(messages: list[list[Any]], blocks: list[list[Any]],
           null: Any) -> tuple[list[list[Any]], tuple[str, ...], list[list[Any]], tuple[str, ...]]:
    """Message and block rows built with ``null`` for NULL, and the columns they set: every one where
    they are the driver's parameters (``null`` not None), else only those some row sets (``bulk.trimmed``)."""
    if null is not None:
        return messages, MESSAGE_KEYS, blocks, BLOCK_KEYS if blocks else ()
    return (*bulk.trimmed(messages_t, MESSAGE_KEYS, messages), *bulk.trimmed(blocks_t, BLOCK_KEYS, blocks))


def text_row(msg: Plain, conversation_id: str, seq: int, null: Any) -> list[Any]:
    """The message row of a text read in one pass (an assistant's with notes keeps its ``row``)."""
    extras, doc = (None, PLAIN) if msg.row is None else msg.row
    return [conversation_id, seq, seq, msg.role, msg.source_format, _bound_extras(extras, null), doc,
            null if msg.text is None else msg.text, null, null]  # an assistant's null content


def block_rows(msg: Plain | Parts, conversation_id: str, seq: int, null: Any, blocks: list[list[Any]],
               new_calls: dict[str, dict[str, Any]], known: Mapping[str, Any], inserts: list[dict[str, Any]],
               blobs: BlobSink, index: int) -> list[Any]:
    """The message row of an assistant's calls or a user's texts and images read in one pass, its block rows
    added to ``blocks`` and its calls' links to ``new_calls`` and ``inserts`` (a call id used before, in
    ``new_calls`` or ``known``, is refused as message ``index``'s): :func:`linked_rows`'s and ``store.fused``'s."""
    row = [conversation_id, seq, seq, msg.role, msg.source_format, null, PLAIN, null, null, null]
    content = msg.content
    if content[0].__class__ is Call:
        first = 0
        if msg.text is not None:  # type: ignore[union-attr]
            blocks.append([conversation_id, seq, 0, "text", msg.text, null, null, null, null])  # type: ignore[union-attr]
            first = 1
        for position, call in enumerate(content, first):
            call_id = call.call_id  # type: ignore[union-attr]
            if call_id in new_calls or call_id in known:
                raise DuplicateToolCallError(call_id, index)
            new_calls[call_id] = link = {
                "conversation_id": conversation_id, "call_id": call_id, "name": call.name,  # type: ignore[union-attr]
                "status": "pending", "call_seq": seq, "call_position": position,
                "result_seq": None, "result_position": None}
            inserts.append(link)
            blocks.append([conversation_id, seq, position, "tool_call", call.arguments_raw, null,  # type: ignore[union-attr]
                           call.name, call_id, null])  # type: ignore[union-attr]
    else:
        blocks += [[conversation_id, seq, position, part.kind, null if part.text is None else part.text,  # type: ignore[union-attr]
                    null if part.media_type is None else part.media_type, null, null,  # type: ignore[union-attr]
                    null if part.data is None else blobs.put(part.data, part.media_type)]  # type: ignore[union-attr]
                   for position, part in enumerate(content)]
    if msg.row is not None:
        extras, row[6] = msg.row
        row[5] = _bound_extras(extras, null)
    return row


def _bound_extras(extras: JSONText | None, null: Any) -> Any:
    """A message row's extras: JSON text, which the column's bind processor passes on as a ``str``
    (the driver adapts a subclass of it the slow way); bound, the ``str`` itself."""
    if extras is None:
        return null
    return extras if null is None else str(extras)


def _reach(earliest: int, seq: int, first_seq: int, starts: list[int], prior: dict[int, int]) -> int:
    """The window start of a result at ``seq`` answering a call at ``earliest``: as far back as the
    windows of the messages in between reach (``links.plan``)."""
    start = min(starts[max(earliest - first_seq, 0):], default=earliest)
    for s in range(earliest, first_seq):  # a call of a chunk or a write before
        start = min(start, prior[s])
    return min(start, earliest)


messages_t, blocks_t = MessageRow.__table__, BlockRow.__table__
MESSAGE_KEYS = ("conversation_id", "seq", "window_start", "role", "source_format", "extras", "doc", "text", "call_id",
                "tool_name")
"""The message columns :func:`rows` sets (``codec.PLAIN_COLUMNS``), in table order."""
BLOCK_KEYS = ("conversation_id", "seq", "position", "kind", "text", "media_type", "tool_name", "call_id", "blob_sha256")
assert MESSAGE_KEYS == tuple(c.key for c in messages_t.columns if c.key in PLAIN_COLUMNS)
assert BLOCK_KEYS == tuple(c.key for c in blocks_t.columns if c.key in BLOCK_KEYS)
