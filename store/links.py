"""Linking tool calls to their results, and the window starts that keep them together.

``window_start`` of a message is the latest seq ``s`` such that the messages
``s..seq`` hold the call of every result among them (looking only at messages
up to ``seq``). Then the smallest window that ends the conversation, has at
least its last N messages and cuts no call from its result starts at
``min(window_start)`` over those N messages: one aggregate query, whatever the
length of the conversation or the nesting of calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .codec import new_id
from .errors import DuplicateToolCallError
from .model import Message


@dataclass
class KnownCall:
    """A call stored by an earlier write."""

    link_id: str
    call_seq: int
    answered: bool


@dataclass
class LinkPlan:
    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    window_starts: list[int] = field(default_factory=list)


def referenced_call_ids(messages: Sequence[Message]) -> set[str]:
    return {
        block.call_id
        for msg in messages
        for block in msg.content
        if block.kind in ("tool_call", "tool_result")
    }


def earliest_open_call(messages: Sequence[Message], known: Mapping[str, KnownCall]) -> int | None:
    """The seq of the earliest stored call this batch answers: window starts are needed from there."""
    seqs = [
        known[b.call_id].call_seq
        for msg in messages
        for b in msg.content
        if b.kind == "tool_result" and b.call_id in known and not known[b.call_id].answered
    ]
    return min(seqs, default=None)


def plan(messages: Sequence[Message], *, conversation_id: str, first_seq: int, index_base: int = 0,
         block_ids: Sequence[Sequence[str]], known: Mapping[str, KnownCall],
         prior_starts: Mapping[int, int]) -> LinkPlan:
    """New link rows, updates of stored calls answered now, and each message's window start.

    A result links to its call only if the call has none yet (the first result wins);
    a call id already used in the conversation is refused.
    """
    result = LinkPlan()
    new_calls: dict[str, dict[str, Any]] = {}
    starts = dict(prior_starts)
    for offset, msg in enumerate(messages):
        seq = first_seq + offset
        earliest = seq
        for block, block_id in zip(msg.content, block_ids[offset]):
            if block.kind == "tool_call":
                if block.call_id in new_calls or block.call_id in known:
                    raise DuplicateToolCallError(block.call_id, index_base + offset)
                row = {
                    "id": new_id(), "conversation_id": conversation_id, "call_id": block.call_id,
                    "name": block.name, "status": "pending", "call_block_id": block_id,
                    "call_seq": seq, "result_block_id": None, "result_seq": None,
                }
                new_calls[block.call_id] = row
                result.inserts.append(row)
            elif block.kind == "tool_result":
                status = "error" if block.is_error else "answered"
                answer = {"status": status, "result_block_id": block_id, "result_seq": seq}
                if (row := new_calls.get(block.call_id)) is not None and row["result_block_id"] is None:
                    row.update(answer)
                    earliest = min(earliest, row["call_seq"])
                elif (stored := known.get(block.call_id)) is not None and not stored.answered:
                    result.updates.append({"link_id": stored.link_id, **answer})
                    stored.answered = True
                    earliest = min(earliest, stored.call_seq)
        start = seq if earliest == seq else min([earliest, *(starts[s] for s in range(earliest, seq))])
        starts[seq] = start
        result.window_starts.append(start)
    return result
