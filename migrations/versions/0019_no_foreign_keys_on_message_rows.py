"""No foreign keys on the rows written per message: messages, blocks and tool-call links.

A foreign key is checked row by row: on PostgreSQL a trigger query per inserted row, which cost
as much as the insert itself (a save of 20k workload messages: 26.8k msg/s with the keys of
messages to conversations, of blocks to messages and of links to conversations; 42.3k without).
They guarded nothing the store's writes do not: a write creates or locks its conversation's row
before it writes any of these rows, in one transaction, and every path that removes messages
removes their blocks and links itself (``operations.truncate``, ``delete_conversations``). A
row left behind by SQL run outside the store is read by nothing: every read starts from its
conversation's row. The tables written per conversation (tags, blobs, forks' parents) and the
search rows keep their keys.

SQLite keeps no index for a foreign key: its definition is rewritten in place, as revision 0018
does (no row is touched, whatever the size). PostgreSQL and MariaDB/MySQL drop the constraints;
a downgrade adds them back (checking every row there).

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import partial

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"

log = logging.getLogger("convstore")

KEYS = {  # name: (table, columns, referred table, referred columns)
    "fk_messages_conversation_id_conversations": ("messages", ["conversation_id"], "conversations", ["id"]),
    "fk_blocks_conversation_id_seq_messages": ("blocks", ["conversation_id", "seq"], "messages",
                                               ["conversation_id", "seq"]),
    "fk_tool_calls_conversation_id_conversations": ("tool_calls", ["conversation_id"], "conversations", ["id"]),
}


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for name, (table, *_) in KEYS.items():
        if sqlite:
            _redefine(table, partial(_without, name=name))
        elif name in _keys(table):  # MariaDB/MySQL commit each drop: an interrupted upgrade runs again
            op.drop_constraint(name, table, type_="foreignkey")


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for name, (table, columns, referred, referred_columns) in reversed(KEYS.items()):
        if sqlite:
            clause = (f"CONSTRAINT {name} FOREIGN KEY({', '.join(columns)}) "
                      f"REFERENCES {referred} ({', '.join(referred_columns)}) ON DELETE CASCADE")
            _redefine(table, partial(_with, clause=clause))
        elif name not in _keys(table):
            op.create_foreign_key(name, table, referred, columns, referred_columns, ondelete="CASCADE")


def _keys(table: str) -> set[str]:
    return {key["name"] for key in sa.inspect(op.get_bind()).get_foreign_keys(table)}


def _without(sql: str, name: str) -> str:
    """``sql`` (a CREATE TABLE) without the constraint ``name`` (unchanged where it has none)."""
    return re.sub(rf',\s*CONSTRAINT\s+"?{name}"?\s+FOREIGN\s+KEY\s*\([^)]*\)\s*REFERENCES\s+[^(]+\([^)]*\)'
                  r"(\s+ON\s+DELETE\s+CASCADE)?", "", sql, flags=re.IGNORECASE)


def _with(sql: str, clause: str) -> str:
    """``sql`` (a CREATE TABLE) with ``clause`` last in its definitions (unchanged where it is there)."""
    if clause.split()[1] in sql:
        return sql
    end = sql.rindex(")")  # closes the definitions: only the table options (WITHOUT ROWID) follow
    return f"{sql[:end].rstrip()}, \n\t{clause}\n{sql[end:]}"


def _redefine(table: str, change: Callable[[str], str]) -> None:
    """Rewrite SQLite's definition of ``table`` by ``change`` (a function of its SQL), in place."""
    bind = op.get_bind()
    sql = bind.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (table,)).scalar_one()
    new = change(sql)
    if new == sql:
        return
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        bind.exec_driver_sql("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (new, table))
        # A new schema version makes every connection (this one too) read the definition again.
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    except sa.exc.OperationalError as exc:  # a defensive build: the key stays, checked as before
        log.warning("revision 0019 left the foreign keys of %s as they were (%s)", table, exc.orig)
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
