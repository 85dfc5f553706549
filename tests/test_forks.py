"""Forks on every backend, sync, async and from the CLI: a fork shares its parent's first
messages without copying them, and nothing it shares can be taken from it."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore
from store import streaming
from store.errors import AmbiguousToolCallError, ConversationNotFoundError, InputError, SharedHistoryError
from store.schema import ConversationRow, MessageRow

from .samples import OPENAI_CHAT, tool_turn
from .test_async import run as run_async
from .test_cli import run as run_cli


c = ConversationRow.__table__


def talk(n: int) -> list[dict]:
    """n plain messages, users and assistants taking turns."""
    return [{"role": ("user", "assistant")[i % 2], "content": f"turn {i}"} for i in range(n)]


def _own_rows(store: ConversationStore, cid: str) -> int:
    m = MessageRow.__table__
    with store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).where(m.c.conversation_id == cid)).scalar_one()


def test_a_fork_shares_the_prefix_without_copying_it(store):
    parent = store.save(OPENAI_CHAT, title="trip", tags=["t"], metadata={"user": "u1"})
    whole = store.load(parent)
    fork = store.fork(parent, 3)
    assert store.load(fork) == whole[:3] and _own_rows(store, fork) == 0
    store.append(fork, [{"role": "user", "content": "only in the fork"}])
    store.append(parent, [{"role": "user", "content": "only in the parent"}])
    assert store.load(fork) == whole[:3] + [{"role": "user", "content": "only in the fork"}]
    assert store.load(parent) == whole + [{"role": "user", "content": "only in the parent"}]
    info = store.info(fork)
    assert (info.parent_id, info.fork_seq, info.message_count) == (parent, 3, 4)
    assert (info.title, info.tags, info.metadata) == ("trip", ["t"], {"user": "u1"})  # the parent's, unless given
    assert [i.id for i in store.lineage(fork)] == [parent, fork]
    assert store.info(store.fork(parent, 0, title="fresh", tags=[])).title == "fresh"
    assert store.load(store.fork(parent, allow_pending=True)) == store.load(parent)  # at: all of it by default


def test_a_fork_of_a_fork_loads_its_prefix_and_finds_its_calls(store):
    root = store.save(talk(2) + tool_turn(1))  # call_1 at 2, its result at 3
    child = store.fork(root, 4)
    store.append(child, tool_turn(2))  # call_2 at 4, result at 5
    grandchild = store.fork(child, 6)
    store.append(grandchild, tool_turn(3) + [{"role": "user", "content": "mine"}])
    expected = talk(2) + tool_turn(1) + tool_turn(2) + tool_turn(3) + [{"role": "user", "content": "mine"}]
    assert store.load(grandchild) == expected
    assert [i.id for i in store.lineage(grandchild)] == [root, child, grandchild]
    assert _own_rows(store, grandchild) == 3
    for call_id, seq in (("call_1", 2), ("call_2", 4), ("call_3", 6)):
        record = store.get_tool_call(call_id, conversation_id=grandchild)
        assert (record.status, record.result, record.call_position) == ("answered", f"result {call_id[-1]}", seq)
        assert record.arguments == {"i": int(call_id[-1])} and record.conversation_id == grandchild
    assert {r.call_id for r in store.find_tool_calls(conversation_id=grandchild)} == {"call_1", "call_2", "call_3"}
    with pytest.raises(AmbiguousToolCallError):  # in three conversations' histories: say which
        store.get_tool_call("call_1")
    assert store.load(grandchild, last=3) == expected[-3:]
    assert store.load(grandchild, last=4) == expected[-5:]  # widened to keep call_2's result with its call
    assert store.load(child, format="anthropic") == store.load(
        store.save(talk(2) + tool_turn(1) + tool_turn(2)), format="anthropic")


def test_exports_stream_across_the_shared_prefix(store, monkeypatch):
    monkeypatch.setattr(streaming, "CHUNK", 3)
    root = store.save(talk(4) + tool_turn(1) + talk(3))
    fork = store.fork(root, 7)
    store.append(fork, tool_turn(2) + talk(4))
    for target in ("openai", "autogen"):
        assert list(store.export(fork, format=target)) == store.load(fork, format=target)


def test_a_fork_point_inside_a_pending_call_is_refused_unless_asked_for(store):
    root = store.save(talk(2) + tool_turn(1))
    with pytest.raises(InputError, match="pending tool calls \\(call_1\\)"):
        store.fork(root, 3)  # after the call, before its result
    fork = store.fork(root, 3, allow_pending=True)
    assert store.get_tool_call("call_1", conversation_id=fork).status == "pending"
    store.append(fork, [{"role": "tool", "tool_call_id": "call_1", "content": "another result"}])
    assert store.get_tool_call("call_1", conversation_id=fork).result == "another result"
    assert store.get_tool_call("call_1", conversation_id=root).result == "result 1"
    assert store.load(fork, last=1) == store.load(fork)[-2:]  # the window keeps the shared call
    for bad in (-1, 5, "2", 1.0):
        with pytest.raises(InputError):
            store.fork(root, bad)


def test_what_a_fork_shares_cannot_be_taken_away(store):
    root = store.save(talk(6))
    fork = store.fork(root, 4)
    with pytest.raises(SharedHistoryError, match=fork):
        store.delete(root)
    for write in (lambda: store.truncate(root, 3), lambda: store.pop(root, 3), lambda: store.replace(root, talk(1))):
        with pytest.raises(SharedHistoryError):
            write()
    assert store.load(root) == talk(6) and store.load(fork) == talk(4)
    assert store.pop(root, 2) == talk(6)[4:] and store.load(fork) == talk(4)  # above the fork point: fine
    store.truncate(fork, 2)  # into its own prefix: the fork shares less, the parent keeps all
    assert store.info(fork).fork_seq == 2 and store.load(fork) == talk(2) and store.load(root) == talk(4)
    store.replace(fork, talk(1))  # now it holds its own history, and shares nothing
    store.delete(root)
    assert store.load(fork) == talk(1)
    with pytest.raises(ConversationNotFoundError):
        store.load(root)


def test_prune_takes_forks_before_their_parent_and_keeps_what_is_shared(store):
    root = store.save(talk(4))
    store.fork(root, 2)
    root2 = store.save(talk(4))
    recent_fork = store.fork(root2, 3)
    store.append(recent_fork, [{"role": "user", "content": "new"}])
    cutoff_report = store.prune(timedelta(0), dry_run=True)
    assert cutoff_report.conversations == 2  # the old fork and recent fork; parents wait for them
    report = store.prune(timedelta(0))
    assert report.conversations == 4 and report.messages == 4 + 0 + 4 + 1  # own messages only
    assert store.list_conversations() == []
    root3 = store.save(talk(4))
    keep = store.fork(root3, 2)
    store.append(keep, [{"role": "user", "content": "x"}])
    with store.engine.begin() as conn:  # the parent is old, its fork is not
        conn.execute(c.update().where(c.c.id == root3).values(updated_at=datetime(2000, 1, 1)))
    assert store.prune(timedelta(days=1)).conversations == 0
    assert store.load(keep) == talk(2) + [{"role": "user", "content": "x"}]


def test_forks_stay_in_their_namespace(store, database_url):
    root = store.save(talk(2))
    with ConversationStore(database_url, namespace=store.namespace + "-other") as other:
        with pytest.raises(ConversationNotFoundError):
            other.fork(root, 1)
    with pytest.raises(InputError, match="already names"):
        store.fork(root, 1, key="k") and store.fork(root, 1, key="k")


def test_async_fork(database_url, namespace):
    async def test(store: AsyncConversationStore):
        root = await store.save(talk(3))
        fork = await store.fork(root, 2)
        await store.append(fork, [{"role": "user", "content": "async"}])
        return await store.load(fork), [i.id for i in await store.lineage(fork)], root, fork

    loaded, lineage, root, fork = run_async(test, database_url, namespace)
    assert loaded == talk(2) + [{"role": "user", "content": "async"}] and lineage == [root, fork]


def test_cli_fork(database_url, namespace):
    with ConversationStore(database_url, namespace=namespace) as store:
        root = store.save(talk(3))
    result = run_cli("--namespace", namespace, "fork", root, "--at", "2", db=database_url)
    assert result.returncode == 0, result.stderr
    fork = result.stdout.strip()
    with ConversationStore(database_url, namespace=namespace) as store:
        assert store.load(fork) == talk(2) and store.info(fork).parent_id == root
    bad = run_cli("--namespace", namespace, "fork", root, "--at", "9", db=database_url)
    assert bad.returncode == 1 and "at must be" in bad.stderr and "Traceback" not in bad.stderr


def test_a_fork_and_a_truncate_of_its_parent_take_turns(store):
    """Racing: forks at message 8 and truncates of the parent to 5. Whichever wins, no fork ever
    loses what it shares: every fork made loads the parent's first 8 messages."""
    import threading

    root = store.save(talk(10))
    made: list[str] = []
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def forker() -> None:
        start.wait()
        for _ in range(15):
            try:
                made.append(store.fork(root, 8))
            except InputError:  # the parent was truncated first: 8 is past its end
                outcomes.append("fork refused")

    def truncater() -> None:
        start.wait()
        for _ in range(15):
            try:
                store.truncate(root, 5)
                outcomes.append("truncated")
            except SharedHistoryError:
                outcomes.append("truncate refused")

    threads = [threading.Thread(target=forker), threading.Thread(target=truncater)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for fork in made:
        assert store.load(fork) == talk(8)
    truncated = "truncated" in outcomes
    assert truncated != bool(made)  # the first to commit decides: forks, or a shorter parent
    assert len(store.load(root)) == (5 if truncated else 10)


def test_a_search_in_a_fork_finds_what_it_shares(store):
    root = store.save([{"role": "user", "content": "capybara"}, {"role": "assistant", "content": "wombat"},
                       {"role": "user", "content": "platypus"}])
    fork = store.fork(root, 2, title="branch")
    store.append(fork, [{"role": "user", "content": "quetzal"}])
    assert [(h.conversation_id, h.seq, h.title) for h in store.search("capybara", conversation_id=fork)] == \
        [(fork, 0, "branch")]  # in the prefix it shares: part of its history, named as its own
    assert store.search("quetzal", conversation_id=fork) and not store.search("quetzal", conversation_id=root)
    assert not store.search("platypus", conversation_id=fork)  # after the fork point: the parent's alone
    assert [h.conversation_id for h in store.search("capybara")] == [root]  # unscoped: once, where it is
