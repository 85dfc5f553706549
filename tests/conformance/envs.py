"""Where the conformance harness finds things, and the isolated venvs it runs checkers in.

Each format's checker (``tests/conformance/check_<mod>.py``) runs under a venv that
holds the real framework package: the integration suite's venv of that framework where
there is one (``tests/integrations/pins/int-*.txt``), else one of its own
(``tests/conformance/pins/conf-*.txt``); a format whose package is a JavaScript one runs its
checker under ``node`` in an npm project of its own (``pins/npm-<name>/``, see
:func:`_ensure_npm`). Venvs are built in ``<repo>/.conformance/<env>`` (gitignored) on first use; a stamp file (the
hash of the pins) makes that happen once per machine. The core package never sees
these venvs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "tests" / "conformance"
PINS = HERE / "pins"
PIN_DIRS = (PINS, REPO / "tests" / "integrations" / "pins")
"""Where ``<env>.txt`` pins are looked for: conformance checkers, then integration suites."""
FIXTURES = REPO / "tests" / "fixtures"
ENVS = Path(os.environ.get("CONVSTORE_CONFORMANCE_DIR", REPO / ".conformance"))
"""Where the venvs live; ``CONVSTORE_CONFORMANCE_DIR`` moves them (e.g. to a CI cache)."""

STAMP = ".convstore-pins.sha256"
BUILD_TIMEOUT = 1800


@dataclass(frozen=True)
class Checker:
    env: str
    script: str

    @property
    def path(self) -> Path:
        return HERE / self.script


CHECKERS: dict[str, Checker] = {
    "openai": Checker("int-openai-agents", "check_openai.py"),
    "openai-responses": Checker("int-openai-agents", "check_openai_responses.py"),
    "anthropic": Checker("int-openai-agents", "check_anthropic.py"),
    "qwen": Checker("conf-qwen", "check_qwen.py"),
    "autogen": Checker("int-autogen", "check_autogen.py"),
    "autogen-core": Checker("int-autogen", "check_autogen_core.py"),
    "agentscope": Checker("int-agentscope1", "check_agentscope.py"),
    "agentscope2": Checker("int-agentscope", "check_agentscope2.py"),
    "agent-framework": Checker("int-agent-framework", "check_agent_framework.py"),
    "docent": Checker("conf-docent", "check_docent.py"),
    "langchain": Checker("conf-langchain", "check_langchain.py"),
    "gemini": Checker("conf-gemini", "check_gemini.py"),
    "pydantic-ai": Checker("conf-pydantic-ai", "check_pydantic_ai.py"),
    "otel-genai": Checker("conf-otel-genai", "check_otel_genai.py"),
    "vercel-ai": Checker("npm-ai", "check_vercel_ai.mjs"),
}
"""Format name -> the venv and script that check values exported in that format.

A checker runs in an integration suite's venv wherever that venv holds its framework
(pins are supersets), so one machine builds seven venvs, not twelve."""


class EnvBuildError(RuntimeError):
    """An isolated venv could not be built; the message holds the command and its output."""


def shown(path: Path) -> str:
    """``path`` relative to the repository where it is inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


# --- fixtures --------------------------------------------------------------------------


def fixture_format(path: Path, names: set[str]) -> str | None:
    """The format a fixture file belongs to: ``<name>.json`` or ``<name>-<variant>.json``
    (``_`` counts as ``-``, so ``autogen_core.json`` works), the longest matching name
    winning: ``autogen-core.json`` is not a variant of ``autogen``."""
    stem = path.name.removesuffix(".json").replace("_", "-")  # module names work too
    fits = [n for n in names if stem == n or stem.startswith(n + "-")]
    return max(fits, key=len) if fits else None


def fixtures(formats: set[str]) -> list[tuple[str, str, Path]]:
    """``(fixture id, format, path)`` of every fixture of a format in ``formats``, sorted.

    Names are matched against every known format (registered or not) so that a
    variant of an unregistered format is never taken for another format's.
    """
    known = set(formats) | set(CHECKERS)
    found = []
    for path in sorted(FIXTURES.glob("*.json")):
        fmt = fixture_format(path, known)
        if fmt in formats:
            found.append((path.name.removesuffix(".json"), fmt, path))
    return found


def load_fixture(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


# --- isolated venvs --------------------------------------------------------------------


def python_of(env: str) -> Path:
    return ENVS / env / "bin" / "python"


def _pins_hash(pins: Path) -> str:
    return hashlib.sha256(pins.read_bytes()).hexdigest()


def _pinned(pins: Path) -> dict[str, str]:
    out = {}
    for line in pins.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[_normalize(name)] = version.strip()
    return out


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


_INSTALLED = (
    "import json, importlib.metadata as m;"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}))"
)


def _matches_pins(python: Path, pins: Path) -> bool:
    """Whether an existing venv (e.g. built by hand from the same pins) holds exactly the pins."""
    try:
        done = subprocess.run([python, "-c", _INSTALLED], capture_output=True, text=True, timeout=120)
        installed = {_normalize(k): v for k, v in json.loads(done.stdout).items()}
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    return all(installed.get(name) == version for name, version in _pinned(pins).items())


