"""An append by kind of message, convstore and the OpenAI Agents ``SQLiteSession`` taking turns.

``python -m benchmarks.append_kinds [--stored 20000] [--appends 3000]``: each contestant stores the
workload's first messages in a fresh SQLite file, then both append the next ones one by one to a new
conversation, taking turns message by message (who goes first alternates, so neither always follows
the other's commit); the first 300 appends are not counted. Prints each contestant's mean wall time
of an append per kind of message (``wal_pages.kind``) and the ratio of their rates: where issue 12's
append target is won or lost. Duels of two, not three: a fixed rotation of three put the middle
contestant ~5% behind (``benchmarks/README.md``, twenty-fifth session).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from contextlib import ExitStack
from typing import Any

from rich.console import Console
from rich.table import Table

from . import peers, workload
from .contestant import Contestant, Convstore
from .wal_pages import WARM_UP, _appending, kind

Times = dict[str, dict[str, list[float]]]


def duel(first: Contestant, second: Contestant, messages: list[dict[str, Any]], stored: int, appends: int,
         warm_up: int = WARM_UP) -> Times:
    """``{contestant: {kind: [seconds of each counted append]}}``."""
    times: Times = {first.name: defaultdict(list), second.name: defaultdict(list)}
    with ExitStack() as stack:
        turns = [(who, *stack.enter_context(_appending(who, messages, stored))[1:]) for who in (first, second)]
        for i in range(warm_up + appends):
            for who, conversation, prepared in turns if i % 2 else turns[::-1]:
                start = time.perf_counter()
                who.append(conversation, prepared[i])
                seconds = time.perf_counter() - start
                if i >= warm_up:
                    times[who.name][kind(messages[stored + i])].append(seconds)
    return times


def table(times: Times) -> Table:
    names = list(times)
    kinds = sorted(times[names[0]], key=lambda k: -len(times[names[0]][k]))
    out = Table(title="an append by kind of message: mean wall time (us)")
    out.add_column("contestant")
    for k in kinds:
        out.add_column(f"{k} ({len(times[names[0]][k])})", justify="right")
    out.add_column("all", justify="right")
    for name in names:
        every = [s for k in kinds for s in times[name][k]]
        out.add_row(name, *(f"{_mean(times[name][k]):.0f}" for k in kinds), f"{_mean(every):.0f}")
    return out


def rate_ratio(times: Times) -> float:
    """The first contestant's append rate over the second's."""
    first, second = (sum(s for kinds in times[name].values() for s in kinds) for name in times)
    return second / first


def _mean(seconds: list[float]) -> float:
    return sum(seconds) / len(seconds) * 1e6


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.append_kinds", description=__doc__.splitlines()[0])
    p.add_argument("--stored", type=int, default=20_000, help="messages stored before the appends (20000)")
    p.add_argument("--appends", type=int, default=3_000, help="appends counted, after 300 not counted (3000)")
    args = p.parse_args(argv)
    messages = workload.conversation(args.stored + WARM_UP + args.appends)
    times = duel(Convstore(), peers.AgentsSQLiteSession(), messages, args.stored, args.appends)
    console = Console()
    console.print(table(times))
    console.print(f"convstore's append rate: {rate_ratio(times):.3f}x the peer's")


if __name__ == "__main__":
    main()
