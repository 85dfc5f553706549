"""What a new user of the command line meets in the first ten minutes (issue 16.7-16.9)."""

import json
import os
import platform
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from .samples import OPENAI_CHAT
from .test_cli import CONVSTORE, run


def _one_line_error(result, code=1):
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


def test_one_json_line_on_stdin_appends_in_the_stored_format(tmp_path, database_url):
    first = run("import", "-", "--format", "openai", db=database_url,
                input="\n".join(json.dumps(m) for m in OPENAI_CHAT[:3]))
    cid = first.stdout.strip()
    line = json.dumps({"role": "user", "content": "one more"})
    appended = run("import", "-", "-c", cid, db=database_url, input=line + "\n")
    assert appended.returncode == 0, appended.stderr
    assert appended.stdout.strip() == cid
    exported = json.loads(run("export", cid, "--format", "openai", db=database_url).stdout)
    assert exported == OPENAI_CHAT[:3] + [{"role": "user", "content": "one more"}]
    single = tmp_path / "one.json"  # a file holding one message object, too
    single.write_text(json.dumps({"role": "assistant", "content": "ok"}))
    assert run("import", str(single), "-c", cid, db=database_url).returncode == 0
    info = json.loads(run("list", "--json", db=database_url).stdout)
    assert next(i for i in info if i["id"] == cid)["message_count"] == 5


def test_piped_tables_carry_whole_ids(database_url):
    cid = run("import", "-", "--format", "openai", db=database_url, input=json.dumps(OPENAI_CHAT)).stdout.strip()
    listing = run("list", db=database_url, env={"COLUMNS": "40"}).stdout.splitlines()
    assert listing[0].split("\t") == ["id", "title", "format", "messages", "updated", "tags"]
    assert any(line.split("\t")[0] == cid for line in listing[1:])
    calls = run("tool-calls", "--conversation", cid, db=database_url, env={"COLUMNS": "40"}).stdout.splitlines()
    rows = [line.split("\t") for line in calls[1:]]
    assert {(r[0], r[1]) for r in rows} == {("call_kyoto", cid), ("call_paris", cid), ("call_bad", cid)}


def test_show_names_call_ids_and_help_names_formats(database_url):
    cid = run("import", "-", "--format", "openai", db=database_url, input=json.dumps(OPENAI_CHAT)).stdout.strip()
    shown = run("show", cid, db=database_url).stdout
    assert "[call_kyoto]" in shown and "[call_bad]" in shown and "(10 messages)" in shown
    for command in ("export", "import", "convert"):
        text = " ".join(run(command, "--help", env={"COLUMNS": "200"}).stdout.split())
        assert "openai-responses" in text and "agent-framework" in text and "docent" in text, command


def test_terminal_table_keeps_ids_whole_when_narrow():
    from rich.console import Console

    from store import render
    console = Console(width=50, force_terminal=True, record=True)
    cid = "01a21271-36f6-7718-8499-41205b7fdb7a"
    info = SimpleNamespace(id=cid, title="a long title that must give way", source_format="openai",
                           message_count=1, updated_at=datetime(2026, 1, 1), tags=["t"])
    render.conversation_table([info], console)
    text = console.export_text()
    assert cid in text and "1 conversation " in text


@pytest.mark.parametrize(("args", "message"), [
    (["export", "x", "--format", "openai", "-o", "/nonexistent-dir/out.json"], "no such directory"),
    (["convert", "{chat}", "--to", "openai", "-o", "/nonexistent-dir/out.json"], "no such directory"),
    (["convert", "{chat}", "--to", "openai", "-o", "{tmp}"], "is a directory"),
])
def test_unwritable_output_is_one_line(tmp_path, database_url, args, message):
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(OPENAI_CHAT))
    if args[0] == "export":
        args[1] = run("import", str(chat), db=database_url).stdout.strip()
    args = [a.format(chat=chat, tmp=tmp_path) for a in args]
    assert message in _one_line_error(run(*args, db=database_url))


def test_usage_errors_are_one_line_and_exit_2():
    assert "Missing argument" in _one_line_error(run("export"), code=2)
    assert "No such command" in _one_line_error(run("nosuch"), code=2)
    assert "--format" in _one_line_error(run("export", "x", "--format"), code=2)


def test_unparsable_db_url_and_unknown_dialect():
    assert "internal error" not in _one_line_error(run("list", db="nosuchdb://x"))
    _one_line_error(run("list", db="postgresql://[broken"))


