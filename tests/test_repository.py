"""The store on every backend: writes, reads, windows, tool calls, namespaces."""

import copy
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from store import ConversationStore
from store.schema import metadata
from store.errors import (
    AmbiguousToolCallError,
    ConversationNotFoundError,
    DuplicateToolCallError,
    InputError,
    SchemaError,
    ToolCallNotFoundError,
)
from store.model import ImageBlock, Message, TextBlock, ToolCallBlock, ToolResultBlock, Usage

from .samples import OPENAI_CHAT, PNG, chat, tool_turn


def count_rows(store: ConversationStore, table: str, conversation_id: str) -> int:
    t = metadata.tables[table]
    with store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).where(t.c.conversation_id == conversation_id)).scalar_one()


def test_save_and_load_round_trip(store):
    cid = store.save(copy.deepcopy(OPENAI_CHAT), format="openai", title="weather")
    assert store.load(cid, format="openai") == OPENAI_CHAT
    [info] = store.list_conversations()
    assert (info.id, info.title, info.message_count, info.source_format) == (cid, "weather", len(OPENAI_CHAT), "openai")


def test_append_continues_the_sequence_and_links_results(store):
    msgs = chat(9)
    cid = store.save(msgs[:4])
    store.append(cid, msgs[4:6])
    store.append(cid, msgs[6:])
    assert store.load(cid) == msgs
    assert [m.role for m in store.load_messages(cid)] == [m["role"] for m in msgs]


def test_result_appended_later_links_to_its_call(store):
    cid = store.save([{"role": "user", "content": "go"}, *tool_turn(1, answered=False)])
    assert store.get_tool_call("call_1").status == "pending"
    store.append(cid, [{"role": "tool", "tool_call_id": "call_1", "content": "done"}])
    record = store.get_tool_call("call_1")
    assert (record.status, record.result, record.call_position, record.result_position) == ("answered", "done", 1, 2)


def test_canonical_messages_keep_every_field(store):
    when = datetime(2025, 3, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=9)))
    msgs = [
        Message(role="assistant", name="planner", source_format="autogen", source_type="ToolCallRequestEvent",
                external_id="m-1", created_at=when, model="gpt-x", usage=Usage(input_tokens=3, output_tokens=4),
                metadata={"k": [1, 2]}, extras={"autogen": {"x": None}},
                content=[TextBlock(text="look"), ToolCallBlock(call_id="c", name="f", arguments={"a": [1, {"b": None}]}),
                         ImageBlock(data=b"\x00\x01binary", media_type="image/png")]),
        Message(role="tool", created_at=datetime(2025, 3, 1, 4, 0),  # naive stays naive
                content=[ToolResultBlock(call_id="c", name="f", is_error=True, error={"type": "Boom"},
                                         output=[TextBlock(text="img:"), ImageBlock(data=b"\x89PNG", media_type="image/png")])]),
    ]
    cid = store.save(msgs, format="canonical")
    loaded = store.load_messages(cid)
    assert loaded == msgs
    assert loaded[0].created_at.utcoffset() == timedelta(hours=9)
    record = store.get_tool_call("c")
    assert record.status == "error" and record.is_error and record.result[1].data == b"\x89PNG"


def test_a_bad_message_writes_nothing(store):
    bad = chat(8) + [{"role": "user", "content": [{"type": "image_url"}]}]
    with pytest.raises(SchemaError, match="message 8"):
        store.save(bad)
    cid = store.save(chat(3))
    with pytest.raises(SchemaError):
        store.append(cid, chat(4) + [{"role": "nobody"}])
    assert store.load(cid) == chat(3)
    assert [c.message_count for c in store.list_conversations()] == [3]


def test_duplicate_call_id_is_refused_and_nothing_is_written(store):
    cid = store.save(tool_turn(1))
    with pytest.raises(DuplicateToolCallError, match="message 3.*call_1"):
        store.append(cid, [{"role": "user", "content": "again"}, *tool_turn(2), *tool_turn(1)])
    assert len(store.load(cid)) == 2
    with pytest.raises(DuplicateToolCallError):
        store.save(tool_turn(5) + tool_turn(5))


