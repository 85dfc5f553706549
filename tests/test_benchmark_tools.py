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
