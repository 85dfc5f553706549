"""Where PostgreSQL's bytes per message go, and what candidate schema changes would save.

``python -m benchmarks.pg_bytes [--messages 100000]``: the workload saved by convstore into a new
PostgreSQL database; prints each relation's bytes per message, then applies candidate changes one
after the other to that copy (``UPDATE`` / ``ALTER``, each followed by ``VACUUM FULL``, which
rewrites every table and index compactly, as a bulk load leaves them) and prints what each saved.
The database is dropped after. No convstore code reads the changed tables: it measures the bytes
a change would save, not whether convstore could make it.
"""

from __future__ import annotations

import argparse

import psycopg

from store import ConversationStore

from . import databases
from . import workload as wl

# (what, statements): each applied on top of the ones before it.
CANDIDATES: list[tuple[str, list[str]]] = [
    ("a message's source format NULL where it is the conversation's", [
        "UPDATE messages SET source_format = NULL"]),
    ("a message's window start NULL where it is its own seq", [
        "ALTER TABLE messages ALTER COLUMN window_start DROP NOT NULL",
        "UPDATE messages SET window_start = NULL WHERE window_start = seq"]),
    ("a message's role as one byte (\"char\")", [
        "ALTER TABLE messages DROP CONSTRAINT ck_messages_role",
        'ALTER TABLE messages ALTER COLUMN role TYPE "char" USING substr(role, 1, 1)::"char"']),
]

_RELATIONS = """
SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't') AND pg_relation_size(c.oid) > 0 ORDER BY 2 DESC
"""
_TOTAL = """
SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind = 'r'
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    n = parser.parse_args(argv).messages
    with databases.fresh("postgresql") as db:
        with ConversationStore(db.url, format="openai") as store:
            store.save(wl.conversation(n), format="openai")
        with psycopg.connect(db.libpq, autocommit=True) as conn:
            conn.execute("VACUUM FULL")
            print(f"{n:,} messages saved; bytes per message of each relation:")
            for name, size in conn.execute(_RELATIONS):
                print(f"  {name:28} {size / n:8.1f}")
            before = conn.execute(_TOTAL).fetchone()[0] / n
            print(f"\nall of convstore's tables: {before:.1f} B/msg; each change on top of the ones above it:")
            for what, statements in CANDIDATES:
                for statement in statements:
                    conn.execute(statement)
                conn.execute("VACUUM FULL")
                after = conn.execute(_TOTAL).fetchone()[0] / n
                print(f"  {after:7.1f} B/msg  saves {before - after:5.1f}  {what}")
                before = after


if __name__ == "__main__":
    main()
