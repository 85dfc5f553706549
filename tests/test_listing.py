"""Tags, update and list_conversations' filters and keyset pages, on every backend."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone

import pytest

from store import AsyncConversationStore
from store.errors import ConversationNotFoundError, InputError

from .samples import chat
from .test_async import run as run_async

HI = [{"role": "user", "content": "hi"}]


def _ids(page) -> list[str]:
    return [c.id for c in page]


def test_tags_and_fields_at_save_and_later(store):
    expiry = datetime(2031, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    cid = store.save(HI, title="t", metadata={"user": "u1"}, tags=["b", "a", "b"], expires_at=expiry)
    info = store.info(cid)
    assert (info.title, info.metadata, info.tags, info.expires_at) == ("t", {"user": "u1"}, ["a", "b"], expiry)
    before = info.updated_at
    changed = store.update(cid, tags=["café", "TAG"], metadata={"user": "u2"})
    assert (changed.title, changed.metadata, changed.tags) == ("t", {"user": "u2"}, ["TAG", "café"])
    assert changed.updated_at >= before and changed.expires_at == expiry
    cleared = store.update(cid, title=None, tags=None, expires_at=None, metadata=None)
    assert (cleared.title, cleared.tags, cleared.expires_at, cleared.metadata) == (None, [], None, {})
    assert store.load(cid) == HI  # messages untouched
    with pytest.raises(ConversationNotFoundError):
        store.update("0190a0a0-0000-7000-8000-000000000000", title="x")
    for bad in ("one-string", [""], [1], ["x" * 256], [f"t{i}" for i in range(65)]):
        with pytest.raises(InputError):
            store.update(cid, tags=bad)
    with pytest.raises(InputError):
        store.save(HI, expires_at="tomorrow")
    assert store.info(cid).tags == []  # a refused update changed nothing


def test_filters(store):
    a = store.save(HI, tags=["prod", "eu"], metadata={"user": "u1", "n": 1, "ok": True}, format="openai")
    b = store.save(chat(4), tags=["prod"], metadata={"user": "u2", "n": "1", "ok": False})
    c = store.save(HI, format="anthropic" if False else "openai", metadata={"user": "u1"})
    k = store.conversation_for("session-9")
    assert set(_ids(store.list_conversations())) == {a, b, c, k}
    assert _ids(store.list_conversations(tags=["prod"])) == [b, a]  # newest first
    assert _ids(store.list_conversations(tags=["prod", "eu"])) == [a]
    assert _ids(store.list_conversations(tags=["nope"])) == []
    assert set(_ids(store.list_conversations(metadata={"user": "u1"}))) == {a, c}
    assert _ids(store.list_conversations(metadata={"n": 1})) == [a]  # 1 is not "1"
    assert _ids(store.list_conversations(metadata={"n": "1"})) == [b]
    assert _ids(store.list_conversations(metadata={"ok": True})) == [a]  # true is not 1
    assert _ids(store.list_conversations(metadata={"ok": False, "user": "u2"})) == [b]
    assert _ids(store.list_conversations(key="session-9")) == [k]
    assert k not in _ids(store.list_conversations(source_format="openai"))
    store.append(a, HI)  # a is now the most recently written to
    assert _ids(store.list_conversations(order_by="updated_at", limit=1)) == [a]
    assert _ids(store.list_conversations(order_by="created_at", descending=False, limit=1)) == [a]
    now = datetime.now(timezone.utc)
    assert _ids(store.list_conversations(created_after=now)) == []
    assert set(_ids(store.list_conversations(created_before=now))) == {a, b, c, k}
    assert _ids(store.list_conversations(updated_after=now - timedelta(seconds=5), tags=["eu"])) == [a]
    assert store.list_conversations(limit=0) == []
    for bad in ({"metadata": {"n": 1.5}}, {"metadata": {"": "x"}}, {"order_by": "title"}, {"limit": -1},
                {"cursor": "garbage"}, {"created_after": "yesterday"}):
        with pytest.raises(InputError):
            store.list_conversations(**bad)


def test_pages_return_every_conversation_once_while_others_are_written(store):
    ids = [store.save(HI, tags=["batch"]) for _ in range(60)]
    stop = threading.Event()

    def writer() -> None:  # newer conversations keep arriving: a keyset page never shifts
        while not stop.is_set():
            store.save(HI, tags=["batch"])

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for order in ("created_at", "updated_at"):
            for descending in (True, False):
                seen, cursor = [], None
                while True:
                    page = store.list_conversations(tags=["batch"], order_by=order, descending=descending,
                                                    limit=7, cursor=cursor)
                    seen += _ids(page)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                assert len(seen) == len(set(seen)) and set(ids) <= set(seen)
                if descending is False:
                    assert seen[:60] == ids  # oldest first: the ones that existed, in order
        with pytest.raises(InputError):  # a cursor belongs to its order
            store.list_conversations(tags=["batch"], limit=7, cursor=store.list_conversations(
                tags=["batch"], limit=7, order_by="updated_at").next_cursor)
    finally:
        stop.set()
        thread.join()


def test_an_unlimited_listing_reads_tags_in_chunks(store, monkeypatch):
    """A page without a limit may hold more conversations than a statement takes parameters."""
    from store import listing

    monkeypatch.setattr(listing, "TAGS_CHUNK", 2)
    ids = [store.save(HI, tags=[f"t{i}", "chunked"]) for i in range(5)]
    page = store.list_conversations(tags=["chunked"], descending=False)
    assert [(c.id, c.tags) for c in page] == [(cid, ["chunked", f"t{i}"]) for i, cid in enumerate(ids)]


def test_deleting_removes_tags_and_prune_takes_expired_ones(store):
    soon = store.save(HI, tags=["x"], expires_at=datetime.now(timezone.utc) - timedelta(seconds=1))
    later = store.save(HI, tags=["x"], expires_at=datetime.now(timezone.utc) + timedelta(days=1))
    never = store.save(HI, tags=["x"])
    report = store.prune()  # no age: only what has expired
    assert (report.conversations, report.cutoff) == (1, None)
    assert set(_ids(store.list_conversations(tags=["x"]))) == {later, never}
    with pytest.raises(ConversationNotFoundError):
        store.info(soon)
    store.delete(later)
    assert _ids(store.list_conversations(tags=["x"])) == [never]


def test_async_listing(database_url, namespace):
    async def test(s: AsyncConversationStore):
        a = await s.save(HI, tags=["t"], metadata={"user": "u"})
        await s.save(HI)
        updated = await s.update(a, title="renamed")
        page = await s.list_conversations(tags=["t"], metadata={"user": "u"}, limit=5)
        return a, updated.title, _ids(page), (await s.info(a)).tags

    a, title, page, tags = run_async(test, database_url, namespace)
    assert (title, page, tags) == ("renamed", [a], ["t"])


def test_conversation_for_takes_tags_when_it_creates(store, database_url, namespace):
    cid = store.conversation_for("agent-session", tags=["memory"], metadata={"user": "u1"})
    assert store.conversation_for("agent-session", tags=["other"]) == cid  # found: nothing changes
    assert store.info(cid).tags == ["memory"]
    assert [c.id for c in store.list_conversations(tags=["memory"], metadata={"user": "u1"})] == [cid]

    async def test(s: AsyncConversationStore) -> list[str]:
        return (await s.info(await s.conversation_for("async-session", tags=["a"]))).tags

    assert run_async(test, database_url, namespace) == ["a"]


def test_cli_list_filters_pages_and_import_tags(tmp_path, database_url):
    from .test_cli import run as run_cli

    ns = ("--namespace", "cli listing")
    source = tmp_path / "hi.json"
    source.write_text('[{"role": "user", "content": "hi"}]')
    ids = [run_cli(*ns, "import", str(source), "--tag", "cli", "--tag", f"n{i}", db=database_url).stdout.strip()
           for i in range(3)]
    rows = run_cli(*ns, "list", "--tag", "cli", "--tag", "n1", db=database_url).stdout.splitlines()
    assert [r.split("\t")[0] for r in rows[1:]] == [ids[1]] and rows[1].split("\t")[-1] == "cli, n1"
    first = run_cli(*ns, "list", "--tag", "cli", "--oldest-first", "--limit", "2", "--json", db=database_url)
    assert [c["id"] for c in json.loads(first.stdout)] == ids[:2] and "next page: --cursor" in first.stderr
    cursor = first.stderr.split("--cursor ")[1].split()[0]
    rest = run_cli(*ns, "list", "--tag", "cli", "--oldest-first", "--limit", "2", "--cursor", cursor, "--json",
                   db=database_url)
    assert [c["id"] for c in json.loads(rest.stdout)] == ids[2:] and "next page" not in rest.stderr
    assert run_cli(*ns, "list", "--meta", "user=u1", "--json", db=database_url).stdout.strip() == "[]"
    for bad in (["--meta", "nokey"], ["--sort", "title"], ["--created-after", "soon"]):
        result = run_cli(*ns, "list", *bad, db=database_url)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert run_cli(*ns, "prune", "--older-than", "0s", db=database_url).returncode == 0