def test_a_call_id_used_before_is_named_when_the_links_key_refuses_it(store):
    """A batch's own calls are not looked up before it writes on SQLite and MariaDB: the links' key
    refuses an id used before, and the error still names the call and its message; nothing of the
    batch stays, and the store writes on."""
    def calls(*ids: str) -> dict:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}

    cid = store.save([calls("a", "b")])
    statements: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    store.append(cid, [calls("c")])
    looked_up = any(s.startswith("SELECT") and "tool_calls" in s for s in statements)
    assert looked_up == (store.engine.dialect.name == "postgresql")  # there a refused key ends the transaction
    with pytest.raises(DuplicateToolCallError, match="message 2: tool call id 'b'"):
        store.append(cid, [{"role": "user", "content": "x"}, calls("d", "e"), calls("f", "b")])
    with pytest.raises(DuplicateToolCallError, match="message 0: tool call id 'a'"):
        store.append(cid, [calls("g", "a", "h")])
    assert [m["tool_calls"][0]["id"] for m in store.load(cid)] == ["a", "c"]
    assert {r.call_id for r in store.find_tool_calls(conversation_id=cid)} == {"a", "b", "c"}
    store.append(cid, [calls("d")])
    assert store.info(cid).message_count == 3


def test_a_batch_of_results_reads_its_calls_and_window_starts_in_one_statement(store):
    """On SQLite and MariaDB the calls a batch's results answer and the window starts from the
    earliest still open one are read in one statement (two on PostgreSQL, which looks the batch's
    own calls up too); the rows written are those of the same messages saved at once."""
    def calls(*ids: str) -> dict:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}

    def result(call_id: str) -> dict:
        return {"role": "tool", "tool_call_id": call_id, "content": "r"}

    stored = [calls("a"), {"role": "user", "content": "x"}, calls("b", "c"), result("b")]
    added = [result("c"), {"role": "user", "content": "y"}, result("a"), result("b")]  # b: answered before
    cid = store.save(stored)
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    sa.event.listen(store.engine, "before_cursor_execute", count)
    store.append(cid, added)
    sa.event.remove(store.engine, "before_cursor_execute", count)
    reads = [s for s in statements
             if s.lstrip().startswith("SELECT") and ("tool_calls" in s or "window_start" in s)]
    assert len(reads) == (2 if store.engine.dialect.name == "postgresql" else 1)

    at_once = store.save(stored + added)
    with store.engine.connect() as conn:
        def rows(table: str, columns: str, c: str) -> list:
            query = f"SELECT {columns} FROM {table} WHERE conversation_id = :c ORDER BY 1, 2"
            return conn.execute(sa.text(query), {"c": c}).all()
        assert rows("messages", "seq, window_start", cid) == rows("messages", "seq, window_start", at_once)
        links = "call_id, call_seq, result_seq, result_position, status"
        assert rows("tool_calls", links, cid) == rows("tool_calls", links, at_once)
    assert store.load(cid) == store.load(at_once)


def test_unknown_conversation(store):
    for bad in ("0190a0a0-0000-7000-8000-000000000000", "not-a-uuid", "'; DROP TABLE messages; --"):
        with pytest.raises(ConversationNotFoundError):
            store.load(bad)
        with pytest.raises(ConversationNotFoundError):
            store.append(bad, chat(1))
        with pytest.raises(ConversationNotFoundError):
            store.delete(bad)


def test_delete_removes_every_row(store):
    cid = store.save(copy.deepcopy(OPENAI_CHAT))
    keep = store.save(chat(4))
    store.delete(cid)
    assert [c.id for c in store.list_conversations()] == [keep]
    assert count_rows(store, "blobs", keep) == 0 < count_rows(store, "messages", keep)
    for table in ("messages", "blocks", "blobs", "tool_calls"):
        assert count_rows(store, table, cid) == 0
    with pytest.raises(ToolCallNotFoundError):
        store.get_tool_call("call_kyoto")


_OWN = "(SELECT COALESCE(MAX(fork_seq), 0) FROM conversations WHERE id = :cid)"  # a fork's first own seq
_ORPHANS = {  # rows of a conversation written per message that outlive it or their message (revision 0019)
    "messages": "SELECT COUNT(*) FROM messages WHERE conversation_id = :cid"
                " AND NOT EXISTS (SELECT 1 FROM conversations WHERE id = :cid)",
    "blocks": "SELECT COUNT(*) FROM blocks b WHERE b.conversation_id = :cid AND NOT EXISTS"
              " (SELECT 1 FROM messages m WHERE m.conversation_id = :cid AND m.seq = b.seq)",
    "tool_calls": f"SELECT COUNT(*) FROM tool_calls t WHERE t.conversation_id = :cid AND ("
                  " NOT EXISTS (SELECT 1 FROM conversations WHERE id = :cid)"
                  f" OR t.call_seq >= {_OWN} AND NOT EXISTS (SELECT 1 FROM messages m"
                  " WHERE m.conversation_id = :cid AND m.seq = t.call_seq)"
                  f" OR t.result_seq >= {_OWN} AND NOT EXISTS (SELECT 1 FROM messages m"
                  " WHERE m.conversation_id = :cid AND m.seq = t.result_seq))",
}


