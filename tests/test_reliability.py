"""Concurrent writers, crashes, hostile input and limits, on every backend."""

import base64
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import ConversationStore
from store.demo import samples
from store.errors import ConvstoreError, InputError, SchemaError
from store.limits import Limits
from store.model import DataBlock, ImageBlock, Message, TextBlock, ToolCallBlock, ToolResultBlock
from store.schema import MARK, SearchRow

from .samples import chat

ROOT = Path(__file__).resolve().parents[1]
WRITER = """
import sys
from store import ConversationStore
from store.demo import samples
url, namespace, cid, writer, appends = sys.argv[1:6]
with ConversationStore(url, namespace=namespace) as s:
    for i in range(int(appends)):
        s.append(cid, [{"role": "user", "content": f"w{writer} a{i} m0"},
                       {"role": "assistant", "content": f"w{writer} a{i} m1"}])
"""


def assert_contiguous_appends(store, cid, writers, appends):
    msgs = store.load(cid)
    assert len(msgs) == writers * appends * 2
    texts = [m["content"] for m in msgs]
    assert len(set(texts)) == len(texts)  # nothing duplicated
    for i in range(0, len(texts), 2):  # each append landed as one run
        assert texts[i].endswith(" m0") and texts[i + 1] == texts[i][:-2] + "m1"
    for w in range(writers):  # each writer's appends in its own order
        mine = [int(t.split()[1][1:]) for t in texts[::2] if t.startswith(f"w{w} ")]
        assert mine == list(range(appends))
    with store.engine.connect() as conn:
        seqs = conn.execute(sa.text("SELECT seq FROM messages WHERE conversation_id = :c ORDER BY seq"),
                            {"c": _id(store, cid)}).scalars().all()
    assert seqs == list(range(len(texts)))


def _id(store, cid):
    return cid if store.engine.dialect.name == "postgresql" else cid.replace("-", "")


def test_processes_appending_to_one_conversation(store, database_url):
    writers, appends = 8, 200
    cid = store.save([])
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, database_url, store.namespace, cid, str(w), str(appends)],
                         cwd=ROOT, stderr=subprocess.PIPE, text=True)
        for w in range(writers)
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    assert_contiguous_appends(store, cid, writers, appends)


def test_threads_appending_to_one_conversation(store):
    writers, appends = 8, 40
    cid = store.save([])

    def write(w):
        for i in range(appends):
            store.append(cid, [{"role": "user", "content": f"w{w} a{i} m0"},
                               {"role": "assistant", "content": f"w{w} a{i} m1"}])

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, range(writers)))
    assert_contiguous_appends(store, cid, writers, appends)


def test_same_key_from_many_writers_is_one_conversation(store):
    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(lambda _: store.conversation_for("session-42"), range(16)))
    assert len(ids) == 1
    [info] = store.list_conversations()
    assert info.key == "session-42" and info.id in ids


