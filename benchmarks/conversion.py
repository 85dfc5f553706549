"""Conversion in memory (no database): ``store.convert`` for every pair of ``store.FORMATS``.

Two workloads. The samples: each source is its bundled sample (``store/samples/<format>.json``)
repeated until it holds at least N messages, every tool-call id renamed per copy (``<id>~<copy>``)
so that ids stay unique; a sample shows every feature of its format, so this is the hard case.
An agent's conversation: the benchmark's workload (``workload.conversation``: texts, calls and
their results, a few images and reasoning notes), N OpenAI messages written in each format by
``store.convert`` (what an agent built on that framework would hold). The rate counts source
messages per second (for the agent's conversation, its N messages in every format, however many
items a format groups them in), validation and the losses report included.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import store
from store.formats import get_format, read
from store.formats._common import message_list
from store.gcpause import paused_gc
from store.model import MESSAGES, ToolCallBlock, ToolResultBlock

SAMPLES = Path(store.__file__).resolve().parent / "samples"


def _call_ids(data: Any, fmt: str) -> set[str]:
    ids: set[str] = set()
    for message in read(data, fmt):
        for block in message.content:
            if isinstance(block, (ToolCallBlock, ToolResultBlock)):
                ids.add(block.call_id)
    return ids


def _rename(value: Any, ids: set[str], suffix: str) -> Any:
    if isinstance(value, str):
        return value + suffix if value in ids else value
    if isinstance(value, list):
        return [_rename(v, ids, suffix) for v in value]
    if isinstance(value, dict):
        return {k: _rename(v, ids, suffix) for k, v in value.items()}
    return value


def source(fmt: str, n: int) -> tuple[Any, int]:
    """The format's sample repeated to at least ``n`` messages, and how many that is."""
    sample = json.loads((SAMPLES / f"{fmt}.json").read_text(encoding="utf-8"))
    # a wrapped sample ({system, messages}, {system_instruction, contents}, ...): its messages repeat, the
    # longest of its lists (its first list was Anthropic's and OpenTelemetry's one system block: until the
    # twenty-fifth session those two rows converted 3,000 system blocks and 8 messages)
    lists = [k for k, v in sample.items() if isinstance(v, list)] if isinstance(sample, dict) else []
    key = max(lists, key=lambda k: len(sample[k]), default=None)
    messages = sample[key] if key else sample
    ids = _call_ids(sample, fmt)
    copies = -(-n // len(messages))
    out = [m for k in range(copies) for m in _rename(messages, ids, f"~{k}")]
    if key is None:
        return out, len(out)
    data = {**sample, key: out}
    return data, sum(len(v) for v in data.values() if isinstance(v, list))


def agent_source(fmt: str, n: int) -> tuple[Any, int]:
    """The benchmark's agent conversation of ``n`` messages as ``fmt`` holds it, and ``n``."""
    return _agent(n)[fmt], n


@lru_cache(maxsize=1)
def _agent(n: int) -> dict[str, Any]:
    from .workload import conversation

    messages = conversation(n)
    return {fmt: store.convert(messages, from_="openai", to=fmt, on_loss=lambda _loss: None) for fmt in store.FORMATS}


Source = Callable[[str, int], tuple[Any, int]]


def _rate(data: Any, count: int, src: str, dst: str, budget_s: float) -> list[float]:
    store.convert(data, from_=src, to=dst)  # warm-up
    rates: list[float] = []
    spent = 0.0
    while len(rates) < 3 or (spent < budget_s and len(rates) < 5):
        start = time.perf_counter()
        store.convert(data, from_=src, to=dst, on_loss=lambda _loss: None)
        seconds = time.perf_counter() - start
        spent += seconds
        rates.append(count / seconds)
    return rates


def run(n: int, budget_s: float = 1.0, say: Any = print, sources: Source = source,
        ) -> dict[str, dict[str, list[float]]]:
    """Messages per second for every (source, target) pair: ``{source: {target: [samples]}}``;
    ``sources``: :func:`source` (the samples) or :func:`agent_source`."""
    out: dict[str, dict[str, list[float]]] = {}
    for src in store.FORMATS:
        data, count = sources(src, n)
        out[src] = {}
        for dst in store.FORMATS:
            try:
                out[src][dst] = _rate(data, count, src, dst, budget_s)
            except Exception as exc:  # noqa: BLE001 - a failing pair is reported, not fatal
                say(f"  convert {src} -> {dst} failed: {type(exc).__name__}: {exc}")
                out[src][dst] = []
        say(f"  convert from {src}: {count:,} messages to {len(store.FORMATS)} formats done")
    return out


def validation_bound(n: int, repeat: int = 3, say: Any = print, sources: Source = source,
                     ) -> dict[str, dict[str, float]]:
    """What validation alone allows per source format, in source messages per second.

    Any conversion validates its input with the source format's models and builds canonical
    models (at best in one call into pydantic-core, as ``MESSAGES.validate_python`` of plain
    dicts does): ``{format: {"source": rate, "canonical": rate, "bound": rate of both}}``.
    No conversion from that source can beat ``bound``, whatever its target. A format whose
    sample its module's ``MESSAGES`` / ``ITEMS`` does not take as it is gets no bound (said, not fatal)."""
    out: dict[str, dict[str, float]] = {}
    for fmt in store.FORMATS:
        try:
            out[fmt] = _bound_of(fmt, n, repeat, sources)
        except Exception as exc:  # noqa: BLE001 - reported, the other formats go on
            say(f"  validation bound of {fmt}: none ({type(exc).__name__}: {str(exc).splitlines()[0]})")
    return out


# Sources whose messages their module's MESSAGES / ITEMS do not take as the sample holds them: the
# adapter their reader validates them with, and the messages it takes.
_VALIDATED_AS: dict[str, tuple[str, Any]] = {
    "langchain": ("MESSAGES", lambda data: [m["data"] for m in data]),  # messages_to_dict's {type, data}
    "gemini": ("CONTENTS", lambda data: data["contents"]),
    "otel-genai": ("MESSAGES", lambda data: data["input_messages"] + data["output_messages"]),
}


def _bound_of(fmt: str, n: int, repeat: int, sources: Source = source) -> dict[str, float]:
    module = importlib.import_module(get_format(fmt).to_canonical.__module__)
    data, count = sources(fmt, n)
    if fmt in _VALIDATED_AS:
        name, messages = _VALIDATED_AS[fmt]
        adapter, items = getattr(module, name), messages(data)
    else:
        adapter, items = getattr(module, "MESSAGES", None) or getattr(module, "ITEMS"), message_list(data, fmt)
    canonical = MESSAGES.dump_python(read(data, fmt), exclude_none=True)
    with paused_gc():
        src = count / _best(adapter.validate_python, items, repeat)
        canon = count / _best(MESSAGES.validate_python, canonical, repeat)
    return {"source": src, "canonical": canon, "bound": 1 / (1 / src + 1 / canon)}


def _best(fn: Any, arg: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - start)
    return best
