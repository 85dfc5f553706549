"""Conformance checker for the ``anthropic`` format; runs under the isolated venv int-openai-agents.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a request body ``{"system"?, "messages", ...}``
(or a bare list of messages) that the real ``anthropic`` SDK's own types accept and
that obeys the Messages API's rules:

- ``system`` validates as the create params' ``system`` type, any other top-level key
  as its create-params type (an undeclared key is an error);
- each message validates as the ``anthropic.types.MessageParam`` member its ``role``
  selects, each content block as the SDK param type its ``type`` selects, with every
  lazily validated ``Iterable`` consumed, and no key the SDK type does not declare
  (TypedDicts silently drop unknown keys; the API rejects them); then the whole list
  as ``list[MessageParam]``;
- no empty or whitespace-only text (the API rejects it), no empty content except in
  a final assistant message;
- tool_use, thinking and redacted_thinking only in assistant messages; tool_result,
  image and document only in user messages; tool_use ids match ``[A-Za-z0-9_-]+`` and
  are unique;
- the first message after any system messages is a user message;
- every tool_use is answered by tool_result blocks with the same ids, each once, at
  the start of the next message, which is a user message; no tool_result answers an
  id the assistant message before it did not use. A conversation may end with calls
  still pending: a stored conversation can stop there.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import typing
from typing import Any

import pydantic
from _sdkcheck import materialize, pydantic_errors, unknown_keys, where
from anthropic.types import ContentBlockParam, MessageParam, message_create_params

MAX_ERRORS = 20
PARAMS = typing.get_type_hints(message_create_params.MessageCreateParamsNonStreaming)
MESSAGES = pydantic.TypeAdapter(list[MessageParam])
ID = re.compile(r"[A-Za-z0-9_-]+")
ONLY_IN = {"tool_use": "assistant", "thinking": "assistant", "redacted_thinking": "assistant",
           "tool_result": "user", "image": "user", "document": "user"}


def _literal_adapters(union: Any, key: str) -> dict[str, pydantic.TypeAdapter[Any]]:
    """value of ``key`` -> adapter of the member of ``union`` (read from the SDK) it selects."""
    adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
    for member in typing.get_args(union):
        adapter = pydantic.TypeAdapter(member)
        schema = adapter.json_schema()["properties"][key]
        for value in schema.get("enum", [schema.get("const")]):
            adapters[value] = adapter
    return adapters


ROLES = _literal_adapters(MessageParam, "role")
ROLE_KEYS = {role: set(adapter.json_schema()["properties"]) for role, adapter in ROLES.items()}
BLOCKS = _literal_adapters(ContentBlockParam, "type")


@functools.cache
def _top(key: str) -> pydantic.TypeAdapter[Any]:
    """The adapter of a create parameter, built on first use (the ``tools`` union is large)."""
    return pydantic.TypeAdapter(PARAMS[key])


_where = where
_materialize = materialize
_unknown_keys = functools.partial(unknown_keys, sdk="anthropic")


def _pydantic_errors(prefix: str, exc: pydantic.ValidationError, loc: tuple[Any, ...] = ()) -> list[str]:
    return pydantic_errors(prefix, exc, loc)[:5]


def _validated(adapter: pydantic.TypeAdapter[Any], value: Any, prefix: str, loc: tuple[Any, ...]) -> list[str]:
    try:
        validated = adapter.validate_python(value)
    except pydantic.ValidationError as exc:
        return _pydantic_errors(prefix, exc, loc)
    errors: list[str] = []
    kept = _materialize(validated, prefix, loc, errors)
    if not errors:
        _unknown_keys(value, kept, prefix, loc, errors)
    return errors


def _empty_text(value: Any, prefix: str, loc: tuple[Any, ...]) -> list[str]:
    """Empty or whitespace-only text anywhere in ``value`` (blocks, nested tool results)."""
    if isinstance(value, list):
        return [e for i, v in enumerate(value) for e in _empty_text(v, prefix, (*loc, i))]
    if isinstance(value, dict):
        if value.get("type") == "text" and isinstance(value.get("text"), str) and not value["text"].strip():
            return [f"{prefix}{_where(loc)}: empty text block (the API rejects it)"]
        if value.get("type") == "tool_result" and isinstance(value.get("content"), list):
            return _empty_text(value["content"], prefix, (*loc, "content"))
    return []


def _message_errors(index: int, msg: Any, last: bool) -> list[str]:
    prefix = f"message {index}: "
    if not isinstance(msg, dict):
        return [f"{prefix}expected an object, got {type(msg).__name__}"]
    role = msg.get("role")
    if role not in ROLES:
        return [f"{prefix}role {role!r} is not one of {sorted(ROLES)}"]
    errors = [f"{prefix}{key}: unknown key (not a field of the anthropic SDK type)"
              for key in msg.keys() - ROLE_KEYS[role]]
    content = msg.get("content")
    if isinstance(content, list):
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in BLOCKS:
                errors.append(f"{prefix}content.{j}: block type {kind!r} is not one of the SDK's")
                continue
            errors.extend(_validated(BLOCKS[kind], block, prefix, ("content", j)))
            if ONLY_IN.get(kind, role) != role and role != "system":
                errors.append(f"{prefix}content.{j}: a {kind} block in a {role} message (the API takes it "
                              f"only in {ONLY_IN[kind]} messages)")
            if kind == "tool_use" and not ID.fullmatch(str(block.get("id", ""))):
                errors.append(f"{prefix}content.{j}.id: {block.get('id')!r} does not match [A-Za-z0-9_-]+")
        if not content and not (last and role == "assistant"):
            errors.append(f"{prefix}content: empty (only a final assistant message may be empty)")
    elif isinstance(content, str) and not content.strip():
        errors.append(f"{prefix}content: empty text (the API rejects it)")
    if not errors:  # each block's own type first: a union's errors would list every member
        errors = _validated(ROLES[role], msg, prefix, ())
    return errors + _empty_text(content, prefix, ("content",))


def _ids(msg: Any, kind: str, key: str) -> list[Any]:
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return []
    return [b.get(key) for b in content if isinstance(b, dict) and b.get("type") == kind]


def _order_errors(messages: list[Any]) -> list[str]:
    errors: list[str] = []
    chat = [(i, m) for i, m in enumerate(messages) if not (isinstance(m, dict) and m.get("role") == "system")]
    if chat and chat[0][1].get("role") != "user":
        errors.append(f"message {chat[0][0]}: the first message is {chat[0][1].get('role')!r}, not 'user'")
    seen: set[Any] = set()
    calls: list[Any] = []
    for index, msg in enumerate(messages):
        role = msg.get("role")
        if calls and role != "user":
            errors.append(f"message {index}: {role} message follows tool_use {calls} without their results")
        if role == "user":
            errors.extend(_answer_errors(index, msg, calls))
        calls = _ids(msg, "tool_use", "id") if role == "assistant" else []
        for call_id in calls:
            if call_id in seen:
                errors.append(f"message {index}: tool_use id {call_id!r} is used twice")
            seen.add(call_id)
    return errors


def _answer_errors(index: int, msg: dict[str, Any], calls: list[Any]) -> list[str]:
    content = msg.get("content") if isinstance(msg.get("content"), list) else []
    kinds = [b.get("type") if isinstance(b, dict) else None for b in content]
    lead = next((j for j, k in enumerate(kinds) if k != "tool_result"), len(kinds))
    errors = []
    if "tool_result" in kinds[lead:]:
        errors.append(f"message {index}: tool_result blocks must come first in the message")
    answered = [b.get("tool_use_id") for b in content[:lead]]
    for call_id in answered:
        if call_id not in calls:
            errors.append(f"message {index}: tool_result answers {call_id!r}, which the assistant message "
                          "before it did not use")
    if len(set(answered)) != len(answered):
        errors.append(f"message {index}: a tool_use is answered twice")
    missing = [c for c in calls if c not in answered]
    if missing:
        errors.append(f"message {index}: tool_use {missing} of the message before are not answered first here")
    return errors


def check(value: Any) -> list[str]:
    errors: list[str] = []
    if isinstance(value, dict):
        messages = value.get("messages")
        for key, item in value.items():
            if key == "messages":
                continue
            if key not in PARAMS:
                errors.append(f"{key}: not a parameter of messages.create")
                continue
            errors.extend(_validated(_top(key), item, f"{key}: ", ()))
            if key == "system":
                errors.extend(_empty_text(item, "system: ", ()))
    else:
        messages = value
    if not isinstance(messages, list):
        return [f"expected an object with a messages list (or a list), got {type(value).__name__}"]
    for index, msg in enumerate(messages):
        errors.extend(_message_errors(index, msg, index == len(messages) - 1))
    if not errors:  # the union as the SDK declares it: must agree with the per-role checks
        try:
            _materialize(MESSAGES.validate_python(messages), "", (), errors)
        except pydantic.ValidationError as exc:
            errors.extend(_pydantic_errors("list[MessageParam]: ", exc))
    if all(isinstance(m, dict) for m in messages):
        errors.extend(_order_errors(messages))
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
