"""Where convstore spends its time: ``python -m benchmarks.profile [--ingest 100000] [--load 10000]``.

Profiles (pyinstrument, statistical) ``save`` of an N-message conversation and ``load(format="openai")``
of a 10k-message one on a fresh SQLite database (and with ``--append N``, N appends of one message
each, as an agent writes them; on SQLite a durable commit's wait shows under ``store.writer._Held.send``,
the writer's own ``COMMIT``), and prints for each the functions with the most
time of their own ("self") and the most time including callees ("total"), as % of the run.
``--html DIR`` also writes pyinstrument's interactive call trees there.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pyinstrument import Profiler
from rich.console import Console
from rich.table import Table

from store import ConversationStore

from . import databases
from . import workload as wl

console = Console(width=150)


def _where(frame: Any) -> str:
    path = frame.file_path_short or ""
    return f"{frame.function} ({path}:{frame.line_no})" if path else frame.function


def hot_spots(root: Any) -> tuple[dict[str, float], dict[str, float], float]:
    """Self and total seconds per function over the call tree (total counted once per stack)."""
    own: dict[str, float] = defaultdict(float)
    total: dict[str, float] = defaultdict(float)

    def walk(frame: Any, on_stack: frozenset[str]) -> None:
        if frame.is_synthetic:  # "[self]" / "[await]" leaves: already in their parent's self time
            return
        key = _where(frame)
        own[key] += frame.total_self_time
        if key not in on_stack:
            total[key] += frame.time
        for child in frame.children:
            walk(child, on_stack | {key})

    walk(root, frozenset())
    return own, total, root.time


def table(title: str, seconds: dict[str, float], whole: float, top: int) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("%", justify="right")
    t.add_column("s", justify="right")
    t.add_column("function (file:line)")
    for key, value in sorted(seconds.items(), key=lambda kv: -kv[1])[:top]:
        t.add_row(f"{100 * value / whole:.1f}", f"{value:.2f}", key)
    return t


def profile(label: str, fn: Any, *args: Any, top: int, html: Path | None) -> Any:
    profiler = Profiler(interval=0.0005)
    start = time.perf_counter()
    profiler.start()
    value = fn(*args)
    profiler.stop()
    wall = time.perf_counter() - start
    root = profiler.last_session.root_frame()
    own, total, whole = hot_spots(root)
    console.rule(f"{label}: {wall:.2f} s wall")
    console.print(table(f"{label}: self time", own, whole, top))
    console.print(table(f"{label}: total time (with callees)", {k: v for k, v in total.items()
                                                                 if v < whole * 0.999}, whole, top))
    if html is not None:
        html.mkdir(parents=True, exist_ok=True)
        (html / f"{label.split()[0]}.html").write_text(profiler.output_html(), encoding="utf-8")
    return value


def _appends(store: ConversationStore, messages: list[dict[str, Any]]) -> None:
    cid = store.save([])
    for message in messages:
        store.append(cid, [message])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ingest", type=int, default=100_000, help="messages saved (profiled)")
    p.add_argument("--load", type=int, default=10_000, help="messages of the loaded conversation")
    p.add_argument("--append", type=int, default=0, help="appends of one message each (profiled)")
    p.add_argument("--backend", default="sqlite")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--html", type=Path, default=None)
    args = p.parse_args(argv)
    big = wl.conversation(args.ingest, 0, 0)
    small = wl.conversation(args.load, 0, 1)
    with databases.fresh(args.backend) as db:
        s = ConversationStore(db.url, format="openai")
        try:
            s.load(s.save(small[:100]))  # warm-up: statement compilation, imports
            profile(f"save {args.ingest:,} messages", s.save, big, top=args.top, html=args.html)
            cid = s.save(small)
            s.load(cid)
            profile(f"load {args.load:,} messages", s.load, cid, top=args.top, html=args.html)
            if args.append:
                profile(f"append {args.append:,} messages one by one", _appends, s, small[:args.append],
                        top=args.top, html=args.html)
        finally:
            s.close()


if __name__ == "__main__":
    main()
