"""The console script in a subprocess, and the README's commands."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .samples import OPENAI_CHAT

ROOT = Path(__file__).resolve().parents[1]
CONVSTORE = Path(sys.executable).with_name("convstore")


def run(*args, db=None, input=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "CONVSTORE_DB"}
    cmd = [str(CONVSTORE), *(["--db", db] if db else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, input=input, cwd=cwd, env=env, timeout=120)


def test_readme_commands_are_the_ci_ones():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^python3 -m venv .*$", readme, flags=re.M)
    assert len(commands) == 2 and "convstore demo" in commands[0] and commands[1].endswith("pytest")
    assert "grep -m1 -E '^python3 -m venv .*pytest' README.md" in (ROOT / ".ci" / "run").read_text()


def test_demo_runs_on_a_clean_directory(tmp_path):
    result = run("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "looked up tool call" in result.stdout and "replayed" in result.stdout
    assert "Traceback" not in result.stderr


def test_import_export_roundtrip(tmp_path, database_url):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    imported = run("import", str(source), "--format", "openai", db=database_url)
    assert imported.returncode == 0, imported.stderr
    cid = imported.stdout.strip()
    exported = run("export", cid, "--format", "openai", db=database_url)
    assert json.loads(exported.stdout) == OPENAI_CHAT
    record = json.loads(run("tool-call", "call_paris", "--conversation", cid, "--json", db=database_url).stdout)
    assert record["status"] == "answered" and record["arguments"] == {"city": "Paris", "unit": "C"}


@pytest.mark.parametrize(("args", "message"), [
    (["export", "0190a0a0-0000-7000-8000-000000000000", "--format", "openai"], "no conversation"),
    (["tool-call", "nope"], "no tool call 'nope'"),
    (["import", "/nonexistent.json"], "/nonexistent.json: no such file"),
    (["export", "x", "--format", "klingon"], "unknown format"),
])
def test_errors_are_one_line(args, message, database_url):
    result = run(*args, db=database_url)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_input_names_file_index_and_field_and_writes_nothing(tmp_path, database_url):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(OPENAI_CHAT))
    bad.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}]))
    before = run("list", "--json", db=database_url).stdout
    result = run("import", str(good), str(bad), "--format", "openai", db=database_url)
    assert result.returncode == 1
    assert "bad.json" in result.stderr and "message 1, field tool_call_id" in result.stderr
    assert run("list", "--json", db=database_url).stdout == before


def test_unreachable_database():
    result = run("list", db="postgresql://nobody@127.0.0.1:1/none")
    assert result.returncode == 1 and "cannot open" in result.stderr and "Traceback" not in result.stderr


def test_import_every_sample_with_auto_detection(database_url):
    from store.demo import samples

    folder = ROOT / "store" / "samples"
    names = list(samples())
    result = run("import", *(str(folder / f"{n}.json") for n in names), db=database_url)
    assert result.returncode == 0, result.stderr
    ids = result.stdout.split()
    assert len(ids) == len(names)
    for name, cid in zip(names, ids):
        exported = run("export", cid, "--format", name, db=database_url)
        assert exported.returncode == 0, exported.stderr
        assert json.loads(exported.stdout) == samples()[name], name


def test_convert_reports_losses_on_stderr_and_strict_fails(tmp_path):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    loose = run("convert", str(source), "--to", "anthropic")
    assert loose.returncode == 0 and "loss:" in loose.stderr and json.loads(loose.stdout)["messages"]
    strict = run("convert", str(source), "--to", "anthropic", "--strict")
    assert strict.returncode == 1 and "would lose" in strict.stderr


def test_readme_demo_command_runs_verbatim_on_a_fresh_clone(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    readme = (ROOT / "README.md").read_text()
    demo = re.findall(r"^python3 -m venv .*convstore demo$", readme, flags=re.M)[0]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    result = subprocess.run(demo, shell=True, cwd=clone, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "replayed" in result.stdout