def orphans(store: ConversationStore, *ids: str) -> dict[str, int]:
    """The rows of conversations ``ids`` whose conversation or message is gone (a fork's calls
    and results in the prefix it shares are its parent's messages)."""
    bound = sa.bindparam("cid", type_=metadata.tables["messages"].c.conversation_id.type)  # stored as the store does
    with store.engine.connect() as conn:
        counts = {(table, cid): conn.execute(sa.text(sql).bindparams(bound), {"cid": cid}).scalar_one()
                  for table, sql in _ORPHANS.items() for cid in ids}
    return {key: n for key, n in counts.items() if n}


def test_no_removal_leaves_rows_of_a_message_behind(store):
    """Blocks and links have no foreign keys: every path that removes messages removes them itself."""
    msgs = [{"role": "user", "content": "go"}, *tool_turn(1), *tool_turn(2), {"role": "assistant", "content": "ok"}]
    cid = store.save(copy.deepcopy(OPENAI_CHAT) + msgs)
    steps = [lambda: store.truncate(cid, len(OPENAI_CHAT) + 2), lambda: store.pop(cid, 1),
             lambda: store.replace(cid, msgs[:4]), lambda: store.pop_item(cid),
             lambda: store.append(cid, msgs[3:]), lambda: store.truncate(cid, 0)]
    for step in steps:
        step()
        assert orphans(store, cid) == {}
    parent = store.save(msgs)
    fork = store.fork(parent, 2, allow_pending=True)  # its link answers a call of the prefix it shares
    store.append(fork, [{"role": "tool", "tool_call_id": "call_1", "content": "its own"}, *tool_turn(3)])
    assert orphans(store, parent, fork) == {}
    for gone in (fork, parent, cid):
        store.delete(gone)
        assert orphans(store, gone) == {}
    expiring = store.save(copy.deepcopy(OPENAI_CHAT), expires_at=datetime(2000, 1, 1, tzinfo=timezone.utc))
    assert store.prune().conversations == 1 and orphans(store, expiring) == {}


def test_binary_payloads_are_stored_once(store):
    image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    msgs = [{"role": "user", "content": [image, image]}, {"role": "user", "content": [image]}]
    cid = store.save(msgs)
    store.append(cid, [{"role": "user", "content": [image]}])
    assert count_rows(store, "blobs", cid) == 1
    assert store.load(cid) == [*msgs, {"role": "user", "content": [image]}]


def test_large_message_fits(store):
    big = "x" * (5 * 1024 * 1024)
    cid = store.save([{"role": "user", "content": big}])
    assert store.load(cid) == [{"role": "user", "content": big}]


# --- windows -------------------------------------------------------------------


def test_last_n_returns_the_tail(store):
    msgs = chat(40)
    cid = store.save(msgs)
    assert store.load(cid, last=1) == msgs[-1:]
    assert store.load(cid, last=0) == []
    assert store.load(cid, last=1000) == msgs


def test_window_never_starts_with_an_orphan_result(store):
    msgs = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "assistant", "content": "done"},
    ]
    cid = store.save(msgs[:3])
    store.append(cid, msgs[3:])
    for last in (1, 2, 3, 4):
        window = store.load(cid, last=last)
        expected = msgs[-last:] if last <= 1 else msgs[1:]
        assert window == expected, last


def test_window_follows_chains_of_calls(store):
    # The result of x comes after y's call; the result of y comes last: cutting
    # inside any of this must pull the window back to x's call.
    msgs = [
        {"role": "user", "content": "q"},
        *tool_turn(0)[:1],
        {"role": "user", "content": "meanwhile"},
        *tool_turn(1)[:1],
        {"role": "tool", "tool_call_id": "call_0", "content": "r0"},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
    ]
    cid = store.save(msgs[:5])
    store.append(cid, msgs[5:])
    assert store.load(cid, last=1) == msgs[1:]
    canonical = store.load_messages(cid, last=2)
    assert canonical[0].content[0].call_id == "call_0"


def test_pending_calls_do_not_widen(store):
    cid = store.save([*tool_turn(0, answered=False), {"role": "user", "content": "hm"}])
    assert store.load(cid, last=1) == [{"role": "user", "content": "hm"}]


