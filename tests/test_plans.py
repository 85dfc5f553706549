"""Query plans that must not depend on fresh statistics (PostgreSQL): a conversation written
after the last ANALYZE is estimated at one row, and a join of messages to blocks was then
planned as a loop over every block per message (a 10k-message load took 12 s, not 0.1 s)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from store import ConversationStore


def _conversation(n: int) -> list[dict]:
    out: list[dict] = []
    for i in range(n // 3):
        call = f"call_{i}"
        out += [{"role": "user", "content": f"question {i} " + "?" * 64},  # long: kept once (store.docs)
                {"role": "assistant", "content": None, "tool_calls": [  # long arguments: kept once too
                    {"id": call, "type": "function", "function": {"name": "f", "arguments": '{"q":"%s"}' % ("x" * 64)}}]},
                {"role": "tool", "tool_call_id": call, "content": f"answer {i} " + "!" * 64}]  # kept in its block row
    return out


def test_load_reads_each_table_by_a_range_of_its_key_even_with_stale_statistics(empty_database_url, backend):
    if backend != "postgresql":
        pytest.skip("PostgreSQL's planner")
    seen: list[tuple[str, object]] = []
    with ConversationStore(empty_database_url) as s:
        s.save(_conversation(300), "openai")
        with s.engine.connect() as conn:
            conn.execute(sa.text("COMMIT"))
            conn.exec_driver_sql("ANALYZE")
        cid = s.save(_conversation(3000), "openai")  # newer than the statistics
        sa.event.listen(s.engine, "before_cursor_execute",
                        lambda conn, cursor, statement, params, *_: seen.append((statement, params)))
        assert len(s.load(cid, "qwen")) == 3000  # the canonical path: messages, then blocks
        assert len(s.load(cid, "openai")) == 3000  # the stored documents (store.docs)
        reads = [(st, p) for st, p in seen
                 if st.startswith(("SELECT messages.seq", "SELECT blocks.seq", "SELECT messages.doc"))]
        with s.engine.connect() as conn:
            plans = ["\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + st, p)) for st, p in reads]
    assert len(plans) == 4, reads  # the canonical path's two, the documents, the texts and calls they leave out
    for plan, index in zip(plans, ("pk_messages", "pk_blocks", "pk_messages", "pk_blocks")):
        assert "Nested Loop" not in plan and "Join" not in plan and "Sort" not in plan, plan
        assert plan.count(index) == 1, plan


def test_no_jit_and_generic_plans_on_convstores_connections(empty_database_url, backend):
    """A very large conversation skews conversation_id's statistics until a tool-call lookup
    is estimated at ~1e9 rows; with JIT on, PostgreSQL compiled every lookup (0.6 -> 270 ms at
    1M messages in one conversation), and it planned every prepared lookup anew (0.9 ms of
    planning for 0.1 ms of work). convstore's connections run without JIT and keep prepared
    statements' generic plans, sync and async."""
    if backend != "postgresql":
        pytest.skip("PostgreSQL's JIT")
    import asyncio

    from store import AsyncConversationStore

    with ConversationStore(empty_database_url) as s:
        cid = s.save(_conversation(30), "openai")
        with s.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW jit").scalar() == "off"
            assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "force_generic_plan"
            conn.exec_driver_sql("SET jit_above_cost = 0")  # would compile anything
            plan = "\n".join(r[0] for r in conn.exec_driver_sql(
                "EXPLAIN ANALYZE SELECT count(*) FROM blocks WHERE conversation_id = %(cid)s", {"cid": cid}))
        assert "JIT" not in plan, plan
        assert s.get_tool_call("call_3").status == "answered"

    async def async_settings() -> tuple[str, str]:
        async with AsyncConversationStore(empty_database_url) as a:
            async with a.engine.connect() as conn:
                return ((await conn.exec_driver_sql("SHOW jit")).scalar(),
                        (await conn.exec_driver_sql("SHOW plan_cache_mode")).scalar())

    assert asyncio.run(async_settings()) == ("off", "force_generic_plan")


def _call(k: int) -> list[dict]:
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"answer {k}"}]


def test_lookup_by_call_id_starts_from_its_index_even_with_stale_statistics(empty_database_url, backend):
    """Statistics taken when the namespace held 3 conversations, then 400 more: PostgreSQL
    estimated the namespace's conversations at a handful and probed each of them for the
    call id (3.4 ms at 2,500 conversations, growing with them) instead of one index probe.
    The calls with the id are now read first, on their own (a materialized CTE)."""
    if backend != "postgresql":
        pytest.skip("PostgreSQL's planner")
    seen: list[tuple[str, object]] = []
    with ConversationStore(empty_database_url) as s:
        for k in range(3):
            s.save(_call(k), "openai")
        with s.engine.connect() as conn:
            conn.execute(sa.text("COMMIT"))
            conn.exec_driver_sql("ANALYZE")
            for table in ("conversations", "messages", "blocks", "tool_calls"):
                conn.exec_driver_sql(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
            conn.commit()
        last = [s.save(_call(k), "openai") for k in range(3, 403)][-1]
        sa.event.listen(s.engine, "before_cursor_execute",
                        lambda conn, cursor, statement, params, *_: seen.append((statement, params)))
        record = s.get_tool_call("c402")
        assert record.conversation_id == last and record.result == "answer 402"
        statement, params = next((st, p) for st, p in seen if "tool_calls" in st)
        with s.engine.connect() as conn:
            plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + statement, params))
    # The calls with the id first, on their own (an index probe once the table is large),
    # then their conversations: never a probe for the id per conversation of the namespace.
    lines = plan.splitlines()
    cte = next(i for i, line in enumerate(lines) if line.strip() == "CTE hits")
    assert "on tool_calls" in lines[cte + 1] and plan.count("on tool_calls") == 1, plan


def test_a_window_reads_its_conversation_and_start_once(empty_database_url, backend):
    """The last ``n`` messages in their stored format take one statement (``store.holes``) of
    three parts, the documents, their block rows and the conversation's row, which all need where
    the window starts. Computed in each part, PostgreSQL found the conversation and scanned the
    window's messages for it thrice (36 of the 48 buffers a window of 50 read)."""
    if backend != "postgresql":
        pytest.skip("PostgreSQL's planner")
    seen: list[tuple[str, object]] = []
    with ConversationStore(empty_database_url) as s:
        cid = s.save(_conversation(300), "openai")
        sa.event.listen(s.engine, "before_cursor_execute",
                        lambda conn, cursor, statement, params, *_: seen.append((statement, params)))
        assert len(s.load(cid, "openai", last=50)) >= 50
        assert len(seen) == 1, seen  # the whole window in one statement
        statement, params = seen[0]
        with s.engine.connect() as conn:
            plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + statement, params))
    assert plan.count("on conversations") == 1 and plan.count("Aggregate") == 1, plan
