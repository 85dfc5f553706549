"""Medians, spread, ratios and the issue's targets, as rich tables (and JSON)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

Results = dict[str, dict[str, dict[str, list[float]]]]
"""backend -> contestant -> metric -> samples (msg/s for ingest/append, bytes per message for
bytes, seconds for the rest)."""

CONVSTORE = "convstore"
CONVERT_GOAL = 50_000
OTHER_FORMAT = "anthropic"
"""The format of convstore's ``load_other`` (``contestant.Convstore.other_format``)."""


def is_rate(metric: str) -> bool:
    """Higher is better (the rest, times and bytes, lower is better)."""
    return metric.startswith(("ingest", "append", "index"))


def per_repeat(metric: str) -> bool:
    """One sample per repeat (spread: min..max), not one per call."""
    return is_rate(metric) or metric.startswith("bytes")


@dataclass(frozen=True)
class Summary:
    median: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, metric: str, samples: list[float]) -> Summary | None:
        if not samples:
            return None
        ordered = sorted(samples)
        if per_repeat(metric) or len(ordered) < 4:
            lo, hi = ordered[0], ordered[-1]  # throughput: one sample a repeat, min..max
        else:
            q = statistics.quantiles(ordered, n=4)  # latency: many samples, interquartile range
            lo, hi = q[0], q[2]
        return cls(statistics.median(ordered), lo, hi, len(ordered))


def fmt_value(metric: str, value: float) -> str:
    if is_rate(metric) or metric == "convert":
        return f"{value / 1000:,.1f}k" if value >= 1000 else f"{value:,.0f}"
    if metric.startswith("bytes"):
        return f"{value:,.0f} B"
    ms = value * 1000
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.3g} ms"


def fmt_summary(metric: str, s: Summary | None) -> str:
    if s is None:
        return "-"
    if s.n == 1:
        return fmt_value(metric, s.median)
    lo, hi = fmt_value(metric, s.lo).split(" ")[0], fmt_value(metric, s.hi)
    return f"{fmt_value(metric, s.median)} [dim]({lo}–{hi})[/]"


