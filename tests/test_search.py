"""Full-text search on every backend, sync, async and from the CLI: it finds what every
format's adapter wrote, and stops finding it once a write takes it away."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import AsyncConversationStore, ConversationStore, SearchHit
from store.db import downgrade, upgrade
from store.demo import samples
from store.errors import InputError

from .samples import OPENAI_CHAT, chat
from .test_async import run as run_async
from .test_cli import run as run_cli

SAMPLES = samples()


def _word(messages: list) -> str:
    """A distinctive word of the first text block: what a person would search the conversation by."""
    for message in messages:
        for block in message.content:
            if block.kind == "text" and (words := [w for w in re.findall(r"[A-Za-z]{5,}", block.text)]):
                return max(words, key=len)
    raise AssertionError("no text")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_formats_text_and_tool_calls_are_found(store, name):
    cid = store.save(SAMPLES[name], format=name)
    canonical = store.load_messages(cid)
    hits = store.search(_word(canonical), conversation_id=cid)
    assert hits and all(h.conversation_id == cid for h in hits)
    seq = hits[0].seq
    assert canonical[seq].content[hits[0].position].kind == hits[0].kind
    calls = [b for m in canonical for b in m.content if b.kind == "tool_call"]
    for call in calls[:1]:
        found = store.search(f'"{call.name}"', conversation_id=cid, kind="tool_call")
        assert any(canonical[h.seq].content[h.position].call_id == call.call_id for h in found), name


def test_hits_say_where_and_why(store):
    store.save(OPENAI_CHAT, title="trip", metadata={"user": "u1"})
    hits = store.search("Kyoto")
    assert {(h.seq, h.kind) for h in hits} >= {(2, "text"), (3, "tool_call"), (6, "text")}
    hit = next(h for h in hits if h.kind == "text" and h.seq == 2)
    assert isinstance(hit, SearchHit) and (hit.role, hit.title, hit.position) == ("user", "trip", 0)
    assert any(hit.snippet[a:b].lower() == "kyoto" for a, b in hit.highlights)
    assert [h.seq for h in store.search("sunny", role="tool")] == [4]  # a tool result's output
    assert [h.kind for h in store.search("Paris", kind="tool_call")] == ["tool_call"]  # its arguments
    assert store.search("Kyoto", metadata={"user": "u1"}) and not store.search("Kyoto", metadata={"user": "u2"})
    assert [h.seq for h in store.search('"book me a flight"')] == [7]
    assert [h.seq for h in store.search("flight* -cannot")] == [7]
    assert [h.seq for h in store.search("flight* -thanks")] == [8]
    assert not store.search("flight* -book")
    assert store.search("Kyo*") and store.search("kyoto") == store.search("KYOTO")


def test_search_is_scoped_to_the_namespace_and_pages(store, database_url):
    with ConversationStore(database_url, namespace=store.namespace + "-other") as other:
        other.save([{"role": "user", "content": "needle in another tenant"}])
    ids = [store.save([{"role": "user", "content": f"needle number {i}"}]) for i in range(5)]
    seen, cursor = [], None
    while True:
        page = store.search("needle", limit=2, cursor=cursor)
        seen += [h.conversation_id for h in page]
        if (cursor := page.next_cursor) is None:
            break
    assert sorted(seen) == sorted(ids)  # each once, none of the other tenant's
    assert store.search("needle", limit=0) == [] and len(store.search("needle", limit=None)) == 5
    with pytest.raises(InputError, match="query"):
        store.search("other", cursor=store.search("needle", limit=1).next_cursor)


@pytest.mark.parametrize("query", ['"', "AND", "NOT x", "*", "body:x", "'; DROP TABLE search; --", "(", "a OR",
                                   "x -", 'near(a b)', "^x", "@@", "-y x", "日本語"])
def test_no_query_is_a_syntax_error(store, query):
    store.save([{"role": "user", "content": "x y 日本語 near a b body"}])
    try:
        store.search(query)
    except InputError as exc:
        assert "at least one word" in str(exc)


QUERY_CHARS = st.sampled_from(list('"*-()^:+~<>@!&|\'.,; _') + ["x", "ab", "weather", "é", "日本", "\x00", "\t"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.lists(QUERY_CHARS, max_size=12).map("".join))
def test_any_query_finds_or_says_why(store, query):
    """Whatever a person types, every engine answers with hits or a one-line InputError, never
    a syntax error of its own query language."""
    try:
        hits = store.search(query, limit=5)
    except InputError as exc:
        assert "at least one word" in str(exc) or "query" in str(exc)
    else:
        assert isinstance(hits, list)


def test_bad_arguments_are_input_errors(store):
    for kwargs in ({"role": "robot"}, {"kind": "image"}, {"limit": -1}, {"cursor": "garbage"}):
        with pytest.raises(InputError):
            store.search("x", **kwargs)
    with pytest.raises(InputError):
        store.search(42)  # type: ignore[arg-type]
    assert store.search("x", conversation_id="not an id") == []


def test_every_write_keeps_the_index_in_step(store):
    cid = store.save(chat(6) + [{"role": "user", "content": "zebra crossing"}])
    assert store.search("zebra")
    store.pop(cid)
    assert not store.search("zebra")
    store.append(cid, [{"role": "user", "content": "giraffe neck"}])
    assert store.search("giraffe")
    store.replace(cid, [{"role": "user", "content": "okapi"}])
    assert not store.search("giraffe") and store.search("okapi")
    store.truncate(cid, 0)
    assert not store.search("okapi")
    store.append(cid, [{"role": "user", "content": "lemur"}])
    store.delete(cid)
    assert not store.search("lemur")
    pruned = store.save([{"role": "user", "content": "narwhal"}])
    assert store.prune(timedelta(0)).conversations >= 1 and not store.search("narwhal")
    assert pruned not in {c.id for c in store.list_conversations()}


def test_a_failed_write_leaves_no_search_entry(store):
    cid = store.save([{"role": "user", "content": "first"}])
    bad = [{"role": "user", "content": "quokka"}, {"role": "nobody", "content": "x"}]
    with pytest.raises(Exception):
        store.append(cid, bad)
    assert not store.search("quokka")


def test_async_search(database_url, namespace):
    async def test(store: AsyncConversationStore):
        cid = await store.save([{"role": "user", "content": "axolotl"}])
        hits = await store.search("axolotl")
        return cid, hits

    cid, hits = run_async(test, database_url, namespace)
    assert [h.conversation_id for h in hits] == [cid]


def test_upgrade_indexes_what_was_stored(empty_database_url, namespace):
    with ConversationStore(empty_database_url, namespace=namespace) as store:
        cid = store.save(OPENAI_CHAT)
        loaded = store.load(cid)
        before = [(h.seq, h.position, h.kind) for h in store.search("Kyoto", limit=None)]
        downgrade(store.engine, "0005")
        upgrade(store.engine, "head")
        after = [(h.seq, h.position, h.kind) for h in store.search("Kyoto", limit=None)]
        assert sorted(after) == sorted(before) and len(before) >= 3
        assert store.load(cid) == loaded


def test_cli_search(tmp_path, database_url):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(OPENAI_CHAT))
    assert run_cli("import", str(source), db=database_url).returncode == 0
    result = run_cli("search", "Kyoto", "--kind", "tool_call", "--json", db=database_url)
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits and {h["kind"] for h in hits} == {"tool_call"}
    result = run_cli("search", "Kyoto", "--limit", "1", db=database_url)
    assert result.returncode == 0 and "Kyoto" in result.stdout and "next page: --cursor" in result.stderr
    result = run_cli("search", "--", "-", db=database_url)
    assert result.returncode == 1 and "at least one word" in result.stderr and "Traceback" not in result.stderr


def test_the_postgresql_search_language_is_chosen_at_upgrade(empty_database_url, backend, namespace, monkeypatch):
    if backend != "postgresql":
        pytest.skip("PostgreSQL's text search configurations")
    with ConversationStore(empty_database_url, namespace=namespace) as store:
        store.save([{"role": "user", "content": "running late"}])
        assert store.search("run")  # english: stemmed
        downgrade(store.engine, "0005")
        monkeypatch.setenv("CONVSTORE_SEARCH_LANGUAGE", "simple")
        upgrade(store.engine, "head")
        assert not store.search("run") and store.search("running")  # simple: words as written
        downgrade(store.engine, "0005")
        monkeypatch.setenv("CONVSTORE_SEARCH_LANGUAGE", "english'); DROP TABLE messages; --")
        with pytest.raises(Exception, match="CONVSTORE_SEARCH_LANGUAGE"):
            upgrade(store.engine, "head")


def test_every_engine_indexes_the_same_text_as_revision_0006(store, backend):
    """SQLite removes an entry by recomputing its text, and PostgreSQL's index holds an
    expression: the store's text must stay the revision's, character for character."""
    import importlib.util
    from pathlib import Path

    from store import fulltext

    for name in ("0006_search.py", "0009_search_indexed_when_searched.py"):  # 0009 indexes on a downgrade
        path = Path(__file__).resolve().parents[1] / "migrations" / "versions" / name
        spec = importlib.util.spec_from_file_location(f"revision_{name[:4]}", path)
        revision = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(revision)
        # Revision 0011 adds one term, NULL in every row an earlier revision wrote; revision 0013 another,
        # NULL in every message row that has block rows; revision 0017 moves a call's text (NULL in every
        # call row an earlier revision wrote) to its arguments' place.
        now = {name: sql.replace(fulltext.RAW_TERM[name], "").replace(fulltext.INLINE_TERM[name], "")
                   .replace(fulltext.NAME_TERM[name], "")
               .replace(fulltext.ARGUMENTS_TERM, "").replace(fulltext.TEXT_TERM, "blocks.text")
               for name, sql in fulltext.TEXT_SQL.items()}
        assert revision.TEXT_SQL == now and revision.SEARCHED == fulltext.SEARCHED
    if backend == "sqlite":  # every entry goes with its block: one FTS5 document per search row
        cid = store.save(OPENAI_CHAT)
        store.search("Kyoto")
        store.pop(cid, 3)
        other = store.save(chat(8))
        store.search("question")
        store.replace(other, chat(2))
        with store.engine.connect() as conn:
            documents = conn.exec_driver_sql("SELECT count(*) FROM search_fts_docsize").scalar()
            rows = conn.exec_driver_sql("SELECT count(*) FROM search").scalar()
        assert documents == rows


def test_postgresql_matches_by_the_expression_its_index_holds(store, backend):
    """The GIN index serves only a condition on the very expression it holds: a drift between
    revision 0006 and the store's query would turn every search into a scan of the blocks."""
    if backend != "postgresql":
        pytest.skip("PostgreSQL's planner")
    import sqlalchemy as sa

    from store import search as search_module

    store.save(OPENAI_CHAT)
    with store.engine.connect() as conn:
        engine = search_module._engine(conn, search_module.parse("Kyoto"))
        conn.exec_driver_sql("SET enable_seqscan = off")
        query = sa.select(engine.keyed.c.seq).select_from(engine.source).where(*engine.where)
        compiled = query.compile(conn, compile_kwargs={"literal_binds": True})
        plan = "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {compiled}"))
    assert "ix_search_body" in plan, plan


def test_a_token_of_joined_words_is_found_on_every_backend(store):
    """``node.js``, ``main.py``, an e-mail address, a path: PostgreSQL's parser indexes each whole,
    and a query of its words in a row found nothing there (SQLite and MariaDB split them)."""
    cid = store.save([{"role": "user", "content": "I use node.js and main.py, mail bob@example.com, see /usr/local/bin"}])
    for query in ("node.js", "main.py", "bob@example.com", "/usr/local/bin", '"node.js"', "node.js use"):
        assert [hit.conversation_id for hit in store.search(query)] == [cid], query
    assert store.search("-node.js use") == []
