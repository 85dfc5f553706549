"""What an append's commit writes on SQLite, b-tree by b-tree (issue 12's append target).

``python -m benchmarks.wal_pages [--stored 20000] [--appends 700] [--page-size 8192]``: convstore and
the OpenAI Agents ``SQLiteSession`` (the ``bench`` extra) each store a workload conversation, then
append the workload's next messages one by one to a new one. Before each measured append the WAL is
checkpointed and truncated, so that the frames it holds after are that commit's alone; each frame's
page is named by the ``dbstat`` table (the b-tree it belongs to). Prints, per kind of message, the
pages a commit writes to the WAL, and of which b-trees. ``--page-size`` sets convstore's pages for a
new file (``db.SQLITE_PAGE_SIZE``); ``SQLiteSession`` keeps SQLite's default of 4 KiB.

``--commit-times``: instead, convstore's commits timed against the frames each wrote (automatic
checkpoints off, the WAL truncated untimed every 200 appends): the median commit per frame count.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import struct
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from store import db
from store.writer import _Held

from . import peers, workload
from .contestant import Contestant, Convstore
from .databases import Database, fresh

WARM_UP = 300  # appends before the measured ones: the new conversation has leaves of its own by then


def kind(message: dict[str, Any]) -> str:
    if message["role"] == "tool":
        return "tool result"
    if message["role"] == "assistant":
        return "assistant's calls" if message.get("tool_calls") else "assistant's text"
    return f"{message['role']}'s text"


def wal_pages(path: Path) -> list[int]:
    """The page number of each frame in the WAL of ``path`` (frames of a 24-byte header and a page)."""
    data = (path.parent / (path.name + "-wal")).read_bytes()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    return [struct.unpack(">I", data[at:at + 4])[0] for at in range(32, len(data) - page_size - 23, 24 + page_size)]


@contextmanager
def _appending(contestant: Contestant, messages: list[dict[str, Any]],
               stored: int) -> Iterator[tuple[Database, Any, list[Any]]]:
    """A fresh SQLite database where ``contestant`` stored the first ``stored`` messages: the
    database, a new conversation, and the next messages prepared for appends."""
    with fresh("sqlite") as database:
        contestant.open(database)
        try:
            contestant.ingest(contestant.prepare(messages[:stored]))
            yield database, contestant.new_conversation(), contestant.prepare(messages[stored:])
        finally:
            contestant.close()


def measure(contestant: Contestant, messages: list[dict[str, Any]], stored: int,
            appends: int) -> tuple[dict[str, Counter[str]], Counter[str], int]:
    """Per kind, the b-trees' pages its measured appends wrote, and how many appends; the page size."""
    with _appending(contestant, messages, stored) as (database, conversation, prepared):
        for one in prepared[:WARM_UP]:
            contestant.append(conversation, one)
        pages: dict[str, Counter[str]] = {}
        counts: Counter[str] = Counter()
        with sqlite3.connect(database.path) as reader:
            for message, one in zip(messages[stored + WARM_UP:][:appends], prepared[WARM_UP:]):
                reader.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                contestant.append(conversation, one)
                named = pages.setdefault(kind(message), Counter())
                for page in wal_pages(database.path):
                    found = reader.execute("SELECT name FROM dbstat WHERE pageno = ?", (page,)).fetchone()
                    named[found[0] if found else "?"] += 1
                counts[kind(message)] += 1
            page_size = reader.execute("PRAGMA page_size").fetchone()[0]
        return pages, counts, page_size


def table(name: str, pages: dict[str, Counter[str]], counts: Counter[str], page_size: int) -> Table:
    out = Table(title=f"{name}: pages a commit writes to the WAL, per append ({page_size // 1024} KiB pages)",
                title_justify="left")
    for column in ("message", "appends", "pages", "KB", "of which (b-tree: pages)"):
        out.add_column(column, justify="left" if column in ("message", "of which (b-tree: pages)") else "right")
    for what, n in counts.most_common():
        total = sum(pages[what].values()) / n
        parts = ", ".join(f"{tree} {c / n:.2f}" for tree, c in pages[what].most_common())
        out.add_row(what, str(n), f"{total:.2f}", f"{total * page_size / 1000:.0f}", parts)
    return out


def commit_times(messages: list[dict[str, Any]], stored: int, appends: int) -> dict[int, list[float]]:
    """convstore's commit times (us) by the WAL frames each commit wrote."""
    spent: list[int] = []
    plain = _Held.send  # the store's writer sends its COMMIT on the driver (store.writer)

    def timed(self: _Held, statement: str) -> None:
        start = time.perf_counter_ns()
        plain(self, statement)
        if statement == "COMMIT":
            spent.append(time.perf_counter_ns() - start)

    contestant, by_frames = Convstore(), {}
    with _appending(contestant, messages, stored) as (database, conversation, prepared):
        held = contestant.store._writer._held  # the writer's connection, kept since the ingest
        assert held is not None
        raw = held.conn.connection.dbapi_connection
        raw.execute("PRAGMA wal_autocheckpoint = 0")
        wal = Path(f"{database.path}-wal")
        page_size = raw.execute("PRAGMA page_size").fetchone()[0]
        _Held.send = timed  # type: ignore[method-assign]
        try:
            for i, one in enumerate(prepared[:WARM_UP + appends]):
                if i % 200 == 0:
                    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                before = os.path.getsize(wal)
                contestant.append(conversation, one)
                if i >= WARM_UP:
                    frames = (os.path.getsize(wal) - before) // (page_size + 24)
                    by_frames.setdefault(frames, []).append(spent[-1] / 1000)
        finally:
            _Held.send = plain  # type: ignore[method-assign]
    return by_frames


def commit_table(by_frames: dict[int, list[float]]) -> Table:
    out = Table(title="convstore: an append's commit by the WAL frames it wrote", title_justify="left")
    for column in ("frames", "commits", "median us", "mean us"):
        out.add_column(column, justify="right")
    for frames, times in sorted(by_frames.items()):
        if len(times) >= 10:
            out.add_row(str(frames), str(len(times)), f"{statistics.median(times):.0f}",
                        f"{statistics.mean(times):.0f}")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.wal_pages", description=__doc__.splitlines()[0])
    p.add_argument("--stored", type=int, default=20_000, help="messages stored before the appends (20000)")
    p.add_argument("--appends", type=int, default=700, help="appends measured, after 300 unmeasured (700)")
    p.add_argument("--page-size", type=int, default=db.SQLITE_PAGE_SIZE, help="convstore's page size")
    p.add_argument("--commit-times", action="store_true", help="time convstore's commits by frames written")
    args = p.parse_args(argv)
    db.SQLITE_PAGE_SIZE = args.page_size  # read as each new file is opened
    messages = workload.conversation(args.stored + WARM_UP + args.appends)
    console = Console()
    if args.commit_times:
        console.print(commit_table(commit_times(messages, args.stored, args.appends)))
        return
    for contestant in (Convstore(), peers.AgentsSQLiteSession()):
        console.print(table(contestant.name, *measure(contestant, messages, args.stored, args.appends)))


if __name__ == "__main__":
    main()
