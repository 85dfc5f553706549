"""Batch inserts name only the columns some row sets (store.bulk): the rest stay NULL, and a value
set by any row of the batch, the last one too, is written."""

from __future__ import annotations

import sqlalchemy as sa
from hypothesis import given, strategies as st
from sqlalchemy.dialects import postgresql

from store import bulk
from store.schema import MARK, BlockRow, MessageRow, SafeText


def test_a_batch_binds_the_columns_some_row_sets():
    rows = [{c.key: None for c in BlockRow.__table__.columns} for _ in range(3)]
    for i, row in enumerate(rows):
        row.update(conversation_id="c", seq=i, position=0, kind="text", text="")
    rows[-1]["media_type"] = "image/png"
    keys = bulk.set_keys(BlockRow.__table__, rows)
    assert keys == ("conversation_id", "seq", "position", "kind", "text", "media_type")
    assert bulk.set_keys(BlockRow.__table__, rows[:2]) == ("conversation_id", "seq", "position", "kind", "text")


def test_rows_that_set_different_columns_are_stored_as_they_are(store):
    cid = store.save([{"role": "user", "content": "hi"}])
    table = MessageRow.__table__
    key = cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")
    rows = [{c.key: None for c in table.columns} for _ in range(70)]  # past COPY_FROM: PostgreSQL's COPY too
    for i, row in enumerate(rows):
        row.update(conversation_id=cid, seq=10 + i, window_start=10 + i, role="user", text=str(i))
    rows[-1]["name"], rows[0]["model"] = "ana", "m-1"
    with store.engine.begin() as conn:
        bulk.insert(conn, table, rows)
        bulk.insert(conn, table, [{**rows[0], "seq": 200, "model": None, "text": None}])
        found = conn.execute(sa.select(table.c.seq, table.c.name, table.c.model, table.c.text)
                             .where(table.c.conversation_id == key, table.c.seq >= 10).order_by(table.c.seq)).all()
    assert [tuple(r) for r in found] == [
        (10 + i, "ana" if i == 69 else None, "m-1" if i == 0 else None, str(i)) for i in range(70)] + [
        (200, None, None, None)]


def test_a_null_and_text_that_looks_like_zero_are_stored_as_they_are(store):
    """On SQLite a NULL in a text column is bound as 0 under NULLIF(?, 0) (``bulk._Insert.zeroed``): no
    text, "0" and "" included, is taken for it, and a NULL stays a NULL (not 0, not "0")."""
    cid = store.save([{"role": "user", "content": "hi"}])
    table = MessageRow.__table__
    key = cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")
    values = ["0", "", None, "0.0", " 0", "00", "NULL", "null", "-0"]
    rows = [{**{c.key: None for c in table.columns}, "conversation_id": cid, "seq": 10 + i, "window_start": 10 + i,
             "role": "user", "text": value, "name": value, "call_id": value if i % 2 else None}
            for i, value in enumerate(values)]
    with store.engine.begin() as conn:
        bulk.insert(conn, table, rows)
        found = conn.execute(sa.select(table.c.text, table.c.name, table.c.call_id, table.c.model)
                             .where(table.c.conversation_id == key, table.c.seq >= 10).order_by(table.c.seq)).all()
    assert [tuple(r) for r in found] == [(v, v, v if i % 2 else None, None) for i, v in enumerate(values)]
    assert all(type(v) in (str, type(None)) for r in found for v in r)
    statement = bulk._statement(table, store.engine.dialect, bulk.set_keys(table, rows))
    assert ("NULLIF(?, 0)" in statement.sql) == (store.engine.dialect.name == "sqlite")


_PG = postgresql.psycopg.dialect()


@given(st.lists(st.text(alphabet=st.sampled_from(["a", "\x00", MARK, "é", "\n"]), max_size=4), min_size=1))
def test_a_column_is_checked_at_once_for_what_postgresql_escapes(values):
    """``SafeText.any_escaped`` (a batch's text column at once) says what converting each value says."""
    changed = any(SafeText().process_bind_param(v, _PG) != v for v in values)
    assert SafeText.any_escaped(values) == changed


def test_a_nul_or_a_mark_in_one_value_of_a_batch_is_kept(store):
    """Where one value of a column needs PostgreSQL's escape, the column's values are converted one by one:
    past COPY_FROM (the COPY), the first row's and the last row's."""
    cid = store.save([{"role": "user", "content": "hi"}])
    table = MessageRow.__table__
    key = cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")
    texts = [f"t{i}" for i in range(70)]
    texts[0], texts[-1] = MARK + "mark", "nul\x00inside"
    rows = [{c.key: None for c in table.columns} for _ in texts]
    for i, (row, text) in enumerate(zip(rows, texts)):
        row.update(conversation_id=cid, seq=10 + i, window_start=10 + i, role="user", text=text, call_id=f"c{i}")
    with store.engine.begin() as conn:
        bulk.insert(conn, table, rows)
        found = conn.execute(sa.select(table.c.text, table.c.call_id).where(
            table.c.conversation_id == key, table.c.seq >= 10).order_by(table.c.seq)).all()
    assert [tuple(r) for r in found] == [(text, f"c{i}") for i, text in enumerate(texts)]


def test_listed_rows_keep_the_columns_some_row_sets():
    rows = [{c.key: None for c in BlockRow.__table__.columns} for _ in range(3)]
    for i, row in enumerate(rows):
        row.update(conversation_id="c", seq=i, position=0, kind="text", text="" if i else None)
    rows[-1]["tool_name"] = ""  # an empty value is a value
    listed, keys = bulk.listed(BlockRow.__table__, rows)
    assert keys == ("conversation_id", "seq", "position", "kind", "text", "tool_name")
    assert listed == [["c", 0, 0, "text", None, None], ["c", 1, 0, "text", "", None], ["c", 2, 0, "text", "", ""]]
    assert bulk.listed(BlockRow.__table__, []) == ([], ())


_KEYS = tuple(BlockRow.__table__.c.keys())
_NULLABLE = [c.key for c in BlockRow.__table__.columns if c.nullable]


@given(st.lists(st.dictionaries(st.sampled_from(_NULLABLE), st.sampled_from(["", "x", 0, False])), min_size=1,
                max_size=6),
       st.sets(st.sampled_from(_NULLABLE)))
def test_listed_rows_trimmed_to_the_columns_they_set_are_a_full_scans(values, more):
    """Rows listed with every column, ``trimmed`` to the columns they set (whatever falsy values
    they hold; one row read at once, more scanned), are ``listed``'s; and widened to more columns,
    they hold None there."""
    empty = dict.fromkeys(_KEYS)
    rows = [{**empty, "conversation_id": "c", "seq": i, "position": 0, "kind": "text", **row}
            for i, row in enumerate(values)]
    full = [[row[key] for key in _KEYS] for row in rows]
    trimmed, keys = bulk.trimmed(BlockRow.__table__, _KEYS, [list(row) for row in full])
    assert (trimmed, keys) == bulk.listed(BlockRow.__table__, rows)
    wider = bulk.union(BlockRow.__table__, keys, tuple(more))
    assert bulk.narrowed(bulk.narrowed(full, _KEYS, keys), keys, wider) == \
        [[row[key] if key in keys else None for key in wider] for row in rows]
