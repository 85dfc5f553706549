"""The raw-driver floors: the least a normalized store can do, written straight on the driver.

Three tables, the same on every backend::

    messages   (conversation_id, seq, role, name, extras)
               PRIMARY KEY (conversation_id, seq)
    blocks     (conversation_id, seq, position, kind, text, call_id, tool_name)
               PRIMARY KEY (conversation_id, seq, position)
    tool_calls (conversation_id, call_id, name, arguments, call_seq, result_seq)
               PRIMARY KEY (conversation_id, call_id), INDEX (call_id)

OpenAI messages become rows in plain Python (no validation, no ids, no blobs table: an image stays
its data URI in ``blocks.text``), results are linked to their calls, and ``load`` rebuilds the same
OpenAI dicts (checked equal to the input). Durability as convstore's: SQLite WAL +
``synchronous=FULL``; the servers' defaults (PostgreSQL fsync on, InnoDB flush at commit).

- SQLite: ``sqlite3`` ``executemany`` per table in one ``BEGIN IMMEDIATE`` transaction;
- PostgreSQL: ``psycopg`` ``COPY … FROM STDIN`` per table in one transaction;
- MariaDB: ``PyMySQL`` ``executemany`` (multi-row INSERTs) per table in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .contestant import Contestant
from .databases import Database

_KNOWN = {"role", "content", "name", "tool_calls", "tool_call_id"}

_DDL = [
    "CREATE TABLE messages (conversation_id {key} NOT NULL, seq INTEGER NOT NULL, role {key} NOT NULL,"
    " name {text}, extras {text}, PRIMARY KEY (conversation_id, seq)){engine}",
    "CREATE TABLE blocks (conversation_id {key} NOT NULL, seq INTEGER NOT NULL, position INTEGER NOT NULL,"
    " kind {key} NOT NULL, text {text}, call_id {key}, tool_name {key},"
    " PRIMARY KEY (conversation_id, seq, position)){engine}",
    "CREATE TABLE tool_calls (conversation_id {key} NOT NULL, call_id {key} NOT NULL, name {key} NOT NULL,"
    " arguments {text}, call_seq INTEGER NOT NULL, result_seq INTEGER,"
    " PRIMARY KEY (conversation_id, call_id)){engine}",
    "CREATE INDEX tool_calls_call_id ON tool_calls (call_id)",
]
_TYPES = {
    "sqlite": {"key": "TEXT", "text": "TEXT", "engine": ""},
    "postgresql": {"key": "TEXT", "text": "TEXT", "engine": ""},
    "mariadb": {"key": "VARCHAR(191)", "text": "LONGTEXT",
                "engine": " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"},
}
INSERT = {
    "messages": "INSERT INTO messages VALUES (?, ?, ?, ?, ?)",
    "blocks": "INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?)",
    "tool_calls": "INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?)",
}
LINK = "UPDATE tool_calls SET result_seq = ? WHERE conversation_id = ? AND call_id = ?"
NEXT_SEQ = "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE conversation_id = ?"
MESSAGES = "SELECT seq, role, name, extras FROM messages WHERE conversation_id = ? AND seq >= ? ORDER BY seq"
BLOCKS = ("SELECT seq, kind, text, call_id, tool_name FROM blocks WHERE conversation_id = ? AND seq >= ?"
          " ORDER BY seq, position")
TOOL_CALL = (
    "SELECT t.conversation_id, t.name, t.arguments, t.call_seq, t.result_seq, b.text FROM tool_calls t"
    " LEFT JOIN blocks b ON b.conversation_id = t.conversation_id AND b.seq = t.result_seq AND b.position = 0"
    " WHERE t.call_id = ?"
)


@dataclass
class Rows:
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    tool_calls: list[list[Any]] = field(default_factory=list)
    links: list[tuple[int, str, str]] = field(default_factory=list)
    """(result_seq, conversation_id, call_id) of results whose call was stored earlier."""


def to_rows(messages: list[dict[str, Any]], cid: str, first_seq: int) -> Rows:
    """OpenAI messages as rows of the three tables, results linked to calls of the same batch."""
    out = Rows()
    calls: dict[str, list[Any]] = {}
    for seq, m in enumerate(messages, start=first_seq):
        extras = {k: v for k, v in m.items() if k not in _KNOWN}
        content = m.get("content")
        if m["role"] == "tool":
            out.blocks.append((cid, seq, 0, "tool_result", content, m["tool_call_id"], None))
            if (call := calls.get(m["tool_call_id"])) is not None:
                call[5] = seq
            else:
                out.links.append((seq, cid, m["tool_call_id"]))
        elif isinstance(content, str):
            out.blocks.append((cid, seq, 0, "text", content, None, None))
        elif isinstance(content, list):
            extras["_list"] = True
            for pos, part in enumerate(content):
                text = part["text"] if part["type"] == "text" else part["image_url"]["url"]
                out.blocks.append((cid, seq, pos, part["type"], text, None, None))
        elif "content" in m:
            extras["_null"] = True
        pos = len(content) if isinstance(content, list) else int(isinstance(content, str))
        for call in m.get("tool_calls") or ():
            fn = call["function"]
            out.blocks.append((cid, seq, pos, "tool_call", fn["arguments"], call["id"], fn["name"]))
            pos += 1
            row = [cid, call["id"], fn["name"], fn["arguments"], seq, None]
            calls[call["id"]] = row
            out.tool_calls.append(row)
        out.messages.append((cid, seq, m["role"], m.get("name"), json.dumps(extras) if extras else None))
    return out


def rebuild(message_rows: list[tuple[Any, ...]], block_rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Rows (ordered by seq, position) back into OpenAI messages."""
    by_seq: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for row in block_rows:
        by_seq[row[0]].append(row)
    out = []
    for seq, role, name, extras in message_rows:
        blocks = by_seq.get(seq, ())
        own = json.loads(extras) if extras else {}
        if role == "tool":
            b = blocks[0]
            out.append({"role": "tool", "tool_call_id": b[3], "content": b[2]})
            continue
        m: dict[str, Any] = {"role": role}
        parts = [b for b in blocks if b[1] != "tool_call"]
        if own.pop("_list", False):
            m["content"] = [{"type": "text", "text": b[2]} if b[1] == "text"
                            else {"type": "image_url", "image_url": {"url": b[2]}} for b in parts]
        elif parts:
            m["content"] = parts[0][2]
        elif own.pop("_null", False):
            m["content"] = None
        if name is not None:
            m["name"] = name
        calls = [{"id": b[3], "type": "function", "function": {"name": b[4], "arguments": b[2]}}
                 for b in blocks if b[1] == "tool_call"]
        if calls:
            m["tool_calls"] = calls
        m.update(own)
        out.append(m)
    return out


