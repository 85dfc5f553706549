"""Conformance checker for the ``qwen`` format; runs under the isolated venv conf-qwen.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that qwen-agent's own
``qwen_agent.llm.schema.Message`` accepts and that obeys its function-calling rules:

- each message loads as ``Message(**d)`` (the way qwen-agent turns dicts into messages;
  ``ContentItem`` requires exactly one of text/image/file/audio/video), with no key that
  ``Message`` would silently drop, and serializes again (``model_dump``);
- ``function_call`` only on assistant messages, with ``arguments`` a string; function
  messages have a ``name``;
- every function message answers a call of that name made since the last user or system
  message and not answered yet; when the result carries ``extra.function_id`` and a
  pending call has that id, that is the call it answers (so its name must match); a
  conversation may end with calls still pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from qwen_agent.llm.schema import ASSISTANT, FUNCTION, SYSTEM, USER, Message

MAX_ERRORS = 20
FIELDS = frozenset(Message.model_fields)


def _shape_errors(index: int, d: Any) -> list[str]:
    prefix = f"message {index}: "
    if not isinstance(d, dict):
        return [f"{prefix}expected an object, got {type(d).__name__}"]
    try:
        msg = Message(**d)
        msg.model_dump(mode="json")
    except pydantic.ValidationError as exc:
        return [f"{prefix}{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]
    except (TypeError, ValueError, AttributeError) as exc:
        return [f"{prefix}{type(exc).__name__}: {exc}"]
    errors = [f"{prefix}{key}: unknown key (qwen_agent Message drops it)" for key in d if key not in FIELDS]
    if msg.function_call is not None and msg.role != ASSISTANT:
        errors.append(f"{prefix}function_call on a {msg.role} message (only the assistant calls functions)")
    if msg.role == FUNCTION and not msg.name:
        errors.append(f"{prefix}function message without the name of the function it answers")
    if msg.extra is not None and "function_id" in msg.extra and not isinstance(msg.extra["function_id"], str):
        errors.append(f"{prefix}extra.function_id: not a string")
    return errors


def _answer(pending: list[tuple[str, str | None, int]], name: str, function_id: Any) -> tuple[int | None, str]:
    """Index into ``pending`` of the call a result answers, or None and why not."""
    for k, (call_name, call_id, _) in enumerate(pending):
        if function_id is not None and call_id == function_id:
            if call_name != name:
                return None, f"answers call {function_id!r}, which called {call_name!r}, not {name!r}"
            return k, ""
    for k, (call_name, call_id, at) in enumerate(pending):
        if call_name == name:
            if function_id is not None and call_id is not None:
                return None, (f"carries function_id {function_id!r}, but the pending call of {name!r} "
                              f"(message {at}) has id {call_id!r}")
            return k, ""
    return None, f"answers {name!r}, but no call of that name since the last user or system message is unanswered"


def _order_errors(messages: list[Any]) -> list[str]:
    errors: list[str] = []
    pending: list[tuple[str, str | None, int]] = []  # (name, function_id, index of the call message)
    for index, d in enumerate(messages):
        if not isinstance(d, dict):
            continue
        role = d.get("role")
        extra = d.get("extra") if isinstance(d.get("extra"), dict) else {}
        if role in (USER, SYSTEM):
            pending = []
        elif role == ASSISTANT and isinstance(d.get("function_call"), dict):
            pending.append((d["function_call"].get("name"), extra.get("function_id"), index))
        elif role == FUNCTION:
            k, why = _answer(pending, d.get("name"), extra.get("function_id"))
            if k is None:
                errors.append(f"message {index}: function message {why}")
            else:
                del pending[k]
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    errors: list[str] = []
    for index, d in enumerate(value):
        errors.extend(_shape_errors(index, d))
    errors.extend(_order_errors(value))
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
