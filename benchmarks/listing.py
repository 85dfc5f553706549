"""Listing a namespace page by page as it grows: ``python -m benchmarks.listing [--sizes 1000,10000,100000]``.

For each backend, one fresh database grows to each size of conversations (rows written in bulk
straight into the tables, untimed: 1% tagged ``rare``, every one ``all`` and a ``user`` in
metadata), then, after ``ANALYZE`` on PostgreSQL, times the median of 20 calls of each kind of
page (50 conversations): the newest, by the common tag, by the rare tag, by metadata, by
``updated_at``, and the page 100 pages deep (its cursor taken before the timing); then pages through
every conversation by tag and cursor and checks each comes exactly once. Flat medians
from 1k to 100k conversations are the target of issue 14 ("constant time per page").
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timedelta
from typing import Any

from rich.console import Console
from rich.table import Table

from store import ConversationStore, bulk
from store.codec import new_id
from store.listing import tags_t
from store.operations import conversations

from . import databases

PAGE = 50
CALLS = 20


def _grow(store: ConversationStore, start: int, stop: int) -> None:
    base = datetime(2026, 1, 1)
    rows, tags = [], []
    for i in range(start, stop):
        cid = new_id()
        at = base + timedelta(seconds=i)
        rows.append({"id": cid, "namespace": store.namespace, "key": f"session-{i}",
                     "title": f"conversation {i}", "source_format": "openai", "message_count": 0,
                     "created_at": at, "updated_at": at, "metadata": {"user": f"u{i % 1000}"},
                     "expires_at": None, "parent_id": None, "fork_seq": None, "index_from": None})
        tags += [{"conversation_id": cid, "tag": "all"}] + ([{"conversation_id": cid, "tag": "rare"}]
                                                               if i % 100 == 0 else [])
    with store.engine.begin() as conn:
        for offset in range(0, len(rows), 10_000):
            bulk.insert(conn, conversations, rows[offset:offset + 10_000])
        for offset in range(0, len(tags), 10_000):
            bulk.insert(conn, tags_t, tags[offset:offset + 10_000])


def _median_ms(call: Any) -> float:
    call()
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def every_once(store: ConversationStore, expected: int) -> str:
    """Pages through the common tag to the end: each conversation must come exactly once."""
    seen: list[str] = []
    page = store.list_conversations(tags=["all"], limit=500)
    seen += [c.id for c in page]
    while page.next_cursor is not None:
        page = store.list_conversations(tags=["all"], limit=500, cursor=page.next_cursor)
        seen += [c.id for c in page]
    ok = len(seen) == len(set(seen)) == expected
    return f"{len(seen):,} listed, {len(set(seen)):,} distinct: {'exactly once' if ok else 'WRONG'}"


def measure(store: ConversationStore) -> dict[str, float]:
    deep = None
    for _ in range(100):
        deep = store.list_conversations(tags=["all"], limit=PAGE, cursor=deep.next_cursor if deep else None)
    cursor = deep.next_cursor if deep else None
    kinds = {
        "newest": lambda: store.list_conversations(limit=PAGE),
        "tag (all)": lambda: store.list_conversations(tags=["all"], limit=PAGE),
        "tag (1%)": lambda: store.list_conversations(tags=["rare"], limit=PAGE),
        "metadata (0.1%)": lambda: store.list_conversations(metadata={"user": "u7"}, limit=PAGE),
        "by updated_at": lambda: store.list_conversations(order_by="updated_at", limit=PAGE),
        "100 pages deep": lambda: store.list_conversations(tags=["all"], limit=PAGE, cursor=cursor),
    }
    return {name: _median_ms(call) for name, call in kinds.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--backends", default="sqlite,postgresql,mariadb")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    console = Console(width=140)
    for backend in args.backends.split(","):
        if (why := databases.reachable(backend)) is not None:
            console.print(f"{backend}: skipped ({why})")
            continue
        table = Table(title=f"{backend}: one page of {PAGE} conversations, median ms of {CALLS} calls")
        table.add_column("conversations", justify="right")
        results = []
        with databases.fresh(backend) as db, ConversationStore(db.url.render_as_string(hide_password=False)) as store:
            done = 0
            for size in sizes:
                _grow(store, done, size)
                done = size
                databases.settle(db)
                results.append((size, measure(store)))
            console.print(f"{backend}, every conversation by tag and cursor: {every_once(store, done)}")
        for name in results[0][1]:
            table.add_column(name, justify="right")
        for size, row in results:
            table.add_row(f"{size:,}", *(f"{v:.2f}" for v in row.values()))
        console.print(table)


if __name__ == "__main__":
    main()
