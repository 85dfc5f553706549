"""The read-only viewer (convstore serve): its routes, on every backend, with Starlette's
test client. The same pages in a real browser: tests/test_serve_browser.py."""

from __future__ import annotations

import html
from html.parser import HTMLParser
import io as text_io
import json
import re
import sys

import pytest
import sqlalchemy as sa
from rich.console import Console
from starlette.testclient import TestClient

from store import ConversationStore, Message
from store import io as store_io
from store.db import create_engine
from store.demo import samples
from store.errors import DatabaseError, InputError, SchemaOutdatedError
from store.formats import FORMATS, Loss
from store.model import (AudioBlock, CodeBlock, DataBlock, ErrorBlock, FileBlock, ImageBlock, ReasoningBlock,
                         TextBlock, ToolCallBlock, ToolResultBlock)
from store.schema import metadata as schema_metadata
from store.web import command
from store.web.app import create_app
from store.web.data import open_store
from store.web.pages import PAGE_SIZE, page_start
from store.web.present import call_anchor, sha256

from .samples import chat

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"\''
"""Within every column's bound (source_type holds 64 characters); javascript: URLs are tried apart."""
SAMPLES = samples()


@pytest.fixture
def viewer(database_url, namespace):
    with open_store(database_url, namespace) as s:
        yield s


@pytest.fixture
def client(viewer):
    return TestClient(create_app(viewer))


def articles(page: str) -> list[int]:
    return [int(n) for n in re.findall(r'<article class="msg role-\w+" id="m(\d+)"', page)]


def anchors(page: str) -> set[str]:
    return set(re.findall(r' id="([^"]+)"', page))


# --- the list ---------------------------------------------------------------------------


def test_list_shows_counts_and_filters_by_source_format(store, client):
    ids = {name: store.save(SAMPLES[name], format=name, title=f"{name} sample")
           for name in ("openai", "anthropic", "gemini")}
    page = client.get("/").text
    for name, cid in ids.items():
        calls = len(store.find_tool_calls(conversation_id=cid, limit=None))
        info = store.info(cid)
        row = re.search(rf'href="/c/{cid}">{name} sample</a>.*?</tr>', page, re.S).group(0)
        assert re.findall(r'<td class="n">(\d+)</td>', row) == [str(info.message_count), str(calls)]
        assert f"<td>{name}</td>" in row
    filtered = client.get("/?format=anthropic").text
    assert f"/c/{ids['anthropic']}" in filtered
    assert f"/c/{ids['openai']}" not in filtered and f"/c/{ids['gemini']}" not in filtered
    assert "No conversation stored from vercel-ai" in client.get("/?format=vercel-ai").text


def test_list_pages_by_cursor(store, client):
    ids = {store.save(chat(1)) for _ in range(55)}
    first = client.get("/").text
    next_link = html.unescape(re.search(r'<a rel="next" href="([^"]+)"', first).group(1))
    second = client.get(next_link).text
    seen = set(re.findall(r'href="/c/([0-9a-f-]{36})"', first)) | set(re.findall(r'href="/c/([0-9a-f-]{36})"', second))
    assert seen == ids and 'rel="next"' not in second


# --- one conversation -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_conversation_page_of_every_sample(store, client, fmt):
    cid = store.save(SAMPLES[fmt], format=fmt, title=f"{fmt} sample")
    response = client.get(f"/c/{cid}")
    assert response.status_code == 200
    page = response.text
    messages = store.load_messages(cid)
    assert articles(page) == list(range(len(messages)))
    ids = anchors(page)
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                assert call_anchor(block.call_id) in ids and html.escape(block.name) in page
            elif isinstance(block, ToolResultBlock):
                assert call_anchor(block.call_id, "result") in ids
            elif isinstance(block, (ImageBlock, AudioBlock, FileBlock)) and block.data is not None:
                src = re.search(rf'"(/c/{cid}/blob/{sha256(block.data)}[^"]*)"', page).group(1)
                assert client.get(html.unescape(src)).content == block.data
            elif isinstance(block, ReasoningBlock) and block.text:
                assert "<details class=\"block reasoning\"><summary>reasoning" in page
    for record in store.find_tool_calls(conversation_id=cid, limit=None):  # status beside every call
        call = page[page.index(f'id="{call_anchor(record.call_id)}"'):]
        assert f'<span class="status s-{record.status}">' in call[:call.index("arguments")]


