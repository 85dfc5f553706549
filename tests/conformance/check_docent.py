"""Conformance checker for the ``docent`` format; runs under the isolated venv conf-docent.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that the real
``docent`` package accepts and that passes Docent's own sanity checks:

- each message loads with ``docent.data_models.chat.parse_chat_message`` (which
  dispatches on ``role`` to the ``ChatMessage`` classes) and the whole list with the
  ``ChatMessage`` union and ``Transcript(messages=...)``;
- no key is silently dropped: every key given is a field of the Docent class that
  loaded it (pydantic ignores unknown keys, so what convstore writes there is lost);
- ``check_messages()`` (``docent.data_models.chat.checks``) reports no warning:
  consecutive assistant or user messages, empty messages, late system messages, a
  conversation starting with a tool message, tool calls interrupted or never answered,
  orphan or duplicate tool responses, missing ids or function names, reasoning
  embedded as text. Docent only warns about these; here every warning is a failure.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from docent.data_models.chat import ChatMessage, check_messages, parse_chat_message
from docent.data_models.transcript import Transcript

MESSAGES = pydantic.TypeAdapter(list[ChatMessage])
MAX_ERRORS = 20


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _dropped_keys(given: Any, kept: Any, prefix: str, loc: tuple[Any, ...], errors: list[str]) -> None:
    """Keys of ``given`` that loading dropped: the Docent class has no such field."""
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                errors.append(f"{prefix}{_where((*loc, key))}: unknown key (Docent drops it silently)")
            else:
                _dropped_keys(value, kept[key], prefix, (*loc, key), errors)
    elif isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        for i, (g, k) in enumerate(zip(given, kept)):
            _dropped_keys(g, k, prefix, (*loc, i), errors)


def _load(index: int, msg: Any) -> tuple[Any, list[str]]:
    prefix = f"message {index}: "
    if not isinstance(msg, dict):
        return None, [f"{prefix}expected an object, got {type(msg).__name__}"]
    try:
        parsed = parse_chat_message(msg)
    except pydantic.ValidationError as exc:
        return None, [f"{prefix}{_where(e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
    except ValueError as exc:  # parse_chat_message's own "Unknown message role"
        return None, [f"{prefix}{exc}"]
    errors: list[str] = []
    _dropped_keys(msg, parsed.model_dump(mode="json"), prefix, (), errors)
    return parsed, errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    errors: list[str] = []
    parsed = []
    for index, msg in enumerate(value):
        message, problems = _load(index, msg)
        errors.extend(problems)
        parsed.append(message)
    if any(message is None for message in parsed):
        return _capped(errors)
    try:  # the union and the container Docent stores messages in must agree
        MESSAGES.validate_python(value)
        Transcript(messages=parsed)
    except pydantic.ValidationError as exc:
        errors.extend(
            f"list[ChatMessage]: {_where(e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)
        )
    report = check_messages(parsed)
    errors.extend(f"check_messages {w.code} at {w.path}: {w.message}" for w in report.warnings)
    return _capped(errors)


def _capped(errors: list[str]) -> list[str]:
    return errors[:MAX_ERRORS] + (
        [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    )


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
