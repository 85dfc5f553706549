"""SQLite: the CHECK constraints on a message's role and a link's status as plain comparisons.

SQLite evaluates ``x IN ('a', 'b', ...)`` in a CHECK by building a temporary index of the list
for every row it inserts: 4 us of a message row's 10 in a batch insert. The same test written
as ``x = 'a' OR x = 'b' ...`` costs nothing measurable. The constraints accept exactly the
same values, so no row is touched: SQLite's own procedure for a change that leaves the stored
format alone rewrites the table's definition in place (https://sqlite.org/lang_altertable.html,
"Making Other Kinds Of Table Schema Changes"), whatever the table's size. A build of SQLite
that refuses it (``SQLITE_DBCONFIG_DEFENSIVE``) keeps the old spelling: the same constraint,
slower. PostgreSQL and MariaDB/MySQL evaluate either spelling alike and keep theirs.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"

log = logging.getLogger("convstore")

CHECKS = {  # table: (the spelling up to 0017, the one from 0018)
    "messages": ("role IN ('system', 'user', 'assistant', 'tool')",
                 "role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool'"),
    "tool_calls": ("status IN ('pending', 'answered', 'error')",
                   "status = 'pending' OR status = 'answered' OR status = 'error'"),
}


def upgrade() -> None:
    for table, (old, new) in CHECKS.items():
        _respell(table, old, new)


def downgrade() -> None:
    for table, (old, new) in CHECKS.items():
        _respell(table, new, old)


def _respell(table: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in SQLite's definition of ``table`` (a no-op where it is not there)."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    sql = bind.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (table,)).scalar_one()
    if old not in sql:
        return
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        bind.exec_driver_sql("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
                             (sql.replace(old, new), table))
        # A new schema version makes every connection (this one too) read the definition again.
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    except sa.exc.OperationalError as exc:  # a defensive build: the same constraint, spelled as before
        log.warning("revision 0018 left the CHECK constraint of %s as it was (%s)", table, exc.orig)
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
