"""Writes cancelled at random points (asyncio.wait_for) leave nothing half-written and no
connection inside a transaction: every later write is committed and seen by others
(issue 17: asyncpg "committed" appends that never were), on every async driver."""

from __future__ import annotations

import asyncio
import importlib.util
import random

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore
from store.db import create_async_engine

from .conftest import IN_CI


def _drivers(backend: str) -> list[str | None]:
    return [None, "asyncpg"] if backend == "postgresql" else [None]


@pytest.mark.parametrize("driver", [None, "asyncpg"], ids=["default-driver", "asyncpg"])
def test_cancelled_appends_leave_every_later_write_committed(database_url, backend, namespace, driver):
    if driver == "asyncpg":
        if backend != "postgresql":
            pytest.skip("asyncpg is a PostgreSQL driver")
        if importlib.util.find_spec("asyncpg") is None and not IN_CI:
            pytest.skip("asyncpg is not installed")
    url = sa.make_url(database_url)
    if driver is not None:
        url = url.set(drivername=f"postgresql+{driver}")
    # No pre-ping: it would hide a connection handed back inside a transaction.
    engine = create_async_engine(url, pool_pre_ping=False)
    rng = random.Random(17)

    async def main() -> tuple[str, int]:
        store = AsyncConversationStore(engine=engine, namespace=namespace)
        cid = await store.save([{"role": "user", "content": "start"}])
        for i in range(150):
            pair = [{"role": "user", "content": f"c{i} a"}, {"role": "assistant", "content": f"c{i} b"}]
            try:
                await asyncio.wait_for(store.append(cid, pair), rng.uniform(0, 0.02))
            except asyncio.TimeoutError:
                pass
        for i in range(20):
            await store.append(cid, [{"role": "user", "content": f"later {i}"}])
        idle = None
        if backend == "postgresql":
            async with engine.connect() as conn:
                idle = (await conn.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND state = 'idle in transaction'"))).scalar()
        await store.close()
        return cid, idle

    cid, idle = asyncio.run(main())
    assert not idle
    with ConversationStore(database_url, namespace=namespace) as other:
        texts = [m["content"] for m in other.load(cid)]
    assert [t for t in texts if t.startswith("later")] == [f"later {i}" for i in range(20)]
    cancelled = [t for t in texts if t.startswith("c")]
    for i in range(0, len(cancelled), 2):  # each cancelled append landed whole, or not at all
        assert cancelled[i].endswith(" a") and cancelled[i + 1] == cancelled[i][:-1] + "b"
