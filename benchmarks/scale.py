"""convstore as its PostgreSQL database grows (``python -m benchmarks.run --scale --only scale``).

One fresh database, convstore alone: ``messages / per_conversation`` conversations of
``per_conversation`` messages, generated and stored one at a time (memory stays flat), plus one
``big``-message conversation, streamed into one ``save`` (an iterator: convstore writes it chunk by
chunk) once the reference point is reached. Only the store calls are timed (not the generation).

At every checkpoint (each 10% of the small conversations, the reference point, and right after the
big conversation), after ``databases.settle``: the ingest rate of the step just finished (msg/s),
the median time of ``load(last=50)`` on conversations sampled over the whole database, and of
``get_tool_call`` on answered ids sampled from every conversation stored so far (the big one
weighted by its size), and the database's size; and for ``PAGED`` calls of each more, the pages they
touch and read (:func:`buffers`). "Flat" is the value at the end over the value at the
reference point (1M messages stored by default, before the big conversation).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa
from rich.table import Table

from . import databases
from . import workload as wl
from .contestant import Convstore
from .measure import LAST_N, latencies

BIG_SEED, SMALL_SEED = 3, 2  # offsets of --seed: call ids unique across them and the other runs


def checkpoints(conversations: int, per_conversation: int, reference: int) -> tuple[list[int], int]:
    """Conversation counts to measure at (each 10%, plus the reference), and the reference's."""
    ref = reference // per_conversation if conversations * per_conversation > reference else conversations // 10
    ref = max(ref, 1)
    tenths = {max(1, round(conversations * k / 10)) for k in range(1, 11)}
    return sorted(tenths | {ref}), ref


def run(backend: str = "postgresql", messages: int = 10_000_000, per_conversation: int = 100,
        big: int = 1_000_000, reference: int = 1_000_000, seed: int = 0, last_calls: int = 100,
        lookups: int = 200, say: Callable[[str], None] = print) -> dict[str, Any]:
    conversations = max(1, messages // per_conversation)
    marks, ref = checkpoints(conversations, per_conversation, reference)
    rng = random.Random(seed)
    cids: list[str] = []
    ids: list[str] = []  # answered call ids: one per small conversation, big / per_conversation of the big one
    rows: list[dict[str, Any]] = []
    stored, step_messages, step_seconds = 0, 0, 0.0
    wall = time.perf_counter()
    c = Convstore()
    with databases.fresh(backend) as db:
        c.open(db)
        try:
            def checkpoint(label: str) -> None:
                nonlocal step_messages, step_seconds
                databases.settle(db)
                sample = [rng.choice(cids) for _ in range(last_calls)]
                last = latencies(lambda cid: c.last(cid, LAST_N), sample, budget_s=10.0)
                found = latencies(c.tool_call, rng.sample(ids, min(lookups, len(ids))), budget_s=10.0)
                # after the timed calls, which draw what they did before; on other conversations and ids (but by chance)
                last_pages = buffers(c, lambda cid: c.last(cid, LAST_N), cids[0], rng.sample(cids, PAGED))
                found_pages = buffers(c, c.tool_call, ids[0], rng.sample(ids, min(PAGED, len(ids))))
                rows.append({"checkpoint": label, "messages": stored, "conversations": len(cids),
                             "ingest": step_messages / step_seconds, "last50": statistics.median(last),
                             "lookup": statistics.median(found), "bytes": databases.size(db),
                             "last50_pages": _median_pages(last_pages), "lookup_pages": _median_pages(found_pages),
                             "last50_samples": last, "lookup_samples": found})
                step_messages, step_seconds = 0, 0.0
                r = rows[-1]
                say(f"    {label}: {stored:,} messages, {len(cids):,} conversations, ingest {r['ingest']:,.0f} msg/s,"
                    f" last 50 {r['last50'] * 1e3:.2f} ms, pages {_pages(r['last50_pages'])},"
                    f" lookup {r['lookup'] * 1e3:.2f} ms, pages {_pages(r['lookup_pages'])},"
                    f" {r['bytes'] / 2**30:.2f} GiB ({time.perf_counter() - wall:,.0f} s)")

            for number in range(conversations):
                msgs = wl.conversation(per_conversation, seed + SMALL_SEED, number)
                answered = wl.answered_call_ids(msgs)
                ids.extend([rng.choice(answered)] if answered else [])
                start = time.perf_counter()
                cids.append(c.ingest(msgs))
                step_seconds += time.perf_counter() - start
                stored += len(msgs)
                step_messages += len(msgs)
                if number + 1 in marks:
                    checkpoint(f"{_count(stored)} stored" if number + 1 == ref else f"{(number + 1) / conversations:.0%}")
                if number + 1 == ref and big:
                    gen = _Stream(big, seed + BIG_SEED, per_conversation, ids, rng)
                    start = time.perf_counter()
                    cids.append(c.store.save(iter(gen), format="openai"))
                    step_seconds += time.perf_counter() - start - gen.seconds
                    stored += big
                    step_messages += big
                    checkpoint(f"{_count(big)}-message conversation")
        finally:
            c.close()
    first = next(r for r in rows if r["checkpoint"].endswith("stored"))
    end = rows[-1]
    flat = {k: end[k] / first[k] for k in ("ingest", "last50", "lookup")}
    return {"backend": backend, "messages": messages, "per_conversation": per_conversation, "big": big,
            "reference": first["messages"], "seconds": time.perf_counter() - wall, "rows": rows, "flatness": flat}


PAGED = 20
"""Calls per checkpoint whose buffers are counted (each on a conversation or id of its own)."""


def buffers(c: Convstore, call: Callable[[Any], Any], probe: Any, args: list[Any]) -> list[tuple[int, int]]:
    """For each of ``args``: the shared buffers that ``call(arg)``'s statements touch on PostgreSQL,
    and of them those read from outside the server's cache. The statements are those the store
    sent for ``call(probe)``, their parameter equal to ``probe`` swapped for ``arg``, run under
    ``EXPLAIN (ANALYZE, BUFFERS)`` and never by the call itself before: the reads are those a first
    call pays. Pages touched are the design's share of a call's cost, flat if the store is; the
    reads are the cache's share, which grows once the database outgrows ``shared_buffers``."""
    seen: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        seen.append((statement, params))

    engine = c.store.engine
    sa.event.listen(engine, "before_cursor_execute", keep)
    try:
        call(probe)
    finally:
        sa.event.remove(engine, "before_cursor_execute", keep)
    reads = [(st, p) for st, p in seen if st.lstrip().upper().startswith(("SELECT", "WITH"))]
    out = []
    with engine.connect() as conn:
        for arg in args:
            touched = read = 0
            for statement, params in reads:
                params = {k: arg if v == probe else v for k, v in params.items()}
                # psycopg parses the json column: the plan's list of one
                top = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement, params).scalar()[0]["Plan"]
                touched += top["Shared Hit Blocks"] + top["Shared Read Blocks"]
                read += top["Shared Read Blocks"]
            out.append((touched, read))
    return out


