"""Pausing Python's cyclic garbage collector around bulk work.

Building tens of thousands of small objects (rows, dicts, pydantic models)
triggers the collector over and over, and each full pass walks the whole heap:
on a large batch that costs more than the work itself. Nothing convstore builds
in a batch forms reference cycles, so reference counting frees it all the same.
Only pure CPU work is wrapped (never I/O, where other threads or tasks would run
with the collector off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested and thread-safe: it comes
    back on when the outermost pause ends, unless it was off before)."""
    global _depth
    with _lock:
        if _depth == 0:
            paused_gc.was_enabled = gc.isenabled()  # type: ignore[attr-defined]
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and paused_gc.was_enabled:  # type: ignore[attr-defined]
                gc.enable()