def test_file_names_not_doubled_and_ambiguity_names_the_option(tmp_path, database_url):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"foo": 1}]))
    message = _one_line_error(run("import", str(bad), db=database_url))
    assert message.count("bad.json") == 1
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(OPENAI_CHAT))
    for _ in range(2):
        assert run("import", str(chat), db=database_url).returncode == 0
    message = _one_line_error(run("tool-call", "call_kyoto", db=database_url))
    assert "--conversation ID" in message and "conversation_id" not in message
    lines = tmp_path / "bad.jsonl"  # JSON Lines, read line by line as it is stored (the tables exist)
    lines.write_text('{"role": "user", "content": "a"}\n{"role": "user", "content": "b"}\n{bad\n')
    message = _one_line_error(run("import", str(lines), "--format", "openai", db=database_url))
    assert message.count("bad.jsonl") == 1 and "line 3" in message


def _reading_stdin(pid: int) -> bool:
    """Whether the process is blocked in read(0, ...) (x86-64 syscall 0; elsewhere: assume so)."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return True
    return platform.machine() != "x86_64" or call[:2] == ["0", "0x0"]


def test_interrupt_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CONVSTORE_DB"}
    # A job started in the background has SIGINT ignored, and children inherit that.
    proc = subprocess.Popen([str(CONVSTORE), "--db", f"sqlite:///{tmp_path / 'i.db'}", "import", "-"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not _reading_stdin(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)  # still starting up: an interrupt there is Python's, before convstore runs
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(("args", "message"), [
    (["prune", "--older-than", "999999999d", "--dry-run"], "older than any date"),
    (["prune", "--older-than", "99999999999999s", "--dry-run"], "older than any date"),
    (["prune", "--older-than", "\u00b2d", "--dry-run"], "is neither an age"),  # isdigit takes it, int() not
    (["prune", "--older-than", "\uff10d", "--dry-run"], "is neither an age"),  # a full-width zero
    (["list", "--meta", "a=\u00b2"], None),  # text, not a number
    (["serve", "--port", "99999"], "65535"),
])
def test_odd_numbers_are_usage_errors_not_internal_ones(tmp_path, args, message):
    result = run(*args, db=str(tmp_path / "odd.db"))
    if message is None:
        assert result.returncode == 0, result.stderr
    else:
        assert message in _one_line_error(result, code=2)


def test_no_command_prints_the_help_alone():
    result = run()
    assert result.returncode == 2 and "Usage" in result.stdout and result.stderr.strip() == ""
    nested = subprocess.run([str(CONVSTORE.with_name("python")), "-m", "store", "export"], check=False, capture_output=True,
                            text=True, timeout=120)
    assert "(see `convstore export --help`)" in nested.stderr


def test_convert_takes_one_message_as_import_does(tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text('{"role": "user", "content": "hi"}\n')
    result = run("convert", str(one), "--from", "openai", "--to", "anthropic")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"messages": [{"role": "user", "content": "hi"}]}


def test_a_bad_line_names_its_file_also_when_the_format_is_detected(tmp_path):
    lines = tmp_path / "s.jsonl"
    lines.write_text('{"role": "user", "content": "a"}\n{"role": "assistant", "content": "\\ud800"}\n')
    assert f"{lines}: invalid JSON Lines at line 2" in _one_line_error(run("import", str(lines), db=str(tmp_path / "a.db")))


def test_an_empty_namespace_is_refused_and_the_demo_names_its_own(tmp_path):
    assert "a namespace cannot be empty" in _one_line_error(run("--namespace", "", "list", db=str(tmp_path / "e.db")),
                                                           code=2)
    demo = run("--namespace", "team a", "demo", "--db", str(tmp_path / "d.db"), cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "--namespace 'team a' show" in demo.stdout


def test_db_current_makes_no_file(tmp_path):
    result = run("db", "current", db=str(tmp_path / "none.db"))
    assert result.returncode == 0 and "current: none" in result.stdout
    assert not (tmp_path / "none.db").exists()


def test_an_asyncio_drivers_url_opens_the_same_database(tmp_path):
    """The sync store (and so the command line) opens an asyncio driver's URL through that driver's sync
    counterpart; it was a coroutine never awaited and greenlet's error."""
    from store.db import normalize_url

    assert [normalize_url(u).drivername for u in ("postgresql+asyncpg://h/d", "postgresql+psycopg_async://h/d",
                                                  "mysql+asyncmy://h/d", "sqlite+aiosqlite:///a.db")] == [
        "postgresql+psycopg", "postgresql+psycopg", "mysql+pymysql", "sqlite+pysqlite"]
    assert normalize_url("postgresql+asyncpg://h/d", asynchronous=True).drivername == "postgresql+asyncpg"
    result = run("list", db=f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    assert result.returncode == 0 and result.stderr.count("\n") <= 1 and "Traceback" not in result.stderr
