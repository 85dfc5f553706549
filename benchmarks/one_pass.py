"""The bound of issue 12's next design step: one pass from an input item to its rows.

``python -m benchmarks.one_pass [--messages 100000]``: on the general path a plain OpenAI item (a role
and its text, a tool result of its call id and its text, an assistant's calls) goes through a dozen
passes on its way to the driver: the reader's checks, a ``lean.Plain``, a budget, the block rows, the
links, the documents, a message row as a dict, then its parameters. ``store.onepass`` (eighteenth
session) now reads nearly every item of a save that way, and ``store.fused`` (thirty-seventh) makes a new
conversation's rows as it reads them; both are timed here too. This prototype (the
seventeenth session's) builds the same rows' parameters
from the item in one pass (checks of size, bounds, lone surrogates and holes included; the window
starts and the links of the calls it has seen), leaves every other item to the general path, and
checks its rows against the general path's (``store.rows.chunk_rows``) before timing them. It writes nothing:
what it measures is the Python before the driver, which is half of an ingest's time.
"""

from __future__ import annotations

import argparse
import gc
import time
from operator import itemgetter
from typing import Any

import orjson
from sqlalchemy.dialects import sqlite

from store import docs, fused, onepass, rows
from store.docs import MIN_HOLE
from store.holes import CONTENT, HOLE, OPEN
from store.lean import bare_arguments
from store.limits import BOUNDS, Limits

from . import workload

CID = "0190e7a0-0000-7000-8000-000000000000"
MESSAGE_KEYS = ("seq", "window_start", "role", "source_format", "extras", "doc", "text", "call_id", "tool_name")
BLOCK_KEYS = ("seq", "position", "kind", "text", "tool_name", "call_id")
CALL_KEYS = ("call_id", "name", "status", "call_seq", "call_position", "result_seq", "result_position")
_ROLES = frozenset({"system", "user", "assistant"})
_ITEM_KEYS, _CALL, _FUNCTION = ["role", "content"], ["id", "type", "function"], ["name", "arguments"]
_RESULT_KEYS = ["role", "tool_call_id", "content"]
_BOUND = BOUNDS["call_id"]


class _Plain(Exception):
    """An item this pass leaves to the general path."""


def _size(text: str) -> int:
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: the general path says where
        raise _Plain from None


def one_pass(items: list[dict[str, Any]], limit: int) -> tuple[list[tuple], list[tuple], dict[str, list], int]:
    """The message, block and link rows of the plain items of a new conversation, and how many
    items were left to the general path."""
    messages: list[tuple] = []
    blocks: list[tuple] = []
    calls: dict[str, list] = {}  # call id -> its link row (a list: its result fills it)
    starts: list[int] = []
    left = 0
    for seq, item in enumerate(items):
        try:
            if item.__class__ is not dict:
                raise _Plain
            if len(item) == 2 and list(item) == _ITEM_KEYS and item["role"] in _ROLES:
                starts.append(seq)
                messages.append(_text(seq, item, limit))
            elif len(item) == 3 and list(item) == _RESULT_KEYS:
                messages.append(_result(seq, item, calls, starts, limit))
            elif item.get("role") == "assistant" and list(item) == ["role", "content", "tool_calls"]:
                starts.append(seq)
                messages.append(_calls(seq, item, calls, blocks, limit))
            else:
                raise _Plain
        except _Plain:
            left += 1
            if len(starts) == seq:
                starts.append(seq)
            _their_calls(seq, item, calls)
    return messages, blocks, calls, left


def _their_calls(seq: int, item: dict[str, Any], calls: dict[str, list]) -> None:
    """The calls of an item left to the general path, which the results this pass takes answer."""
    if item.get("role") == "assistant" and isinstance(item.get("tool_calls"), list):
        first = 0 if item.get("content") is None else 1
        for position, call in enumerate(item["tool_calls"], first):
            calls[call["id"]] = [call["function"]["name"], "pending", seq, position, None, None]


def _text(seq: int, item: dict[str, Any], limit: int) -> tuple:
    text = item["content"]
    if text.__class__ is not str or text[:1] == HOLE or _size(text) + 6 > limit:
        raise _Plain
    return (seq, seq, item["role"], "openai", None, "", text, None, None)


def _result(seq: int, item: dict[str, Any], calls: dict[str, list], starts: list[int], limit: int) -> tuple:
    text, call_id = item["content"], item["tool_call_id"]
    if text.__class__ is not str or call_id.__class__ is not str or not call_id or text[:1] == HOLE \
            or call_id[:1] == HOLE or len(call_id) > _BOUND or _size(text) + _size(call_id) + 6 > limit:
        raise _Plain
    start, call = seq, calls.get(call_id)
    if call is not None and call[4] is None:  # answers a call before it: its window reaches back
        call[1], call[4], call[5] = "answered", seq, 0
        start = min([call[2], *starts[call[2]:seq]])
    starts.append(start)
    return (seq, start, "tool", "openai", None, "", text, call_id, None if call is None else call[0])


