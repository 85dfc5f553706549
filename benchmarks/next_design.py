"""The bound of issue 12's next design step, on raw ``sqlite3`` (no convstore code).

``python -m benchmarks.next_design [--messages 100000]``: the workload ingested three ways into
new SQLite files with convstore's settings (8 KiB pages, WAL, ``synchronous=FULL``), one
transaction each, rows built inside the timing: one JSON row per message as the OpenAI Agents
``SQLiteSession`` stores it; one ``WITHOUT ROWID`` row per message keyed by (conversation, seq)
holding its document, plus tool-call link rows with their two indexes (no block rows); the same
plus a contentless FTS5 entry per message with its key row. Prints messages per second and
bytes per message (file after a checkpoint).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from typing import Any

import orjson

from . import workload

CID = "01a2143992a57343a94c070467c03881"
_LINK_TABLE = ("CREATE TABLE tool_calls (conversation_id TEXT, call_id TEXT, name TEXT, status TEXT, call_seq INT, "
               "call_position INT, result_seq INT, result_position INT, PRIMARY KEY (conversation_id, call_id)) "
               "WITHOUT ROWID")


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("page_size = 8192", "journal_mode = WAL", "synchronous = FULL"):
        conn.execute(f"PRAGMA {pragma}")
    return conn


def _text(message: dict[str, Any]) -> str:
    """What the full-text index gets of an OpenAI message: its text, its calls' names and arguments."""
    content = message.get("content")
    parts = [content] if isinstance(content, str) else [
        p.get("text", "") for p in content or [] if isinstance(p, dict)]
    for call in message.get("tool_calls") or []:
        parts += [call["function"]["name"], call["function"]["arguments"]]
    return " ".join(parts)


def json_rows(path: str, msgs: list[dict[str, Any]]) -> float:
    """One JSON row per message, as ``SQLiteSession`` keeps them."""
    conn = _connect(path)
    conn.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, "
                 "message_data TEXT, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)")
    conn.execute("CREATE INDEX ix_session ON agent_messages (session_id, id)")
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                     [(CID, json.dumps(m)) for m in msgs])
    conn.execute("COMMIT")
    return time.perf_counter() - start


def document_rows(path: str, msgs: list[dict[str, Any]], fulltext: bool) -> float:
    """One row per message holding its document, link rows, and (``fulltext``) an FTS5 entry."""
    conn = _connect(path)
    conn.execute("CREATE TABLE messages (conversation_id TEXT, seq INTEGER, window_start INTEGER, role TEXT, "
                 "source_format TEXT, doc TEXT, PRIMARY KEY (conversation_id, seq)) WITHOUT ROWID")
    conn.execute(_LINK_TABLE)
    conn.execute("CREATE INDEX ix_call ON tool_calls (call_id)")
    conn.execute("CREATE INDEX ix_name ON tool_calls (name)")
    if fulltext:
        conn.execute("CREATE TABLE search (conversation_id TEXT, seq INTEGER, position INTEGER, "
                     "PRIMARY KEY (conversation_id, seq, position))")
        conn.execute("CREATE VIRTUAL TABLE search_fts USING fts5(body, content='', tokenize='porter unicode61')")
    start = time.perf_counter()
    rows, links, texts = [], {}, []
    for seq, m in enumerate(msgs):
        rows.append((CID, seq, seq, m["role"], "openai", orjson.dumps(m).decode()))
        for position, call in enumerate(m.get("tool_calls") or []):
            links[call["id"]] = [CID, call["id"], call["function"]["name"], "pending", seq, position, None, None]
        if m["role"] == "tool" and (link := links.get(m.get("tool_call_id"))) is not None:
            link[3], link[6], link[7] = "answered", seq, 0
        texts.append(_text(m))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [tuple(v) for v in links.values()])
    if fulltext:
        conn.executemany("INSERT INTO search (conversation_id, seq, position) VALUES (?, ?, 0)",
                         [(CID, seq) for seq in range(len(msgs))])
        first = conn.execute("SELECT min(rowid) FROM search").fetchone()[0]
        conn.executemany("INSERT INTO search_fts (rowid, body) VALUES (?, ?)",
                         [(first + i, text) for i, text in enumerate(texts)])
    conn.execute("COMMIT")
    return time.perf_counter() - start


def _bytes_per_message(path: str, n: int) -> float:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return os.path.getsize(path) / n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N fresh files per shape")
    args = parser.parse_args(argv)
    msgs = workload.conversation(args.messages)
    shapes = (("one JSON row (SQLiteSession)", lambda p: json_rows(p, msgs)),
              ("one row + links", lambda p: document_rows(p, msgs, False)),
              ("one row + links + FTS5", lambda p: document_rows(p, msgs, True)))
    with tempfile.TemporaryDirectory() as folder:
        for i, (name, ingest) in enumerate(shapes):
            runs = []
            for r in range(args.repeat):
                path = f"{folder}/{i}-{r}.db"
                runs.append((args.messages / ingest(path), _bytes_per_message(path, args.messages)))
            rate, size = max(runs)
            print(f"{name:30s} {rate / 1000:6.1f}k msg/s  {size:6.0f} B/msg")


if __name__ == "__main__":
    main()
