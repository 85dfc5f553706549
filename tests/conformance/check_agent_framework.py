"""Conformance checker for the ``agent-framework`` format; runs under the isolated venv int-agent-framework.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that
agent-framework-core's own ``agent_framework.Message.from_dict`` accepts and that obeys
the framework's rules:

- ``Message.from_dict`` raises nothing (it raises ``TypeError`` on unknown keys) and
  skips no content (it logs and drops contents it cannot build);
- ``to_dict()`` of the loaded message gives the input back: the value is exactly what
  the package writes (``type: "message"``, ``additional_properties`` everywhere,
  ``hosted`` on calls, the redacted ``exception`` marker, ...);
- every content, also nested ones (``items``, approval ``function_call``), has a
  ``type`` of the package's ``ContentType`` literal and the fields its ``Content.from_*``
  constructor requires; ``data`` / ``uri`` contents pass the package's ``_validate_uri``
  and are of the type it assigns to their URI;
- ``function_result`` contents sit in ``role: "tool"`` messages and each answers a
  ``function_call`` of an earlier message, once. A conversation may end with calls
  still pending: a stored conversation can stop there.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import logging
import sys
import typing
from typing import Any

from agent_framework import Message
from agent_framework._types import ContentType, _validate_uri

CONTENT_TYPES = frozenset(typing.get_args(ContentType))
REQUIRED = {  # what the Content.from_* constructors require
    "function_call": ("call_id", "name"),
    "function_result": ("call_id",),
    "usage": ("usage_details",),
    "hosted_file": ("file_id",),
    "function_approval_request": ("id", "function_call"),
    "function_approval_response": ("id", "function_call", "approved"),
    "data": ("uri", "media_type"),
    "uri": ("uri",),
}
MAX_ERRORS = 20


class _Collect(logging.Handler):
    """Warnings the package logs while loading (it skips contents it cannot build)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            if key not in a:
                return f"{path}.{key}: absent in the input, written by to_dict()"
            if key not in b:
                return f"{path}.{key}: not written back by to_dict()"
            if (found := _first_difference(a[key], b[key], f"{path}.{key}")) is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if (found := _first_difference(x, y, f"{path}[{i}]")) is not None:
                return found
        return None
    return None if a == b and type(a) is type(b) else f"{path}: {a!r} comes back as {b!r}"


def _content_errors(where: str, content: Any) -> list[str]:
    if not isinstance(content, dict):
        return [f"{where}: expected a content object, got {type(content).__name__}"]
    kind = content.get("type")
    if kind not in CONTENT_TYPES:
        return [f"{where}.type: {kind!r} is not one of the package's ContentType values"]
    errors = [f"{where}.{field}: required for a {kind} content" for field in REQUIRED.get(kind, ())
              if content.get(field) is None]
    if kind in ("data", "uri") and isinstance(content.get("uri"), str):
        try:
            expected = _validate_uri(content["uri"], content.get("media_type"))["type"]
        except Exception as exc:  # ContentError: the package's own verdict on the URI
            errors.append(f"{where}.uri: {exc}")
        else:
            if expected != kind:
                errors.append(f"{where}.type: the package makes this URI a {expected!r} content, "
                              f"not {kind!r}")
    for i, item in enumerate(content.get("items") or []):
        errors += _content_errors(f"{where}.items[{i}]", item)
    if isinstance(content.get("function_call"), dict):
        errors += _content_errors(f"{where}.function_call", content["function_call"])
    return errors


def _message_errors(index: int, msg: Any, handler: _Collect) -> list[str]:
    prefix = f"message {index}"
    if not isinstance(msg, dict):
        return [f"{prefix}: expected an object, got {type(msg).__name__}"]
    handler.records.clear()
    try:
        loaded = Message.from_dict(msg)
    except Exception as exc:  # TypeError on unknown keys, ValueError on a wrong type, ...
        return [f"{prefix}: Message.from_dict rejects it: {type(exc).__name__}: {exc}"]
    errors = [f"{prefix}: Message.from_dict: {record}" for record in handler.records]
    if not isinstance(msg.get("role"), str):
        errors.append(f"{prefix}.role: expected a string")
    if (diff := _first_difference(msg, loaded.to_dict())) is not None:
        errors.append(f"{prefix}: not what Message.to_dict() writes: {diff.lstrip('.')}")
    contents = msg.get("contents")
    for i, content in enumerate(contents if isinstance(contents, list) else []):
        errors += _content_errors(f"{prefix}.contents[{i}]", content)
    return errors


def _order_errors(messages: list[Any]) -> list[str]:
    errors: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for index, msg in enumerate(messages):
        contents = msg.get("contents") if isinstance(msg, dict) else None
        new_calls = []
        for i, content in enumerate(contents if isinstance(contents, list) else []):
            if not isinstance(content, dict):
                continue
            where = f"message {index}.contents[{i}]"
            call_id = content.get("call_id")
            if content.get("type") == "function_call":
                new_calls.append(call_id)
            elif content.get("type") == "function_result":
                if msg.get("role") != "tool":
                    errors.append(f"{where}: a function_result belongs in a role 'tool' message, "
                                  f"not {msg.get('role')!r}")
                if call_id in answered:
                    errors.append(f"{where}: answers call {call_id!r} a second time")
                elif call_id not in called:
                    errors.append(f"{where}: answers {call_id!r}, which no earlier message called")
                answered.add(call_id)
        called.update(c for c in new_calls if isinstance(c, str))
        # a call id used again (an approved call issued anew) may be answered again
        answered.difference_update(new_calls)
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    handler = _Collect()
    logger = logging.getLogger("agent_framework")
    logger.addHandler(handler)
    try:
        errors = [e for index, msg in enumerate(value) for e in _message_errors(index, msg, handler)]
    finally:
        logger.removeHandler(handler)
    errors += _order_errors(value)
    more = [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    return errors[:MAX_ERRORS] + more


def main() -> None:
    logging.getLogger("agent_framework").propagate = False  # keep stderr for real crashes
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
