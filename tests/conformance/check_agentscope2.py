"""Conformance checker for the ``agentscope2`` format; runs under the isolated venv int-agentscope.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that AgentScope 2.x
itself accepts and that obeys its ordering rules:

- each message loads with ``agentscope.message.Msg.model_validate`` (the way the
  library's own SQL and Redis storage read messages back), which also enforces
  what each role may hold (user: text and data; system: text);
- no key is silently dropped by loading (2.x ignores unknown keys, except on
  thinking blocks), so what was written is what AgentScope sees;
- every ``tool_result`` answers a ``tool_call`` with the same id made earlier: in
  the same message (before it) or in an earlier one; and no call is answered twice.
  A conversation may end with calls still pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from agentscope.message import Msg

MAX_ERRORS = 20
OPEN_EXTRAS = {"thinking"}
"""Block types whose model keeps unknown keys (``extra="allow"``)."""


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _dropped(given: Any, kept: Any, loc: tuple[Any, ...], errors: list[str], prefix: str) -> None:
    """Keys of ``given`` that loading did not keep: not fields of the 2.x models."""
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                errors.append(f"{prefix}{_where((*loc, key))}: unknown key (AgentScope 2.x drops it)")
            else:
                _dropped(value, kept[key], (*loc, key), errors, prefix)
    elif isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        for i, (g, k) in enumerate(zip(given, kept)):
            _dropped(g, k, (*loc, i), errors, prefix)


def _shape_errors(index: int, payload: Any) -> tuple[list[str], Msg | None]:
    prefix = f"message {index}: "
    if not isinstance(payload, dict):
        return [f"{prefix}expected an object, got {type(payload).__name__}"], None
    try:
        msg = Msg.model_validate(payload)
    except pydantic.ValidationError as exc:
        return [f"{prefix}{_where(e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)], None
    errors: list[str] = []
    _dropped(payload, msg.model_dump(mode="json"), (), errors, prefix)
    return errors, msg


def _order_errors(msgs: list[tuple[int, Msg]]) -> list[str]:
    errors: list[str] = []
    called: dict[str, int] = {}
    answered: set[str] = set()
    for index, msg in msgs:
        for pos, block in enumerate(msg.content):
            where = f"message {index}: content.{pos}: "
            if block.type == "tool_call":
                if block.id in called:
                    errors.append(f"{where}tool call id {block.id!r} is used twice")
                called[block.id] = index
            elif block.type == "tool_result":
                if block.id not in called:
                    errors.append(f"{where}tool_result {block.id!r} answers no tool_call made before it "
                                  "(in this message or an earlier one)")
                elif block.id in answered:
                    errors.append(f"{where}tool call {block.id!r} is answered a second time")
                answered.add(block.id)
    return errors


def check(value: Any) -> list[str]:
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    errors: list[str] = []
    loaded: list[tuple[int, Msg]] = []
    for index, payload in enumerate(value):
        found, msg = _shape_errors(index, payload)
        errors.extend(found)
        if msg is not None:
            loaded.append((index, msg))
    errors.extend(_order_errors(loaded))
    more = [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    return errors[:MAX_ERRORS] + more


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