def test_sqlite_readers_are_not_blocked_and_writers_wait(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    with ConversationStore(url) as store:
        cid = store.save(chat(3))
        blocker = sa.create_engine(url)
        with blocker.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # another process holds the write lock
            conn.exec_driver_sql("UPDATE conversations SET title = 'busy'")
            started = time.monotonic()
            assert len(store.load(cid)) == 3  # WAL: the reader does not wait
            assert time.monotonic() - started < 1
            errors = []

            def append():
                try:
                    store.append(cid, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
                except Exception as exc:  # noqa: BLE001 - reported by the assert below
                    errors.append(exc)

            writer = threading.Thread(target=append)
            writer.start()
            time.sleep(1.0)
            assert writer.is_alive()  # waiting for the lock, not failing with "database is locked"
            conn.exec_driver_sql("COMMIT")
        writer.join(60)
        blocker.dispose()
        assert not errors and not writer.is_alive()
        assert len(store.load(cid)) == 5


def test_sqlite_settings(tmp_path):
    with ConversationStore(f"sqlite:///{tmp_path / 'c.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


KILLED_IMPORT = """
import sys
from store import ConversationStore
from store.demo import samples
from store.model import Message, TextBlock
url, namespace = sys.argv[1:3]
msgs = [Message(role="user", content=[TextBlock(text="x" * 200)]) for _ in range(300_000)]
with ConversationStore(url, namespace=namespace) as s:
    print("writing", flush=True)
    s.save(msgs, format="canonical", progress=lambda n: print("written", n, flush=True))
print("finished", flush=True)
"""


def test_sigkill_in_the_middle_of_an_import_leaves_nothing(store, database_url):
    keep = store.save(chat(5))
    proc = subprocess.Popen([sys.executable, "-c", KILLED_IMPORT, database_url, store.namespace],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    # killed once its first chunk is written, whatever the machine's speed: 59 more are to come
    assert proc.stdout.readline().startswith("written"), "the import wrote no chunk"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + 30
    while True:  # the server may take a moment to notice the dead connection
        try:
            infos = store.list_conversations()
            break
        except ConvstoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert [i.id for i in infos] == [keep]
    assert len(store.load(keep)) == 5


def test_invalid_900th_message_writes_nothing(store):
    msgs = chat(899) + [{"role": "tool", "content": "no call id"}] + chat(100)
    with pytest.raises(SchemaError, match="message 899"):
        store.save(msgs)
    assert store.list_conversations() == []


# --- hostile and odd input ----------------------------------------------------------------

ODD = [
    "nul \x00 inside", "\x00", MARK + "looks escaped", MARK, "emoji 🧪🔥👩‍👩‍👧", "rtl \u202eevil\u202c \u200f",
    "quotes ' \" `; DROP TABLE messages; --", "back\\slash \\u0000 not a nul", "", " ", "\ud7ff\ue000\uffff",
]


@pytest.mark.parametrize("text", ODD, ids=range(len(ODD)))
def test_odd_text_round_trips_exactly(store, text):
    deep = text
    for i in range(40):
        deep = [deep] if i % 2 else {"k": deep}
    msg = Message(role="assistant", name=text[:200] or None, external_id=text[:200] or None, metadata={text: text},
                  content=[TextBlock(text=text),
                           ToolCallBlock(call_id=text[:200] + "id", name=text[:200] or "f", arguments={text: deep}),
                           DataBlock(data={"nested": deep})])
    result = Message(role="tool", content=[ToolResultBlock(call_id=text[:200] + "id", output=text)])
    cid = store.save([msg, result], format="canonical")
    assert store.load_messages(cid) == [msg, result]
    record = store.get_tool_call(text[:200] + "id", conversation_id=cid)
    assert record.arguments == {text: deep} and record.result == text


def test_deeply_nested_arguments(store):
    raw = "[" * 600 + "]" * 600
    data = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "deep", "type": "function", "function": {"name": "f", "arguments": raw}}]}]
    cid = store.save(data)
    assert store.load(cid) == data
    assert store.get_tool_call("deep").arguments_raw == raw


