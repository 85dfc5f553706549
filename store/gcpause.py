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

_lock = threading.Lock()
_local = threading.local()
_depth = 0
_was_enabled = True
_since = 0.0
OVERLAP_COLLECT_S = 1.0


class paused_gc:  # noqa: N801  (used as a function: ``with paused_gc():``)
    """Disable the cyclic collector for the block (nested and thread-safe: it comes
    back on when the outermost pause ends, unless it was off before). A class, not a
    generator: an append passes through eight pauses, a pause nested in one of the same
    thread costs a check."""

    __slots__ = ("mine",)

    def __enter__(self) -> None:
        global _depth, _was_enabled, _since
        self.mine = mine = getattr(_local, "depth", 0)
        _local.depth = mine + 1
        if mine:  # nested: the thread's outer pause has it off, and ends it
            return
        with _lock:
            if _depth == 0:
                _was_enabled, _since = gc.isenabled(), time.monotonic()
                gc.disable()
            _depth += 1

    def __exit__(self, *exc: object) -> None:
        global _depth, _since
        _local.depth = mine = self.mine
        if mine:
            return
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _was_enabled:
                    gc.enable()
            elif _was_enabled and time.monotonic() - _since > OVERLAP_COLLECT_S:
                gc.collect(0)
                _since = time.monotonic()