def test_load_uses_a_fixed_number_of_statements(store, statements):
    short = store.save(copy.deepcopy(OPENAI_CHAT))
    long = store.save(chat(300) + copy.deepcopy(OPENAI_CHAT))
    counts = {}
    for fmt in ("openai", "qwen"):
        for name, cid, last in (("short", short, None), ("long", long, None),
                                ("short-last", short, 5), ("long-last", long, 5)):
            statements.statements.clear()
            store.load(cid, fmt, last=last)
            counts[fmt, name] = statements.count()
    # in the stored format: conversation, the messages' documents (store.docs), the block rows of the calls and
    # results they leave out (store.holes); on a server, a window all three in one statement (holes.window)
    assert {counts["openai", name] for name in ("short", "long")} == {3}
    window = 3 if store.engine.dialect.name == "sqlite" else 1
    assert {counts["openai", name] for name in ("short-last", "long-last")} == {window}
    # in another: conversation and window, messages, blocks, blobs
    assert counts["qwen", "short"] == counts["qwen", "long"] == 4
    assert counts["qwen", "short-last"] == counts["qwen", "long-last"] == 3  # no image in the last 5: no blob query


# --- tool calls ------------------------------------------------------------------


def test_get_tool_call(store):
    cid = store.save(copy.deepcopy(OPENAI_CHAT))
    record = store.get_tool_call("call_paris")
    assert record.model_dump(exclude={"call_created_at", "result_created_at"}) == {
        "call_id": "call_paris", "name": "get_weather", "arguments": {"city": "Paris", "unit": "C"},
        "arguments_raw": '{"city": "Paris", "unit": "C"}', "status": "answered",
        "result": [{"kind": "text", "text": "Rain, 12C", "extras": {}}], "is_error": False,
        "conversation_id": cid, "call_position": 3, "result_position": 5,
    }
    bad = store.get_tool_call("call_bad", conversation_id=cid)
    assert bad.status == "pending" and bad.arguments is None and bad.arguments_raw == "{not json"


def test_tool_call_ids_across_conversations(store):
    first = store.save(tool_turn(7))
    second = store.save(tool_turn(7, error=True))
    with pytest.raises(AmbiguousToolCallError, match="2 conversations"):
        store.get_tool_call("call_7")
    assert store.get_tool_call("call_7", conversation_id=second).result == "ERROR result 7"
    assert store.get_tool_call("call_7", conversation_id=first).conversation_id == first
    with pytest.raises(ToolCallNotFoundError):
        store.get_tool_call("nope")
    with pytest.raises(ToolCallNotFoundError):
        store.get_tool_call("call_7", conversation_id="not-a-uuid")


def test_find_tool_calls(store):
    errors = [Message(role="assistant", content=[ToolCallBlock(call_id="e1", name="get_weather", arguments={})]),
              Message(role="tool", content=[ToolResultBlock(call_id="e1", output="boom", is_error=True)])]
    cid = store.save(copy.deepcopy(OPENAI_CHAT))
    store.append(cid, errors, format="canonical")
    by_status = {s: [r.call_id for r in store.find_tool_calls(status=s)] for s in ("pending", "answered", "error")}
    assert by_status == {"pending": ["call_bad"], "answered": ["call_kyoto", "call_paris"], "error": ["e1"]}
    assert [r.call_id for r in store.find_tool_calls(name="get_weather", status="error")] == ["e1"]
    assert len(store.find_tool_calls(conversation_id=cid, limit=2)) == 2
    with pytest.raises(Exception, match="status must be"):
        store.find_tool_calls(status="done")


def test_a_result_for_an_unknown_call_is_stored_unlinked(store):
    cid = store.save([{"role": "tool", "tool_call_id": "ghost", "content": "?"}])
    assert store.load(cid) == [{"role": "tool", "tool_call_id": "ghost", "content": "?"}]
    assert store.find_tool_calls() == []


# --- namespaces --------------------------------------------------------------------


def test_namespaces_are_isolated(store, database_url):
    mine = store.save(tool_turn(3))
    with ConversationStore(database_url, namespace=store.namespace + "-other") as other:
        theirs = other.save(tool_turn(3))
        assert [c.id for c in other.list_conversations()] == [theirs]
        assert other.get_tool_call("call_3").conversation_id == theirs
        for action in (other.load, other.delete, lambda c: other.append(c, chat(1))):
            with pytest.raises(ConversationNotFoundError):
                action(mine)
        assert other.find_tool_calls(conversation_id=mine) == []
    assert store.get_tool_call("call_3").conversation_id == mine
    assert len(store.load(mine)) == 2