def _calls(seq: int, item: dict[str, Any], calls: dict[str, list], blocks: list[tuple], limit: int) -> tuple:
    text, raw_calls = item["content"], item["tool_calls"]
    if text is not None and (text.__class__ is not str or text[:1] == HOLE) or not raw_calls:
        raise _Plain
    used, mine = 6 + (0 if text is None else _size(text)), []
    first = 0 if text is None else 1
    for position, call in enumerate(raw_calls, first):
        function = call["function"]
        call_id, name, raw = call["id"], function["name"], function["arguments"]
        if list(call) != _CALL or list(function) != _FUNCTION or call_id in calls or len(call_id) > _BOUND \
                or len(name) > _BOUND or HOLE in (call_id[:1], name[:1], raw[:1]) or not bare_arguments(raw):
            raise _Plain
        used += _size(call_id) + _size(name) + _size(raw)
        mine.append((seq, position, "tool_call", raw, name, call_id))
    extras = _NULL_CONTENT if text is None else None
    if used + (0 if extras is None else len(extras)) > limit:
        raise _Plain
    for row in mine:
        calls[row[5]] = [row[4], "pending", seq, row[1], None, None]
    if text is not None:
        blocks.append((seq, 0, "text", text, None, None))
    blocks += mine
    long = text is not None and len(text) >= MIN_HOLE
    shape = {"role": "assistant", "content": HOLE if long else text, "tool_calls": [HOLE] * len(mine)}
    doc = orjson.dumps(shape).decode()
    leads = (CONTENT if long else "") + "".join(f'{OPEN}#{k}",' for k in range(len(mine)))
    return (seq, seq, "assistant", "openai", extras, leads + doc, None, None, None)


_NULL_CONTENT = '{"openai":{"content":"null"}}'  # how the reader notes an item's "content": null


def _link_rows(calls: dict[str, list]) -> list[tuple]:
    return [(call_id, *row) for call_id, row in calls.items()]


def today(items: list[dict[str, Any]], read: Any = None) -> list[rows.ChunkRows]:
    """The general path's rows of the same items: read, then ``chunk_rows`` a chunk at a time, as
    ``save`` does; ``read(items, limits)``: another read (``store.onepass.read``)."""
    limits = Limits()
    batch = docs.read(items, "openai") if read is None else read(items, limits)
    linked = rows.Linked({}, {}, [])
    out = []
    for at in range(0, len(batch), 5000):
        chunk = rows.chunk_rows(limits, CID, batch[at:at + 5000], first_seq=at, known=linked.known,
                                prior_starts=linked.starts)
        linked.add(chunk)
        out.append(chunk)
    return out


def check(items: list[dict[str, Any]]) -> int:
    """That the one pass gives today's rows for every item it takes; the number it takes."""
    messages, blocks, calls, _ = one_pass(items, Limits().max_message_bytes)
    chunks = today(items)
    by_seq = {row["seq"]: row for chunk in chunks for row in _dicts(rows.messages_t, chunk.messages, chunk.message_keys)}
    assert [tuple(itemgetter(*MESSAGE_KEYS)(by_seq[row[0]])) for row in messages] == messages
    taken = {row[0] for row in messages}
    expected = [itemgetter(*BLOCK_KEYS)(row) for chunk in chunks for row in _dicts(rows.blocks_t, chunk.blocks, chunk.block_keys)
                if row["seq"] in taken]
    assert expected == blocks
    links = {row["call_id"]: dict(row) for chunk in chunks for row in chunk.tool_calls}
    for update in (update for chunk in chunks for update in chunk.link_updates):  # a result in a later chunk
        links[update["call"]].update(status=update["status"], result_seq=update["result_seq"],
                                     result_position=update["result_position"])
    assert all(itemgetter(*CALL_KEYS)(links[row[0]]) == row for row in _link_rows(calls))
    return len(messages)


def _dicts(table: Any, listed: list[list[Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Listed rows as dicts of every column."""
    return [dict.fromkeys(table.c.keys()) | dict(zip(keys, row)) for row in listed]


_DIALECT = sqlite.dialect()


def _parameters(chunk: rows.ChunkRows) -> None:
    """The executemany parameters of a chunk's rows, as ``store.rows`` makes them on SQLite."""
    rows._prepared(_DIALECT, chunk)


def _parameters_of(made: Any) -> None:
    """The executemany parameters of ``store.fused``'s rows, as a save sends them (built as SQLite's)."""
    rows._prepared(_DIALECT, rows.ChunkRows(made.blobs, made.messages, made.blocks, made.links, [], made.message_keys,
                                            made.block_keys, made.bound))


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    items = workload.conversation(args.messages)
    taken = check(items)
    limits_ = Limits()
    limit = limits_.max_message_bytes
    plain = [items[row[0]] for row in one_pass(items, limit)[0]]
    gc.disable()  # as a save pauses it
    one = _best(lambda: one_pass(items, limit), args.repeat)
    now = _best(lambda: [_parameters(chunk) for chunk in today(items)], args.repeat)
    now_plain = _best(lambda: [_parameters(chunk) for chunk in today(plain)], args.repeat)
    store = _best(lambda: [_parameters(chunk) for chunk in today(items, onepass.read)], args.repeat)
    straight = _best(lambda: _parameters_of(fused.rows(items, limits_, CID, rows.bound(_DIALECT, CID))), args.repeat)
    n = args.messages
    print(f"{n:,} workload items; the one pass takes {taken:,} ({taken / n:.0%}) and gives today's rows for them")
    print(f"the general path (read, rows, their parameters), every item: {now / n * 1e6:.2f} us a message")
    print(f"the general path, the items the one pass takes alone: {now_plain / len(plain) * 1e6:.2f} us a message")
    print(f"one pass, the items it takes (the others skipped): {one / taken * 1e6:.2f} us a message")
    print(f"the store's one pass (store.onepass), every item: {store / n * 1e6:.2f} us a message")
    print(f"the store's save of a new conversation (store.fused), every item: {straight / n * 1e6:.2f} us a message")


if __name__ == "__main__":
    main()