def test_ten_megabyte_string(store):
    text = "🙂 ten megabytes " * (10 * 1024 * 1024 // 20)
    cid = store.save([{"role": "user", "content": text}])
    assert store.load(cid)[0]["content"] == text


@pytest.mark.parametrize("where", ["text", "name", "arguments", "metadata"])
def test_lone_surrogates_are_refused_and_nothing_is_written(store, where):
    bad = "a\ud800b"
    msg = Message(role="assistant", content=[TextBlock(text="fine")])
    if where == "text":
        msg.content[0].text = bad
    elif where == "name":
        msg.name = bad
    elif where == "arguments":
        msg.content.append(ToolCallBlock(call_id="c", name="f", arguments={"x": bad}))
    else:
        msg.metadata = {"x": bad}
    with pytest.raises(InputError, match="message 1.*(surrogate|UTF-8)"):
        store.save([Message(role="user", content=[TextBlock(text="ok")]), msg], format="canonical")
    assert store.list_conversations() == []


def test_overlong_names_are_refused(store):
    msg = Message(role="user", name="n" * 256, content=[TextBlock(text="hi")])
    with pytest.raises(InputError, match="message 0, name: 256 characters, the most this store takes is 255"):
        store.save([msg], format="canonical")


def test_limits_are_configurable_and_enforced_before_writing(database_url, namespace):
    limits = Limits(max_message_bytes=10_000, max_blob_bytes=1_000)
    with ConversationStore(database_url, namespace=namespace, limits=limits) as store:
        cid = store.save(chat(2))
        with pytest.raises(InputError, match=r"message 1, size: .* limit of 10000 bytes \(Limits.max_message_bytes\)"):
            store.append(cid, [Message(role="user", content=[TextBlock(text="ok")]),
                               Message(role="user", content=[TextBlock(text="x" * 20_000)])], format="canonical")
        with pytest.raises(InputError, match=r"message 0, block 0 \(image\).*Limits.max_blob_bytes"):
            store.append(cid, [Message(role="user", content=[ImageBlock(data=b"\x00" * 2_000, media_type="image/png")])],
                         format="canonical")
        assert len(store.load(cid)) == 2


def test_the_message_limit_counts_bytes_of_json_too(database_url, namespace):
    # 3,000 characters of extras or metadata in 6,000 bytes of UTF-8: over a 5,000-byte limit as stored
    wide = "é" * 3_000
    limits = Limits(max_message_bytes=5_000)
    with ConversationStore(database_url, namespace=namespace, limits=limits) as store:
        cid = store.save(chat(1))
        for wider in ({"extras": {"x": {"note": wide}}}, {"metadata": {"note": wide}},
                      {"content": [TextBlock(text="ok", extras={"x": {"note": wide}})]}):
            with pytest.raises(InputError, match=r"message 1, size: 60.. bytes .* limit of 5000 bytes"):
                store.append(cid, [Message(role="user", content=[TextBlock(text="ok")]),
                                   Message(**{"role": "user", "content": [TextBlock(text="ok")], **wider})],
                             format="canonical")
        for item in ({"role": "assistant", "content": "ok", "reasoning_content": wide},  # read in one pass
                     {"role": "assistant", "content": "ok", "name": "a", "reasoning_content": wide}):
            # the reasoning is kept once, in the item's document (kept_once): counted all the same
            with pytest.raises(InputError, match=r"message 1, size: 60.. bytes .* limit of 5000 bytes"):
                store.append(cid, [{"role": "user", "content": "ok"}, item], format="openai")
        with pytest.raises(InputError, match=r"metadata: 60.. bytes of JSON is over this store's limit of 5000 bytes"):
            store.save(chat(1), metadata={"note": wide})
        assert len(store.load(cid)) == 1
        assert len(store.list_conversations()) == 1


def test_fifty_megabyte_image(store):
    data = os.urandom(50 * 1024 * 1024 * 3 // 4)
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    msgs = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    if store.engine.dialect.name in ("mysql", "mariadb") and store.limits.max_blob_bytes < len(data):
        with pytest.raises(InputError, match="max_blob_bytes"):
            store.save(msgs)
        assert store.list_conversations() == []
    else:
        cid = store.save(msgs)
        assert store.load(cid) == msgs


# --- fuzzing -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
def _mutate(value, draw):
    """One random change somewhere inside a JSON value: drop a key, retype a value, add junk."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value, key=str)))
        choice = draw(st.integers(0, 2))
        if choice == 0:
            return {k: v for k, v in value.items() if k != key}
        if choice == 1:
            return {**value, key: draw(json_values)}
        return {**value, key: _mutate(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], _mutate(value[i], draw), *value[i + 1:]]
    if isinstance(value, dict):
        return {**value, draw(st.text(max_size=6)): draw(json_values)}
    return draw(json_values)


SAMPLES = samples()


@st.composite
def mutated_samples(draw):
    found = SAMPLES
    name = draw(st.sampled_from(sorted(found)))
    data = found[name]
    for _ in range(draw(st.integers(1, 3))):
        data = _mutate(data, draw)
    return name, data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.one_of(mutated_samples(), st.tuples(st.sampled_from(["openai", "auto", "qwen", "docent"]),
                                                   json_values)))
def test_random_input_is_stored_or_refused_cleanly(store, case):
    """Random JSON and random mutations of every format's sample: stored, or refused with the
    store's own error and nothing written; never another exception."""
    format, data = case
    before = len(store.list_conversations())
    try:
        store.save(data, format=format)
    except InputError:
        assert len(store.list_conversations()) == before


def test_a_driver_error_in_a_small_write_is_wrapped_and_nothing_stays(store):
    """Small writes go out pipelined on PostgreSQL: an error the server reports only at the
    end of the pipeline is still the usual one-line DatabaseError, and the write is undone."""
    from store import db, operations as ops, rows
    from store.errors import DatabaseError

    cid = store.save([{"role": "user", "content": "first"}])
    canonical = store._canonical([{"role": "user", "content": "again"}], "openai")
    chunk = rows.chunk_rows(store.limits, cid, canonical, first_seq=1)
    with pytest.raises(DatabaseError) as caught:
        with db.database_errors(store.engine), db.write_transaction(store.engine) as conn:
            ops.reserve(conn, store.scope, cid, 1)
            rows.write_rows(conn, cid, chunk, fresh=False)
            rows.write_rows(conn, cid, chunk, fresh=False)  # the same ids again
    assert isinstance(caught.value.__cause__, sa.exc.IntegrityError)
    assert "\n" not in str(caught.value)
    assert store.load(cid) == [{"role": "user", "content": "first"}]
    store.append(cid, [{"role": "user", "content": "later"}])  # the connection is usable again
    assert store.info(cid).message_count == 2


@pytest.mark.parametrize("value", [[1], {"a": 1}, None, 2.5])
@pytest.mark.parametrize("key", ["type", "role", "kind", "part_kind"])
def test_detection_and_reading_refuse_a_tag_of_the_wrong_type_cleanly(key, value):
    """A list or object where a format expects its tag string: 'cannot tell the format' or the
    format's own schema error, never a TypeError (found by hypothesis: unhashable in a set)."""
    from store.errors import ConvstoreError
    from store.formats import FORMATS, detect, read

    shapes = [{"role": "user", "content": "x"}, {"role": "user", "parts": [{"type": "text", "text": "x"}]},
              {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x"}]},
              {"type": "human", "data": {"content": "x"}}]
    for shape in shapes:
        data = [dict(shape, **{key: value})]
        for attempt in [lambda: detect(data), *(lambda f=f: read(data, f) for f in FORMATS)]:
            try:
                attempt()
            except ConvstoreError:
                pass


def test_nul_and_the_escape_mark_in_filters_and_search(store):
    """Values holding NUL (or starting with the mark PostgreSQL's escape uses) are found by the
    filters and the search that name them, on every backend, and shown as written."""
    odd, marked = "x\x00y", MARK + "z"
    cid = store.save([{"role": "user", "content": "done\x00 and more words"},
                      {"role": "assistant", "content": None, "tool_calls": [
                          {"id": "c\x001", "type": "function", "function": {"name": odd, "arguments": "{}"}}]},
                      {"role": "tool", "tool_call_id": "c\x001", "content": "found\x00"}],
                     format="openai", tags=[odd], metadata={"n": odd, "m": marked})
    for found in (store.list_conversations(tags=[odd]), store.list_conversations(metadata={"n": odd}),
                  store.list_conversations(metadata={"m": marked})):
        assert [c.id for c in found] == [cid]
    assert store.get_tool_call("c\x001").name == odd
    hits = store.search("words")
    if store.engine.dialect.name == "sqlite":  # SQLite's text functions stop at NUL: the rest is not indexed
        assert store.search("done")[0].snippet == "done"
    else:
        assert [h.snippet for h in hits] == ["done\x00 and more words"]
        assert [h.snippet for h in store.search("found")] == [f"{odd} found\x00"]  # its tool's name, then its text
    with store.engine.connect() as conn:  # the index's rows read through their types (the viewer's test reads every table)
        assert conn.execute(sa.select(SearchRow.__table__)).all()


def test_a_source_format_is_a_name_within_its_column(store):
    for bad, why in (("a\x00b", "a NUL character"), ("f" * 33, "33 characters, the most this store takes is 32")):
        with pytest.raises(InputError, match=f"source_format: {why}"):
            store.save(chat(1), source_format=bad)
        with pytest.raises(InputError, match=f"source_format: {why}"):
            store.list_conversations(source_format=bad)
        with pytest.raises(InputError, match=f"message 0, source_format: {why}"):
            store.save([Message(role="user", content=[TextBlock(text="hi")], source_format=bad)], format="canonical")
    assert store.list_conversations() == []
