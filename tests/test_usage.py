"""Token usage summed per conversation and per model: API (sync and async), CLI, every backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import AsyncConversationStore, ConversationStore
from store.errors import ConversationNotFoundError
from store.usage import of_messages

from .samples import OPENAI_CHAT
from .test_async import run as run_async
from .test_cli import run as run_cli


def _turn(model: str | None, usage: dict | None, text: str = "ok") -> list[dict]:
    reply = {"role": "assistant", "content": [{"kind": "text", "text": text}]}
    if model is not None:
        reply["model"] = model
    if usage is not None:
        reply["usage"] = usage
    return [{"role": "user", "content": [{"kind": "text", "text": "hi"}]}, reply]


CONVERSATION = [
    *_turn("gpt-5", {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}),
    *_turn("gpt-5", {"input_tokens": 20, "output_tokens": 7}),  # no total: input + output
    *_turn("claude-sonnet-5", {"input_tokens": 100, "output_tokens": 50, "total_tokens": 160}),
    *_turn(None, {"output_tokens": 3}),
    *_turn("gpt-5", None),  # a model without usage adds nothing
]


def _expect(summary) -> None:
    assert (summary.input_tokens, summary.output_tokens, summary.total_tokens, summary.records) == (130, 65, 205, 4)
    by_model = [(m.model, m.input_tokens, m.output_tokens, m.total_tokens, m.records) for m in summary.by_model]
    assert by_model == [("claude-sonnet-5", 100, 50, 160, 1), ("gpt-5", 30, 12, 42, 2), (None, 0, 3, 3, 1)]


def test_usage_in_total_and_per_model(store):
    cid = store.save(CONVERSATION, format="canonical")
    summary = store.usage(cid)
    assert summary.conversation_id == cid
    _expect(summary)
    assert of_messages(cid, store.load_messages(cid)) == summary  # what `convstore show` computes
    assert store.info(cid).usage == summary and store.list_conversations(limit=1)[0].usage is None


def test_usage_follows_pops_and_counts_usage_blocks(store):
    """agent-framework keeps UsageContent among a message's contents: it counts too."""
    sample = json.loads((Path(__file__).parents[1] / "store/samples/agent-framework.json").read_text())
    cid = store.save(sample, format="agent-framework")
    messages = store.load_messages(cid)
    assert any(b.kind == "usage" for m in messages for b in m.content)
    assert store.usage(cid) == of_messages(cid, messages) and store.usage(cid).total_tokens >= 320
    other = store.save(CONVERSATION, format="canonical")
    store.pop(other, 4)  # the last two turns go: claude's stays, the model-less one goes
    assert store.usage(other).total_tokens == 15 + 27 + 160


def test_no_usage_and_unknown_conversations(store, database_url):
    cid = store.save(OPENAI_CHAT)
    summary = store.usage(cid)
    assert (summary.records, summary.total_tokens, summary.by_model) == (0, 0, [])
    with pytest.raises(ConversationNotFoundError):
        store.usage("0190a0a0-0000-7000-8000-000000000000")
    with ConversationStore(database_url, namespace="another") as other, pytest.raises(ConversationNotFoundError):
        other.usage(cid)  # another tenant's conversation


def test_async_usage(database_url, namespace):
    async def test(s: AsyncConversationStore):
        cid = await s.save(CONVERSATION, format="canonical")
        return await s.usage(cid)

    _expect(run_async(test, database_url, namespace))


def test_cli_usage_and_show(database_url):
    with ConversationStore(database_url) as s:  # the CLI's default namespace
        cid = s.save(CONVERSATION, format="canonical")
    summary = json.loads(run_cli("usage", cid, "--json", db=database_url).stdout)
    assert summary["total_tokens"] == 205 and summary["by_model"][0]["model"] == "claude-sonnet-5"
    table = run_cli("usage", cid, db=database_url).stdout.splitlines()  # piped: tab-separated
    assert table[0].split("\t") == ["model", "input tokens", "output tokens", "total tokens", "calls"]
    assert table[-1].split("\t") == ["total", "130", "65", "205", "4"]
    shown = run_cli("show", cid, db=database_url)
    assert shown.returncode == 0 and "total\t130\t65\t205\t4" in shown.stdout
    missing = run_cli("usage", "0190a0a0-0000-7000-8000-000000000000", db=database_url)
    assert missing.returncode == 1 and "no conversation" in missing.stderr and "Traceback" not in missing.stderr
