"""A tool call's arguments stored once (revision 0011): where ``arguments`` is exactly the
parse of ``arguments_raw``, only the string is kept, as the block's text (revision 0017; in the
payload before); everything reads the same."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from store import ConversationStore
from store.codec import RAW_ARGUMENTS
from store.db import downgrade, upgrade

CASES = {  # name: (arguments, arguments_raw, stored once)
    "compact": ({"city": "Kyoto", "days": 3}, '{"city":"Kyoto","days":3}', True),
    "spaced, as the source wrote it": ({"city": "Kyoto"}, '{ "city" : "Kyoto" }', True),
    "a list": ([1, 2.5, True, None], "[1, 2.5, true, null]", True),
    "not JSON": (None, "city=Kyoto", False),
    "a parse of other text": ({"city": "Lisbon"}, '{"city":"Kyoto"}', False),
    "an int where the text has a float": ({"n": 1}, '{"n":1.0}', False),
    "-0.0, which JSONB would change": ({"x": -0.0}, '{"x":-0.0}', False),
    "NUL, which PostgreSQL refuses": ({"s": "a\x00b"}, '{"s":"a\\u0000b"}', False),
    "no parse given": (None, '{"city":"Kyoto"}', False),
}


def _conversation() -> list[dict]:
    calls = [{"kind": "tool_call", "call_id": f"call_{i}", "name": "weather", "arguments": arguments,
              "arguments_raw": raw} for i, (arguments, raw, _) in enumerate(CASES.values())]
    results = [{"role": "tool", "content": [{"kind": "tool_result", "call_id": f"call_{i}", "output": "ok"}]}
               for i in range(len(CASES))]
    return [{"role": "user", "content": [{"kind": "text", "text": "weather?"}]},
            {"role": "assistant", "content": calls}, *results]


def _payloads(store: ConversationStore) -> list[dict]:
    return [payload for _, payload in _calls(store)]


def _calls(store: ConversationStore) -> list[tuple[str | None, dict]]:
    """The text and payload of each call's block row."""
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT text, payload FROM blocks WHERE kind = 'tool_call' ORDER BY position"))
        return [(text, row if isinstance(row, dict) else json.loads(row or "{}")) for text, row in rows]


def _same(store: ConversationStore, cid: str, data: list[dict]) -> None:
    loaded = [m.model_dump(mode="json", exclude_defaults=True) for m in store.load_messages(cid)]
    assert json.dumps(loaded[1]["content"], sort_keys=True) == json.dumps(
        [{k: v for k, v in c.items() if v is not None and k != "kind"} for c in data[1]["content"]], sort_keys=True)
    for i, (arguments, raw, _) in enumerate(CASES.values()):
        record = store.get_tool_call(f"call_{i}", cid)
        assert (json.dumps(record.arguments), record.arguments_raw) == (json.dumps(arguments), raw)


def test_arguments_that_are_the_parse_of_their_text_are_stored_once(empty_database_url):
    data = _conversation()
    with ConversationStore(empty_database_url) as store:
        cid = store.save(json.loads(json.dumps(data)), format="canonical")
        once = [text == raw and not payload for (text, payload), (_, raw, _) in zip(_calls(store), CASES.values())]
        assert once == [stored for _, _, stored in CASES.values()]
        assert [text for text, _ in _calls(store)] == [raw if stored else None for _, raw, stored in CASES.values()]
        downgrade(store.engine, "0016")  # the string in the payload, as revisions 0011 to 0016 keep it
        once = [RAW_ARGUMENTS in p and "arguments" not in p and "arguments_raw" not in p for p in _payloads(store)]
        assert once == [stored for _, _, stored in CASES.values()] and {t for t, _ in _calls(store)} == {None}
        upgrade(store.engine)  # (the code reads revision 0020's columns: no read in between)
        _same(store, cid, data)
        hits = store.search("Kyoto", kind="tool_call", limit=None)  # by the text as the source wrote it
        assert sorted(hit.position for hit in hits) == [i for i, (_, raw, _) in enumerate(CASES.values())
                                                        if "Kyoto" in raw]
        downgrade(store.engine, "0010")  # both keys again, as revision 0010 keeps them
        assert not any(RAW_ARGUMENTS in p for p in _payloads(store))
        assert [p.get("arguments_raw") for p in _payloads(store)] == [raw for _, raw, _ in CASES.values()]
        upgrade(store.engine)
        _same(store, cid, data)
        store.append(cid, [{"role": "user", "content": [{"kind": "text", "text": "after"}]}], format="canonical")
        assert store.search("Kyoto", kind="tool_call", limit=None)


@pytest.mark.parametrize("raw", ['{"a":1e16}', '{"a":18446744073709551616}', '{"a":"\\udc00"}', "[" * 300 + "]" * 300])
def test_arguments_orjson_or_the_escape_would_change_are_kept_whole(empty_database_url, raw):
    try:
        arguments = json.loads(raw)
    except RecursionError:
        pytest.skip("deeper than json reads")
    call = {"kind": "tool_call", "call_id": "call_x", "name": "f", "arguments": arguments, "arguments_raw": raw}
    with ConversationStore(empty_database_url) as store:
        try:
            cid = store.save([{"role": "assistant", "content": [call]}], format="canonical")
        except Exception as exc:  # what the store refuses, it refuses whole
            assert "message 0" in str(exc)
            return
        block = store.load_messages(cid)[0].content[0]
        assert (block.arguments_raw, json.dumps(block.arguments)) == (raw, json.dumps(arguments))