def _median_pages(pages: list[tuple[int, int]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pages), statistics.median(p[1] for p in pages)


def _pages(pages: tuple[float, float]) -> str:
    return f"{pages[0]:g} ({pages[1]:g} read)"


class _Stream:
    """The big conversation's messages, generated 1,000 at a time; the time spent generating them is
    kept apart (``seconds``) and an answered id is kept per ``every`` messages."""

    def __init__(self, n: int, seed: int, every: int, ids: list[str], rng: random.Random) -> None:
        self.source = wl.iter_messages(n, seed)
        self.every, self.ids, self.rng, self.seconds = every, ids, rng, 0.0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        done = False
        while not done:
            start = time.perf_counter()
            batch = [m for _, m in zip(range(1000), self.source)]
            self.seconds += time.perf_counter() - start
            done = len(batch) < 1000
            answered = wl.answered_call_ids(batch)
            self.ids.extend(self.rng.choice(answered) for _ in range(len(batch) // self.every) if answered)
            yield from batch


def _count(n: int) -> str:
    return next((f"{n / s:g}{u}" for u, s in (("M", 1_000_000), ("k", 1_000)) if n >= s), str(n))


def table(result: dict[str, Any]) -> Table:
    t = Table(title=f"{result['backend']} at scale: convstore, {result['messages']:,} messages in conversations of "
                    f"{result['per_conversation']} + one of {result['big']:,} ({result['seconds']:,.0f} s)",
              title_justify="left")
    for col in ("checkpoint", "messages stored", "conversations", "ingest msg/s", "last-50 ms", "its pages (read)",
                "lookup ms", "its pages (read)", "database"):
        t.add_column(col, justify="left" if col == "checkpoint" else "right")
    for r in result["rows"]:
        t.add_row(r["checkpoint"], f"{r['messages']:,}", f"{r['conversations']:,}", f"{r['ingest']:,.0f}",
                  f"{r['last50'] * 1e3:.2f}", _pages(r["last50_pages"]), f"{r['lookup'] * 1e3:.3f}",
                  _pages(r["lookup_pages"]), f"{r['bytes'] / 2**30:.2f} GiB")
    f = result["flatness"]
    t.caption = (f"flatness, end / {result['reference']:,} stored: ingest {f['ingest']:.2f}x, last-50 "
                 f"{f['last50']:.2f}x, lookup {f['lookup']:.2f}x (1.00x = flat; below 1 for the rate is slower). "
                 "Pages: the median shared buffers a call's statements touch, and (read) of them from outside "
                 f"PostgreSQL's cache, over {PAGED} calls")
    return t
