"""Streaming: iterators in, messages out one at a time, the same as whole lists."""

from __future__ import annotations

import copy
import json

import pytest

from store import FORMATS, AsyncConversationStore
from store.demo import samples
from store.errors import DuplicateToolCallError, InputError, SchemaError
from store.streaming import STREAM_WRITES, read_chunks

from .samples import OPENAI_CHAT, chat, tool_turn
from .test_cli import run


def test_an_iterator_is_stored_like_a_list(store):
    msgs = copy.deepcopy(OPENAI_CHAT) + chat(40)
    seen = []
    cid = store.save(iter(msgs), progress=seen.append)
    assert store.load(cid) == msgs and sum(seen) == len(msgs)
    assert store.info(cid).message_count == len(msgs)
    store.append(cid, iter(chat(44)[40:]))
    assert store.load(cid) == msgs + chat(44)[40:]
    assert store.get_tool_call("call_9", conversation_id=cid).status == "answered"


def test_chunks_link_results_to_calls_in_earlier_chunks(store, monkeypatch):
    import store.streaming as streaming

    monkeypatch.setattr(streaming, "CHUNK", 3)
    msgs = [m for i in range(6) for m in tool_turn(i)]  # every call in one chunk, its result in the next
    cid = store.save(iter(msgs))
    assert store.load(cid) == msgs
    assert all(r.status == "answered" for r in store.find_tool_calls(conversation_id=cid))


def test_a_bad_message_late_in_a_stream_writes_nothing(store):
    before = len(store.list_conversations())
    bad = chat(12000) + [{"role": "user", "content": 7}]
    with pytest.raises(SchemaError, match="message 12000"):
        store.save(iter(bad))
    with pytest.raises(DuplicateToolCallError, match="message 12000"):
        store.save(iter(chat(12000) + tool_turn(0)))
    assert len(store.list_conversations()) == before
    cid = store.save(chat(4))
    with pytest.raises(SchemaError, match="message 6000"):
        store.append(cid, iter([{"role": "user", "content": f"u{i}"} for i in range(6000)] + [{"role": "nobody"}]))
    assert store.load(cid) == chat(4) and store.info(cid).message_count == 4


@pytest.mark.parametrize("chunk", [1, 2, 5, 1000])
def test_export_gives_what_load_gives(store, chunk):
    msgs = copy.deepcopy(OPENAI_CHAT) + chat(30)
    cid = store.save(msgs)
    losses = []
    assert list(store.export(cid, "openai", chunk=chunk)) == msgs
    assert list(store.export(cid, "qwen", chunk=chunk, on_loss=losses.append)) == store.load(cid, format="qwen")
    assert losses  # qwen is exported whole, losses reported all the same
    with pytest.raises(InputError, match="anthropic exports one object"):
        next(store.export(cid, "anthropic"))


@pytest.mark.parametrize("target", sorted(STREAM_WRITES & set(FORMATS)))
def test_streamed_formats_export_every_sample_like_load(store, target):
    for name, data in samples().items():
        cid = store.save(copy.deepcopy(data), format=name)
        whole, losses = store.load(cid, format=target), []
        for chunk in (1, 2, 3):
            parts = list(store.export(cid, target, chunk=chunk, on_loss=losses.append))
            assert parts == whole, (name, chunk)
        assert sorted(map(str, losses)) == sorted(map(str, _losses(store, cid, target) * 3))


def _losses(store, cid, target):
    found = []
    store.load(cid, format=target, on_loss=found.append)
    return found


def test_auto_detects_on_the_first_chunk():
    chunks = list(read_chunks(iter(chat(7)), "auto", size=3))
    assert [len(c) for c in chunks] == [3, 3, 1]


def test_async_store_streams_too(database_url, namespace):
    import asyncio

    async def main() -> None:
        async with AsyncConversationStore(database_url, namespace=namespace) as s:
            cid = await s.save(iter(chat(20)))
            assert [m async for m in s.export(cid, chunk=4)] == chat(20)

    asyncio.run(main())


def test_cli_streams_json_lines_both_ways(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    msgs = copy.deepcopy(OPENAI_CHAT) + chat(50)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    imported = run("import", str(src), db=db)
    assert imported.returncode == 0, imported.stderr
    cid = imported.stdout.strip()
    out = tmp_path / "out.jsonl"
    assert run("export", cid, "--format", "openai", "-o", str(out), db=db).returncode == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == msgs
    lines = run("export", cid, "--format", "openai", "--jsonl", db=db).stdout.splitlines()
    assert [json.loads(line) for line in lines] == msgs
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(m) + "\n" for m in chat(30)) + "{not json\n")
    failed = run("import", str(bad), db=db)
    assert failed.returncode == 1 and "line 31" in failed.stderr and "Traceback" not in failed.stderr
    assert len(json.loads(run("list", "--json", db=db).stdout)) == 1


def test_cli_records_the_detected_format_of_a_stream(tmp_path):
    db = f"sqlite:///{tmp_path / 'a.db'}"
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in chat(3)))
    assert run("import", str(src), db=db).returncode == 0
    [info] = json.loads(run("list", "--json", db=db).stdout)
    assert info["source_format"] == "openai"
