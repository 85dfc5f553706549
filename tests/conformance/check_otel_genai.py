"""Conformance checker for the ``otel-genai`` format; runs under the isolated venv conf-otel-genai.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}`` on
stdout; an empty list means the value is ``{"system_instructions"?, "input_messages"?,
"output_messages"?}`` (or a bare list of input messages) that the published JSON Schemas of
OpenTelemetry semantic-conventions v1.41.1 (vendored in ``otel_genai_schemas/``) accept:

- each attribute validates against its schema (Draft 2020-12, ``jsonschema``);
- beyond the schemas' ``anyOf``, which lets any malformed part of a known type pass as a
  GenericPart: a part whose ``type`` is one the schema defines validates against that
  definition (a ``blob`` needs ``modality`` and ``content``, ...);
- roles and finish reasons are the schema's well-known values (system/user/assistant/tool;
  stop/length/content_filter/tool_call/error), a blob's ``content`` is base64 and a ``uri``
  is no data URL (the spec: inline data goes in a blob);
- every ``tool_call_response`` with an ``id`` answers an earlier ``tool_call`` with that id, once;
  likewise ``server_tool_call_response`` and ``server_tool_call`` (input, then output messages).

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent / "otel_genai_schemas"
ATTRIBUTES = {"system_instructions": "gen-ai-system-instructions.json",
              "input_messages": "gen-ai-input-messages.json",
              "output_messages": "gen-ai-output-messages.json"}
PART_DEFS = {"text": "TextPart", "reasoning": "ReasoningPart", "tool_call": "ToolCallRequestPart",
             "tool_call_response": "ToolCallResponsePart", "server_tool_call": "ServerToolCallPart",
             "server_tool_call_response": "ServerToolCallResponsePart", "blob": "BlobPart", "file": "FilePart",
             "uri": "UriPart"}
ANSWERS = {"tool_call_response": "tool_call", "server_tool_call_response": "server_tool_call"}
MAX_ERRORS = 20


def _load(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


SCHEMA = {key: _load(name) for key, name in ATTRIBUTES.items()}
for schema in SCHEMA.values():
    Draft202012Validator.check_schema(schema)
VALIDATORS = {key: Draft202012Validator(schema) for key, schema in SCHEMA.items()}
OUTPUT_DEFS = SCHEMA["output_messages"]["$defs"]
PART_VALIDATORS = {kind: Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": OUTPUT_DEFS})
                   for kind, name in PART_DEFS.items()}
ROLES = set(OUTPUT_DEFS["Role"]["enum"])
FINISH_REASONS = set(OUTPUT_DEFS["FinishReason"]["enum"])


def _schema_errors(key: str, value: Any) -> list[str]:
    return [f"{key}.{'.'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in VALIDATORS[key].iter_errors(value)]


def _part_errors(part: Any, where: str) -> list[str]:
    if not isinstance(part, dict) or part.get("type") not in PART_VALIDATORS:
        return []
    errors = [f"{where}.{'.'.join(map(str, e.absolute_path))}: {e.message[:200]} (as a {part['type']} part)"
              for e in PART_VALIDATORS[part["type"]].iter_errors(part)]
    if part["type"] == "blob" and isinstance(part.get("content"), str):
        try:
            base64.b64decode(part["content"], validate=True)
        except (binascii.Error, ValueError):
            errors.append(f"{where}.content: not base64")
    if part["type"] == "uri" and str(part.get("uri", "")).startswith("data:"):
        errors.append(f"{where}.uri: a data URL (the spec puts inline data in a blob part)")
    return errors


def _messages(value: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{key}.{i}", m) for key in ("input_messages", "output_messages")
            for i, m in enumerate(value.get(key) or []) if isinstance(m, dict)]


def _semantic_errors(value: dict[str, Any]) -> list[str]:
    errors = [e for j, p in enumerate(value.get("system_instructions") or [])
              for e in _part_errors(p, f"system_instructions.{j}")]
    made: dict[str, list[str]] = {"tool_call": [], "server_tool_call": []}
    answered: set[tuple[str, str]] = set()
    for where, msg in _messages(value):
        if msg.get("role") not in ROLES:
            errors.append(f"{where}.role: {msg.get('role')!r} is not one of {sorted(ROLES)}")
        if where.startswith("output") and msg.get("finish_reason") not in FINISH_REASONS:
            errors.append(f"{where}.finish_reason: {msg.get('finish_reason')!r} is not one of {sorted(FINISH_REASONS)}")
        for j, part in enumerate(msg.get("parts") or []):
            errors += _part_errors(part, f"{where}.parts.{j}")
            if not isinstance(part, dict) or part.get("id") is None:
                continue
            kind = part.get("type")
            if kind in made:
                made[kind].append(part["id"])
            elif kind in ANSWERS:
                call = ANSWERS[kind]
                if part["id"] not in made[call]:
                    errors.append(f"{where}.parts.{j}: {kind} {part['id']!r} answers no earlier {call}")
                elif (call, part["id"]) in answered:
                    errors.append(f"{where}.parts.{j}: {call} {part['id']!r} is answered twice")
                answered.add((call, part["id"]))
    return errors


def check(value: Any) -> list[str]:
    if isinstance(value, list):
        value = {"input_messages": value}
    if not isinstance(value, dict):
        return [f"expected an object of attributes or a list of messages, got {type(value).__name__}"]
    errors = [f"{key}: not one of the attributes {sorted(ATTRIBUTES)}" for key in value.keys() - ATTRIBUTES.keys()]
    for key in ATTRIBUTES:
        if key in value:
            errors += _schema_errors(key, value[key])
    errors += _semantic_errors(value)
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
