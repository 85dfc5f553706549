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
        out += [{"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": call, "content": f"answer {i}"}]
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
        assert len(s.load(cid, "openai")) == 3000
        statement, params = next((st, p) for st, p in seen if "UNION ALL" in st)
        with s.engine.connect() as conn:
            plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + statement, params))
    assert "Nested Loop" not in plan and "Join" not in plan, plan
    assert plan.count("pk_messages") == 1 and plan.count("pk_blocks") == 1, plan
