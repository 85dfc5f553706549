"""The viewer in a real headless browser: Debian's chromium, driven by Playwright.

The browser is a system package, like the database servers (``apt-get install -y
chromium``; ``.ci/run`` installs it): Playwright never downloads one here. Without it
these tests skip on a developer's machine and fail in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from store import ConversationStore
from store.demo import samples
from store.model import ImageBlock, ToolCallBlock, ToolResultBlock
from store.web.app import create_app
from store.web.data import open_store
from store.web.present import call_anchor

from .conftest import IN_CI
from .test_serve import hostile_conversation

CHROMIUM = Path(os.environ.get("CONVSTORE_TEST_CHROMIUM", "/usr/bin/chromium"))
SAMPLES = samples()


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"no chromium at {CHROMIUM}: install Debian's with `apt-get install -y chromium` (or set CONVSTORE_TEST_CHROMIUM)"
    if IN_CI:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


class Site:
    """The viewer served by uvicorn in a thread, over a SQLite database of every sample
    (titled "<format> sample") and one hostile conversation."""

    def __init__(self, url: str, ids: dict[str, str], store: ConversationStore) -> None:
        self.url, self.ids, self.store = url, ids, store


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    _require_chromium()
    import uvicorn

    db_url = f"sqlite:///{tmp_path_factory.mktemp('viewer') / 'viewer.db'}"
    with ConversationStore(db_url) as writer:
        ids = {name: writer.save(data, format=name, title=f"{name} sample") for name, data in SAMPLES.items()}
        ids["hostile"] = hostile_conversation(writer)
    viewer = open_store(db_url, "default")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))  # bound here and handed over: no race for a free port
    server = uvicorn.Server(uvicorn.Config(create_app(viewer), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield Site(f"http://127.0.0.1:{listener.getsockname()[1]}", ids, viewer)
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()
        viewer.close()


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[object]:
    with sync_playwright() as playwright:
        # Debian's chromium, never a browser build of Playwright's own (nothing is downloaded)
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield launched
        launched.close()


class Watched:
    """A page with everything that would betray a script: dialogs, console output, errors."""

    def __init__(self, browser: object) -> None:
        self.context = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.console: list[str] = []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.on("pageerror", lambda error: self.console.append(str(error)))


@pytest.fixture
def watched(browser: object) -> Iterator[Watched]:
    tab = Watched(browser)
    yield tab
    tab.context.close()


def test_browse_every_sample_from_the_list(site: Site, watched: Watched, tmp_path: Path) -> None:
    page = watched.page
    page.goto(site.url + "/")
    page.screenshot(path=tmp_path / "list.png", full_page=True)
    for name in SAMPLES:
        page.get_by_role("link", name=f"{name} sample", exact=True).click()
        page.wait_for_url(f"**/c/{site.ids[name]}")
        _check_conversation(page, site.store.load_messages(site.ids[name]), name)
        if name == "openai":
            page.screenshot(path=tmp_path / "conversation.png", full_page=True)
        page.go_back()
    for shot in ("list.png", "conversation.png"):
        assert (tmp_path / shot).stat().st_size > 10_000
    assert watched.dialogs == []


def _check_conversation(page: object, messages: list, name: str) -> None:
    assert page.locator("article.msg").count() == len(messages), name
    blocks = [b for m in messages for b in m.content]
    texts = page.locator(".block.text")
    if texts.count():
        assert texts.first.is_visible() and texts.first.inner_text().strip(), name
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    results = [b for b in blocks if isinstance(b, ToolResultBlock)]
    for call in calls:
        shown = page.locator(f"#{call_anchor(call.call_id)}")
        assert shown.is_visible() and call.name in shown.inner_text(), (name, call.call_id)
    for result in results:
        assert page.locator(f"#{call_anchor(result.call_id, 'result')}").is_visible(), (name, result.call_id)
    images = [b for b in blocks if isinstance(b, ImageBlock) and b.data is not None]
    shown_images = page.locator(".media.image img")
    assert shown_images.count() >= len(images), name  # and those inside tool results, also beside their calls
    for i in range(shown_images.count()):  # each loaded from the blob route and decoded
        assert shown_images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0"), name


def test_a_result_links_back_to_its_call(site: Site, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{site.url}/c/{site.ids['openai']}")
    result = page.locator(".block.result").first
    call_id = result.locator("code").first.inner_text()
    result.locator("a.to-call").click()
    assert page.evaluate("location.hash") == f"#{call_anchor(call_id)}"
    assert page.evaluate("document.querySelector(':target').id") == call_anchor(call_id)
    assert page.locator(f"#{call_anchor(call_id)}").is_visible()


def test_the_tool_call_table_leads_to_the_call(site: Site, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{site.url}/tool-calls")
    page.get_by_label("Tool").fill("get_weather")
    page.get_by_role("button", name="Find").click()
    page.locator("a.place").first.click()
    page.wait_for_url("**/c/*#call-*")  # the conversation's page, loaded: not the table's, still unloading
    target = page.evaluate("document.querySelector(':target') && document.querySelector(':target').id")
    assert target and target.startswith("call-") and page.locator(f"#{target}").is_visible()


def test_export_downloads_and_parses(site: Site, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{site.url}/c/{site.ids['openai']}")
    page.locator("p.exports").get_by_role("link", name="agentscope", exact=True).click()
    # expect() retries until the export's page has loaded: count() would read the conversation's, still unloading
    expect(page.locator("table.losses tbody tr")).not_to_have_count(0)  # the loss report
    with page.expect_download() as download:
        page.get_by_role("link", name="Download agentscope JSON").click()
    exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert exported == site.store.load(site.ids["openai"], format="agentscope")


def test_hostile_content_runs_no_script(site: Site, watched: Watched) -> None:
    page = watched.page
    cid = site.ids["hostile"]
    for path in (f"/c/{cid}", "/", "/tool-calls", f"/c/{cid}/export/openai"):
        page.goto(site.url + path)
        for summary in page.locator("summary").all():  # open every collapsed part too
            summary.click()
        page.wait_for_timeout(200)
        assert page.evaluate("document.scripts.length") == 0, path
        assert page.locator("[onerror]").count() == 0, path
    page.goto(f"{site.url}/c/{cid}")
    assert "<script>alert(1)</script>" in page.locator(".block.text").first.inner_text()
    assert watched.dialogs == []
    assert not [line for line in watched.console if "alert" in line or "script" in line.lower()]
