"""Conformance checker for the ``pydantic-ai`` format; runs under the isolated venv conf-pydantic-ai.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means that the real ``pydantic-ai-slim``:

- loads the value with ``ModelMessagesTypeAdapter.validate_python`` (as a JSON-ready
  object) and with ``validate_json`` (as the JSON text), to equal histories (but for the
  timestamps and call ids it fills in where they are absent);
- keeps every key it was given: pydantic's dataclasses silently ignore keys they do not
  declare, so a key missing from ``dump_python(mode="json")`` of what was loaded is an
  error (a legacy ``retry-prompt`` part, which 2.x loads as the part it means, is
  compared by its content and tool call id instead);
- and that the history is in an order a model can be sent: every tool return, retry of
  a tool call and builtin tool return answers a call made before it (by a response for a
  tool return, by the same response for a builtin one), each call is answered at most
  once, and calls are answered in the request right after their response. A history may
  end with calls still pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import pydantic

warnings.simplefilter("ignore")  # legacy parts warn on load; chatter must not reach stdout

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse  # noqa: E402

MAX_ERRORS = 20


def _errors(prefix: str, exc: pydantic.ValidationError) -> list[str]:
    return [f"{prefix}{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)][:10]


def _unknown_keys(given: Any, dumped: Any, loc: str, out: list[str]) -> None:
    if isinstance(given, dict) and isinstance(dumped, dict):
        if given.get("part_kind") == "retry-prompt":  # loaded as the part it means; compared below
            for key in ("content", "tool_call_id"):
                if key in given and given[key] != dumped.get(key):
                    out.append(f"{loc}.{key}: {given[key]!r} loaded as {dumped.get(key)!r}")
            return
        for key, value in given.items():
            if key not in dumped:
                out.append(f"{loc}.{key}: unknown key (pydantic-ai ignores it)")
            else:
                _unknown_keys(value, dumped[key], f"{loc}.{key}", out)
    elif isinstance(given, list) and isinstance(dumped, list) and len(given) == len(dumped):
        for i, (g, d) in enumerate(zip(given, dumped)):
            _unknown_keys(g, d, f"{loc}.{i}", out)


_FILLED = ("timestamp", "tool_call_id")
"""Keys pydantic-ai fills when absent (the time of loading, a fresh id): not compared then."""


def _given_only(dumped: Any, given: Any) -> Any:
    if isinstance(dumped, dict) and isinstance(given, dict):
        return {k: _given_only(v, given.get(k)) for k, v in dumped.items() if k in given or k not in _FILLED}
    if isinstance(dumped, list) and isinstance(given, list) and len(given) == len(dumped):
        return [_given_only(d, g) for d, g in zip(dumped, given)]
    return dumped


_RETURNS = {"tool-return", "retry-prompt"}


def _order(messages: list[Any]) -> list[str]:
    """Tool calls answered where a model accepts them (see the module docstring)."""
    errors: list[str] = []
    pending: set[str] = set()  # calls of the last response, unanswered
    answered: set[str] = set()
    for index, msg in enumerate(messages):
        if isinstance(msg, ModelResponse):
            if pending:
                errors.append(f"message {index}: a response follows unanswered tool calls {sorted(pending)}")
            pending = set()
            builtin: set[str] = set()
            for part in msg.parts:
                if part.part_kind == "tool-call":
                    pending.add(part.tool_call_id)
                elif part.part_kind == "builtin-tool-call":
                    builtin.add(part.tool_call_id)
                elif part.part_kind == "builtin-tool-return" and part.tool_call_id not in builtin:
                    errors.append(f"message {index}: builtin tool return {part.tool_call_id!r} answers no "
                                  "builtin call before it in this response")
            continue
        for part in msg.parts:
            call_id = getattr(part, "tool_call_id", None)
            if part.part_kind not in _RETURNS or call_id is None:
                continue
            if call_id in answered:
                errors.append(f"message {index}: tool call {call_id!r} is answered twice")
            elif call_id not in pending:
                errors.append(f"message {index}: tool return {call_id!r} answers no call of the response before it")
            answered.add(call_id)
            pending.discard(call_id)
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a list of messages, got {type(value).__name__}"]
    try:
        loaded = ModelMessagesTypeAdapter.validate_python(value)
    except pydantic.ValidationError as exc:
        return _errors("validate_python: ", exc)
    try:
        from_json = ModelMessagesTypeAdapter.validate_json(json.dumps(value))
    except pydantic.ValidationError as exc:
        return _errors("validate_json: ", exc)
    errors: list[str] = []
    dumped = ModelMessagesTypeAdapter.dump_python(loaded, mode="json")
    if _given_only(ModelMessagesTypeAdapter.dump_python(from_json, mode="json"), value) != _given_only(dumped, value):
        errors.append("validate_python and validate_json load different histories")
    for index, (given, out) in enumerate(zip(value, dumped)):
        _unknown_keys(given, out, f"message {index}", errors)
    if not all(isinstance(m, (ModelRequest, ModelResponse)) for m in loaded):
        errors.append("not every message loaded as a ModelRequest or ModelResponse")
    else:
        errors.extend(_order(loaded))
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
