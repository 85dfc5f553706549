"""Cross-format replay checked by the real packages (issue 3, item 3).

Every fixture (``tests/fixtures/<format>[-<variant>].json``, made with the real
package) is converted to every registered format; each target's checker script then
validates all of its cases in one run under the target's isolated venv (see
``envs.py``). One test per (fixture, target) pair reads that verdict.

A format without a checker yet is skipped. A venv that cannot be built skips its
tests, or fails them when ``CI=true``.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from store import FORMATS, convert

from . import envs

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHECK_TIMEOUT = 900

FIXTURES = envs.fixtures(set(FORMATS))
TARGETS = sorted(FORMATS)
PAIRS = [(fixture_id, target) for fixture_id, _, _ in FIXTURES for target in TARGETS]

READ_ONLY_SHAPES = {
    "agentscope-java": "the seed's Java JSON is read; export writes AgentScope 1.x's Python shape",
}
"""Fixtures in a shape their format reads but never writes (issue 3: "where a seed and
today's release differ, read both, write the release's"). Their export must round-trip
exactly instead of the fixture itself."""


def case_id(fixture_id: str, target: str) -> str:
    return f"{fixture_id}->{target}"


@dataclass
class Verdict:
    """One checker run: errors per case, or why there are none."""

    errors: dict[str, list[str]]
    skip: str | None = None
    fail: str | None = None


@dataclass
class _Failed:
    error: Exception
    traceback: TracebackType | None


class Conformance:
    """Converts lazily and runs each target's checker once per session."""

    def __init__(self) -> None:
        self.sources = {fixture_id: (fmt, envs.load_fixture(path)) for fixture_id, fmt, path in FIXTURES}
        self._converted: dict[tuple[str, str], Any] = {}
        self._verdicts: dict[str, Verdict] = {}

    def converted(self, fixture_id: str, target: str) -> Any:
        """The fixture in ``target``; the conversion's exception (raised again) if it failed."""
        key = (fixture_id, target)
        if key not in self._converted:
            fmt, data = self.sources[fixture_id]
            try:
                self._converted[key] = convert(copy.deepcopy(data), from_=fmt, to=target)
            except Exception as exc:  # the test of that pair reports it
                self._converted[key] = _Failed(exc, exc.__traceback__)
        value = self._converted[key]
        if isinstance(value, _Failed):
            raise value.error.with_traceback(value.traceback)  # the original one, not one grown by re-raising
        return value

    def verdict(self, target: str) -> Verdict:
        if target not in self._verdicts:
            self._verdicts[target] = self._check(target)
        return self._verdicts[target]

    def _check(self, target: str) -> Verdict:
        checker = envs.CHECKERS.get(target)
        if checker is None:
            return Verdict({}, fail=f"no checker is declared for format {target!r} in tests/conformance/envs.py")
        if not checker.path.is_file():
            return Verdict({}, skip=f"no checker for {target} yet ({envs.shown(checker.path)})")
        try:
            python = envs.ensure_env(checker.env)
        except envs.EnvBuildError as exc:
            message = f"conformance env {checker.env} could not be built: {exc}"
            return Verdict({}, fail=message) if IN_CI else Verdict({}, skip=message)
        cases = {}
        for fixture_id in self.sources:
            try:
                cases[case_id(fixture_id, target)] = self.converted(fixture_id, target)
            except Exception:
                continue  # that pair's test fails on the conversion itself
        return _run_checker(python, checker, cases)


def _run_checker(python: Path, checker: envs.Checker, cases: dict[str, Any]) -> Verdict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    cmd = [str(python), str(checker.path)]
    try:
        done = subprocess.run(cmd, input=json.dumps(cases), capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT, cwd=envs.REPO, env=env)
    except subprocess.TimeoutExpired:
        return Verdict({}, fail=f"{checker.script} did not finish within {CHECK_TIMEOUT}s")
    crashed = f"{checker.script} (under {checker.env}) crashed with exit status {done.returncode}"
    if done.returncode != 0:
        return Verdict({}, fail=f"{crashed}:\n{done.stderr[-4000:]}")
    errors = _json_object(done.stdout)
    if errors is None:
        return Verdict({}, fail=f"{checker.script} wrote no JSON object:\n{done.stdout[:2000]}\n{done.stderr[-2000:]}")
    return Verdict(errors)


def _json_object(stdout: str) -> Any:
    """The checker's answer: all of stdout, or else its last line that is JSON (a framework
    may print a banner on import)."""
    for text in [stdout, *reversed(stdout.splitlines())]:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


@pytest.fixture(scope="session")
def conformance() -> Conformance:
    return Conformance()


@pytest.mark.parametrize(("fixture_id", "target"), PAIRS, ids=[case_id(*pair) for pair in PAIRS])
def test_replay_is_accepted_by_the_real_package(conformance: Conformance, fixture_id: str, target: str) -> None:
    conformance.converted(fixture_id, target)  # a failed conversion fails here, with its traceback
    verdict = conformance.verdict(target)
    if verdict.skip:
        pytest.skip(verdict.skip)
    if verdict.fail:
        pytest.fail(verdict.fail, pytrace=False)
    case = case_id(fixture_id, target)
    if case not in verdict.errors:
        pytest.fail(f"{envs.CHECKERS[target].script} returned no verdict for case {case!r}", pytrace=False)
    errors = verdict.errors[case]
    if errors:
        pytest.fail(f"{target} rejects {fixture_id} converted to {target}:\n  " + "\n  ".join(map(str, errors)),
                    pytrace=False)


@pytest.mark.parametrize(("fixture_id", "fmt"), [(f, fmt) for f, fmt, _ in FIXTURES], ids=[f for f, _, _ in FIXTURES])
def test_same_format_round_trip_is_exact(conformance: Conformance, fixture_id: str, fmt: str) -> None:
    original = conformance.sources[fixture_id][1]
    exported = conformance.converted(fixture_id, fmt)
    if fixture_id in READ_ONLY_SHAPES:  # written back in the release's shape: exact from there on
        assert convert(copy.deepcopy(exported), from_=fmt, to=fmt) == exported
    else:
        assert exported == original


@pytest.mark.parametrize("fmt", TARGETS)
def test_format_has_fixture_and_checker(fmt: str) -> None:
    """Each registered format is covered: a fixture made with the real package, and a checker."""
    missing = []
    if not any(f == fmt for _, f, _ in FIXTURES):
        missing.append(f"no fixture {envs.shown(envs.FIXTURES / fmt)}.json")
    checker = envs.CHECKERS.get(fmt)
    if checker is None:
        missing.append("no checker declared in tests/conformance/envs.py")
    elif not checker.path.is_file():
        missing.append(f"no checker {envs.shown(checker.path)}")
    if missing:
        message = f"{fmt} is registered but not covered: " + "; ".join(missing)
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
