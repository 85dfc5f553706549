"""Call ids for targets that need them: AutoGen allows a tool call's id to be empty (``""``,
as some models send it), while OpenAI, the Responses API, Anthropic and Docent link a result
to its call by a non-empty id (the APIs reject an empty one; Docent flags
``tool_call_missing_id``). Before writing such a target, every empty id gets one made up
from the call's place, the same on every export of the same messages (``call_<message>_<block>``,
message numbered in the whole conversation), and its result, the next result with an empty
id (of the same tool where results name theirs), gets the same. Each is reported
(``tool_call.call_id`` / ``tool_result.call_id`` approximated): the target holds an id the
source did not have. Anthropic and Docent also refuse a call id used twice (OpenAI-compatible
servers that number the calls of each turn from ``call_0`` repeat them): a later call of a used id
gets one made up the same way, and so does the result that answers it (a result of that id once its
first call is answered). A message of the target's own format keeps its ids, as it was.
"""

from __future__ import annotations

from ..lean import Call, Result, Writable
from ..model import Message, ToolCallBlock, ToolResultBlock
from ._common import Losses

_LINKED = (ToolCallBlock, ToolResultBlock, Call, Result)  # the calls and results of plain messages too


def _fresh(wanted: str, taken: set[str]) -> str:
    """``wanted``, or with a suffix when the conversation already uses it."""
    found, n = wanted, 1
    while found in taken:
        n += 1
        found = f"{wanted}_{n}"
    taken.add(found)
    return found


def missing_ids(messages: list[Writable]) -> bool:
    """Whether a call or result among ``messages`` has an empty id."""
    for m in messages:  # loops, not any() of a generator: half the time, on every load of 10k messages
        for b in m.content:
            if b.__class__ in _LINKED and not b.call_id:  # classes of their own: no subclasses
                return True
    return False


UNIQUE_CALL_IDS = frozenset({"anthropic", "docent"})
"""Targets that refuse a call id used twice in a conversation."""


def repeated_ids(messages: list[Writable], target: str) -> bool:
    """Whether a call of a message not from ``target`` reuses the id of a call before it."""
    seen: set[str] = set()
    for m in messages:
        for b in m.content:
            if b.__class__ is ToolCallBlock or b.__class__ is Call:
                if b.call_id in seen and b.call_id and m.source_format != target:
                    return True
                seen.add(b.call_id)
    return False


def fill_call_ids(messages: list[Message], losses: Losses, first: int = 0, target: str | None = None,
                  ) -> list[Message]:
    """``messages`` with an id for every call and result whose id is empty (``first``: the
    index of ``messages[0]`` in its conversation, for a part of a streamed export), and, for a
    ``target`` of :data:`UNIQUE_CALL_IDS`, for every call that repeats an id and its result."""
    repeats = target in UNIQUE_CALL_IDS and repeated_ids(messages, target)  # type: ignore[arg-type]
    if not repeats and not missing_ids(messages):
        return messages
    taken = {b.call_id for m in messages for b in m.content if isinstance(b, _LINKED)}
    waiting: list[tuple[str, str]] = []  # (made-up id, tool name) of calls without id, oldest first
    renamed: dict[str, list[str]] = {}  # a repeated id -> the made-up ids of its later calls, oldest first
    called: dict[str, bool] = {}  # an id -> whether its first call is answered
    out = []
    for index, msg in enumerate(messages):
        content = list(msg.content)
        for pos, block in enumerate(content):
            if not isinstance(block, _LINKED):
                continue
            if block.call_id:
                new = _repeat(block, msg, target, index + first, pos, called, renamed, taken) if repeats else None
                if new is None:
                    continue
                how = f"an id used before, sent as {new!r}" + (" (its call's)" if block.kind == "tool_result" else "")
            elif isinstance(block, ToolCallBlock):
                new = _fresh(f"call_{first + index}_{pos}", taken)
                waiting.append((new, block.name))
                how = f"an empty id, sent as {new!r}"
            else:
                call = next((w for w in waiting if w[1] == block.name), waiting[0] if waiting else None)
                if call is not None:
                    waiting.remove(call)
                new = call[0] if call else _fresh(f"result_{first + index}_{pos}", taken)
                how = f"an empty id, sent as {new!r}" + (" (its call's)" if call else " (no call without id before it)")
            losses.add(index, f"{block.kind}.call_id", "approximated", how)
            content[pos] = block.model_copy(update={"call_id": new})
        out.append(msg if content == msg.content else msg.model_copy(update={"content": content}))
    return out


def _repeat(block: ToolCallBlock | ToolResultBlock, msg: Message, target: str | None, index: int, pos: int,
            called: dict[str, bool], renamed: dict[str, list[str]], taken: set[str]) -> str | None:
    """The id a block of a repeated id is sent with, or None where it keeps its own."""
    cid = block.call_id
    if isinstance(block, ToolCallBlock):
        if cid not in called or msg.source_format == target:
            called.setdefault(cid, False)
            return None
        new = _fresh(f"call_{index}_{pos}", taken)
        renamed.setdefault(cid, []).append(new)
        return new
    if cid in called and not called[cid]:  # answers the first call of its id
        called[cid] = True
        return None
    return renamed[cid].pop(0) if renamed.get(cid) else None
