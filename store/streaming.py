"""Reading and writing conversations chunk by chunk, so that a million messages never
sit in memory at once.

A format streams on input when its adapter has ``to_canonical_stream`` (the same
result as ``to_canonical`` on the whole list). On output, a conversation is cut
only where no tool result reaches back across the cut (``window_start``), so
formats that regroup results with their calls give the same messages as a whole
export; :data:`STREAM_WRITES` lists the formats whose output is a plain list of
messages that concatenates, checked by the tests on every sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import Any

import sqlalchemy as sa

from . import docs
from .chains import chain_for
from .formats import detect, get_format, read
from .formats._common import validate
from .lean import Writable
from .limits import check_input
from .model import MESSAGES
from .operations import Scope, messages_t, require

CHUNK = 5000
"""Messages per chunk when streaming."""

STREAM_WRITES = frozenset({"openai", "openai-responses", "autogen", "autogen-core", "agentscope", "agent-framework"})
"""Formats whose export is a list of messages that a safe cut splits into independent parts."""


def chunked(items: Iterable[Any], size: int | None = None) -> Iterator[list[Any]]:
    it, size = iter(items), size or CHUNK
    while chunk := list(islice(it, size)):
        yield chunk


def _checked(chunks: Iterator[list[Any]], format: str) -> Iterator[list[Any]]:
    """The chunks, each refused as ``read`` refuses a whole list (:func:`~store.limits.check_input`)."""
    first = 0
    for chunk in chunks:
        check_input(chunk, format, first)
        first += len(chunk)
        yield chunk


def read_chunks(messages: Iterable[Any], format: str, size: int | None = None) -> Iterator[list[Writable]]:
    """Canonical messages from ``messages`` (any iterable, read lazily) in chunks, for a write
    (``docs.read``'s batches where the format reads item by item).

    Formats without a streaming reader are read whole, then handed out in chunks."""
    size = size or CHUNK
    if format == "auto":
        it = iter(messages)
        head = list(islice(it, size))
        format, messages = detect(head), chain(head, it)
    if format == "canonical":  # Message objects pass as they are; dicts are validated, errors located
        first = 0
        for chunk in chunked(messages, size):
            yield validate(MESSAGES, chunk, "canonical", first)
            first += len(chunk)
        return
    fmt = get_format(format)
    if fmt.read_fields_stream is not None:  # with documents, and plain items stood in (store.lean)
        yield from docs.read_stream(_checked(chunked(messages, size), format), fmt)
        return
    stream = fmt.to_canonical_stream
    if stream is not None:
        yield from stream(_checked(chunked(messages, size), format))
        return
    whole = read(list(messages), format)
    for start in range(0, len(whole), size):
        yield whole[start:start + size]


def safe_cuts(conn: sa.Connection, scope: Scope, conversation_id: str, size: int) -> list[int]:
    """Where to cut a conversation into parts of about ``size`` messages (the last cut is
    its length) so that no tool result is in a later part than its call. A message whose
    window starts before it (a result) makes every cut in ``(window_start, seq]`` unsafe;
    only those messages are read, in one index range scan (a window function over the
    whole conversation is quadratic on MariaDB)."""
    found = require(conn, scope, conversation_id)
    m, reaching = messages_t, []
    for owner, lo, hi in chain_for(conn, found.id, found.parent_id):
        reaching += conn.execute(
            sa.select(m.c.window_start, m.c.seq)
            .where(m.c.conversation_id == owner, m.c.window_start < m.c.seq, m.c.seq >= lo, m.c.seq < hi)
        ).all()
    return cuts_between(reaching, found.message_count, size)


def cuts_between(reaching: Iterable[tuple[int, int]], count: int, size: int) -> list[int]:
    """``safe_cuts`` of a conversation of ``count`` messages whose results are the
    ``(window_start, seq)`` pairs of ``reaching``."""
    unsafe: list[tuple[int, int]] = []  # merged (first unsafe cut, last unsafe cut), in order
    for start, seq in sorted(reaching):
        if unsafe and start + 1 <= unsafe[-1][1] + 1:
            unsafe[-1] = (unsafe[-1][0], max(unsafe[-1][1], seq))
        else:
            unsafe.append((start + 1, seq))
    cuts, last, i = [], 0, 0
    while (cut := last + size) < count:
        while i < len(unsafe) and unsafe[i][1] < cut:
            i += 1
        if i < len(unsafe) and unsafe[i][0] <= cut:
            cut = unsafe[i][1] + 1  # the first safe cut after the interval
            if cut >= count:
                break
        cuts.append(cut)
        last = cut
    return [*cuts, count] if count > last else cuts
