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

from .formats import detect, get_format, read
from .model import Message

CHUNK = 5000
"""Messages per chunk when streaming."""

STREAM_WRITES = frozenset({"openai", "openai-responses", "autogen", "autogen-core", "agentscope", "agent-framework"})
"""Formats whose export is a list of messages that a safe cut splits into independent parts."""


def chunked(items: Iterable[Any], size: int | None = None) -> Iterator[list[Any]]:
    it, size = iter(items), size or CHUNK
    while chunk := list(islice(it, size)):
        yield chunk


def read_chunks(messages: Iterable[Any], format: str, size: int | None = None) -> Iterator[list[Message]]:
    """Canonical messages from ``messages`` (any iterable, read lazily) in chunks.

    Formats without a streaming reader are read whole, then handed out in chunks."""
    size = size or CHUNK
    if format == "auto":
        it = iter(messages)
        head = list(islice(it, size))
        format, messages = detect(head), chain(head, it)
    if format == "canonical":
        for chunk in chunked(messages, size):
            yield [m if isinstance(m, Message) else Message.model_validate(m) for m in chunk]
        return
    stream = get_format(format).to_canonical_stream
    if stream is not None:
        yield from stream(chunked(messages, size))
        return
    whole = read(list(messages), format)
    for start in range(0, len(whole), size):
        yield whole[start:start + size]

