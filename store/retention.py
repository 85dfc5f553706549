"""Retention: deleting the conversations nobody has written to since a cutoff, and those whose
own ``expires_at`` has passed.

A conversation goes whole: its messages, blocks, tool-call links and binary payloads. Each
transaction takes the oldest conversations still due (at most ``BATCH``, and at most about
``BATCH_MESSAGES`` messages unless a single conversation holds more), locks their rows and
deletes them, so no lock is held for long however much goes. A conversation written to after
the cutoff is not due any more: an append that commits before the prune locks the row moves its
``updated_at`` past the cutoff (and the row is skipped, re-checked under the lock); one that
comes after finds no conversation and fails. Either way, nothing an append acknowledged is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from .errors import InputError
from .operations import Scope, conversations, delete_conversations, now, stored_time
from .prepared import Prepared

BATCH = 100
BATCH_MESSAGES = 100_000


class PruneReport(BaseModel):
    """What a prune deleted (or, with ``dry_run``, would delete)."""

    cutoff: datetime | None
    """Conversations last written to before this moment (UTC) were due; None: only expired ones."""
    dry_run: bool
    conversations: int = 0
    messages: int = 0


def cutoff(older_than: timedelta | datetime) -> datetime:
    """The moment (naive UTC, as stored) before which a conversation is due: ``older_than``
    ago, or that moment itself (naive datetimes are taken as UTC)."""
    if isinstance(older_than, timedelta):
        if older_than < timedelta(0):
            raise InputError(f"older_than must not be negative, got {older_than}")
        return now() - older_than
    if isinstance(older_than, datetime):
        return stored_time(older_than, "older_than")
    raise InputError(f"older_than must be a timedelta or a datetime, got {older_than!r}")


def _due(by_age: bool) -> sa.ColumnElement[bool]:
    """Due: expired, or (``by_age``) last written to before the cutoff."""
    expired = sa.and_(conversations.c.expires_at.is_not(None), conversations.c.expires_at <= sa.bindparam("now"))
    when = sa.or_(conversations.c.updated_at < sa.bindparam("cutoff"), expired) if by_age else expired
    # A conversation whose messages forks share waits for them (due forks go first).
    fork = conversations.alias("fork")
    shared = sa.exists().where(fork.c.parent_id == conversations.c.id, fork.c.fork_seq > sa.literal_column("0"))
    return sa.and_(conversations.c.namespace == sa.bindparam("ns"), when, ~shared)


# A fork's own messages: those it shares are its parent's.
_OWN_MESSAGES = conversations.c.message_count - sa.func.coalesce(conversations.c.fork_seq, sa.literal_column("0"))


@lru_cache(maxsize=2)
def _count(by_age: bool) -> Prepared:
    return Prepared(sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(_OWN_MESSAGES),
                                                                sa.literal_column("0"))).where(_due(by_age)))


@lru_cache(maxsize=8)
def _oldest(batch: int, by_age: bool) -> Prepared:
    """The oldest due conversations, at most ``batch``, their rows locked (FOR UPDATE)."""
    return Prepared(sa.select(conversations.c.id, _OWN_MESSAGES).where(_due(by_age))
                    .order_by(conversations.c.updated_at, conversations.c.id)
                    .limit(sa.literal_column(str(int(batch)))).offset(sa.literal_column("0"))
                    .with_for_update())


def _params(scope: Scope, due_before: datetime | None) -> dict[str, Any]:
    return {"ns": scope.namespace, "now": now(), **({"cutoff": due_before} if due_before is not None else {})}


def count_due(conn: sa.Connection, scope: Scope, due_before: datetime | None) -> tuple[int, int]:
    """How many conversations (and messages in them) are due: one statement."""
    count, messages = _count(due_before is not None).run(conn, **_params(scope, due_before))[0]
    return int(count), int(messages)


def prune_batch(conn: sa.Connection, scope: Scope, due_before: datetime | None) -> tuple[int, int]:
    """Delete the oldest due conversations, locked first; how many went (and their messages)."""
    rows = _oldest(BATCH, due_before is not None).run(conn, **_params(scope, due_before))
    chosen: list[str] = []
    messages = 0
    for cid, count in rows:
        if chosen and messages + count > BATCH_MESSAGES:
            break  # the rest waits for the next transaction
        chosen.append(cid)
        messages += count
    if chosen:
        delete_conversations(conn, chosen)
    return len(chosen), messages


def plan(older_than: timedelta | datetime | None, dry_run: bool) -> PruneReport:
    """An empty report for a prune of what expired, and of what was last written before
    ``older_than`` ago (when given)."""
    due = None if older_than is None else cutoff(older_than).replace(tzinfo=timezone.utc)
    return PruneReport(cutoff=due, dry_run=dry_run)


def due_before(report: PruneReport) -> datetime | None:
    """The report's cutoff as the tables store times (naive UTC)."""
    return None if report.cutoff is None else report.cutoff.replace(tzinfo=None)


def record(report: PruneReport, batch: tuple[int, int], progress: Callable[[int], None] | None) -> bool:
    """Add a batch (conversations, messages) to the report; whether another may follow."""
    gone, messages = batch
    report.conversations += gone
    report.messages += messages
    if gone and progress is not None:
        progress(gone)
    return gone > 0 and not report.dry_run
