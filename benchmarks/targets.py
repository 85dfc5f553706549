"""The targets of issue 12 ("Schema v2 and a lean hot path"), checked on one run's medians.

Per backend, convstore against one peer: on SQLite the OpenAI Agents ``SQLiteSession``, on
PostgreSQL ``SQLAlchemySession`` (MariaDB: no peer, figures reported without a verdict). Rates
(ingest, append): convstore >= factor x the peer. Times and bytes: convstore <= factor x the
peer. "Load 10k into another format" is convstore's ``load(format="anthropic")`` against the
peer's native load (peers only read back what they stored). Beside each, where the issue sets one,
the schema bound (convstore's rows at driver speed) against the raw-driver floor.
"""

from __future__ import annotations

from .report import (CONVSTORE, Summary, Target, fmt_value, is_rate, metric_label, metric_order, ratio)

PEERS = {"sqlite": "OpenAI Agents SQLiteSession", "postgresql": "OpenAI Agents SQLAlchemySession"}

FACTORS: dict[str, dict[str, float]] = {
    "ingest": {"sqlite": 1.0, "postgresql": 1.5},
    "append": {"sqlite": 1.0, "postgresql": 1.5},
    "load": {"sqlite": 1.0, "postgresql": 1.0},
    "load_other": {"sqlite": 1.5, "postgresql": 1.5},
    "last": {"sqlite": 1.0, "postgresql": 0.5},
    "bytes": {"sqlite": 1.0, "postgresql": 1.0},
}
"""metric kind -> backend -> factor of the peer's figure (rates: at least, the rest: at most)."""

BOUND = {"ingest": 0.8, "load": 1.2, "last": 1.2}
"""The schema bound against the floor: ingest at least 0.8x the floor's rate, loads (the whole
10k and the last 50) at most 1.2x its time."""

TOOLCALL_S, TOOLCALL_AT = 0.001, 1_000_000
"""Tool call by id: at most 1 ms with 1M messages stored (``--toolcall-1m``)."""

SKIP = ("statements", "check")


def targets(backend: str, summary: dict[str, dict[str, Summary]], kinds: dict[str, str]) -> list[Target]:
    """One row per convstore metric. ``kinds``: contestant name -> convstore | bound | floor | peer."""
    cs = summary.get(CONVSTORE, {})
    floor = _of_kind(summary, kinds, "floor")
    bound = _of_kind(summary, kinds, "bound")
    peer_name = PEERS.get(backend)
    peer = summary.get(peer_name, {}) if peer_name else {}
    rows = []
    for metric in sorted((m for m in cs if not m.startswith(SKIP)), key=metric_order):
        same = metric.replace("load_other@", "load@")  # the peer's and floor's native load
        rows.append(_row(backend, metric, cs[metric], floor.get(same), bound.get(metric),
                         peer_name if same in peer else None, peer.get(same)))
    return rows


def _of_kind(summary: dict[str, dict[str, Summary]], kinds: dict[str, str], kind: str) -> dict[str, Summary]:
    name = next((n for n, k in kinds.items() if k == kind and n in summary), None)
    return summary[name] if name else {}


def _row(backend: str, metric: str, cs: Summary, floor: Summary | None, bound: Summary | None,
         peer_name: str | None, peer: Summary | None) -> Target:
    kind, _, size = metric.partition("@")
    goal, ok = _peer_goal(backend, metric, cs, peer_name, peer)
    bound_goal, bound_ok = _bound_goal(backend, kind, bound, floor)
    label = metric_label(metric) + (" (peer: native)" if kind == "load_other" else "")
    if kind == "toolcall":
        goal, ok = _toolcall_goal(backend, int(size), cs)
    return Target(
        metric=label, goal="; ".join(g for g in (goal, bound_goal) if g) or "(report)",
        convstore=fmt_value(metric, cs.median),
        floor=fmt_value(metric, floor.median) if floor else "-",
        vs_floor=ratio(cs.median, floor.median) if floor else "-",
        peer=f"{fmt_value(metric, peer.median)} ({peer_name.split()[-1]})" if peer and peer_name else "-",
        vs_peer=ratio(cs.median, peer.median) if peer else "-",
        ok=ok, bound=fmt_value(metric, bound.median) if bound else "-",
        bound_vs_floor=ratio(bound.median, floor.median) if bound and floor else "-", bound_ok=bound_ok)


def _peer_goal(backend: str, metric: str, cs: Summary, peer_name: str | None,
               peer: Summary | None) -> tuple[str, bool | None]:
    kind = metric.partition("@")[0]
    factor = FACTORS.get(kind, {}).get(backend)
    if factor is None:
        return "", None
    if is_rate(metric):
        goal = f">= {factor:.1f}x peer"
        ok = cs.median >= factor * peer.median if peer else None
    else:
        goal = f"<= {factor:.1f}x peer"
        ok = cs.median <= factor * peer.median if peer else None
    return goal + ("" if peer_name else " (peer not run)"), ok


def _bound_goal(backend: str, kind: str, bound: Summary | None,
                floor: Summary | None) -> tuple[str, bool | None]:
    factor = BOUND.get(kind)
    if factor is None or backend not in PEERS:
        return "", None
    goal = f"bound {'>=' if kind == 'ingest' else '<='} {factor:.1f}x floor"
    if not bound or not floor:
        return goal + " (not run)", None
    ok = bound.median >= factor * floor.median if kind == "ingest" else bound.median <= factor * floor.median
    return goal, ok


def _toolcall_goal(backend: str, size: int, cs: Summary) -> tuple[str, bool | None]:
    if backend not in PEERS:
        return "", None
    if size < TOOLCALL_AT:
        return "(report; <= 1 ms at 1M: --toolcall-1m)", None
    return "<= 1 ms", cs.median <= TOOLCALL_S


def statements_row(samples: dict[str, list[float]]) -> Target | None:
    """SQL statements of load / last 50, long and 100-message conversation: reported (issue 5 asked
    for no more statements for a longer conversation; issue 12 sets no target on it)."""
    load, last = samples.get("statements.load"), samples.get("statements.last")
    if not load or not last:
        return None
    text = f"load {int(load[0])} / {int(load[1])}, last 50: {int(last[0])} / {int(last[1])}"
    return Target("SQL statements (long / 100-msg conversation)", "(report)", text,
                  "-", "-", "-", "-", None)
