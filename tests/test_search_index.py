"""The search index is brought up to date by the search that needs it (revision 0009): a write
only notes where the index stops; a search sees everything written before it began, and
nothing a write took away, whatever was indexed when."""

from __future__ import annotations

import json
import threading

import sqlalchemy as sa

from store import ConversationStore, fulltext, search as search_module
from store.db import downgrade, upgrade

from .samples import OPENAI_CHAT, chat
from .test_async import run as run_async
from .test_cli import run as run_cli


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _found(store: ConversationStore, word: str, **filters) -> list[tuple[str, int]]:
    return sorted((h.conversation_id, h.seq) for h in store.search(word, limit=None, **filters))


def _search_rows(store: ConversationStore, cid: str) -> int:
    with store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(fulltext.search_t)
                            .where(fulltext.search_t.c.conversation_id == cid)).scalar()


def test_a_write_indexes_nothing_and_the_next_search_indexes_it(store):
    cid = store.save(OPENAI_CHAT)
    assert store.index_pending() == 1 and _search_rows(store, cid) == 0
    assert _found(store, "Kyoto")
    assert store.index_pending() == 0 and _search_rows(store, cid) > 0
    store.append(cid, [_user("a trip to Zanzibar")])
    assert store.index_pending() == 1
    assert _found(store, "Zanzibar") == [(cid, len(OPENAI_CHAT))]
    assert store.index_pending() == 0


def test_removing_messages_the_index_holds_in_part(store):
    cid = store.save(chat(6))
    assert _found(store, "question") and store.index_pending() == 0
    store.append(cid, [_user("Zanzibar"), _user("Quixotic")])  # not indexed yet, from seq 6
    store.truncate(cid, 7)  # one of them goes before any search saw it
    assert _found(store, "Zanzibar") == [(cid, 6)] and _found(store, "Quixotic") == []
    store.append(cid, [_user("Quixotic")])
    store.truncate(cid, 3)  # indexed and not yet indexed messages go together
    assert _found(store, "Zanzibar") == [] and _found(store, "Quixotic") == []
    store.append(cid, [_user("Quixotic")])
    store.pop(cid, 1)
    store.append(cid, [_user("Zanzibar")])
    assert _found(store, "Zanzibar") == [(cid, 3)] and _found(store, "Quixotic") == []
    store.replace(cid, [_user("Quixotic")])
    assert _found(store, "Quixotic") == [(cid, 0)] and _found(store, "question") == []
    if store.engine.dialect.name == "sqlite":  # every FTS5 entry has its row, every row its entry
        with store.engine.connect() as conn:
            entries = conn.exec_driver_sql("SELECT count(*) FROM search_fts_docsize").scalar()
            rows = conn.exec_driver_sql("SELECT count(*) FROM search").scalar()
        assert entries == rows


def test_a_fork_indexes_its_own_messages_and_finds_its_parents(store):
    parent = store.save([_user("Zanzibar spice"), _user("Quixotic plan")])
    fork = store.fork(parent, at=1)
    store.append(fork, [_user("Zanzibar ferry")])
    store.append(parent, [_user("Zanzibar beach")])
    assert _found(store, "Zanzibar", conversation_id=fork) == [(fork, 0), (fork, 1)]
    assert _found(store, "Zanzibar", conversation_id=parent) == [(parent, 0), (parent, 2)]
    assert _found(store, "Quixotic", conversation_id=fork) == []


def test_a_deleted_conversation_leaves_the_index_whether_indexed_or_not(store):
    indexed = store.save([_user("Zanzibar one")])
    assert _found(store, "Zanzibar") == [(indexed, 0)]
    pending = store.save([_user("Zanzibar two")])
    store.delete(indexed)
    store.delete(pending)
    assert _found(store, "Zanzibar") == [] and store.index_pending() == 0


def test_index_brings_everything_up_to_date_in_batches(store, monkeypatch):
    monkeypatch.setattr(fulltext, "BATCH", 2)
    monkeypatch.setattr(search_module, "BATCH", 2)
    ids = [store.save([_user(f"Zanzibar {i}")]) for i in range(5)]
    seen: list[tuple[int, int]] = []
    assert store.index(progress=lambda done, total: seen.append((done, total))) == 5
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert store.index_pending() == 0 and store.index() == 0
    assert _found(store, "Zanzibar") == sorted((cid, 0) for cid in ids)


def test_the_async_store_indexes_before_it_searches(database_url, namespace):
    async def scenario(store):
        cid = await store.save([_user("Zanzibar")])
        assert await store.index_pending() == 1
        hits = await store.search("Zanzibar")
        await store.append(cid, [_user("Quixotic")])
        assert await store.index() == 1
        return cid, [(h.conversation_id, h.seq) for h in hits], await store.search("Quixotic")

    cid, hits, later = run_async(scenario, database_url, namespace)
    assert hits == [(cid, 0)] and [(h.conversation_id, h.seq) for h in later] == [(cid, 1)]


def test_concurrent_searches_index_once(database_url, namespace):
    with ConversationStore(database_url, namespace=namespace) as store:
        ids = [store.save(chat(8)) for _ in range(6)]
    results: list[object] = []

    def search() -> None:
        try:
            with ConversationStore(database_url, namespace=namespace) as mine:
                results.append(_found(mine, "question"))
        except Exception as exc:  # reported below, with the others' results
            results.append(exc)

    threads = [threading.Thread(target=search) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sorted((cid, seq) for cid in ids for seq in (0, 4))
    assert results == [expected] * 4


def test_cli_index(tmp_path, database_url):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    assert run_cli("import", str(source), db=database_url).returncode == 0
    result = run_cli("index", db=database_url)
    assert result.returncode == 0 and "indexed" in result.stdout, result.stderr
    result = run_cli("index", db=database_url)
    assert result.returncode == 0 and "indexed 0 conversation(s)" in result.stdout


def test_a_downgrade_indexes_what_was_pending(empty_database_url, namespace):
    """Revision 0008 indexed on every write: going back to it indexes what no search did yet."""
    with ConversationStore(empty_database_url, namespace=namespace) as store:
        first = store.save(OPENAI_CHAT)
        before = _found(store, "Kyoto")
        second = store.save(OPENAI_CHAT)  # never searched
        downgrade(store.engine, "0008")
        upgrade(store.engine, "head")
        after = _found(store, "Kyoto")
        assert after == sorted(before + [(second, seq) for cid, seq in before if cid == first])
        assert store.index_pending() == 0


def test_an_append_notes_its_first_message_on_mysql_too(store):
    """MySQL assigns an UPDATE's values left to right: the reservation must read the count
    before it moves it."""
    cid = store.save([_user("one")])
    store.search("one")
    store.append(cid, [_user("Zanzibar"), _user("Quixotic")])
    with store.engine.connect() as conn:
        index_from = conn.execute(sa.select(fulltext.conversations.c.index_from)
                                  .where(fulltext.conversations.c.id == cid)).scalar()
    assert index_from == 1
