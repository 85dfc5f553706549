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

from .errors import DuplicateToolCallError
from .lean import Writable, first_position


@dataclass
class KnownCall:
    """A call stored by an earlier write."""

    call_seq: int
    answered: bool


@dataclass
class LinkPlan:
    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    window_starts: list[int] = field(default_factory=list)
    unanswered: set[int] = field(default_factory=set)
    """Offsets of the messages holding a result that answers no call stored or written before it."""


def referenced_call_ids(messages: Sequence[Writable],
                        kinds: tuple[str, ...] = ("tool_call", "tool_result")) -> set[str]:
    """The call ids the blocks of ``kinds`` name (by default calls and results)."""
    return {
        block.call_id
        for msg in messages
        for block in msg.content
        if block.kind in kinds
    }


def calls(messages: Sequence[Writable]) -> list[tuple[int, str]]:
    """Each call's message offset and id, in order."""
    return [(offset, block.call_id) for offset, msg in enumerate(messages) for block in msg.content
            if block.kind == "tool_call"]


def earliest_open_call(messages: Sequence[Writable], known: Mapping[str, KnownCall]) -> int | None:
    """The seq of the earliest stored call this batch answers: window starts are needed from there."""
    if not known:  # a new conversation's, or a batch answering no stored call: no walk of every block
        return None
    seqs = [
        known[b.call_id].call_seq
        for msg in messages
        for b in msg.content
        if b.kind == "tool_result" and b.call_id in known and not known[b.call_id].answered
    ]
    return min(seqs, default=None)


def plan(messages: Sequence[Writable], *, conversation_id: str, first_seq: int, index_base: int = 0,
         known: Mapping[str, KnownCall], prior_starts: Mapping[int, int]) -> LinkPlan:
    """New link rows, updates of stored calls answered now, and each message's window start.

    A result links to its call only if the call has none yet (the first result wins);
    a call id already used in the conversation is refused.
    """
    result = LinkPlan()
    new_calls: dict[str, dict[str, Any]] = {}
    starts = result.window_starts  # this batch's, by offset; those before it in ``prior_starts``
    add_start, inserts = starts.append, result.inserts
    for offset, msg in enumerate(messages):
        seq = first_seq + offset
        if not msg.content:  # no call, no result (half of an agent's messages): it starts its own window
            add_start(seq)
            continue
        earliest = seq
        for position, block in enumerate(msg.content, first_position(msg)):
            kind = block.kind
            if kind == "tool_call":
                call_id = block.call_id
                if call_id in new_calls or call_id in known:
                    raise DuplicateToolCallError(call_id, index_base + offset)
                new_calls[call_id] = row = {
                    "conversation_id": conversation_id, "call_id": call_id, "name": block.name,
                    "status": "pending", "call_seq": seq, "call_position": position,
                    "result_seq": None, "result_position": None,
                }
                inserts.append(row)
            elif kind == "tool_result":
                status = "error" if block.is_error else "answered"
                if (row := new_calls.get(block.call_id)) is not None and row["result_seq"] is None:
                    row["status"], row["result_seq"], row["result_position"] = status, seq, position
                    earliest = min(earliest, row["call_seq"])
                elif (stored := known.get(block.call_id)) is not None and not stored.answered:
                    result.updates.append({"cid": conversation_id, "call": block.call_id, "status": status,
                                           "result_seq": seq, "result_position": position})
                    stored.answered = True
                    earliest = min(earliest, stored.call_seq)
                elif row is None and stored is None:
                    result.unanswered.add(offset)
        if earliest != seq:  # a result: back to its call, and as far as the windows in between reach
            start = earliest
            for s in range(earliest, seq):
                reach = starts[s - first_seq] if s >= first_seq else prior_starts[s]
                if reach < start:
                    start = reach
            add_start(start)
        else:
            add_start(seq)
    return result
