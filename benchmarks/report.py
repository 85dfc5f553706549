"""Medians, spread, ratios and the issue's targets, as rich tables (and JSON)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

Results = dict[str, dict[str, dict[str, list[float]]]]
"""backend -> contestant -> metric -> samples (msg/s for ingest/append, seconds for the rest)."""

CONVSTORE = "convstore"
SQLALCHEMY_SESSION = "OpenAI Agents SQLAlchemySession"


def is_rate(metric: str) -> bool:
    return metric.startswith(("ingest", "append"))


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
        if is_rate(metric) or len(ordered) < 4:
            lo, hi = ordered[0], ordered[-1]  # throughput: one sample a repeat, min..max
        else:
            q = statistics.quantiles(ordered, n=4)  # latency: many samples, interquartile range
            lo, hi = q[0], q[2]
        return cls(statistics.median(ordered), lo, hi, len(ordered))


def fmt_value(metric: str, value: float) -> str:
    if is_rate(metric) or metric == "convert":
        return f"{value / 1000:,.1f}k" if value >= 1000 else f"{value:,.0f}"
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
    return {"ingest": f"ingest{size_label} msg/s", "append": "append msg/s", "load": f"load{size_label}",
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


def _ratio(a: float, b: float) -> str:
    """convstore / other: above 1 is faster for rates, slower for times (1/N: N times less)."""
    if not b or not a:
        return "-"
    r = a / b
    return f"1/{1 / r:,.0f}" if r < 0.1 else f"{r:.2f}x"


def _check(backend: str, metric: str, cs: Summary, floor: Summary | None,
           peers: dict[str, Summary], bound: Summary | None = None) -> Target:
    """One target row: convstore against the floor and the best peer on ``metric``."""
    rate = is_rate(metric)
    best_name, best = (max if rate else min)(peers.items(), key=lambda kv: kv[1].median, default=(None, None))
    oks: list[bool] = []
    kind = metric.partition("@")[0]
    goal = ""
    if kind == "ingest":
        need = {SQLALCHEMY_SESSION: 2.0} if backend == "postgresql" else {}
        oks += [cs.median >= need.get(n, 1.0) * p.median for n, p in peers.items()]
        oks += [cs.median >= 0.6 * floor.median] if floor else []
        goal = ">= every peer" + (" (2x SQLAlchemySession)" if need else "") + ", >= 0.6x floor"
    elif kind == "append":
        oks += [cs.median >= 0.8 * floor.median] if floor else []
        goal = ">= 0.8x floor"
    elif kind == "load":
        oks += [cs.median <= 1.5 * floor.median] if floor else []
        oks += [cs.median <= p.median for p in peers.values()]
        goal = "<= 1.5x floor, <= every peer"
    elif kind == "last":
        if backend == "sqlite":
            oks.append(cs.median <= 0.002)
            goal = "<= 2 ms"
    elif kind == "toolcall":
        oks.append(cs.median <= 0.001)
        oks += [p.median >= 100 * cs.median for p in peers.values()]
        goal = "<= 1 ms" + (", >= 100x faster than every peer" if peers else "")
    return Target(
        metric=metric_label(metric), goal=goal or "(report)", convstore=fmt_value(metric, cs.median),
        floor=fmt_value(metric, floor.median) if floor else "-",
        vs_floor=_ratio(cs.median, floor.median) if floor else "-",
        peer=f"{fmt_value(metric, best.median)} ({best_name.split()[-1]})" if best else "-",
        vs_peer=_ratio(cs.median, best.median) if best else "-",
        ok=all(oks) if oks else None,
        bound=fmt_value(metric, bound.median) if bound else "-",
        bound_vs_floor=_ratio(bound.median, floor.median) if bound and floor else "-",
    )


def targets(backend: str, summary: dict[str, dict[str, Summary]], kinds: dict[str, str]) -> list[Target]:
    """``kinds``: contestant name -> convstore | bound | floor | peer."""
    cs = summary.get(CONVSTORE, {})
    floor_name = next((n for n, k in kinds.items() if k == "floor" and n in summary), None)
    bound_name = next((n for n, k in kinds.items() if k == "bound" and n in summary), None)
    out = []
    for metric in sorted(cs, key=_order):
        if metric.startswith(("statements", "check")):
            continue
        floor = summary.get(floor_name, {}).get(metric) if floor_name else None
        peers = {n: s[metric] for n, s in summary.items() if kinds.get(n) == "peer" and metric in s}
        bound = summary.get(bound_name, {}).get(metric) if bound_name else None
        out.append(_check(backend, metric, cs[metric], floor, peers, bound))
    return out


def statements_target(samples: dict[str, list[float]]) -> Target | None:
    load, last = samples.get("statements.load"), samples.get("statements.last")
    if not load or not last:
        return None
    bounded = load[0] <= load[1] and last[0] <= last[1]  # the long one needs no more than the short one
    text = f"load {int(load[0])} / {int(load[1])}, last 50: {int(last[0])} / {int(last[1])}"
    return Target("SQL statements (long / 100-msg conversation)", "no more for a longer conversation", text,
                  "-", "-", "-", "-", bounded)


def _order(metric: str) -> tuple[int, int]:
    kind, _, size = metric.partition("@")
    rank = ["ingest", "append", "load", "last", "toolcall"]
    return (rank.index(kind) if kind in rank else 9, int(size or 0))


def _verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("[bold green]PASS[/]" if ok else "[bold red]MISS[/]")


def figures_table(backend: str, detail: str, summary: dict[str, dict[str, Summary]],
                  order: list[str]) -> Table:
    metrics = sorted({m for s in summary.values() for m in s if not m.startswith(("statements", "check"))},
                     key=_order)
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


def targets_table(backend: str, rows: list[Target]) -> Table:
    table = Table(title=f"{backend}: convstore against the targets", title_justify="left")
    columns = ("metric", "convstore", "floor", "x floor", "schema bound", "bound x floor", "best peer",
               "x best peer", "target", "result")
    for col in columns:
        table.add_column(col, justify="left" if col in ("metric", "target") else "right")
    for t in rows:
        table.add_row(t.metric, t.convstore, t.floor, t.vs_floor, t.bound, t.bound_vs_floor, t.peer, t.vs_peer,
                      t.goal, _verdict(t.ok))
    return table


def conversion_table(rates: dict[str, dict[str, list[float]]],
                     bound: dict[str, dict[str, float]] | None = None) -> tuple[Table, Target]:
    """The pair matrix; ``bound`` adds, per source, the rate validation alone allows
    (``conversion.validation_bound``): no target can be reached faster from that source."""
    names = list(rates)
    table = Table(title="conversion in memory (store.convert): median k messages/s,"
                        " source rows, target columns", title_justify="left")
    table.add_column("from \\ to")
    for n in names:
        table.add_column(n, justify="right")
    if bound:
        table.add_column("validation bound", justify="right")
    worst: tuple[float, str] = (float("inf"), "")
    for src in names:
        cells = []
        for dst in names:
            samples = rates[src].get(dst) or []
            value = statistics.median(samples) if samples else 0.0
            worst = min(worst, (value, f"{src} -> {dst}"))
            style = "green" if value >= 50_000 else "red"
            cells.append(f"[{style}]{value / 1000:.0f}[/]" if samples else "[red]fail[/]")
        if bound:
            cells.append(f"{bound[src]['bound'] / 1000:.0f}" if src in bound else "-")
        table.add_row(src, *cells)
    target = Target("conversion, slowest pair", ">= 50k msg/s for every pair",
                    f"{worst[0] / 1000:.1f}k ({worst[1]})", "-", "-", "-", "-", worst[0] >= 50_000)
    return table, target


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
