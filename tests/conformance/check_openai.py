"""Conformance checker for the ``openai`` format; runs under the isolated venv int-openai-agents.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that the real
``openai`` SDK's own types accept and that obeys the API's ordering rules:

- each message validates as the SDK type its ``role`` selects (a member of
  ``openai.types.chat.ChatCompletionMessageParam``), with every nested ``Iterable``
  consumed, since pydantic validates those lazily;
- no key the SDK type does not declare (TypedDicts silently drop unknown keys;
  the API rejects them), no empty ``tool_calls`` or content arrays, and assistant
  ``content`` only optional when the message calls a tool;
- the whole list validates as ``list[ChatCompletionMessageParam]``;
- every ``tool_calls[].id`` is answered by ``tool`` messages before the next
  non-tool message, and no ``tool`` message answers an id that the assistant message
  just before it did not call (or answers one twice). A conversation may end with
  calls still pending: a stored conversation can stop there.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import pydantic
from _sdkcheck import check_list, materialize, pydantic_errors, serve, unknown_keys, where
from openai.types.chat import ChatCompletionMessageParam

MESSAGES = pydantic.TypeAdapter(list[ChatCompletionMessageParam])


def _role_adapters() -> dict[str, pydantic.TypeAdapter[Any]]:
    """role -> adapter of the SDK TypedDict that role selects, read from the SDK itself."""
    adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
    for member in typing.get_args(ChatCompletionMessageParam):
        adapter = pydantic.TypeAdapter(member)
        role = adapter.json_schema()["properties"]["role"]
        for value in role.get("enum", [role.get("const")]):
            adapters[value] = adapter
    return adapters


ROLES = _role_adapters()


_where = where
_materialize = materialize
_unknown_keys = functools.partial(unknown_keys, sdk="openai")
_pydantic_errors = pydantic_errors


def _shape_errors(index: int, msg: Any) -> list[str]:
    prefix = f"message {index}: "
    if not isinstance(msg, dict):
        return [f"{prefix}expected an object, got {type(msg).__name__}"]
    adapter = ROLES.get(msg.get("role"))  # type: ignore[arg-type]
    if adapter is None:
        return [f"{prefix}role {msg.get('role')!r} is not one of {sorted(ROLES)}"]
    try:
        validated = adapter.validate_python(msg)
    except pydantic.ValidationError as exc:
        return _pydantic_errors(prefix, exc)
    errors: list[str] = []
    kept = _materialize(validated, prefix, (), errors)
    if not errors:
        _unknown_keys(msg, kept, prefix, (), errors)
    errors.extend(_rules(prefix, msg))
    return errors


def _rules(prefix: str, msg: dict[str, Any]) -> list[str]:
    """What the API requires beyond the TypedDicts."""
    errors = []
    if msg.get("tool_calls") == []:
        errors.append(f"{prefix}tool_calls: empty array (the API wants at least one call or no key)")
    if msg.get("content") == []:
        errors.append(f"{prefix}content: empty array (the API wants at least one part)")
    if msg["role"] == "assistant" and msg.get("content") is None and not msg.get("tool_calls") \
            and not msg.get("function_call"):
        errors.append(f"{prefix}content: required unless the assistant message has tool_calls or function_call")
    return errors


def _order_errors(messages: list[Any]) -> list[str]:
    errors: list[str] = []
    pending: dict[str, int] = {}  # call id -> index of the assistant message that made the call
    answered: set[str] = set()
    for index, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id in pending:
                del pending[call_id]
                answered.add(call_id)
            elif call_id in answered:
                errors.append(f"message {index}: tool message answers call {call_id!r} a second time")
            else:
                errors.append(f"message {index}: tool message answers {call_id!r}, which the assistant "
                              "message before it did not call")
            continue
        if pending:
            callers = sorted(set(pending.values()))
            errors.append(f"message {index}: {role} message comes before tool calls {sorted(pending)} "
                          f"(of message {', '.join(map(str, callers))}) are answered")
        pending, answered = {}, set()
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                call_id = call.get("id") if isinstance(call, dict) else None
                if call_id in pending:
                    errors.append(f"message {index}: tool call id {call_id!r} is used twice")
                elif isinstance(call_id, str):
                    pending[call_id] = index
    return errors


def check(value: Any) -> list[str]:
    return check_list(value, noun="messages", shape_errors=_shape_errors, adapter=MESSAGES,
                      label="list[ChatCompletionMessageParam]", order_errors=_order_errors)


if __name__ == "__main__":
    serve(check)
