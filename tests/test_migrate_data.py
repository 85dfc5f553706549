"""Upgrading a database that holds data: filled by the code of the revision before 0004
(taken from git), upgraded to head by today's code, read back identical; downgraded, and
read back identical by the old code again. On every backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from store.db import create_engine, current_revision, downgrade, head_revision, upgrade

ROOT = Path(__file__).resolve().parents[1]
DUMP = Path(__file__).with_name("migration") / "dump.py"
REVISION = "0004"


@pytest.fixture(scope="module")
def old_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package and migrations as they were just before revision 0004 was added."""
    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True).stdout

    try:
        added = git("log", "--diff-filter=A", "--format=%H", "--", f"migrations/versions/{REVISION}_natural_keys.py")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs a git checkout (the old code comes from history)")
    if not added.split():
        pytest.skip(f"revision {REVISION} is not committed yet")
    before = added.split()[-1].decode() + "^"
    folder = tmp_path_factory.mktemp("before-0004")
    with tarfile.open(fileobj=BytesIO(git("archive", before, "store", "migrations"))) as archive:
        archive.extractall(folder, filter="data")
    return folder


def _dump(url: str, action: str, code: Path | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)} if code else {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(DUMP), action, url], capture_output=True, text=True, env=env,
                          cwd=code or ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_upgrade_keeps_every_conversation_call_and_blob(empty_database_url, old_code):
    before = _dump(empty_database_url, "fill", old_code)
    engine = create_engine(empty_database_url)
    try:
        assert current_revision(engine) == "0003"
        assert len(before["conversations"]) >= 20 and before["tool_calls"]["default"] and before["blobs"]
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        assert _dump(empty_database_url, "dump", None) == before
        downgrade(engine, "0003")
        assert _dump(empty_database_url, "dump", old_code) == before
        upgrade(engine)
        assert _dump(empty_database_url, "dump", None) == before
    finally:
        engine.dispose()


def test_each_revision_run_again_over_itself_keeps_every_row(empty_database_url, backend, old_code):
    """MariaDB/MySQL commit each DDL statement: an upgrade or downgrade killed before a revision
    recorded itself runs that revision again over what it did. Run twice at every step, with data,
    each one ends as run once (test_migrations holds the same to the schema alone)."""
    from tests.test_migrations import _record, _revisions

    if backend != "mariadb":
        pytest.skip("DDL is transactional here: a killed migration leaves nothing")
    before = _dump(empty_database_url, "fill", old_code)
    later = [(revision, down) for revision, down in _revisions() if revision > "0003"]
    engine = create_engine(empty_database_url)
    try:
        for revision, down in later:
            upgrade(engine, revision)
            _record(engine, down)
            upgrade(engine, revision)
        assert _dump(empty_database_url, "dump", None) == before
        for revision, down in reversed(later):
            downgrade(engine, down)
            _record(engine, revision)
            downgrade(engine, down)
        assert _dump(empty_database_url, "dump", old_code) == before
    finally:
        engine.dispose()
