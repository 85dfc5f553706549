"""Token usage of a conversation: the counts its messages carry, summed in total and per model.

A message's ``usage`` (one model call) and usage blocks among its content (agent-framework
keeps ``UsageContent`` there) each count once, under the message's ``model``. Only the three
canonical counts are summed; a record without ``total_tokens`` counts its input plus output.
Provider-specific counts (cache reads, reasoning tokens) stay in each message's ``usage.extras``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from .model import ConversationUsage, Message, ModelUsage
from .operations import Scope, blocks_t, messages_t, require
from .prepared import Prepared


def summarize(conversation_id: str, records: Iterable[tuple[str | None, Mapping[str, Any]]]) -> ConversationUsage:
    """Sum ``(model, usage)`` records (usage as a dict of counts)."""
    total = ConversationUsage(conversation_id=conversation_id)
    per_model: dict[str | None, ModelUsage] = {}
    for model, usage in records:
        total.add(usage)
        per_model.setdefault(model, ModelUsage(model=model)).add(usage)
    total.by_model = sorted(per_model.values(), key=lambda m: (-m.total_tokens, m.model is None, m.model or ""))
    return total


def of_messages(conversation_id: str, messages: Sequence[Message]) -> ConversationUsage:
    """The usage of messages already loaded (``convstore show``)."""
    return summarize(conversation_id, (
        (m.model, usage.model_dump())
        for m in messages
        for usage in ([m.usage] if m.usage is not None else []) + [b.usage for b in m.content if b.kind == "usage"]
    ))


_MESSAGE_USAGE = Prepared(sa.select(messages_t.c.model, messages_t.c.usage).where(
    messages_t.c.conversation_id == sa.bindparam("cid"), messages_t.c.usage.is_not(None)))
# Usage blocks with their message's model: the conversation's blocks of that kind, each
# joined to its message by key.
_BLOCK_USAGE = Prepared(
    sa.select(messages_t.c.model, blocks_t.c.payload)
    .select_from(blocks_t.join(messages_t, sa.and_(messages_t.c.conversation_id == blocks_t.c.conversation_id,
                                                   messages_t.c.seq == blocks_t.c.seq)))
    .where(blocks_t.c.conversation_id == sa.bindparam("cid"), blocks_t.c.kind == sa.bindparam("kind")))


def conversation_usage(conn: sa.Connection, scope: Scope, conversation_id: str) -> ConversationUsage:
    """Three statements whatever the length; messages' text and blocks are not read."""
    require(conn, scope, conversation_id)
    return of_conversation(conn, conversation_id)


def of_conversation(conn: sa.Connection, conversation_id: str) -> ConversationUsage:
    """The usage of a conversation known to exist (two key range scans)."""
    records = [(model, usage) for model, usage in _MESSAGE_USAGE.run(conn, cid=conversation_id)]
    blocks = _BLOCK_USAGE.run(conn, cid=conversation_id, kind="usage")
    records += [(model, payload["usage"]) for model, payload in blocks
                if payload and isinstance(payload.get("usage"), dict)]
    return summarize(conversation_id, records)
