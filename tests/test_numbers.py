"""Numbers JSON tools change silently come back exactly (issue 16.3): NaN, Infinity,
-Infinity, -0.0, integers beyond 64 bits and large floats, wherever JSON is kept: message
metadata and extras, block extras, data blocks, tool-call arguments (parsed, and as raw
text like '{"x": NaN}'), conversation metadata; through save and load on every backend
(sync and async), through convert() into every format and back, and through the CLI."""

from __future__ import annotations

import asyncio
import json
import math
import struct
from typing import Any

import orjson
import pytest

from store import AsyncConversationStore, FORMATS, convert
from store import io
from store.schema import dumps, loads

from .test_cli import run as cli

NUMBERS: dict[str, Any] = {
    "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "neg_zero": -0.0,
    "u64_plus_1": 2**64, "i64_minus_1": -(2**63) - 1, "1e30": 10**30, "1e308": 1e308, "1e16": 1e16,
    "u64_max": 2**64 - 1, "i64_min": -(2**63), "tenth": 0.1, "tiny": 5e-324, "small": 1e-7, "int": 7,
}
RAW_ARGUMENTS = ('{"nan": NaN, "inf": Infinity, "-inf": -Infinity, "neg_zero": -0.0, '
                 '"u64_plus_1": 18446744073709551616, "1e30": 1000000000000000000000000000000, "big_float": 1e16}')
RAW_PARSED = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "neg_zero": -0.0,
              "u64_plus_1": 2**64, "1e30": 10**30, "big_float": 1e16}