def test_chunked_writes_link_across_chunks_and_report_the_right_index(store, monkeypatch):
    import store.operations as operations

    monkeypatch.setattr(operations, "CHUNK", 3)
    msgs = chat(20)
    seen = []
    cid = store.save(msgs, progress=seen.append)
    assert seen == [3, 3, 3, 3, 3, 3, 2] and store.load(cid) == msgs
    assert store.load(cid, last=1) == msgs[-1:] or store.load(cid, last=1)[0]["role"] == "assistant"
    assert all(r.status == "answered" for r in store.find_tool_calls(conversation_id=cid))
    with pytest.raises(DuplicateToolCallError, match="message 7"):
        store.save(chat(7) + tool_turn(0))


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic", "qwen", "autogen", "autogen-core", "agentscope",
                                  "agentscope2", "agent-framework", "docent"])
def test_every_format_round_trips_through_the_database(store, name):
    from store import FORMATS
    from store.demo import samples

    if name not in FORMATS:
        pytest.skip(f"{name} is not implemented")
    data = samples()[name]
    cid = store.save(copy.deepcopy(data), format=name)
    assert store.load(cid, format=name) == data
    assert len(store.find_tool_calls(conversation_id=cid)) > 0


# --- truncating (the memory backends' pop and clear) --------------------------------


def test_truncate_pops_messages_and_reopens_their_calls(store):
    msgs = [{"role": "user", "content": "go"}, *tool_turn(1), *tool_turn(2), {"role": "assistant", "content": "ok"}]
    cid = store.save(copy.deepcopy(OPENAI_CHAT[2:3]) + msgs)  # an image first
    assert store.truncate(cid, 5) == 2  # the last result and the answer
    assert store.get_tool_call("call_2").status == "pending"
    assert store.get_tool_call("call_1").status == "answered"
    store.append(cid, [{"role": "tool", "tool_call_id": "call_2", "content": "late"}])
    assert store.get_tool_call("call_2").result == "late" and store.info(cid).message_count == 6
    assert store.truncate(cid, 3) == 3
    with pytest.raises(ToolCallNotFoundError):
        store.get_tool_call("call_2")
    assert store.load(cid)[1:] == msgs[:2] and count_rows(store, "blobs", cid) == 3  # image, audio, pdf
    assert store.truncate(cid, 99) == 0
    assert store.truncate(cid, 0) == 3
    assert store.load(cid) == [] and count_rows(store, "blobs", cid) == 0
    store.append(cid, tool_turn(1))  # its call id is free again
    assert store.get_tool_call("call_1").status == "answered"


def test_truncate_of_a_missing_conversation(store):
    with pytest.raises(ConversationNotFoundError):
        store.truncate("0193f0c2-0000-7000-8000-000000000000", 0)


def test_pop_and_replace(store):
    msgs = chat(8)
    cid = store.save(msgs)
    assert store.pop(cid, 3) == msgs[5:] and store.load(cid) == msgs[:5]
    assert store.pop(cid, 0) == [] and store.info(cid).message_count == 5
    store.replace(cid, msgs[2:])
    assert store.load(cid) == msgs[2:]
    with pytest.raises(DuplicateToolCallError):
        store.replace(cid, tool_turn(1) + tool_turn(1))
    assert store.load(cid) == msgs[2:]  # all or nothing
    assert store.pop(cid, 99) == msgs[2:] and store.load(cid) == []


TURN = [  # a user item, then one model turn: its reasoning and its answer (one stored message)
    {"role": "user", "content": "hi", "type": "message"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "hello", "annotations": []}]},
]


def test_pop_item_takes_one_element_of_a_turn_atomically(store, monkeypatch):
    cid = store.save(TURN, format="openai-responses")
    assert store.info(cid).message_count == 2  # the turn is one message
    transactions: list[object] = []
    begin = store._writer.transaction  # SQLite's kept writer commits on the driver: no SQLAlchemy event

    def counted() -> object:
        transactions.append(None)
        return begin()

    monkeypatch.setattr(store._writer, "transaction", counted)
    assert store.pop_item(cid, format="openai-responses") == TURN[2]
    monkeypatch.undo()
    assert len(transactions) == 1  # one transaction: the turn's reasoning went back inside it
    assert store.load(cid, format="openai-responses") == TURN[:2]
    store.append(cid, [{"role": "assistant", "content": [{"kind": "usage", "usage": {"input_tokens": 3}}]}],
                 format="canonical")  # gives no Responses item: popped on the way
    assert store.pop_item(cid, format="openai-responses") == TURN[1]
    assert store.pop_item(cid, format="openai-responses") == TURN[0]
    assert store.pop_item(cid, format="openai-responses") is None and store.info(cid).message_count == 0
    with pytest.raises(InputError, match="one object"):
        store.pop_item(store.save(chat(2)), format="anthropic")