def test_result_links_back_to_its_call_and_call_shows_result(store, client):
    cid = store.save(SAMPLES["openai"], format="openai")
    page = client.get(f"/c/{cid}").text
    record = store.find_tool_calls(conversation_id=cid, status="answered")[0]
    result = page[page.index(f'id="{call_anchor(record.call_id, "result")}"'):]
    assert re.search(r'class="to-call" href="([^"]+)"', result).group(1) == f"#{call_anchor(record.call_id)}"
    call = page[page.index(f'id="{call_anchor(record.call_id)}"'):]
    beside = call[call.index('class="beside"'):call.index('class="to-result"')]
    assert html.escape(record.result if isinstance(record.result, str) else record.result[0].text) in beside


def test_blob_route_serves_images_and_never_active_content(store, client):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    page_html = b"<html><script>alert(1)</script></html>"
    cid = store.save([Message(role="user", content=[
        ImageBlock(data=bytes.fromhex("89504e470d0a1a0a") + b"png", media_type="image/png"),
        ImageBlock(data=svg, media_type="image/svg+xml"),
        FileBlock(data=page_html, media_type="text/html", filename="x.html"),
    ])], format="canonical")
    png = client.get(f"/c/{cid}/blob/{sha256(bytes.fromhex('89504e470d0a1a0a') + b'png')}?type=image/png")
    assert png.headers["content-type"] == "image/png" and "content-disposition" not in png.headers
    for payload, claimed in ((svg, "image/svg+xml"), (page_html, "text/html")):
        response = client.get(f"/c/{cid}/blob/{sha256(payload)}?type={claimed}")
        assert response.content == payload
        assert response.headers["content-type"] == "application/octet-stream"
        assert response.headers["content-disposition"].startswith("attachment")
        assert response.headers["x-content-type-options"] == "nosniff"
    assert client.get(f"/c/{cid}/blob/{'0' * 64}").status_code == 404
    assert client.get(f"/c/{cid}/blob/not-a-hash").status_code == 404
    other = store.save(chat(1))  # a payload is served only through its own conversation
    assert client.get(f"/c/{other}/blob/{sha256(svg)}").status_code == 404


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_export_downloads_parse_in_every_format(store, client, fmt):
    cid = store.save(SAMPLES["openai"], format="openai", title="weather")
    response = client.get(f"/c/{cid}/export/{fmt}/download")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == f'attachment; filename="{cid}.{fmt}.json"'
    assert json.loads(response.content) == json.loads(store_io.dumps(store.load(cid, format=fmt)))


def test_list_formats_download_streamed_in_parts(store, client, monkeypatch):
    from store.web import app as web_app

    monkeypatch.setattr(web_app, "EXPORT_CHUNK", 3)  # parts of 3 messages: many of them
    more = [{"role": "user", "content": f"more {i}"} for i in range(10)]
    cid = store.save(SAMPLES["openai"] + more, format="openai")
    for fmt in ("openai", "autogen"):
        response = client.get(f"/c/{cid}/export/{fmt}/download")
        assert response.status_code == 200 and "content-length" not in response.headers  # streamed
        assert json.loads(response.content) == json.loads(store_io.dumps(store.load(cid, format=fmt)))


def test_export_page_shows_the_loss_report(store, client):
    cid = store.save(SAMPLES["openai"], format="openai")
    page = client.get(f"/c/{cid}").text
    for fmt in FORMATS:
        assert f'href="/c/{cid}/export/{fmt}"' in page
    losses: list[Loss] = []
    store.load(cid, format="agentscope", on_loss=losses.append)
    assert losses
    report = client.get(f"/c/{cid}/export/agentscope").text
    rows = re.findall(r'<tr class="loss-(\w+)">', report)
    assert rows == [loss.action for loss in losses]
    for loss in losses:
        assert f"<code>{html.escape(loss.field)}</code>" in report
    assert f'href="/c/{cid}/export/agentscope/download"' in report
    assert client.get(f"/c/{cid}/export/no-such-format").status_code == 400


