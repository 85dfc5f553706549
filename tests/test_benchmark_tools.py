"""The benchmarks' own tools: those that write rows straight into the tables must write rows the
store reads (on every backend), and the conversion matrix must convert the samples' messages."""

from benchmarks import listing


def test_the_listing_benchmark_grows_a_namespace_the_store_pages_through(store):
    """``benchmarks.listing`` inserts conversation rows in bulk (it broke when the table gained
    columns, unnoticed: no test ran it)."""
    listing._grow(store, 0, 120)
    assert listing.every_once(store, 120).endswith("exactly once")
    page = store.list_conversations(tags=["rare"], order_by="updated_at")
    assert [c.title for c in page] == ["conversation 100", "conversation 0"]


def test_the_conversion_benchmark_repeats_messages_and_bounds_every_source():
    """``benchmarks.conversion``: a wrapped sample's messages repeat (its first list was Anthropic's and
    OpenTelemetry's single system block), and every source format gets a validation bound."""
    import store
    from benchmarks import conversion

    for fmt, key in (("anthropic", "messages"), ("otel-genai", "input_messages"), ("gemini", "contents")):
        data, count = conversion.source(fmt, 40)
        assert len(data[key]) >= 40 and count >= 40
    said: list[str] = []
    assert set(conversion.validation_bound(40, repeat=1, say=said.append)) == set(store.FORMATS) and not said


def test_the_agent_conversation_converts_from_every_format():
    """``conversion.agent_source``: the workload's conversation as every format holds it, each a source
    the matrix converts to every format and bounds."""
    import store
    from benchmarks import conversion

    rates = conversion.run(60, budget_s=0, say=(said := []).append, sources=conversion.agent_source)
    assert not [line for line in said if "failed" in line]
    assert all(len(rates[src][dst]) >= 3 for src in store.FORMATS for dst in store.FORMATS)
    said.clear()
    bound = conversion.validation_bound(60, repeat=1, say=said.append, sources=conversion.agent_source)
    assert set(bound) == set(store.FORMATS) and not said


def test_the_load_benchmark_loads_in_every_format():
    """``benchmarks.load_formats``: the workload saved once, loaded whole in each format."""
    import store
    from benchmarks import workload
    from benchmarks.load_formats import load_times, table

    times = load_times(workload.conversation(60), repeat=1)
    assert set(times) == set(store.FORMATS) and all(t > 0 for t in times.values())
    assert table(times, 60).row_count == len(store.FORMATS)


def test_the_append_duel_times_every_counted_append_by_kind():
    """``benchmarks.append_kinds``: two contestants take turns on one workload; each counted append of
    each is timed once, under its message's kind."""
    from benchmarks import workload
    from benchmarks.append_kinds import duel, rate_ratio, table
    from benchmarks.contestant import Convstore, SchemaBound

    messages = workload.conversation(90)
    times = duel(Convstore(), SchemaBound(), messages, stored=50, appends=30, warm_up=5)
    assert set(times) == {"convstore", "convstore rows (bound)"}
    for per_kind in times.values():
        assert sum(len(seconds) for seconds in per_kind.values()) == 30
        assert "user's text" in per_kind and all(s > 0 for seconds in per_kind.values() for s in seconds)
    assert rate_ratio(times) > 0 and table(times).row_count == 2


def test_the_commit_timing_times_each_counted_commit_by_its_frames():
    """``benchmarks.wal_pages --commit-times`` times the writer's COMMIT (it broke when the commit
    moved from SQLAlchemy's to the store's own, unnoticed: no test ran it)."""
    from benchmarks import workload
    from benchmarks.wal_pages import WARM_UP, commit_table, commit_times

    by_frames = commit_times(workload.conversation(50 + WARM_UP + 20), stored=50, appends=20)
    assert sum(len(times) for times in by_frames.values()) == 20 and min(by_frames) >= 1
    assert all(t > 0 for times in by_frames.values() for t in times)
    assert commit_table(by_frames).row_count == sum(len(times) >= 10 for times in by_frames.values())
    assert commit_table({1: [5.0] * 10, 2: [9.0] * 9}).row_count == 1  # a row where 10 commits or more say it


def test_a_round_of_sqlite_ingests_then_settles_its_files_back_into_the_cache():
    """``benchmarks.measure``: a SQLite ingest is timed on an emptied page cache where the process may
    empty it (``databases.drop_page_cache``, said in the run's header), and ``settle`` reads each file
    back, so that the lookups after the ingests start warm for every contestant."""
    from benchmarks import databases, measure
    from benchmarks.contestant import Convstore
    from benchmarks.workload import conversation

    assert "page cache before an ingest" in databases.settings("sqlite")
    contestant = Convstore()
    with databases.fresh("sqlite") as db:
        contestant.open(db)
        try:
            seconds, conversation_id = measure.timed(contestant.ingest, contestant.prepare(conversation(50)),
                                                     cold=True)
            databases.settle(db)
            assert seconds > 0 and len(contestant.store.load_messages(conversation_id)) == 50
        finally:
            contestant.close()


def test_the_scale_run_counts_the_pages_a_call_touches(store, backend):
    """``scale.buffers``: the store's statements for one argument, run under ``EXPLAIN (ANALYZE,
    BUFFERS)`` for others (PostgreSQL's counts of shared buffers)."""
    import pytest

    from benchmarks import scale
    from benchmarks import workload as wl
    from benchmarks.contestant import Convstore

    if backend != "postgresql":
        pytest.skip("PostgreSQL's buffer counts")
    c = Convstore()
    c.store = store
    convs = [wl.conversation(100, 2, k) for k in range(3)]
    cids = [c.ingest(msgs) for msgs in convs]
    calls = [wl.answered_call_ids(msgs)[0] for msgs in convs]
    last = scale.buffers(c, lambda cid: c.last(cid, 50), cids[0], cids[1:])
    found = scale.buffers(c, c.tool_call, calls[0], calls[1:])
    for touched, read in last + found:
        assert 0 <= read <= touched and touched > 5
    assert min(t for t, _ in last) > max(t for t, _ in found)  # 50 messages and their blocks: more than one call's rows