@contextmanager
def _locked(env: str) -> Iterator[None]:
    """One builder per env at a time, across processes (others wait, then find it built)."""
    ENVS.mkdir(parents=True, exist_ok=True)
    with open(ENVS / f"{env}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(cmd: list[str], log: Path) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EnvBuildError(f"{' '.join(cmd)} failed: {exc}\n(log: {log})") from None
    if done.returncode != 0:
        tail = [line for line in log.read_text(errors="replace").splitlines()
                if not line.startswith("WARNING: Location")][-30:]
        raise EnvBuildError(f"{' '.join(cmd)} exited with {done.returncode}; last lines of {log}:\n"
                            + "\n".join(tail))


def _build(env: str, pins: Path) -> None:
    target = ENVS / env
    log = ENVS / f"{env}.log"
    log.write_text(f"# building {env} from {pins} at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    (target / STAMP).unlink(missing_ok=True)
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", "--clear", str(target)], log)
    _run([str(python_of(env)), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
          "-r", str(pins)], log)
    with open(log, "a") as out:
        out.write(f"# built in {time.monotonic() - started:.0f}s\n")


_ensured: dict[str, Path | EnvBuildError] = {}


def ensure_env(env: str) -> Path:
    """The python executable of isolated venv ``env``, built from its pins when missing or stale.

    An existing venv is kept when its stamp matches the pins, or when it holds exactly
    the pinned versions (then the stamp is written). Raises :class:`EnvBuildError`;
    within one process the outcome is remembered, so a failed build is not retried.
    """
    if env not in _ensured:
        try:
            _ensured[env] = _ensure_npm(env) if env.startswith(NPM) else _ensure(env)
        except EnvBuildError as exc:
            _ensured[env] = exc
        except OSError as exc:
            _ensured[env] = EnvBuildError(f"cannot build {env} in {ENVS}: {exc}")
    outcome = _ensured[env]
    if isinstance(outcome, EnvBuildError):
        raise outcome
    return outcome


def pins_of(env: str) -> Path:
    for folder in PIN_DIRS:
        if (pins := folder / f"{env}.txt").is_file():
            return pins
    raise EnvBuildError(f"no pins file {env}.txt in {', '.join(shown(d) for d in PIN_DIRS)}")


def _ensure(env: str) -> Path:
    pins = pins_of(env)
    python = python_of(env)
    stamp = ENVS / env / STAMP
    wanted = _pins_hash(pins)
    with _locked(env):
        if python.exists() and stamp.is_file() and stamp.read_text().strip() == wanted:
            return python
        if not (python.exists() and _matches_pins(python, pins)):
            _build(env, pins)
            if not _matches_pins(python, pins):
                raise EnvBuildError(f"{env} was built but does not hold the versions of {pins}; "
                                    f"see {ENVS / f'{env}.log'}")
        stamp.write_text(wanted + "\n")
    return python


NPM = "npm-"
"""Envs named ``npm-<name>`` are npm projects: ``pins/<env>/package.json`` and its
``package-lock.json`` (exact versions), installed with ``npm ci``; their checkers are
``.mjs`` scripts run by ``node``."""


def _ensure_npm(env: str) -> Path:
    """The ``node`` that runs ``env``'s checker, after ``npm ci --ignore-scripts`` of the pinned
    project into ``.conformance/<env>`` when its stamp (the lock file's hash) is missing or stale.
    No node or npm on PATH is a build error (a skip locally, a failure with ``CI=true``)."""
    project = PINS / env
    lock = project / "package-lock.json"
    if not lock.is_file():
        raise EnvBuildError(f"no {shown(lock)}")
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise EnvBuildError(f"{env} needs node and npm on PATH (found node={node}, npm={npm})")
    target, wanted = ENVS / env, _pins_hash(lock)
    stamp = target / STAMP
    with _locked(env):
        if stamp.is_file() and stamp.read_text().strip() == wanted and (target / "node_modules").is_dir():
            return Path(node)
        target.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        log = ENVS / f"{env}.log"
        log.write_text(f"# building {env} from {shown(project)} at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(project / name, target / name)
        # --ignore-scripts: no install script of any dependency runs on this machine
        _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(target)], log)
        stamp.write_text(wanted + "\n")
    return Path(node)


def main(argv: list[str]) -> int:
    """``python -m tests.conformance.envs [env ...]``: build (or verify) envs, all by default
(the checkers' and the integration suites')."""
    names = argv or sorted({c.env for c in CHECKERS.values()} | {p.stem for d in PIN_DIRS for p in d.glob("*.txt")}
                           | {p.name for p in PINS.glob(f"{NPM}*") if p.is_dir()})
    failed = 0
    for env in names:
        started = time.monotonic()
        try:
            python = ensure_env(env)
        except EnvBuildError as exc:
            failed += 1
            print(f"{env}: FAILED\n{exc}", file=sys.stderr)
        else:
            print(f"{env}: {python} ({time.monotonic() - started:.1f}s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
