"""Every registered format into every other, in memory (issue 3, items 3 and 4).

For each fixture (``tests/fixtures/<format>[-<variant>].json``) and each registered
target: the conversion succeeds with a well-formed loss report, strict mode raises
:class:`LossError` exactly when something was dropped or approximated, and
``X -> Y -> X`` keeps every tool call (id unless synthesized, name, arguments), the
link of every tool result, and the text of every text block, unless the loss
report of the conversion says that part was dropped or approximated.
New formats and fixtures join automatically.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from store import FORMATS
from store.errors import LossError
from store.formats import CARRIES_BLOCK_NOTES, Loss, detect, read, write
from store.model import Message, ReasoningBlock, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock

from ..conformance import envs

FIXTURES = {fixture_id: (fmt, path) for fixture_id, fmt, path in envs.fixtures(set(FORMATS))}
TARGETS = sorted(FORMATS)
PAIRS = [(fixture_id, target) for fixture_id in FIXTURES for target in TARGETS]
PAIR_IDS = [f"{fixture_id}->{target}" for fixture_id, target in PAIRS]
ACTIONS = {"dropped", "carried", "approximated"}

# Which loss fields (their first segment, as in "content[2]" or "tool_call.arguments")
# excuse a missing item of each kind: a loss report names what it lost loosely.
EXCUSES = {
    "tool_call": {"tool_call", "tool_calls", "function_call", "function", "call", "calls", "arguments",
                  "arguments_raw", "content", "contents", "blocks", "message"},
    "tool_result": {"tool_result", "tool_results", "result", "tool", "content", "contents", "blocks", "message"},
    "text": {"text", "content", "contents", "blocks", "message"},
}


def _source(fixture_id: str) -> tuple[str, Any]:
    fmt, path = FIXTURES[fixture_id]
    return fmt, envs.load_fixture(path)


def _head(field: str) -> str:
    return re.split(r"[.\[]", field, maxsplit=1)[0]


class Excused:
    """What a loss report allows to go missing: per source message (first leg), or
    anywhere (second leg, whose indices refer to the intermediate messages)."""

    def __init__(self, first: Iterable[Loss], second: Iterable[Loss]) -> None:
        self.at = {(loss.index, kind) for loss in first if loss.action != "carried"
                   for kind, heads in EXCUSES.items() if _head(loss.field) in heads}
        self.anywhere = {kind for loss in second if loss.action != "carried"
                         for kind, heads in EXCUSES.items() if _head(loss.field) in heads}

    def __call__(self, index: int, kind: str) -> bool:
        return kind in self.anywhere or (index, kind) in self.at


def _blocks(messages: list[Message], kind: type) -> list[tuple[int, Any]]:
    return [(i, b) for i, m in enumerate(messages) for b in m.content if isinstance(b, kind)]


def _texts(messages: list[Message]) -> str:
    """All the text of a conversation, wherever it ended up (merged, prefixed, in a result)."""
    out = []
    for m in messages:
        for b in m.content:
            if isinstance(b, (TextBlock, RefusalBlock, ReasoningBlock)):
                out.append(b.text)
            elif isinstance(b, ToolResultBlock):
                out.extend([b.output] if isinstance(b.output, str) else
                           [p.text for p in b.output if isinstance(p, (TextBlock, RefusalBlock))])
    return "\n".join(out)


def _call_key(call: ToolCallBlock) -> tuple[str, str]:
    """Name and arguments: parsed ones compared as JSON, unparsable ones by their raw text."""
    if call.parse_error and call.arguments_raw is not None:
        return call.name, call.arguments_raw
    return call.name, json.dumps(call.arguments, sort_keys=True)


def _missing(before: list[Message], after: list[Message], excused: Excused) -> list[str]:
    problems = []
    calls_after = {c.call_id: c for _, c in _blocks(after, ToolCallBlock)}
    anonymous = Counter(_call_key(c) for _, c in _blocks(after, ToolCallBlock))
    for i, call in _blocks(before, ToolCallBlock):
        if excused(i, "tool_call"):
            continue
        if call.call_id_synthesized:
            if anonymous[_call_key(call)] <= 0:
                problems.append(f"message {i}: tool call {call.name}({call.arguments_raw or call.arguments}) is gone")
            anonymous[_call_key(call)] -= 1
            continue
        got = calls_after.get(call.call_id)
        if got is None:
            problems.append(f"message {i}: tool call id {call.call_id!r} is gone")
        elif _call_key(got) != _call_key(call):
            problems.append(f"message {i}: tool call {call.call_id!r} was {_call_key(call)}, is now {_call_key(got)}")
    result_ids = Counter(r.call_id for _, r in _blocks(after, ToolResultBlock))
    synthesized = {c.call_id for _, c in _blocks(before, ToolCallBlock) if c.call_id_synthesized}
    for i, result in _blocks(before, ToolResultBlock):
        if result.call_id in synthesized or excused(i, "tool_result"):
            continue
        if result_ids[result.call_id] <= 0:
            problems.append(f"message {i}: the result of tool call {result.call_id!r} is gone (or lost its id)")
        result_ids[result.call_id] -= 1
    text = _texts(after)
    for i, block in _blocks(before, TextBlock):
        if block.text.strip() and block.text not in text and not excused(i, "text"):
            problems.append(f"message {i}: text {block.text[:60]!r} is gone")
    return problems


@pytest.mark.parametrize("fixture_id", sorted(FIXTURES))
def test_fixture_is_detected(fixture_id: str) -> None:
    fmt, data = _source(fixture_id)
    assert detect(data) == fmt


@pytest.mark.parametrize(("fixture_id", "target"), PAIRS, ids=PAIR_IDS)
def test_conversion_reports_its_losses(fixture_id: str, target: str) -> None:
    fmt, data = _source(fixture_id)
    messages = read(copy.deepcopy(data), fmt)
    value, losses = write(messages, target)
    json.dumps(value)  # JSON-ready, as is
    items = list(losses)
    for loss in items:
        assert isinstance(loss, Loss), loss
        assert loss.action in ACTIONS, loss
        assert isinstance(loss.index, int) and 0 <= loss.index < len(messages), loss
        assert isinstance(loss.field, str) and loss.field, loss

    lossy = [loss for loss in items if loss.action != "carried"]
    try:
        strict_value, _ = write(messages, target, strict=True)
    except LossError as exc:
        assert lossy, f"strict mode raised although nothing was dropped or approximated: {exc}"
    else:
        assert not lossy, f"strict mode did not raise although the report says: {lossy[0]}"
        assert strict_value == value


@pytest.mark.parametrize(("fixture_id", "target"), PAIRS, ids=PAIR_IDS)
def test_there_and_back_keeps_tool_calls_and_text(fixture_id: str, target: str) -> None:
    fmt, data = _source(fixture_id)
    before = read(copy.deepcopy(data), fmt)
    there, first = write(before, target)
    back, second = write(read(there, target), fmt)
    after = read(back, fmt)
    problems = _missing(before, after, Excused(first, second))
    report = "\n  ".join(map(str, [*first, *second])) or "(nothing)"
    if problems:
        pytest.fail(f"{fmt} -> {target} -> {fmt} lost, without reporting it:\n  " + "\n  ".join(problems)
                    + f"\nloss reports ({fmt} -> {target}, then back):\n  {report}", pytrace=False)


def test_readme_format_matrix_is_current():
    """The README's matrix is what the code does today (regenerate: python -m store.formats.report)."""
    from pathlib import Path

    from store.formats.report import markdown

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert markdown() in readme


