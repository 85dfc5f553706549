"""One conversation as a page: a bounded range of its messages, each tool call with its
status and result, and links between calls and results across pages."""

from __future__ import annotations

from typing import Any

from ..model import Message, ToolResultBlock
from ..repository import ConversationStore
from . import data
from .present import call_anchor

PAGE_SIZE = 100
"""Messages on one page: a 10k-message conversation is 100 pages, never one huge page."""
WINDOWS = (10, 20, 50, 100)
"""The ``last=N`` windows offered (any N works in the URL)."""


def page_start(seq: int) -> int:
    """The first message of the page (of the plain, unwindowed view) that holds ``seq``."""
    return seq // PAGE_SIZE * PAGE_SIZE


def conversation_page(store: ConversationStore, conversation_id: str, *, start: int,
                      last: int | None) -> dict[str, Any]:
    """The template context of a conversation page: from ``start``, or from where the
    store's window of the ``last`` messages starts."""
    info = store.info(conversation_id)
    cid = info.id  # its canonical spelling, for every link on the page
    if last is not None:
        start = data.window_start(store, cid, last)
    messages = data.message_range(store, cid, start, start + PAGE_SIZE)
    results = {block.call_id: block for message in messages.messages for block in message.content
               if isinstance(block, ToolResultBlock)}
    return {
        "info": info,
        "part": messages,
        "numbered": list(zip(range(messages.start, messages.stop), messages.messages)),
        "results": results,
        "links": messages.links,
        "last": last,
        "windows": WINDOWS,
        "pager": _pager(cid, messages),
        "href": lambda seq, anchor: place(cid, messages, seq, anchor),
        "call_anchor": call_anchor,
        "authors": _authors,
    }


def place(cid: str, messages: data.MessageRange, seq: int, anchor: str) -> str:
    """A link to ``anchor`` in message ``seq``: within this page when it is here, else on
    the page that holds it."""
    if messages.start <= seq < messages.stop:
        return f"#{anchor}"
    return f"/c/{cid}?start={page_start(seq)}#{anchor}"


def _pager(cid: str, messages: data.MessageRange) -> dict[str, str | None]:
    start, stop, count = messages.start, messages.stop, messages.count
    base = f"/c/{cid}?start="
    return {
        "first": base + "0" if start > 0 else None,
        "previous": base + str(max(0, start - PAGE_SIZE)) if start > 0 else None,
        "next": base + str(stop) if stop < count else None,
        "last": base + str(page_start(count - 1)) if stop < count else None,
    }


def _authors(message: Message) -> str:
    """Who wrote it: the author's name, and the source's own role name where it differs."""
    parts = [message.name or ""]
    if message.source_role and message.source_role != message.role:
        parts.append(f"({message.source_role})")
    return " ".join(p for p in parts if p)