def _count(n: int) -> str:
    for unit, scale in (("M", 1_000_000), ("k", 1_000)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return str(n)


def metric_label(metric: str) -> str:
    kind, _, size = metric.partition("@")
    size_label = f" {_count(int(size))}" if size else ""
    return {"ingest": f"ingest{size_label} msg/s", "bytes": f"bytes/msg at{size_label}",
            "index": f"search index{size_label} msg/s", "bytes_indexed": f"bytes/msg indexed{size_label}",
            "append": "append msg/s", "load": f"load{size_label}",
            "load_other": f"load{size_label} as {OTHER_FORMAT}",
            "last": "last 50", "toolcall": f"tool call{size_label}"}.get(kind, metric)


def summaries(results: Results) -> dict[str, dict[str, dict[str, Summary]]]:
    return {b: {c: {m: s for m, v in ms.items() if (s := Summary.of(m, v))} for c, ms in cs.items()}
            for b, cs in results.items()}


@dataclass
class Target:
    metric: str
    goal: str
    convstore: str
    floor: str
    vs_floor: str
    peer: str
    vs_peer: str
    ok: bool | None
    bound: str = "-"
    """convstore's own rows at driver speed (``SchemaBound``), and that bound against the floor:
    the best any code writing this schema could reach."""
    bound_vs_floor: str = "-"
    bound_ok: bool | None = None
    """The bound's own target against the floor (None: none set)."""


def ratio(a: float, b: float) -> str:
    """convstore / other: above 1 is faster for rates, slower for times (1/N: N times less)."""
    if not b or not a:
        return "-"
    r = a / b
    return f"1/{1 / r:,.0f}" if r < 0.1 else f"{r:.2f}x"


def metric_order(metric: str) -> tuple[int, int]:
    kind, _, size = metric.partition("@")
    rank = ["ingest", "bytes", "index", "bytes_indexed", "append", "load", "load_other", "last", "toolcall"]
    return (rank.index(kind) if kind in rank else 9, int(size or 0))


def _verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("[bold green]PASS[/]" if ok else "[bold red]MISS[/]")


def _verdicts(t: Target) -> str:
    """convstore's verdict, then the schema bound's where it has a target of its own."""
    return _verdict(t.ok) + ("" if t.bound_ok is None else f", bound {_verdict(t.bound_ok)}")


def figures_table(backend: str, detail: str, summary: dict[str, dict[str, Summary]],
                  order: list[str]) -> Table:
    metrics = sorted({m for s in summary.values() for m in s if not m.startswith(("statements", "check"))},
                     key=metric_order)
    table = Table(title=f"{backend} ({detail}): median [dim](spread)[/]", title_justify="left")
    table.add_column("contestant")
    for metric in metrics:
        table.add_column(metric_label(metric), justify="right")
    for name in order:
        if name in summary:
            row = [fmt_summary(m, summary[name].get(m)) for m in metrics]
            flag = " [red](output differs!)[/]" if "check_failed" in summary[name] else ""
            table.add_row(f"[bold]{name}[/]{flag}" if name == CONVSTORE else name + flag, *row)
    return table


def targets_table(backend: str, rows: list[Target], peer: str | None = None) -> Table:
    against = f" (peer: {peer})" if peer else " (report only: no peer)"
    table = Table(title=f"{backend}: convstore against the targets of issue 12{against}", title_justify="left")
    columns = ("metric", "convstore", "floor", "x floor", "schema bound", "bound x floor", "peer",
               "x peer", "target", "result")
    for col in columns:
        table.add_column(col, justify="left" if col in ("metric", "target") else "right")
    for t in rows:
        table.add_row(t.metric, t.convstore, t.floor, t.vs_floor, t.bound, t.bound_vs_floor, t.peer, t.vs_peer,
                      t.goal, _verdicts(t))
    return table


def conversion_table(rates: dict[str, dict[str, list[float]]],
                     bound: dict[str, dict[str, float]] | None = None, of: str = "samples") -> tuple[Table, Target]:
    """The pair matrix of a workload (``of``: "samples" or "an agent's conversation"); ``bound`` adds,
    per source, the rate validation alone allows (``conversion.validation_bound``): no target can be
    reached faster from that source."""
    names = list(rates)
    table = Table(title=f"conversion in memory (store.convert) of {of}: median k messages/s,"
                        " source rows, target columns", title_justify="left")
    table.add_column("from \\ to")
    for n in names:
        table.add_column(n, justify="right")
    if bound:
        table.add_column("validation bound", justify="right")
    worst: tuple[float, str] = (float("inf"), "")
    exempt = {src for src in names if bound and src in bound and bound[src]["bound"] < CONVERT_GOAL}
    for src in names:
        cells = []
        for dst in names:
            samples = rates[src].get(dst) or []
            value = statistics.median(samples) if samples else 0.0
            if src not in exempt:
                worst = min(worst, (value, f"{src} -> {dst}"))
            style = "green" if value >= CONVERT_GOAL else "red"
            cells.append(f"[{style}]{value / 1000:.0f}[/]" if samples else "[red]fail[/]")
        if bound:
            cells.append(f"{bound[src]['bound'] / 1000:.0f}" if src in bound else "-")
        table.add_row(src, *cells)
    return table, _conversion_target(worst, exempt, of)


def _conversion_target(worst: tuple[float, str], exempt: set[str], of: str = "samples") -> Target:
    """Issue 12: >= 50k msg/s for every pair whose source validation alone allows that fast."""
    goal = ">= 50k msg/s for every pair whose source validates >= 50k/s"
    if exempt:
        goal += f" (exempt: {', '.join(sorted(exempt))})"
    metric = f"conversion of {of}, slowest pair"
    if not worst[1]:
        return Target(metric, goal, "-", "-", "-", "-", "-", None)
    return Target(metric, goal, f"{worst[0] / 1000:.1f}k ({worst[1]})", "-", "-", "-", "-", worst[0] >= CONVERT_GOAL)


def memory_target(memory: dict[str, Any]) -> Target:
    steps = memory["steps"]
    peak = max(s["peak_rss_mb"] for s in steps)
    ok = all(s["ok"] for s in steps) and len(steps) == 2 and peak < 300
    text = ", ".join(f"{s['command'].split()[3]} {s['peak_rss_mb']:,.0f} MB {s['seconds']:,.0f} s"
                     f"{'' if s['ok'] else ' FAILED'}{' (progress)' if s['progress_seen'] else ''}"
                     for s in steps)
    return Target(f"memory, {memory['messages']:,}-msg JSONL", "< 300 MB RSS, with progress", text,
                  "-", "-", "-", "-", ok and all(s["progress_seen"] for s in steps))


def general_table(rows: list[Target]) -> Table:
    table = Table(title="without a database", title_justify="left")
    for col in ("metric", "convstore", "target", "result"):
        table.add_column(col)
    for t in rows:
        table.add_row(t.metric, t.convstore, t.goal, _verdict(t.ok))
    return table


def print_all(console: Console, tables: list[Table]) -> None:
    for table in tables:
        console.print(table)
        console.print()
