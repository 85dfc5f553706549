"""Conformance checker for the ``openai-responses`` format; runs under the isolated venv int-openai-agents.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of Responses input items that the real
``openai`` SDK's own types accept and that obeys the API's ordering rules:

- each item validates as one of the SDK types its ``type`` selects (members of
  ``openai.types.responses.ResponseInputItemParam``; a message without ``type`` is an easy
  or input message, an item with only an ``id`` an item reference), with every nested
  ``Iterable`` consumed, since pydantic validates those lazily;
- no key the SDK type does not declare (TypedDicts silently drop unknown keys; the API
  rejects them), no empty content arrays, an image part with an ``image_url`` or a
  ``file_id``, a file part with data, an id or a URL, and a ``call_id`` on every call output;
- the whole list validates as ``ResponseInputParam``;
- every call output answers an earlier call of its kind (``function_call_output`` a
  ``function_call``, ``custom_tool_call_output`` a ``custom_tool_call``), once; every call is
  answered before the next user, system or developer message (a conversation may end with
  calls still pending: a stored conversation can stop there); call ids are unique;
- a reasoning item is followed by the model output it led to (another model item) or ends
  the list.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import pydantic
from _sdkcheck import check_list, materialize, pydantic_errors, serve, unknown_keys
from openai.types.responses import ResponseInputItemParam, ResponseInputParam

ITEMS = pydantic.TypeAdapter(ResponseInputParam)
_unknown_keys = functools.partial(unknown_keys, sdk="openai")

ANSWERS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}
INPUT_ROLES = {"user", "system", "developer"}
NOT_MODEL_OUTPUT = {"message", "function_call_output", "custom_tool_call_output", "computer_call_output",
                    "local_shell_call_output", "shell_call_output", "apply_patch_call_output", "tool_search_output",
                    "mcp_approval_response", "program_output", "additional_tools", "configuration_update",
                    "compaction_trigger", "item_reference"}
"""Item types that are not model output (an assistant message is, and is told by its role)."""


def _type_adapters() -> dict[str | None, list[tuple[str, pydantic.TypeAdapter[Any]]]]:
    """item type -> the SDK TypedDicts that type selects, read from the SDK itself."""
    adapters: dict[str | None, list[tuple[str, pydantic.TypeAdapter[Any]]]] = {}
    for member in typing.get_args(ResponseInputItemParam):
        adapter = pydantic.TypeAdapter(member)
        schema = adapter.json_schema()
        kind = schema["properties"].get("type", {})
        values = [v for k in kind.get("anyOf", [kind]) for v in k.get("enum", [k.get("const")]) if v is not None]
        if "type" not in schema.get("required", []):
            values = [*values, None]  # easy messages and item references may leave ``type`` out
        for value in values:
            adapters.setdefault(value, []).append((member.__name__, adapter))
    return adapters


ADAPTERS = _type_adapters()


def _kind(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    return "message" if kind is None and ("role" in item or "content" in item) else kind


def _against(adapter: pydantic.TypeAdapter[Any], item: dict[str, Any], prefix: str) -> list[str]:
    try:
        validated = adapter.validate_python(item)
    except pydantic.ValidationError as exc:
        return pydantic_errors(prefix, exc)
    errors: list[str] = []
    kept = materialize(validated, prefix, (), errors)
    if not errors:
        _unknown_keys(item, kept, prefix, (), errors)
    return errors


def _shape_errors(index: int, item: Any) -> list[str]:
    prefix = f"item {index}: "
    if not isinstance(item, dict):
        return [f"{prefix}expected an object, got {type(item).__name__}"]
    candidates = ADAPTERS.get(_kind(item), [])
    if not candidates:
        return [f"{prefix}type {item.get('type')!r} is not an item type of the SDK"]
    tried: list[list[str]] = []
    for name, adapter in candidates:
        errors = _against(adapter, item, prefix)
        if not errors:
            return _rules(prefix, item)
        tried.append([f"{e} (as {name})" for e in errors])
    return min(tried, key=len)


def _parts(item: dict[str, Any]) -> list[Any]:
    value = item.get("content") if _kind(item) == "message" else item.get("output")
    return value if isinstance(value, list) else []


def _rules(prefix: str, item: dict[str, Any]) -> list[str]:
    """What the API requires beyond the TypedDicts."""
    errors = []
    if _kind(item) == "message" and item.get("content") == []:
        errors.append(f"{prefix}content: empty array (the API wants at least one part)")
    if item.get("type") in ANSWERS and not isinstance(item.get("call_id"), str):
        errors.append(f"{prefix}call_id: required (the API links an output to its call by it)")
    for at, part in enumerate(_parts(item)):
        if not isinstance(part, dict):
            continue
        if part.get("type") == "input_image" and not (part.get("image_url") or part.get("file_id")):
            errors.append(f"{prefix}part {at}: an input_image needs image_url or file_id")
        if part.get("type") == "input_file" and not (part.get("file_data") or part.get("file_id")
                                                     or part.get("file_url")):
            errors.append(f"{prefix}part {at}: an input_file needs file_data, file_id or file_url")
    return errors


def _is_model_output(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = _kind(item)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind not in NOT_MODEL_OUTPUT


def _order_errors(items: list[Any]) -> list[str]:
    errors: list[str] = []
    calls: dict[str, tuple[str, int]] = {}  # call id -> (item type, index)
    pending: dict[str, int] = {}
    answered: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind, call_id = _kind(item), item.get("call_id")
        if kind in ANSWERS.values() and isinstance(call_id, str):
            if call_id in calls:
                errors.append(f"item {index}: call id {call_id!r} is used twice")
            calls[call_id] = (kind, index)
            pending[call_id] = index
        elif kind in ANSWERS:
            call = calls.get(call_id)
            if call is None or call[0] != ANSWERS[kind]:
                errors.append(f"item {index}: {kind} answers {call_id!r}, which no {ANSWERS[kind]} before it made")
            elif call_id in answered:
                errors.append(f"item {index}: {kind} answers call {call_id!r} a second time")
            pending.pop(call_id, None)
            answered.add(call_id)
        elif kind == "message" and item.get("role") in INPUT_ROLES and pending:
            errors.append(f"item {index}: {item.get('role')} message comes before calls {sorted(pending)} "
                          f"(items {sorted(set(pending.values()))}) are answered")
            pending = {}
        if kind == "reasoning" and index + 1 < len(items) and not _is_model_output(items[index + 1]):
            errors.append(f"item {index}: a reasoning item must be followed by the model output it led to")
    return errors


def check(value: Any) -> list[str]:
    return check_list(value, noun="items", shape_errors=_shape_errors, adapter=ITEMS,
                      label="ResponseInputParam", order_errors=_order_errors)


if __name__ == "__main__":
    serve(check)