_DROPPING = [(fixture_id, target) for fixture_id in sorted(FIXTURES) for target in FORMATS
             if target not in CARRIES_BLOCK_NOTES and target != FIXTURES[fixture_id][0]]


@pytest.mark.parametrize(("fixture_id", "target"), _DROPPING)
def test_a_blocks_source_keys_a_target_drops_are_reported(fixture_id, target):
    """A block's unknown source keys (Anthropic ``cache_control``, a Responses item's ``id`` and
    ``annotations``, an OpenAI image's ``detail``) that a target without an extension field cannot
    write are reported dropped, ``<kind>.extras.<format>.<key>``; they went without a word."""
    fmt, path = FIXTURES[fixture_id]
    data = json.loads(path.read_text(encoding="utf-8"))
    expected = set()
    for message in read(data, fmt):
        for block in message.content:
            parts = [block] + (block.output if isinstance(block, ToolResultBlock) and isinstance(block.output, list)
                               else [])
            for part in parts:
                own = part.extras.get(fmt) or {}
                for note in ("fields", "inner"):
                    expected |= {f"{part.kind}.extras.{fmt}.{k}" for k, v in (own.get(note) or {}).items()
                                 if v not in (None, [], {}) and not (fmt == "openai-responses" and k == "type")}
    _, losses = write(read(data, fmt), target)
    reported = {loss.field for loss in losses}
    whole = {loss.field for loss in losses if loss.action == "dropped"}
    assert {f for f in expected if f.split(".")[0] not in whole} <= reported
    if expected - reported:  # a block dropped whole says so once
        assert {f.split(".")[0] for f in expected - reported} <= whole


def test_strict_refuses_a_blocks_source_keys_it_would_drop():
    items = [{"role": "user", "content": "museums?"},
             {"type": "function_call", "id": "fc_1", "status": "completed", "call_id": "a", "name": "f",
              "arguments": "{}"},
             {"type": "function_call_output", "call_id": "a", "output": "r"}]
    with pytest.raises(LossError, match=r"tool_call\.extras\.openai-responses\.id dropped"):
        write(read(items, "openai-responses"), "openai", strict=True)
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://e.x/y.png",
                                                                              "detail": "high"}}]}]
    with pytest.raises(LossError, match=r"image\.extras\.openai\.detail dropped"):
        write(read(image, "openai"), "openai-responses", strict=True)