def test_last_n_window_shows_where_it_starts(store, client):
    cid = store.save(chat(40))
    window = store.load_messages(cid, last=2)
    start = 40 - len(window)
    assert len(window) > 2  # widened: the last two messages are a result (whose call comes first) and an answer
    page = client.get(f"/c/{cid}?last=2").text
    assert articles(page) == list(range(start, 40))
    assert f"starts at message #{start}" in page and "widened to keep every tool result" in page
    assert 'id="window-start"' in page and "<b>last 10</b>" not in page
    context = re.search(r'href="([^"]+)">See where it starts in context', page).group(1)
    assert html.unescape(context) == f"/c/{cid}?start=0#m{start}"
    assert "<b>last 10</b>" in client.get(f"/c/{cid}?last=10").text
    assert client.get(f"/c/{cid}?last=0").status_code == 400


def test_a_10k_message_conversation_is_paged(store, client):
    cid = store.save(chat(10_000), format="openai")
    first = client.get(f"/c/{cid}").text
    assert articles(first) == list(range(PAGE_SIZE))
    assert "messages 0–99 of 10000" in first
    assert f'href="/c/{cid}?start={PAGE_SIZE}"' in first and f'href="/c/{cid}?start=9900"' in first
    end = client.get(f"/c/{cid}?start=9950").text
    assert articles(end) == list(range(9950, 10_000)) and 'rel="next"' not in end
    middle = client.get(f"/c/{cid}?start=2").text  # starts on a result whose call is on the page before
    first_call = store.find_tool_calls(conversation_id=cid, limit=1)[0]
    assert f'href="/c/{cid}?start=0#{call_anchor(first_call.call_id)}"' in middle
    assert len(client.get(f"/c/{cid}?last=10000").text) < 3 * len(first)  # the window is paged too


# --- tool calls -------------------------------------------------------------------------


def test_tool_call_table_filters_and_links_to_the_call(store, client):
    cid = store.save(SAMPLES["openai"], format="openai")
    store.save(chat(8))
    page = client.get("/tool-calls?name=get_weather").text
    rows = re.findall(r'<a class="place" href="([^"]+)">', page)
    records = store.find_tool_calls(name="get_weather")
    assert len(rows) == len(records) == 2
    target = html.unescape(rows[0])
    path, anchor = target.split("#")
    assert path == f"/c/{cid}?start={page_start(records[0].call_position)}"
    assert f'id="{anchor}"' in client.get(path).text
    assert client.get("/tool-calls?call_id=call_paris").text.count('class="place"') == 1
    pending = client.get("/tool-calls?status=pending").text
    assert "<code>call_bad</code>" in pending and "call_paris" not in pending
    assert client.get("/tool-calls?status=bogus").status_code == 400


# --- safety -----------------------------------------------------------------------------


def hostile_conversation(store: ConversationStore) -> str:
    blocks = [
        TextBlock(text=HOSTILE + " [link](javascript:alert(4)) ![img](javascript:alert(5))", extras={"x": {HOSTILE: HOSTILE}}),
        ReasoningBlock(text=HOSTILE),
        ImageBlock(url="javascript:alert(6)", media_type=HOSTILE),
        FileBlock(data=b"x", media_type="text/html", filename=HOSTILE),
        DataBlock(data={HOSTILE: HOSTILE}),
        CodeBlock(code=HOSTILE, language=HOSTILE),
        ErrorBlock(message=HOSTILE, code=HOSTILE, details=HOSTILE),
        ToolCallBlock(call_id=f"call-{HOSTILE}", name=f"tool{HOSTILE}", arguments_raw=json.dumps({"q": HOSTILE}),
                      arguments={"q": HOSTILE}),
    ]
    result = ToolResultBlock(call_id=f"call-{HOSTILE}", name=f"tool{HOSTILE}", output=HOSTILE)
    messages = [Message(role="assistant", name=HOSTILE, model=HOSTILE, content=blocks, metadata={HOSTILE: HOSTILE}),
                Message(role="tool", content=[result], source_type=HOSTILE)]
    cid = store.save(messages, format="canonical", title=HOSTILE, metadata={"m": "javascript:alert(7)"}, tags=[HOSTILE])
    store.update(cid, title=HOSTILE)
    return cid


