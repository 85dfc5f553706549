"""A load in every format: ``python -m benchmarks.load_formats [--messages 10000] [--repeat 3] [--backend sqlite]``.

The workload's conversation is saved once from OpenAI, then loaded whole in each of ``store.FORMATS``
(best of ``--repeat``, and the messages a second that makes). A message the store keeps as plain rows
(its text, an assistant's calls, a tool result) reaches every writer without a canonical message
(``store.lean``); the others are canonical messages.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import store
from store import ConversationStore

from . import workload
from .databases import fresh


def load_times(messages: list[dict[str, Any]], backend: str = "sqlite", repeat: int = 3) -> dict[str, float]:
    """The best time of a whole load in each format, in seconds."""
    with fresh(backend) as database:
        s = ConversationStore(str(database.url))
        try:
            cid = s.save(messages, "openai")
            out = {}
            for fmt in store.FORMATS:
                best = float("inf")
                for _ in range(repeat):
                    start = time.perf_counter()
                    s.load(cid, fmt, on_loss=lambda _loss: None)
                    best = min(best, time.perf_counter() - start)
                out[fmt] = best
            return out
        finally:
            s.close()


def table(times: dict[str, float], n: int) -> Table:
    out = Table(title=f"load of {n:,} messages in each format (best)", title_justify="left")
    for column in ("format", "ms", "k messages/s"):
        out.add_column(column, justify="left" if column == "format" else "right")
    for fmt, seconds in times.items():
        out.add_row(fmt, f"{seconds * 1e3:.0f}", f"{n / seconds / 1e3:.0f}")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load_formats", description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--backend", default="sqlite")
    args = p.parse_args(argv)
    times = load_times(workload.conversation(args.messages), args.backend, args.repeat)
    Console().print(table(times, args.messages))


if __name__ == "__main__":
    main()
