"""A new conversation's OpenAI list straight to its rows (store.fused): the very rows, links, blobs
and errors of a read in one pass (store.onepass) and its chunk rows, on every backend."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import fused, onepass, operations, rows
from store.errors import ConvstoreError, DuplicateToolCallError, InputError
from store.limits import Limits
from tests.samples import PNG, chat
from tests.test_lean import _rows
from tests.test_onepass import _LIMITS, _blobs, _items

_CID = "0190e7a0-0000-7000-8000-000000000000"
_SQLITE = sa.create_engine("sqlite://").dialect


def _chunk(items: list[Any], limits: Limits, bound: tuple[str, Any] | None) -> Any:
    """What the usual way makes of ``items`` as a new conversation: one pass, then one chunk's rows."""
    try:
        batch = onepass.read(copy.deepcopy(items), limits)
        return batch, rows.chunk_rows(limits, _CID, batch, first_seq=0, bound=bound)
    except ConvstoreError:
        return None, None


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_items, st.sampled_from(_LIMITS), st.booleans())
def test_the_rows_are_those_of_a_read_in_one_pass(items, limits, on_sqlite):
    bound = rows.bound(_SQLITE, _CID) if on_sqlite else None
    made = fused.rows(copy.deepcopy(items), limits, _CID, bound)
    batch, chunk = _chunk(items, limits, bound)
    if made is None:  # refused: an item the one pass leaves to the reader, or an error the reader locates
        assert chunk is None or len(onepass.checked(batch, limits)) < len(batch)
        return
    assert chunk is not None and chunk.bound == made.bound == on_sqlite
    assert len(made) == len(items) == len(batch)
    assert (made.messages, made.message_keys) == (chunk.messages, chunk.message_keys)
    assert (made.blocks, made.block_keys) == (chunk.blocks, chunk.block_keys)
    assert made.links == chunk.tool_calls and not chunk.link_updates
    assert made.blobs.rows == chunk.blobs.rows


def test_an_agents_conversation_is_taken_whole():
    items = chat(40)
    made = fused.rows(items, Limits(), _CID, None)
    assert made is not None and len(made) == len(items) and made.links


@pytest.mark.parametrize("bad", [
    {"role": "user", "content": "a lone \ud800 surrogate"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},  # used before
    {"role": "user", "content": "x" * 200},  # too long under the limits below
], ids=["surrogate", "call id twice", "too long"])
def test_an_item_it_does_not_take_leaves_the_list_to_the_usual_way(store, bad):
    """The usual way says what is wrong and where, and the save leaves nothing."""
    items = [*chat(6), bad]
    before = store.list_conversations()
    store.limits = Limits(max_message_bytes=150) if bad["content"] == "x" * 200 else store.limits
    assert fused.rows(copy.deepcopy(items), store.limits, _CID, None) is None
    with pytest.raises((InputError, DuplicateToolCallError)) as caught:
        store.save(items)
    assert "message 6" in str(caught.value)
    assert store.list_conversations() == before


def test_a_save_stores_the_rows_of_the_usual_way(store, monkeypatch):
    """Texts, results, calls and images (a blob twice) in chunks of 7, with progress for each."""
    image = {"role": "user", "content": [{"type": "text", "text": "look " * 20},
                                         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}
    turns = chat(32)
    items = [*turns[:12], image, *turns[12:], image, {"role": "tool", "tool_call_id": "nobody", "content": "stray"}]
    assert fused.rows(copy.deepcopy(items), store.limits, _CID, None) is not None
    monkeypatch.setattr(operations, "CHUNK", 7)
    seen: list[int] = []
    made = store.save(copy.deepcopy(items), progress=seen.append)
    assert sum(seen) == len(items) and max(seen) == 7
    monkeypatch.setattr(fused, "rows", lambda *args: None)
    usual = store.save(copy.deepcopy(items))
    assert _rows(store, made) == _rows(store, usual)
    assert _blobs(store, made) == _blobs(store, usual) and len(_blobs(store, made)) == 1
    assert store.load(made) == store.load(usual) == items
    call = next(c["id"] for item in items for c in item.get("tool_calls") or ())
    found, expected = (store.get_tool_call(call, conversation_id=cid).model_dump(exclude={"conversation_id"})
                       for cid in (made, usual))
    assert found == expected