class _Elements(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def assert_inert(page: str) -> None:
    """Parsed as a browser would: no script element, no event-handler attribute, no
    javascript: link or source (the viewer itself has no script at all)."""
    for tag, attrs in _Elements(page).found:
        assert tag not in ("script", "iframe", "object", "embed", "base"), tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src", "action", "formaction"):
                assert not (value or "").strip().lower().startswith(("javascript:", "data:", "vbscript:")), value


def test_hostile_content_is_escaped_everywhere(store, client, database_url, namespace):
    cid = hostile_conversation(store)
    with ConversationStore(database_url, namespace=namespace) as keyed:
        keyed.conversation_for(HOSTILE[:200])
    for url in ("/", f"/c/{cid}", f"/c/{cid}?last=1", "/tool-calls", f"/tool-calls?name=tool{HOSTILE}",
                f"/c/{cid}/export/openai", f"/c/{cid}/export/agentscope", "/c/<script>", f"/?format={HOSTILE}"):
        response = client.get(url)
        assert response.status_code in (200, 400, 404), url
        assert "script-src" not in response.headers["content-security-policy"]  # default-src 'none': no script
        assert_inert(response.text)
    page = client.get(f"/c/{cid}").text
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;") > 10  # shown, as text


def test_search_hits_link_to_their_message_and_are_escaped(store, client):
    cid = store.save([{"role": "user", "content": "plain"}, {"role": "user", "content": HOSTILE + " alert me"}])
    page = client.get("/?q=alert").text  # the viewer writes nothing: not indexed yet, and it says so
    assert "No message matches" in page and "1 conversation changed since" in page and "convstore index" in page
    store.index()
    page = client.get("/?q=alert").text
    assert "changed since" not in page
    assert f'href="/c/{cid}?start=0#m1"' in page and "<mark>alert</mark>" in page
    assert_inert(page)
    assert "No message matches" in client.get("/?q=zzzqqq").text
    assert "at least one word" in client.get("/?q=-").text  # said beside the box, not a failed page


def test_a_forks_page_shows_what_it_shares(store, client):
    parent = store.save(SAMPLES["openai"], format="openai")
    fork = store.fork(parent, 3)
    page = client.get(f"/c/{fork}").text
    assert articles(page) == [0, 1, 2]
    sources = re.findall(rf'src="(/c/{fork}/blob/[0-9a-f]{{64}}[^"]*)"', page)
    assert sources and all(client.get(html.unescape(src)).status_code == 200 for src in sources)


# --- read-only --------------------------------------------------------------------------


def snapshot(engine: sa.Engine) -> dict[str, list[tuple]]:
    with engine.connect() as conn:
        return {t.name: sorted(map(tuple, conn.execute(sa.select(t)).all()), key=repr)
                for t in schema_metadata.sorted_tables}


def every_url(store: ConversationStore, cid: str) -> list[str]:
    blobs = [sha256(b.data) for m in store.load_messages(cid) for b in m.content if getattr(b, "data", None)]
    return ["/", "/?format=openai", f"/c/{cid}", f"/c/{cid}?last=2", f"/c/{cid}?start=3", "/tool-calls",
            "/tool-calls?status=answered", "/static/style.css", *(f"/c/{cid}/blob/{b}" for b in blobs),
            *(f"/c/{cid}/export/{f}" for f in FORMATS), *(f"/c/{cid}/export/{f}/download" for f in FORMATS)]


def test_every_route_is_get_only_and_leaves_the_database_unchanged(store, client, viewer):
    cid = store.save(SAMPLES["openai"], format="openai")
    before = snapshot(store.engine)
    urls = every_url(store, cid)
    for url in urls:
        assert client.get(url).status_code == 200, url
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert client.request(method, url).status_code == 405, (method, url)
    assert snapshot(store.engine) == before


def test_the_viewers_connections_refuse_writes(store, viewer):
    cid = store.save(chat(2))
    for write in (lambda: viewer.save(chat(2)), lambda: viewer.append(cid, chat(2)), lambda: viewer.delete(cid),
                  lambda: viewer.update(cid, title="changed")):
        with pytest.raises(Exception, match="(?i)read.?only"):  # the database refuses, whatever the path
            write()
    assert store.info(cid).message_count == 2


def test_a_database_without_convstore_is_refused_not_created(empty_database_url, tmp_path):
    with pytest.raises(SchemaOutdatedError):
        open_store(empty_database_url, "default")
    engine = create_engine(empty_database_url)
    with engine.connect() as conn:
        assert sa.inspect(conn).get_table_names() == []
    engine.dispose()
    missing = tmp_path / "nothing.db"
    with pytest.raises(SchemaOutdatedError):
        open_store(f"sqlite:///{missing}", "default")
    assert not missing.exists()
    (tmp_path / "empty.db").touch()  # a file that holds no convstore tables
    with pytest.raises(SchemaOutdatedError):
        open_store(f"sqlite:///{tmp_path / 'empty.db'}", "default")


def test_missing_things_are_404_and_bad_parameters_400(store, client):
    cid = store.save(chat(3))
    assert client.get("/c/0190a0a0-0000-7000-8000-000000000000").status_code == 404
    assert client.get("/c/not-an-id").status_code == 404
    assert client.get(f"/c/{cid}?start=x").status_code == 400
    assert client.get(f"/c/{cid}?start=-1").status_code == 400
    assert client.get("/?cursor=garbage").status_code == 400
    assert client.get("/nowhere").status_code == 404


# --- the command ------------------------------------------------------------------------


def console() -> tuple[Console, text_io.StringIO]:
    sink = text_io.StringIO()
    return Console(file=sink, width=200), sink


def test_serve_binds_loopback_and_refuses_other_hosts_without_allow_remote(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    ConversationStore(url).close()
    runs = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kwargs: runs.append(kwargs))
    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(InputError, match="--allow-remote"):
            command.serve(url, "default", host=host, port=8765, allow_remote=False, console=console()[0])
    assert runs == []
    out, sink = console()
    command.serve(url, "default", host="127.0.0.1", port=8765, allow_remote=False, console=out)
    assert "http://127.0.0.1:8765/" in sink.getvalue() and "warning" not in sink.getvalue()
    out, sink = console()
    command.serve(url, "default", host="0.0.0.0", port=9000, allow_remote=True, console=out)
    assert "warning" in sink.getvalue() and "http://0.0.0.0:9000/" in sink.getvalue()
    assert runs == [{"host": "127.0.0.1", "port": 8765, "log_level": "warning"},
                    {"host": "0.0.0.0", "port": 9000, "log_level": "warning"}]
    assert command.is_loopback("localhost") and command.is_loopback("::1") and command.is_loopback("127.0.0.2")


def test_serve_without_the_extra_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)  # an import of it now fails
    with pytest.raises(InputError) as caught:
        command.serve(f"sqlite:///{tmp_path / 'c.db'}", "default", host="127.0.0.1", port=8765,
                      allow_remote=False, console=console()[0])
    assert str(caught.value) == "convstore serve needs the serve extra: pip install 'convstore[serve]'"


def test_the_command_module_imports_nothing_optional():
    source = open(command.__file__, encoding="utf-8").read()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any(re.search(r"\b(starlette|jinja2|uvicorn|markdown_it)\b", line) for line in top_level)


def test_serve_brings_the_search_index_up_to_date_first(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    with ConversationStore(url) as store:
        store.save(chat(2))
    runs = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kwargs: runs.append(kwargs))
    out, sink = console()
    command.serve(url, "default", host="127.0.0.1", port=8765, allow_remote=False, console=out)
    assert "indexed 1 conversation for search" in sink.getvalue()
    with ConversationStore(url) as store:
        assert store.index_pending() == 0
        store.save(chat(2))

    def refused(self, progress=None):
        raise DatabaseError("attempt to write a readonly database")
    monkeypatch.setattr(ConversationStore, "index", refused)  # a database this user may only read
    out, sink = console()
    command.serve(url, "default", host="127.0.0.1", port=8765, allow_remote=False, console=out)
    assert "the search index was not brought up to date (attempt to write" in sink.getvalue() and len(runs) == 2