class _Floor(Contestant):
    """The driver-independent half: SQL with ``?`` placeholders, rows, rebuild."""

    kind = "floor"
    family = "openai"
    placeholder = "?"

    def __init__(self) -> None:
        self.conn: Any = None
        self.backend = ""

    def sql(self, statement: str) -> str:
        return statement.replace("?", self.placeholder)

    def create_tables(self) -> None:
        cur = self.conn.cursor()
        for ddl in _DDL:
            cur.execute(ddl.format(**_TYPES[self.backend]))
        self.commit()

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def new_conversation(self) -> str:
        return str(uuid.uuid4())

    def ingest(self, prepared: list[dict[str, Any]]) -> str:
        cid = self.new_conversation()
        rows = to_rows(prepared, cid, 0)
        self.begin()
        cur = self.conn.cursor()
        self.bulk(cur, rows)
        self.commit()
        return cid

    def begin(self) -> None:
        pass

    def bulk(self, cur: Any, rows: Rows) -> None:
        for table in ("messages", "blocks", "tool_calls"):
            if getattr(rows, table):
                cur.executemany(self.sql(INSERT[table]), getattr(rows, table))

    def append(self, conversation: str, one: dict[str, Any]) -> None:
        self.begin()
        cur = self.conn.cursor()
        cur.execute(self.sql(NEXT_SEQ), (conversation,))
        rows = to_rows([one], conversation, cur.fetchone()[0])
        for table in ("messages", "blocks", "tool_calls"):
            if getattr(rows, table):
                cur.executemany(self.sql(INSERT[table]), getattr(rows, table))
        if rows.links:
            cur.executemany(self.sql(LINK), rows.links)
        self.commit()

    def _read(self, conversation: str, start: int) -> list[dict[str, Any]]:
        cur = self.conn.cursor()
        cur.execute(self.sql(MESSAGES), (conversation, start))
        message_rows = cur.fetchall()
        cur.execute(self.sql(BLOCKS), (conversation, start))
        block_rows = cur.fetchall()
        self.end_read()
        return rebuild(message_rows, block_rows)

    def end_read(self) -> None:
        """Close the read transaction the driver opened (PostgreSQL, MariaDB)."""
        self.conn.commit()

    def load(self, conversation: str) -> list[dict[str, Any]]:
        return self._read(conversation, 0)

    def last(self, conversation: str, n: int) -> list[dict[str, Any]]:
        cur = self.conn.cursor()
        cur.execute(self.sql(NEXT_SEQ), (conversation,))
        return self._read(conversation, max(cur.fetchone()[0] - n, 0))

    def tool_call(self, call_id: str) -> dict[str, Any]:
        cur = self.conn.cursor()
        cur.execute(self.sql(TOOL_CALL), (call_id,))
        rows = cur.fetchall()
        self.end_read()
        if len(rows) != 1:
            raise LookupError(f"{call_id}: {len(rows)} matches")
        cid, name, arguments, call_seq, result_seq, result = rows[0]
        return {"conversation_id": cid, "name": name, "arguments": json.loads(arguments),
                "call_seq": call_seq, "result_seq": result_seq, "result": result}

    def as_openai(self, loaded: Any) -> list[dict[str, Any]]:
        return loaded


class SqliteFloor(_Floor):
    name = "sqlite3 floor"
    backends = ("sqlite",)

    def open(self, db: Database) -> None:
        self.backend = "sqlite"
        self.conn = sqlite3.connect(db.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.begin()
        self.create_tables()

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def end_read(self) -> None:
        pass  # autocommit: each SELECT is its own transaction


class PostgresFloor(_Floor):
    name = "psycopg COPY floor"
    backends = ("postgresql",)
    placeholder = "%s"

    def open(self, db: Database) -> None:
        import psycopg

        self.backend = "postgresql"
        self.conn = psycopg.connect(db.libpq)
        self.create_tables()

    def bulk(self, cur: Any, rows: Rows) -> None:
        columns = {"messages": "conversation_id, seq, role, name, extras",
                   "blocks": "conversation_id, seq, position, kind, text, call_id, tool_name",
                   "tool_calls": "conversation_id, call_id, name, arguments, call_seq, result_seq"}
        for table, cols in columns.items():
            with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                for row in getattr(rows, table):
                    copy.write_row(row)


class MariadbFloor(_Floor):
    name = "PyMySQL floor"
    backends = ("mariadb",)
    placeholder = "%s"

    def open(self, db: Database) -> None:
        import pymysql

        self.backend = "mariadb"
        self.conn = pymysql.connect(**db.mysql_args(), autocommit=False)
        self.create_tables()


FLOORS: dict[str, type[_Floor]] = {
    "sqlite": SqliteFloor, "postgresql": PostgresFloor, "mariadb": MariadbFloor,
}
