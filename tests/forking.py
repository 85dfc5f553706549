"""Running a check in a forked child process, for tests of what a store does after a fork."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def exit_code_of_child(check: Callable[[], bool], what: str) -> int:
    """Fork, run ``check`` in the child (no pytest teardown there) and return the child's exit code: 0
    where ``check`` returned True, 2 where it returned False, 1 where it raised (said on stderr)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if check() else 2
        except BaseException as exc:  # noqa: BLE001 - said to the parent by the exit code
            sys.stderr.write(f"{what}: {exc!r}\n")
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
