"""Forks: a new conversation that shares the first messages of another and goes on its own way.

A fork holds no copy of what it shares: its row names its ``parent_id`` and ``fork_seq``, and
its own messages start at ``seq = fork_seq``, so positions (``seq``, tool-call positions) are
the same in parent and fork. Reads follow the chain of parents (``operations.chain_of``: one
recursive statement, then one range scan per segment). The fork gets its own copy of the
tool-call links of the shared prefix (a few rows): a call still pending at the fork point can be
answered differently in each, and lookups by call id find it in the fork as in the parent.

What is shared cannot be taken away while a fork shares it: deleting the parent, or popping,
truncating or replacing it below a fork point, raises ``SharedHistoryError`` (delete the forks
first); ``prune`` deletes due forks before their parent, and keeps a parent while a fork
that shares its messages stays.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from . import bulk, listing
from .errors import InputError
from .operations import (
    ConversationInfo, Scope, by_key, locked_count, new_conversation, require, tool_calls_t,
)

def fork(conn: sa.Connection, scope: Scope, conversation_id: str, new_id: str, at: int | None, *,
         allow_pending: bool = False, key: str | None = None, title: Any = listing.UNSET,
         metadata: Any = listing.UNSET, tags: Any = listing.UNSET, expires_at: datetime | None = None) -> None:
    """A fork of the conversation sharing its first ``at`` messages (all of them if None).
    Title, metadata and tags are the parent's unless given (``listing.UNSET``)."""
    count = locked_count(conn, scope, conversation_id)  # no truncate of the parent meanwhile
    at = count if at is None else at
    if type(at) is not int or not 0 <= at <= count:
        raise InputError(f"at must be a message position from 0 to {count} (the conversation's length), got {at!r}")
    parent = require(conn, scope, conversation_id)
    t = tool_calls_t
    links = [dict(r) for r in conn.execute(sa.select(t).where(t.c.conversation_id == parent.id,
                                                              t.c.call_seq < at)).mappings()]
    open_calls = sorted(r["call_id"] for r in links if r["result_seq"] is None or r["result_seq"] >= at)
    if open_calls and not allow_pending:
        raise InputError(
            f"a fork at message {at} of conversation {parent.id} would start inside pending tool calls "
            f"({', '.join(open_calls[:5])}): their results come later or not at all; fork at another "
            "message, or allow them (allow_pending=True; on the command line --allow-pending) to answer "
            "them in the fork")
    if key is not None and by_key(conn, scope, key) is not None:
        raise InputError(f"key {key!r} already names a conversation in namespace {scope.namespace!r}")
    inherited = listing.tags_of(conn, [parent.id]).get(parent.id, []) if tags is listing.UNSET else tags
    new_conversation(
        conn, scope, new_id, key=key, source_format=parent.source_format, message_count=at,
        title=parent.title if title is listing.UNSET else title,
        metadata=parent.metadata if metadata is listing.UNSET else metadata,
        tags=inherited, expires_at=expires_at, parent_id=parent.id, fork_seq=at)
    for row in links:
        row["conversation_id"] = new_id
        if row["result_seq"] is not None and row["result_seq"] >= at:
            row.update(status="pending", result_seq=None, result_position=None)
    bulk.insert(conn, t, links)


def lineage(conn: sa.Connection, scope: Scope, conversation_id: str) -> list[ConversationInfo]:
    """The conversation and its ancestors, the root first and the conversation itself last
    (one statement per generation)."""
    chain = [require(conn, scope, conversation_id)]
    while (parent := chain[-1].parent_id) is not None:
        chain.append(require(conn, scope, parent))
    return chain[::-1]