def exact(a: Any, b: Any) -> bool:
    """Equal in value and type, floats bit for bit (NaN equals NaN, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(exact(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b))
    return a == b


def canonical() -> list[dict[str, Any]]:
    return [
        {"role": "user", "metadata": {"n": NUMBERS}, "extras": {"mine": NUMBERS},
         "content": [{"kind": "text", "text": "t", "extras": {"n": NUMBERS}},
                     {"kind": "data", "data": {"n": [NUMBERS, -0.0, float("nan")]}}]},
        {"role": "assistant", "content": [{"kind": "tool_call", "call_id": "c1", "name": "f", "arguments": NUMBERS}]},
        {"role": "tool", "content": [{"kind": "tool_result", "call_id": "c1", "output": "ok"}]},
        {"role": "assistant", "content": [{"kind": "tool_call", "call_id": "c2", "name": "f", "arguments_raw": RAW_ARGUMENTS,
                                           "arguments": RAW_PARSED}]},
    ]


def check_messages(messages: list[Any]) -> None:
    first = messages[0]
    assert exact(first.metadata, {"n": NUMBERS}) and exact(first.extras, {"mine": NUMBERS})
    assert exact(first.content[0].extras, {"n": NUMBERS})
    assert exact(first.content[1].data, {"n": [NUMBERS, -0.0, float("nan")]})
    assert exact(messages[1].content[0].arguments, NUMBERS)
    assert messages[3].content[0].arguments_raw == RAW_ARGUMENTS
    assert exact(messages[3].content[0].arguments, RAW_PARSED)


# --- the database ---------------------------------------------------------------------------


def test_every_number_survives_the_database(store):
    cid = store.save(canonical(), format="canonical", metadata={"n": NUMBERS})
    store.append(cid, [{"role": "user", "content": [{"kind": "text", "text": "more"}], "metadata": {"z": -0.0}}],
                 format="canonical")
    messages = store.load_messages(cid)
    check_messages(messages)
    assert math.copysign(1.0, messages[4].metadata["z"]) == -1.0
    assert exact(store.info(cid).metadata, {"n": NUMBERS})
    assert exact(store.get_tool_call("c1", conversation_id=cid).arguments, NUMBERS)
    assert exact(store.get_tool_call("c2", conversation_id=cid).arguments, RAW_PARSED)


def test_raw_arguments_with_nan_keep_their_text_and_parse_exactly(store):
    chat = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": RAW_ARGUMENTS}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    cid = store.save(chat, format="openai")
    assert store.load(cid, format="openai") == chat  # the text byte for byte
    assert exact(store.get_tool_call("c1").arguments, RAW_PARSED)  # today: NaN and 2**64 come back changed


def test_every_number_survives_the_async_store(database_url, namespace):
    async def main() -> None:
        async with AsyncConversationStore(database_url, namespace=namespace) as s:
            cid = await s.save(canonical(), format="canonical", metadata={"n": NUMBERS})
            check_messages(await s.load_messages(cid))
            assert exact((await s.info(cid)).metadata, {"n": NUMBERS})
            assert exact((await s.get_tool_call("c1")).arguments, NUMBERS)

    asyncio.run(main())


def test_stored_json_is_strict_and_ordinary_json_is_untouched():
    text = dumps({"n": NUMBERS})
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} stored"))  # JSONB would refuse it
    assert exact(loads(text), {"n": NUMBERS}) and exact(loads(text.encode()), {"n": NUMBERS})
    ordinary = {"a": [1, 2.5, None, "x", 1e15, -1.5, 2**63, 1e-7], "b": {"c": True}}
    assert dumps(ordinary) == orjson.dumps(ordinary).decode()  # no escape where none is needed


# --- convert() and the formats --------------------------------------------------------------


AGENT_FRAMEWORK = [
    {"role": "user", "contents": [{"type": "text", "text": "hi"}], "additional_properties": {"n": NUMBERS}},
    {"role": "assistant", "contents": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": NUMBERS}]},
    {"role": "tool", "contents": [{"type": "function_result", "call_id": "c1", "result": "ok"}]},
]


def _arguments(messages: list[Any]) -> Any:
    call = messages[1]["contents"][0]
    return io.parse(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]


@pytest.mark.parametrize("target", sorted(FORMATS))
def test_convert_keeps_every_number(target):
    losses: list[Any] = []
    out = convert(AGENT_FRAMEWORK, from_="agent-framework", to=target, on_loss=losses.append)
    back = convert(out, from_=target, to="agent-framework")
    assert exact(_arguments(back), NUMBERS)  # written as text, NaN and 2**64 are NaN and 2**64
    if not any(loss.index == 0 and loss.field == "metadata" and loss.action != "carried" for loss in losses):
        assert exact(back[0]["additional_properties"]["n"], NUMBERS)  # today: NaN -> None on the way


def test_arguments_text_keeps_nan_across_formats():
    chat = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": RAW_ARGUMENTS}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    anthropic = convert(chat, from_="openai", to="anthropic")
    assert exact(anthropic["messages"][1]["content"][0]["input"], RAW_PARSED)  # a user turn opens it
    again = convert(anthropic, from_="anthropic", to="openai")
    assert exact(io.parse(again[1]["tool_calls"][0]["function"]["arguments"]), RAW_PARSED)


# --- the CLI's JSON -------------------------------------------------------------------------


def test_io_writes_and_reads_every_number():
    text = io.dumps({"n": NUMBERS})
    assert '"nan": NaN' in text and '"-inf": -Infinity' in text and "18446744073709551616" in text
    assert "null" not in text
    assert exact(io.parse(text), {"n": NUMBERS})
    line = io.dumps_line([NUMBERS])
    assert line.endswith(b"\n") and exact(io.parse(line.decode()), [NUMBERS])
    ordinary = {"a": [1, None, 2.5], "b": "null NaN"}
    assert io.dumps(ordinary) == orjson.dumps(ordinary, option=orjson.OPT_INDENT_2).decode()
    with pytest.raises(Exception, match="invalid JSON"):
        io.parse('{"x": nan}')  # still no JSON beyond Python's own NaN, Infinity, -Infinity


def test_cli_import_and_export_keep_every_number(tmp_path, database_url):
    source = tmp_path / "chat.json"
    source.write_text(io.dumps(AGENT_FRAMEWORK))
    imported = cli("import", str(source), "--format", "agent-framework", db=database_url)
    assert imported.returncode == 0, imported.stderr
    cid = imported.stdout.strip()
    exported = cli("export", cid, "--format", "agent-framework", db=database_url)
    assert exported.returncode == 0, exported.stderr
    value = io.parse(exported.stdout)
    assert exact(value[0]["additional_properties"], {"n": NUMBERS}) and exact(_arguments(value), NUMBERS)
    lines = cli("export", cid, "--format", "agent-framework", "--jsonl", db=database_url)
    assert exact(io.parse(lines.stdout)[0]["additional_properties"], {"n": NUMBERS})
