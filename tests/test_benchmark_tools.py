"""The benchmarks' own tools against the store, on every backend: tools that write rows straight
into the tables must write rows the store reads."""

from benchmarks import listing


def test_the_listing_benchmark_grows_a_namespace_the_store_pages_through(store):
    """``benchmarks.listing`` inserts conversation rows in bulk (it broke when the table gained
    columns, unnoticed: no test ran it)."""
    listing._grow(store, 0, 120)
    assert listing.every_once(store, 120).endswith("exactly once")
    page = store.list_conversations(tags=["rare"], order_by="updated_at")
    assert [c.title for c in page] == ["conversation 100", "conversation 0"]
