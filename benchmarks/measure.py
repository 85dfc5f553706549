"""Timing the contestants, each on a fresh database of its own, taking turns."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from . import databases
from . import workload as wl
from .contestant import Contestant, Convstore

LAST_N = 50


@dataclass
class Plan:
    """What to measure and how much (``--quick`` shrinks it)."""

    sizes: list[int]
    only: set[str]
    load_size: int = 10_000
    append_count: int = 1_000
    lookups: int = 200
    budget_s: float = 3.0
    seed: int = 0

    @property
    def largest(self) -> int:
        return max(self.sizes)


@dataclass
class Workloads:
    """The OpenAI messages, and each family's prepared copy (made once, never timed)."""

    plan: Plan
    openai: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    prepared: dict[tuple[str, str], list[Any]] = field(default_factory=dict)

    def messages(self, key: str) -> list[dict[str, Any]]:
        if key not in self.openai:
            kind, _, size = key.partition("@")
            number = {"big": 0, "load": 1, "append": 2}[kind]
            self.openai[key] = wl.conversation(int(size), self.plan.seed, number)
        return self.openai[key]

    def for_(self, contestant: Contestant, key: str) -> list[Any]:
        if (contestant.family, key) not in self.prepared:
            self.prepared[contestant.family, key] = contestant.prepare(self.messages(key))
        return self.prepared[contestant.family, key]

    def lookup_ids(self, size: int) -> list[str]:
        """Answered call ids of the big conversation, sampled over its whole length."""
        return wl.sample_ids(wl.answered_call_ids(self.messages(f"big@{size}")), self.plan.lookups)


def timed(fn: Callable[..., Any], *args: Any, cold: bool = False) -> tuple[float, Any]:
    """Seconds of one call, the collector's garbage and the disk's writeback of what ran before
    it out of the way: an ingest writes ~100 MB, which the next contestant's fsyncs would wait for.
    ``cold``: the OS's page cache emptied too (``databases.drop_page_cache``)."""
    gc.collect()
    os.sync()
    if cold:
        databases.drop_page_cache()
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def latencies(fn: Callable[[Any], Any], args: Iterable[Any], budget_s: float, min_n: int = 3) -> list[float]:
    """Seconds per call, one warm-up first; stops at the end of ``args`` or when the budget is spent
    (after at least ``min_n`` calls)."""
    args = list(args)
    fn(args[0])
    gc.collect()
    out: list[float] = []
    spent = 0.0
    for arg in args:
        start = time.perf_counter()
        fn(arg)
        out.append(time.perf_counter() - start)
        spent += out[-1]
        if spent > budget_s and len(out) >= min_n:
            break
    return out


Samples = dict[str, list[float]]
Calls = dict[Any, Callable[[Any], Any]]
"""A call per key (a contestant's name, or its name and a metric)."""


def interleaved(calls: Calls, args: list[Any], budget_s: float, min_n: int = 3) -> dict[Any, list[float]]:
    """Seconds per call for each contestant, taking turns call by call (a burst of noise hits
    everyone alike). One warm-up call each; a contestant stops once it has spent its budget
    (after at least ``min_n`` calls), the others go on to the end of ``args``."""
    for fn in calls.values():
        fn(args[0])
    gc.collect()
    out: dict[Any, list[float]] = {name: [] for name in calls}
    spent = dict.fromkeys(calls, 0.0)
    for arg in args:
        active = [n for n in calls if spent[n] <= budget_s or len(out[n]) < min_n]
        if not active:
            break
        for name in active:
            start = time.perf_counter()
            calls[name](arg)
            out[name].append(time.perf_counter() - start)
            spent[name] += out[name][-1]
    return out


def run_round(order: list[Contestant], backend: str, size: int, work: Workloads,
              check: bool) -> dict[str, Samples]:
    """One round: every contestant on a fresh database of its own, all open at once, in ``order``.

    Ingest of ``size`` messages (one conversation; one contestant after the other), then, taking
    turns call by call: tool call by id at ``size`` messages; for the largest size only, load and
    last 50 of a ``load_size`` conversation and per-message appends to a new conversation."""
    plan = work.plan
    out: dict[str, Samples] = {c.name: {} for c in order}
    with ExitStack() as stack:
        dbs = []
        for c in order:
            dbs.append(stack.enter_context(databases.fresh(backend)))
            c.open(dbs[-1])
            stack.callback(c.close)
        if plan.only & {"ingest", "toolcall"}:
            _ingest_and_lookup(order, dbs, size, work, out)
        if size == plan.largest and plan.only & {"load", "last"}:
            _load(order, work, out, check)
        if size == plan.largest and "append" in plan.only:
            _append(order, work, out)
    return out


