"""Memory: ``convstore import`` then ``convstore export`` of an N-message JSON Lines file.

Each command runs as its own process (``python -m store``) on a new SQLite database; its peak
resident set size is the child's VmHWM (its own address space, sampled until it exits). Standard error is a
pseudo-terminal, as a person's would be, so we can see whether the command shows progress.
An address-space cap (``--memory-cap-gb``) turns a runaway into a MemoryError instead of
pressing on the whole machine.
"""

from __future__ import annotations

import os
import pty
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import workload as wl

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Step:
    command: str
    ok: bool
    seconds: float
    peak_rss_mb: float
    progress_seen: bool
    tail: str


def _drain(fd: int, sink: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        sink.append(chunk)


def _watch_peak(pid: int, peak: list[int]) -> None:
    """The child's VmHWM (kB), read until it exits.

    ``wait4``'s ``ru_maxrss`` would count the pages the child shared with this process
    between fork and exec (the benchmark's own hundreds of MB); VmHWM belongs to the
    program's own address space, which exec starts afresh."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        for line in text.splitlines():
            if line.startswith("VmHWM:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        if "State:\tZ" in text:
            return
        time.sleep(0.05)


def _run(args: list[str], cap_bytes: int, stdout_path: Path) -> Step:
    """Run one command; its peak RSS, time, and whether it drew progress on the terminal."""
    master, slave = pty.openpty()
    err: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(master, err), daemon=True)
    reader.start()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    start = time.perf_counter()
    with open(stdout_path, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=slave, stdin=subprocess.DEVNULL, preexec_fn=limit,
                                env={**os.environ, "COLUMNS": "100"})
        os.close(slave)
        peak = [0]
        watcher = threading.Thread(target=_watch_peak, args=(proc.pid, peak), daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        watcher.join(timeout=5)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=5)
    os.close(master)
    text = _ANSI.sub("", b"".join(err).decode(errors="replace"))
    progress = any(word in text for word in ("importing", "exporting", "%", "━"))
    tail = " ".join(text.replace("\r", "\n").split("\n")[-3:]).strip()[-300:]
    return Step(" ".join(Path(a).name if "/" in a else a for a in args[2:]), proc.returncode == 0, seconds,
                (peak[0] or usage.ru_maxrss) / 1024, progress, tail)


def run(n: int, cap_gb: float = 10.0, say: Any = print, seed: int = 0) -> dict[str, Any]:
    """Import then export an ``n``-message JSONL file; peak RSS of each command."""
    directory = Path(tempfile.mkdtemp(prefix="convstore-bench-memory-"))
    try:
        source = directory / "workload.jsonl"
        start = time.perf_counter()
        size = wl.write_jsonl(source, n, seed, every=max(n // 4, 1))
        seconds = time.perf_counter() - start
        say(f"  memory: wrote {n:,} messages ({size / 2**20:,.0f} MiB) in {seconds:,.0f} s")
        db = f"sqlite:///{directory / 'memory.db'}"
        cli = [sys.executable, "-m", "store", "--db", db]
        cap = int(cap_gb * 2**30)
        steps = [_run(cli + ["import", str(source), "--format", "openai"], cap, directory / "ids.txt")]
        say(f"  memory: import {_show(steps[-1])}")
        cid = (directory / "ids.txt").read_text().strip().splitlines()
        if steps[-1].ok and cid:
            export = ["export", cid[-1], "--format", "openai", "-o", str(directory / "out.jsonl")]  # streamed
            steps.append(_run(cli + export, cap, directory / "export.txt"))
            say(f"  memory: export {_show(steps[-1])}")
        return {"messages": n, "file_mib": size / 2**20, "cap_gb": cap_gb,
                "steps": [asdict(s) for s in steps]}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _show(step: Step) -> str:
    state = "ok" if step.ok else f"FAILED ({step.tail})"
    progress = "yes" if step.progress_seen else "no"
    return f"{state}, {step.seconds:,.1f} s, peak RSS {step.peak_rss_mb:,.0f} MB, progress {progress}"
