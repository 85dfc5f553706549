"""The schema's keys allow PostgreSQL's declarative hash partitioning by conversation id
(issue 12): every table but ``conversations`` made partitioned, the store runs on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from store import ConversationStore
from store.db import create_engine, run_alembic
from store.demo import samples
from store.schema import metadata

from .conftest import fresh_database

PARTITIONS = 4


@pytest.fixture
def partitioned_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from fresh_database("postgresql", tmp_path_factory)


def _partitioned_schema(url: str) -> None:
    """The head schema with every table keyed by conversation partitioned by hash of it:
    PostgreSQL refuses a primary key or unique constraint that leaves the key out."""
    copy = sa.MetaData(naming_convention=metadata.naming_convention)
    for table in metadata.sorted_tables:
        twin = table.to_metadata(copy)
        if table.name != "conversations":
            twin.dialect_options["postgresql"]["partition_by"] = "HASH (conversation_id)"
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            copy.create_all(conn)
            for table in metadata.sorted_tables:
                if table.name == "conversations":
                    continue
                for r in range(PARTITIONS):
                    conn.exec_driver_sql(f"CREATE TABLE {table.name}_p{r} PARTITION OF {table.name} "
                                         f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {r})")
            run_alembic(conn, command.stamp, "head")
    finally:
        engine.dispose()


def test_the_store_runs_on_hash_partitioned_tables(partitioned_url):
    _partitioned_schema(partitioned_url)
    with ConversationStore(partitioned_url) as s:
        ids = {name: s.save(sample, name) for name, sample in samples().items()}
        for name, cid in ids.items():
            assert s.load(cid, name) == samples()[name], name
        record = s.get_tool_call("call_paris", conversation_id=ids["openai"])
        assert record.status == "answered" and record.result_position is not None
        assert s.load(ids["openai"], "openai", last=3)
        s.pop(ids["openai"], 2)
        s.append(ids["openai"], [{"role": "user", "content": "more"}], "openai")
        assert s.load(ids["openai"], "openai")[-1] == {"role": "user", "content": "more"}
        s.delete(ids["qwen"])
        engine = s.engine
        with engine.connect() as conn:
            used = conn.exec_driver_sql(
                "SELECT count(DISTINCT tableoid) FROM messages").scalar()
            parent = conn.exec_driver_sql(
                "SELECT count(*) FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid "
                "WHERE c.relname IN ('messages', 'blocks', 'blobs', 'tool_calls')").scalar()
    assert parent == 4 and used > 1  # rows spread over several partitions
