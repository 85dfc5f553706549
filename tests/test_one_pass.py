"""The bound of issue 12's next design step (``benchmarks/one_pass.py``) builds, for the workload items
it takes, exactly today's rows: the time it reports is for the same work."""

from __future__ import annotations

from benchmarks import one_pass, workload


def test_the_one_pass_gives_todays_rows_for_the_items_it_takes():
    items = workload.conversation(3000, seed=7)
    assert one_pass.check(items) >= 0.8 * len(items)
