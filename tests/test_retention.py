"""prune: conversations not written to since a cutoff go whole, in bounded transactions, on every
backend, sync, async and from the CLI; nothing an append acknowledged is lost meanwhile."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from store import AsyncConversationStore, ConversationStore, retention
from store.errors import ConversationNotFoundError, InputError
from store.schema import metadata

from .samples import OPENAI_CHAT, chat
from .test_async import run as run_async
from .test_cli import run as run_cli


def _rows_of(store: ConversationStore, cid: str) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {t.name: conn.execute(sa.select(sa.func.count()).select_from(t).where(
            (t.c.id if t.name == "conversations" else t.c.conversation_id) == cid)).scalar_one()
            for t in metadata.sorted_tables if t.name != "convstore_creating"}


def test_prune_deletes_what_nobody_wrote_to_since_the_cutoff(store, database_url):
    old = [store.save(OPENAI_CHAT, tags=["old"]), store.save(chat(40))]  # OPENAI_CHAT holds an image: a blob
    cutoff = datetime.now(timezone.utc)
    kept = store.save(chat(8))
    store.append(old[1], [{"role": "user", "content": "still here"}])  # written to since: kept
    with ConversationStore(database_url, namespace="another tenant") as other:
        theirs = other.save(chat(4))
    store.search("Kyoto")  # the search rows too
    assert all(n > 0 for n in _rows_of(store, old[0]).values())

    due = store.prune(cutoff, dry_run=True)
    assert (due.conversations, due.messages, due.dry_run) == (1, len(OPENAI_CHAT), True)
    assert due.cutoff == cutoff and store.info(old[0])  # a dry run deletes nothing
    report = store.prune(cutoff)
    assert (report.conversations, report.messages, report.dry_run) == (1, len(OPENAI_CHAT), False)
    assert set(_rows_of(store, old[0]).values()) == {0}  # messages, blocks, links, blobs, tags, the row
    assert {c.id for c in store.list_conversations()} == {old[1], kept}
    assert store.load(kept) == chat(8) and len(store.load(old[1])) == 41
    with ConversationStore(database_url, namespace="another tenant") as other:
        assert other.load(theirs) == chat(4)  # another namespace's are not this store's to prune
        other.delete(theirs)
    assert store.prune(timedelta(days=1)).conversations == 0


def test_prune_goes_in_batches_and_reports_progress(store, monkeypatch):
    monkeypatch.setattr(retention, "BATCH", 3)
    monkeypatch.setattr(retention, "BATCH_MESSAGES", 10)
    ids = [store.save(chat(4)) for _ in range(7)] + [store.save(chat(30))]  # one above the message cap
    batches: list[int] = []
    report = store.prune(timedelta(0), progress=batches.append)
    assert (report.conversations, report.messages) == (8, 7 * 4 + 30) and sum(batches) == 8
    assert max(batches) <= 3 and len(batches) >= 4  # 3 + 3 + 1 + the big one alone (10 messages a batch)
    for cid in ids:
        with pytest.raises(ConversationNotFoundError):
            store.info(cid)


def test_prune_under_concurrent_appends_loses_nothing_acknowledged(store, monkeypatch):
    """The conversation being appended to is the last due (it sorts after the others): either
    the prune locks it first and every later append fails, or an append commits first and
    the conversation stays with every acknowledged message."""
    monkeypatch.setattr(retention, "BATCH", 2)
    others = [store.save(chat(4)) for _ in range(12)]
    busy = store.save(chat(4))
    cutoff = datetime.now(timezone.utc)
    acknowledged, stop = [], threading.Event()

    def appender() -> None:
        for i in range(200):
            if stop.is_set():
                return
            try:
                store.append(busy, [{"role": "user", "content": f"m{i}"}])
            except ConversationNotFoundError:
                return
            acknowledged.append(f"m{i}")

    thread = threading.Thread(target=appender)
    thread.start()
    report = store.prune(cutoff)
    stop.set()
    thread.join()
    assert report.conversations >= len(others)
    try:
        stored = store.load(busy)
    except ConversationNotFoundError:
        assert acknowledged == [] and report.conversations == len(others) + 1
    else:
        assert [m["content"] for m in stored[4:]] == acknowledged and report.conversations == len(others)


def test_bad_ages_are_input_errors(store):
    with pytest.raises(InputError, match="must not be negative"):
        store.prune(timedelta(days=-1))
    with pytest.raises(InputError, match="timedelta or a datetime"):
        store.prune("30d")  # type: ignore[arg-type]


def test_async_prune(database_url, namespace):
    async def test(s: AsyncConversationStore) -> tuple[int, int, int]:
        await s.save(chat(4))
        due = await s.prune(timedelta(0), dry_run=True)
        report = await s.prune(timedelta(0))
        return due.conversations, report.conversations, len(await s.list_conversations())

    assert run_async(test, database_url, namespace) == (1, 1, 0)


def test_cli_prune(database_url):
    ns = ("--namespace", "cli prune")
    with ConversationStore(database_url, namespace="cli prune") as s:
        cid = s.save(chat(4))
    dry = run_cli(*ns, "prune", "--older-than", "0s", "--dry-run", db=database_url)
    assert dry.returncode == 0 and dry.stdout.startswith("would delete 1 conversation (4 messages): expired or not written to since")
    assert run_cli(*ns, "prune", "--older-than", "30d", db=database_url).stdout.startswith("deleted 0 conversations")
    done = run_cli(*ns, "prune", "--older-than", "0s", db=database_url)
    assert done.returncode == 0 and done.stdout.startswith("deleted 1 conversation (4 messages)")
    with ConversationStore(database_url, namespace="cli prune") as s, pytest.raises(ConversationNotFoundError):
        s.info(cid)
    bad = run_cli(*ns, "prune", "--older-than", "soon", db=database_url)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--older-than" in bad.stderr
