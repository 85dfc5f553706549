"""Conformance checker for the ``gemini`` format; runs under the isolated venv conf-gemini.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is ``{"system_instruction"?, "contents"}`` (or a
bare list of contents) that the real ``google-genai`` SDK accepts and that keeps to the
API's rules:

- every item of ``contents`` validates with ``types.Content.model_validate`` (the SDK's
  models forbid unknown keys), and dumps back to the same value (nothing ignored); the
  ``system_instruction`` validates as a ``types.Content`` (or is a string) and holds text only;
- roles are ``user`` or ``model``; no content without parts; no empty text part
  (the API refuses it) unless it carries a thought signature;
- every part holds exactly one kind of data (text, inline_data, ...);
- function_call parts only in model turns, function_response parts only in user turns;
- the turn after a model turn with function calls is a user turn that answers each call
  once, first in the turn and in the calls' order, by ``id`` where the call has one and by
  name where not; no response answers a call the model turn before did not make. A
  conversation may end with calls still pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from google.genai import types

MAX_ERRORS = 20
DATA = ("text", "inline_data", "file_data", "function_call", "function_response", "executable_code",
        "code_execution_result", "tool_call", "tool_response")
ONLY_IN = {"function_call": "model", "function_response": "user"}
TOP = {"system_instruction", "contents"}


def _content(value: Any, prefix: str) -> tuple[types.Content | None, list[str]]:
    try:
        content = types.Content.model_validate(value)
    except pydantic.ValidationError as exc:
        return None, [f"{prefix}{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()][:5]
    if content.model_dump(mode="json", exclude_none=True) != value:
        return content, [f"{prefix}does not dump back to the same value (a field was ignored or coerced)"]
    return content, []


def _part_errors(part: types.Part, role: str | None, prefix: str) -> list[str]:
    kinds = [k for k in DATA if getattr(part, k) is not None]
    errors = []
    if len(kinds) != 1 and not (not kinds and part.thought_signature is not None):
        errors.append(f"{prefix}holds {kinds or 'no data'}: a part holds exactly one kind of data")
    for kind in kinds:
        if ONLY_IN.get(kind, role) != role:
            errors.append(f"{prefix}a {kind} in a {role} turn (the API takes it only in {ONLY_IN[kind]} turns)")
    if part.text is not None and not part.text and part.thought_signature is None:
        errors.append(f"{prefix}empty text (the API refuses it)")
    return errors


def _turn_errors(index: int, content: types.Content) -> list[str]:
    prefix = f"contents.{index}: "
    if content.role not in ("user", "model"):
        return [f"{prefix}role {content.role!r} is not user or model"]
    if not content.parts:
        return [f"{prefix}no parts (the API refuses an empty content)"]
    return [e for j, p in enumerate(content.parts) for e in _part_errors(p, content.role, f"{prefix}parts.{j}: ")]


def _answers(resp: types.FunctionResponse, call: types.FunctionCall) -> bool:
    return resp.id == call.id if call.id is not None or resp.id is not None else resp.name == call.name


def _order_errors(contents: list[types.Content]) -> list[str]:
    errors: list[str] = []
    calls: list[types.FunctionCall] = []
    for index, content in enumerate(contents):
        parts = content.parts or []
        responses = [p.function_response for p in parts if p.function_response is not None]
        lead = next((j for j, p in enumerate(parts) if p.function_response is None), len(parts))
        if calls and content.role != "user":
            errors.append(f"contents.{index}: a {content.role} turn follows function calls without their responses")
        elif calls:
            if lead != len(responses):
                errors.append(f"contents.{index}: function responses must come first in the turn")
            if len(responses) != len(calls) or not all(_answers(r, c) for r, c in zip(responses, calls)):
                errors.append(f"contents.{index}: responses {[(r.name, r.id) for r in responses]} do not answer "
                              f"the calls {[(c.name, c.id) for c in calls]} once each, in order")
        elif responses:
            errors.append(f"contents.{index}: function responses answer no call of the turn before")
        calls = [p.function_call for p in parts if p.function_call is not None] if content.role == "model" else []
        if len({c.id for c in calls if c.id is not None}) != len([c for c in calls if c.id is not None]):
            errors.append(f"contents.{index}: two function calls share an id")
    return errors


def check(value: Any) -> list[str]:
    errors: list[str] = []
    if isinstance(value, dict):
        errors += [f"{key}: not a key of the request (system_instruction, contents)" for key in value.keys() - TOP]
        contents = value.get("contents")
        system = value.get("system_instruction")
        if system is not None and not isinstance(system, str):
            parsed, found = _content(system, "system_instruction: ")
            errors += found
            if parsed is not None:
                errors += [f"system_instruction: part {j} is not text" for j, p in enumerate(parsed.parts or [])
                           if p.text is None]
    else:
        contents = value
    if not isinstance(contents, list):
        return [f"expected contents as a list, got {type(contents).__name__}"]
    parsed_contents = []
    for index, item in enumerate(contents):
        content, found = _content(item, f"contents.{index}: ")
        errors += found
        if content is not None:
            errors += _turn_errors(index, content)
            parsed_contents.append(content)
    if len(parsed_contents) == len(contents):
        errors += _order_errors(parsed_contents)
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
