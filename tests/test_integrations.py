"""The framework memory backends (issue 7), each run by the real framework package.

Every suite runs under its framework's isolated venv (see tests/integrations/README.md)
on each backend; then a conversation written through one framework's backend is read
back through the next one's. A venv that cannot be built skips, or fails with CI=true.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from .conformance import envs

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SUITES = Path(__file__).parent / "integrations"
FRAMEWORKS = sorted(p.stem.removeprefix("suite_") for p in SUITES.glob("suite_*.py"))
RING = [f for f in ("autogen", "agentscope", "agent_framework", "openai_agents") if f in FRAMEWORKS]
"""Who hands a conversation to whom: each writes, the next one reads."""
TIMEOUT = 900


def run_suite(framework: str, url: str, *pytest_args: str, shared_key: str = "") -> None:
    try:
        python = envs.ensure_env(f"int-{framework.replace('_', '-')}")
    except envs.EnvBuildError as exc:
        (pytest.fail if IN_CI else pytest.skip)(f"no venv for {framework}: {exc}")
    env = {**os.environ, "PYTHONPATH": str(envs.REPO), "CONVSTORE_TEST_URL": url,
           "CONVSTORE_SHARED_KEY": shared_key}
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         str(SUITES / f"suite_{framework}.py"), *pytest_args],
        cwd=envs.REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )
    if done.returncode != 0:
        pytest.fail(f"suite_{framework}.py on {url.split(':')[0]} exited {done.returncode}:\n"
                    f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}", pytrace=False)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_backend(framework, database_url):
    run_suite(framework, database_url, "-m", "not shared")


@pytest.mark.parametrize("writer", RING)
def test_read_back_through_another_framework(writer, database_url):
    reader = RING[(RING.index(writer) + 1) % len(RING)]
    key = f"shared-{writer}-{uuid.uuid4().hex[:8]}"
    run_suite(writer, database_url, "-m", "shared", "-k", "write", shared_key=key)
    run_suite(reader, database_url, "-m", "shared", "-k", "read", shared_key=key)
