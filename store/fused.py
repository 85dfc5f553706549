"""A new conversation's OpenAI list straight to its rows: one pass, no message objects.

An agent's saved conversation is, item for item, what ``store.onepass`` reads in one pass: texts, tool
results, an assistant's calls (with its reasoning), a user's texts and images. For such a list,
:func:`rows` makes the rows themselves as it checks each item, with the very checks of
``store.onepass`` (its sizes, bounds, holes and documents): no :class:`~store.lean.Plain` for a text
or a result (three items in four), no second walk for the links and window starts, no second one
converting the rows to the driver's parameters. At the first item it does not take (any other
shape, a value too long, a call id used twice, an error) it gives up, and the save reads the list
the usual way (``onepass.read``), whose error, located, is the one raised. A property test holds
both ways to the same rows (tests/test_fused.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import onepass
from .codec import BlobSink
from .errors import ConvstoreError
from .holes import PLAIN
from .lean import RESULT_KEYS, TEXT_KEYS, Plain
from .limits import Limits


@dataclass
class Rows:
    """The rows of a new conversation's messages, from seq 0 (``len``: how many messages): message and
    block rows listed in ``message_keys`` and ``block_keys`` order (the driver's parameters where
    ``bound``, see ``onepass.linked_rows``), link rows, and the images' blobs."""

    count: int
    messages: list[list[Any]]
    message_keys: tuple[str, ...]
    blocks: list[list[Any]]
    block_keys: tuple[str, ...]
    links: list[dict[str, Any]]
    blobs: BlobSink
    bound: bool

    def __len__(self) -> int:
        return self.count


def rows(items: list[Any], limits: Limits, conversation_id: str, bound: tuple[str, Any] | None) -> Rows | None:
    """The rows of ``items`` (an OpenAI list) saved as a new conversation under ``limits``, or None where
    one of them is not read in one pass. ``bound``: as ``rows.chunk_rows`` takes it."""
    cid, null = (conversation_id, None) if bound is None else bound
    blobs = BlobSink(conversation_id)
    try:
        made = _walk(items, limits, cid, null, blobs)
    except (ConvstoreError, ValueError, RecursionError, OverflowError):  # a lone surrogate too
        return None
    if made is None:
        return None
    messages, blocks, links = made
    return Rows(len(items), *onepass.listed(messages, blocks, null), links, blobs, bound is not None)


def _walk(items: list[Any], limits: Limits, cid: str, null: Any,
          blobs: BlobSink) -> tuple[list[list[Any]], list[list[Any]], list[dict[str, Any]]] | None:
    messages: list[list[Any]] = []
    blocks: list[list[Any]] = []
    links: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}  # call id -> its link row (its result fills it in)
    names: dict[str, str] = {}  # call id -> tool name: the name a result after it takes
    starts: list[int] = []
    add, add_start, text_fits, result_name = messages.append, starts.append, onepass.text_fits, onepass.result_name
    for seq, item in enumerate(items):
        if item.__class__ is not dict:
            return None
        if len(item) == 2 and list(item) == TEXT_KEYS:  # half of an agent's items
            if item["content"].__class__ is not list:
                if not text_fits(item, limits):
                    return None
                add_start(seq)
                add([cid, seq, seq, item["role"], "openai", null, PLAIN, item["content"], null, null])
                continue
            msg = onepass._parts(item, limits)
        elif len(item) == 3 and list(item) == RESULT_KEYS and item["role"] == "tool":  # a quarter
            if (name := result_name(item, names, limits)) is onepass.REFUSED:
                return None
            call_id, doc, start = item["tool_call_id"], PLAIN, seq
            if (link := calls.get(call_id)) is None:
                doc = null  # answers no call: the reader's document (none) says so
            elif link["result_seq"] is None:
                link["status"], link["result_seq"], link["result_position"] = "answered", seq, 0
                start = onepass._reach(link["call_seq"], seq, 0, starts, {})
            add_start(start)
            add([cid, seq, start, "tool", "openai", null, doc, item["content"], call_id, null if name is None else name])
            continue
        else:
            tool_calls = item.get("tool_calls")
            if item.get("role") != "assistant" or tool_calls is not None and tool_calls.__class__ is not list:
                return None
            msg = onepass._assistant(item, tool_calls, limits)  # type: ignore[assignment]
        if msg is None:
            return None
        add_start(seq)
        if not msg.content:  # an assistant's text with notes
            add(onepass.text_row(msg, cid, seq, null))  # type: ignore[arg-type]
            continue
        add(onepass.block_rows(msg, cid, seq, null, blocks, calls, {}, links, blobs, seq))
        for call in msg.content if msg.__class__ is Plain else ():
            names[call.call_id] = call.name  # type: ignore[union-attr]
    return messages, blocks, links
