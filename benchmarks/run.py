"""Run the benchmarks: ``python -m benchmarks.run [--quick] [--backends …] [--only …] [--json out.json]``.

convstore, the raw-driver floor and the peers run on the same workload in one run, each on a fresh
database of its own (dropped afterwards). They take turns call by call (lookups, loads, appends), and
their order rotates (and reverses) from one repeat to the next, so a noisy neighbour slows everyone
alike.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import defaultdict
from typing import Any

from rich.console import Console

from . import conversion, databases, memory, report, scale, targets
from . import workload as wl
from .contestant import Contestant, Convstore, SchemaBound
from .floors import FLOORS
from .measure import Plan, Workloads, run_big_lookup, run_round

ALL = ("ingest", "append", "load", "last", "toolcall", "memory", "convert", "scale")
console = Console(width=None if sys.stdout.isatty() else 150)
err = Console(stderr=True, soft_wrap=True)


def _say(text: str) -> None:
    err.print(text, highlight=False)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=None, help="ingest / tool-call sizes in messages (default 100000)")
    p.add_argument("--backends", default="sqlite,postgresql", help="sqlite,postgresql,mariadb")
    p.add_argument("--repeat", type=int, default=None, help="repeats, alternating order (default 3)")
    p.add_argument("--quick", action="store_true", help="small sizes and one short pass: a smoke run")
    p.add_argument("--only", default=",".join(ALL), help=f"subset of {','.join(ALL)}")
    p.add_argument("--json", dest="json_path", help="write every sample and summary here")
    p.add_argument("--load-size", type=int, default=None, help="messages of the loaded conversation (10000)")
    p.add_argument("--append-count", type=int, default=None, help="messages appended one by one (1000)")
    p.add_argument("--toolcall-1m", action="store_true",
                   help="also time tool call by id with 1M messages stored (convstore and floor)")
    p.add_argument("--memory-messages", type=int, default=None, help="JSONL size for memory (1000000)")
    p.add_argument("--memory-cap-gb", type=float, default=10.0,
                   help="address-space cap of the CLI processes")
    p.add_argument("--convert-messages", type=int, default=None,
                   help="messages per conversion source (10000)")
    p.add_argument("--peers", default="all",
                   help="'all', 'none', or names (langchain,sqlitesession,sqlalchemy)")
    p.add_argument("--scale", action="store_true",
                   help="convstore alone on one PostgreSQL database growing to --scale-messages (--only scale)")
    p.add_argument("--scale-messages", type=int, default=10_000_000, help="messages in small conversations")
    p.add_argument("--scale-per-conversation", type=int, default=100, help="messages per small conversation")
    p.add_argument("--scale-big", type=int, default=1_000_000, help="messages of the one big conversation")
    p.add_argument("--scale-reference", type=int, default=1_000_000,
                   help="messages stored at the reference point of the flatness ratios")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def make_plan(args: argparse.Namespace) -> Plan:
    quick = args.quick
    sizes = [int(s) for s in (args.sizes or ("2000" if quick else "100000")).split(",")]
    only = set(args.only.split(","))
    unknown = only - set(ALL)
    if unknown:
        raise SystemExit(f"--only: unknown {', '.join(sorted(unknown))} (one of {', '.join(ALL)})")
    return Plan(sizes=sizes, only=only, seed=args.seed,
                load_size=args.load_size or (1_000 if quick else 10_000),
                append_count=args.append_count or (100 if quick else 1_000),
                lookups=50 if quick else 200, budget_s=0.5 if quick else 3.0)


def contestants(backend: str, peers: str) -> list[Contestant]:
    from .peers import PEERS  # the bench extra: only needed when peers run

    keys = {"langchain": "LangChain", "sqlitesession": "SQLiteSession", "sqlalchemy": "SQLAlchemySession"}
    wanted = [keys.get(k.strip(), k.strip()) for k in peers.split(",")]
    chosen = [p() for p in PEERS if backend in p.backends
              and (peers == "all" or any(w in p.name for w in wanted))] if peers != "none" else []
    return [Convstore(), SchemaBound(), FLOORS[backend](), *chosen]


def rotation(items: list[Any], repeat: int) -> list[Any]:
    """The order of repeat ``repeat``: reversed every other time, then rotated by ``repeat``."""
    base = items[::-1] if repeat % 2 else items
    k = repeat % len(items)
    return base[k:] + base[:k]


def bench_backend(backend: str, plan: Plan, args: argparse.Namespace, work: Workloads,
                  results: report.Results) -> list[Contestant]:
    cs = contestants(backend, args.peers)
    repeats = args.repeat or (1 if args.quick else 3)
    samples: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in range(repeats):
        for size in plan.sizes:
            order = rotation(cs, r)
            start = time.perf_counter()
            names = ", ".join(c.name for c in order)
            _say(f"  [{backend} {r + 1}/{repeats}] {size:,} messages, order: {names}")
            for name, got in run_round(order, backend, size, work, check=r == 0).items():
                for metric, values in got.items():
                    samples[name][metric].extend(values)
                _say(f"    {name}: {_brief(got)}")
            _say(f"    ({time.perf_counter() - start:,.0f} s)")
    if args.toolcall_1m and "toolcall" in plan.only:
        for c in (c for c in cs if c.kind in ("convstore", "floor")):
            _say(f"  [{backend}] {c.name}: storing 1,000,000 messages for the tool-call lookup")
            for metric, values in run_big_lookup(c, backend, 1_000_000, work, say=_say).items():
                samples[c.name][metric].extend(values)
    results[backend] = {name: dict(ms) for name, ms in samples.items()}
    return cs


def _brief(got: dict[str, list[float]]) -> str:
    parts = []
    for metric, values in got.items():
        if values and not metric.startswith(("statements", "check")):
            s = report.Summary.of(metric, values)
            parts.append(f"{report.metric_label(metric)} {report.fmt_value(metric, s.median)}")
    return ", ".join(parts) + (" [OUTPUT DIFFERS]" if "check_failed" in got else "")


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "load_average": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = make_plan(args)
    work = Workloads(plan)
    results: report.Results = {}
    tables, general, meta = [], [], {"machine": machine(), "args": vars(args), "backends": {}}
    meta["workload"] = wl.describe(work.messages(f"big@{plan.largest}")) if plan.only & {
        "ingest", "toolcall"} else None
    _say(f"workload: {meta['workload']}")
    db_metrics = plan.only & {"ingest", "append", "load", "last", "toolcall"}
    for backend in args.backends.split(",") if db_metrics else []:
        if (why := databases.reachable(backend)) is not None:
            _say(f"[yellow]skipping {backend}: {why}[/]")
            continue
        detail = databases.settings(backend)
        meta["backends"][backend] = detail
        _say(f"[bold]{backend}[/] ({detail})")
        cs = bench_backend(backend, plan, args, work, results)
        summary = report.summaries(results)[backend]
        kinds = {c.name: c.kind for c in cs}
        rows = targets.targets(backend, summary, kinds)
        if (st := targets.statements_row(results[backend].get(report.CONVSTORE, {}))) is not None:
            rows.append(st)
        tables += [report.figures_table(backend, detail, summary, [c.name for c in cs]),
                   report.targets_table(backend, rows, targets.PEERS.get(backend))]
        meta.setdefault("targets", {})[backend] = [t.__dict__ for t in rows]
        report.print_all(console, tables[-2:])
    if "convert" in plan.only:
        n = args.convert_messages or (1_000 if args.quick else 10_000)
        meta["convert"] = {"messages": n}
        for key, of, sources in (("samples", "samples", conversion.source),
                                 ("agent", "an agent's conversation", conversion.agent_source)):
            _say(f"[bold]conversion[/] of {of}")
            rates = conversion.run(n, budget_s=0.3 if args.quick else 1.0, say=_say, sources=sources)
            bound = conversion.validation_bound(n, say=_say, sources=sources)
            table, target = report.conversion_table(rates, bound, of)
            tables.append(table)
            general.append(target)
            meta["convert"][key] = {"rates": rates, "validation_bound": bound}
    if "memory" in plan.only:
        n = args.memory_messages or (20_000 if args.quick else 1_000_000)
        meta["memory"] = memory.run(n, args.memory_cap_gb, say=_say, seed=args.seed)
        general.append(report.memory_target(meta["memory"]))
    if args.scale and "scale" in plan.only:
        if (why := databases.reachable("postgresql")) is not None:
            _say(f"[yellow]skipping scale: {why}[/]")
        else:
            _say(f"[bold]scale[/] (postgresql: {databases.settings('postgresql')})")
            meta["scale"] = scale.run("postgresql", args.scale_messages, args.scale_per_conversation,
                                      args.scale_big, args.scale_reference, args.seed, say=_say)
            tables.append(scale.table(meta["scale"]))
    if general:
        tables.append(report.general_table(general))
        meta["general"] = [t.__dict__ for t in general]
    console.rule("all results")
    report.print_all(console, tables)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump({"meta": meta, "samples": results}, out, indent=1, default=str)
        _say(f"wrote {args.json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
