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


def run(*args, db=None, input=None, cwd=None, env=None):
    env = {**{k: v for k, v in os.environ.items() if k != "CONVSTORE_DB"}, **(env or {})}
    cmd = [str(CONVSTORE), *(["--db", db] if db else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, input=input, cwd=cwd, env=env, timeout=120)


def test_readme_commands_are_the_ci_ones():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^python3 -m venv .*$", readme, flags=re.M)
    assert len(commands) == 2 and "convstore demo" in commands[0] and commands[1].endswith("pytest")
    assert "grep -m1 -E '^python3 -m venv .*pytest' README.md" in (ROOT / ".ci" / "run").read_text()


def test_demo_runs_on_a_clean_directory(tmp_path):
    result = run("demo", cwd=tmp_path, env={"TMPDIR": str(tmp_path)})  # its database stays, for exploring
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


def test_json_lines_stdin_append_last_output_show_and_tool_calls(tmp_path, database_url):
    lines = "\n".join(json.dumps(m) for m in OPENAI_CHAT[:5])
    first = run("import", "-", "--format", "auto", db=database_url, input=lines)
    assert first.returncode == 0, first.stderr
    cid = first.stdout.strip()
    rest = tmp_path / "rest.json"
    rest.write_text(json.dumps({"messages": OPENAI_CHAT[5:]}))
    appended = run("import", str(rest), "--conversation", cid, db=database_url)
    assert appended.returncode == 0 and appended.stdout.strip() == cid
    out = tmp_path / "out.json"
    assert run("export", cid, "--format", "openai", "-o", str(out), db=database_url).returncode == 0
    assert json.loads(out.read_text()) == OPENAI_CHAT
    window = json.loads(run("export", cid, "--format", "openai", "--last", "5", db=database_url).stdout)
    assert window == OPENAI_CHAT[3:]  # widened back to the call of the results inside it
    shown = run("show", cid, db=database_url)
    assert shown.returncode == 0 and "get_weather" in shown.stdout and "Sunny, 21C" in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    calls = json.loads(run("tool-calls", "--status", "pending", "--conversation", cid, "--json", db=database_url).stdout)
    assert [c["call_id"] for c in calls] == ["call_bad"]
    table = run("tool-calls", "--name", "get_weather", db=database_url)
    assert "call_kyoto" in table.stdout and "call_paris" in table.stdout
    listing = json.loads(run("list", "--json", db=database_url).stdout)
    assert any(c["id"] == cid and c["message_count"] == len(OPENAI_CHAT) for c in listing)


def test_python_dash_m_store_and_convert_to_file(tmp_path):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    target = tmp_path / "qwen.json"
    result = subprocess.run([sys.executable, "-m", "store", "convert", str(source), "--to", "qwen", "-o", str(target)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    back = run("convert", str(target), "--from", "qwen", "--to", "openai")
    assert json.loads(back.stdout) == OPENAI_CHAT


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "invalid JSON at line 1"),
    ("", "empty input"),
    ('[{"foo": 1}]', "cannot tell the format"),
])
def test_bad_files(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run("convert", str(bad), "--to", "openai")
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr


def test_db_commands_and_an_outdated_database(empty_database_url):
    assert "current: none" in run("db", "current", db=empty_database_url).stdout
    assert run("db", "upgrade", db=empty_database_url).returncode == 0
    head = __import__("store.db", fromlist=["x"]).head_revision()
    assert f"current: {head}" in run("db", "current", db=empty_database_url).stdout
    assert run("db", "downgrade", "base", db=empty_database_url).returncode == 0
    engine = __import__("store.db", fromlist=["x"]).create_engine(empty_database_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE conversations (id INTEGER PRIMARY KEY)")
    engine.dispose()
    result = run("list", db=empty_database_url)
    assert result.returncode == 1 and "db upgrade" in result.stderr and "Traceback" not in result.stderr


def test_progress_bar_on_a_terminal_only(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(json.dumps({"role": "user", "content": f"m{i}"}) for i in range(12000)))
    db = f"sqlite:///{tmp_path / 'p.db'}"
    piped = run("import", str(big), "--format", "openai", db=db)
    assert piped.returncode == 0 and "importing" not in piped.stderr
    import pty  # a pseudo-terminal: what a person at a terminal sees

    env = {**os.environ, "COLUMNS": "100"}
    env.pop("CONVSTORE_DB", None)
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(CONVSTORE), [str(CONVSTORE), "--db", db, "import", str(big), "--format", "openai"], env)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.waitpid(pid, 0)
    assert b"importing" in output


def test_an_import_of_several_files_writes_all_or_nothing(tmp_path, database_url):
    """A file whose messages the store refuses (a call id used twice, found only as it is written) leaves
    the files before it unwritten too, as new conversations or appended to one (it left them stored)."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(OPENAI_CHAT))
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    bad.write_text(json.dumps([call, {"role": "tool", "tool_call_id": "c1", "content": "ok"}, call]))
    failed = run("--namespace", "atomic", "import", str(good), str(bad), "--format", "openai", db=database_url)
    assert failed.returncode == 1 and "already used" in failed.stderr and "Traceback" not in failed.stderr
    assert run("--namespace", "atomic", "list", "--json", db=database_url).stdout.strip() == "[]"
    cid = run("--namespace", "atomic", "import", str(good), "--format", "openai", db=database_url).stdout.strip()
    failed = run("--namespace", "atomic", "import", str(good), str(bad), "--conversation", cid, "--format", "openai",
                 db=database_url)
    assert failed.returncode == 1
    assert json.loads(run("--namespace", "atomic", "export", cid, "--format", "openai", db=database_url).stdout) == OPENAI_CHAT
    both = run("--namespace", "atomic", "import", str(good), str(good), "--format", "openai", db=database_url)
    assert both.returncode == 0 and len(both.stdout.split()) == 2


def test_a_failed_json_lines_export_leaves_the_file_as_it_was(tmp_path, database_url):
    """A JSON Lines export is written to a file beside the output and put in its place once whole: a
    failure (a strict loss, a format of one object) left an existing file empty, or a new one of 0 bytes."""
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    cid = run("import", str(source), "--format", "openai", db=database_url).stdout.strip()
    kept = tmp_path / "kept.jsonl"
    kept.write_text("precious\n")
    failed = run("export", cid, "--format", "vercel-ai", "--strict", "-o", str(kept), db=database_url)
    assert failed.returncode == 1 and kept.read_text() == "precious\n"
    one_object = run("export", cid, "--format", "anthropic", "-o", str(tmp_path / "new.jsonl"), db=database_url)
    assert one_object.returncode == 1 and "export it as JSON (without --jsonl" in one_object.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.json", "kept.jsonl"]
    done = run("export", cid, "--format", "openai", "-o", str(kept), db=database_url)
    assert done.returncode == 0 and [json.loads(line) for line in kept.read_text().splitlines()] == OPENAI_CHAT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.json", "kept.jsonl"]
