"""Pausing Python's cyclic garbage collector around bulk work.

Building tens of thousands of small objects (rows, dicts, pydantic models)
triggers the collector over and over, and each full pass walks the whole heap:
on a large batch that costs more than the work itself. Nothing convstore builds
in a batch forms reference cycles, so reference counting frees it all the same,
and by the end of the operation most of it is gone before the collector returns.

The switch is process-wide: while one thread's operation runs, others run with
the collector off too. So that overlapping operations cannot keep it off for
good, a thread's pause that ends while another thread's is still running collects
the youngest generation once a second. (Pauses nested in one thread collect nothing:
they are one operation.)
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_local = threading.local()
_depth = 0
_was_enabled = True
_since = 0.0
OVERLAP_COLLECT_S = 1.0


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested and thread-safe: it comes
    back on when the outermost pause ends, unless it was off before)."""
    global _depth, _was_enabled, _since
    with _lock:
        if _depth == 0:
            _was_enabled, _since = gc.isenabled(), time.monotonic()
            gc.disable()
        _depth += 1
    mine = getattr(_local, "depth", 0)
    _local.depth = mine + 1
    try:
        yield
    finally:
        _local.depth = mine
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _was_enabled:
                    gc.enable()
            elif mine == 0 and _was_enabled and time.monotonic() - _since > OVERLAP_COLLECT_S:
                gc.collect(0)
                _since = time.monotonic()