def _ingest_and_lookup(order: list[Contestant], dbs: list[databases.Database], size: int, work: Workloads,
                       out: dict[str, Samples]) -> None:
    measured = "ingest" in work.plan.only
    before = [databases.size(db) for db in dbs] if measured else []  # tables created, nothing stored
    for c, db in zip(order, dbs, strict=True):
        prepared = work.for_(c, f"big@{size}")
        # SQLite's ingests were slower the later they came in a round, by the pages cached before
        seconds, _ = timed(c.ingest, prepared, cold=db.backend == "sqlite")
        if measured:
            out[c.name][f"ingest@{size}"] = [len(prepared) / seconds]
    for db in dbs:
        databases.settle(db)
    if measured:
        _bytes_per_message(order, dbs, before, size, out)
        _search_index(order, dbs, before, size, out)
    if "toolcall" in work.plan.only:
        calls = {c.name: c.tool_call for c in order}
        for name, values in interleaved(calls, work.lookup_ids(size), work.plan.budget_s).items():
            out[name][f"toolcall@{size}"] = values


def _bytes_per_message(order: list[Contestant], dbs: list[databases.Database], before: list[int], size: int,
                       out: dict[str, Samples]) -> None:
    """What the ingest of ``size`` messages added to each contestant's own database, per message."""
    for c, db, start in zip(order, dbs, before, strict=True):
        out[c.name][f"bytes@{size}"] = [(databases.size(db) - start) / size]


def _search_index(order: list[Contestant], dbs: list[databases.Database], before: list[int], size: int,
                  out: dict[str, Samples]) -> None:
    """convstore's full-text index, which the first search writes (``store.fulltext``): how fast
    it takes in the ingested messages, and the bytes per message once it holds them."""
    for c, db, start in zip(order, dbs, before, strict=True):
        if isinstance(c, Convstore):
            seconds, _ = timed(c.store.index)
            databases.settle(db)
            out[c.name][f"index@{size}"] = [size / seconds]
            out[c.name][f"bytes_indexed@{size}"] = [(databases.size(db) - start) / size]


def _load(order: list[Contestant], work: Workloads, out: dict[str, Samples], check: bool) -> None:
    key = f"load@{work.plan.load_size}"  # also the metric's name
    conversations = {c.name: c.ingest(work.for_(c, key)) for c in order}
    if "load" in work.plan.only:
        other = f"load_other@{work.plan.load_size}"  # convstore into a format it did not store
        calls = {(c.name, key): (lambda _, c=c: c.load(conversations[c.name])) for c in order}
        calls |= {(c.name, other): (lambda _, c=c: c.load_other(conversations[c.name]))
                  for c in order if c.other_format}
        for (name, metric), values in interleaved(calls, list(range(30)), work.plan.budget_s).items():
            out[name][metric] = values
    if "last" in work.plan.only:
        calls = {c.name: (lambda _, c=c: c.last(conversations[c.name], LAST_N)) for c in order}
        for name, values in interleaved(calls, list(range(300)), work.plan.budget_s / 2).items():
            out[name]["last"] = values
    for c in order:
        loaded = c.as_openai(c.load(conversations[c.name])) if check else None
        if loaded is not None and loaded != work.messages(key):
            out[c.name]["check_failed"] = [1.0]
        if isinstance(c, Convstore):
            out[c.name].update(_statements(c, conversations[c.name], work))


def _statements(c: Convstore, long: Any, work: Workloads) -> Samples:
    """SQL statements sent by load / last 50 of the long conversation and of a 100-message one."""
    short = c.ingest(work.for_(c, f"load@{work.plan.load_size}")[:100])
    count = c.count_statements
    return {
        "statements.load": [count(c.load, long), count(c.load, short)],
        "statements.last": [count(c.last, long, LAST_N), count(c.last, short, LAST_N)],
    }


def _append(order: list[Contestant], work: Workloads, out: dict[str, Samples]) -> None:
    """Appends one message at a time, the contestants taking turns message by message."""
    key = f"append@{work.plan.append_count}"
    conversations = {c.name: c.new_conversation() for c in order}
    prepared = {c.name: work.for_(c, key) for c in order}
    spent = dict.fromkeys(conversations, 0.0)
    gc.collect()
    for i in range(work.plan.append_count):
        for c in order:
            start = time.perf_counter()
            c.append(conversations[c.name], prepared[c.name][i])
            spent[c.name] += time.perf_counter() - start
    for name, seconds in spent.items():
        out[name]["append"] = [work.plan.append_count / seconds]


def run_big_lookup(contestant: Contestant, backend: str, total: int, work: Workloads,
                   per_conversation: int = 10_000, say: Callable[[str], None] = print) -> Samples:
    """Tool call by id with ``total`` messages stored (``total / per_conversation`` conversations,
    generated and ingested one at a time so memory stays flat; ingest untimed)."""
    ids: list[str] = []
    with databases.fresh(backend) as db:
        contestant.open(db)
        try:
            start = time.perf_counter()
            for number in range(total // per_conversation):
                msgs = wl.conversation(per_conversation, work.plan.seed + 1, number)
                ids.extend(wl.sample_ids(wl.answered_call_ids(msgs), 3, seed=number))
                contestant.ingest(contestant.prepare(msgs))
                if (number + 1) % 10 == 0:
                    say(f"    {contestant.name}: {(number + 1) * per_conversation:,}/{total:,} messages"
                        f" stored ({time.perf_counter() - start:,.0f} s)")
            databases.settle(db)
            return {f"toolcall@{total}": latencies(contestant.tool_call, ids, work.plan.budget_s)}
        finally:
            contestant.close()
