"""Conformance checker for the ``autogen-core`` format; runs under the isolated venv int-autogen.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of LLM messages (or a model
context ``{"messages": [...]}``) that autogen-core's own types accept and that a
model client can send:

- the whole list validates as ``list[autogen_core.models.LLMMessage]`` (the
  discriminated union on ``type``), and every message loads as its class without
  a key the class does not declare (pydantic would drop it silently);
- every ``FunctionCall`` of an ``AssistantMessage`` is answered by
  ``FunctionExecutionResultMessage`` s before the next other message, and no result
  answers a call that the assistant message just before did not make (or answers
  it twice). A context may end with calls still pending. The results of one turn's
  calls are one ``FunctionExecutionResultMessage``, as autogen writes them.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from autogen_core.models import LLMMessage

MESSAGES = pydantic.TypeAdapter(list[LLMMessage])
MAX_ERRORS = 20


def pydantic_errors(prefix: str, exc: pydantic.ValidationError) -> list[str]:
    return [f"{prefix}{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]


def unknown_keys(given: Any, kept: Any, where: str) -> list[str]:
    """Keys of ``given`` that loading dropped (they are missing from the loaded value's dump)."""
    errors = []
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                errors.append(f"{where}.{key}: unknown key (not a field of the autogen class)")
            else:
                errors.extend(unknown_keys(value, kept[key], f"{where}.{key}"))
    elif isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        for i, (g, k) in enumerate(zip(given, kept, strict=True)):
            errors.extend(unknown_keys(g, k, f"{where}[{i}]"))
    return errors


def order_errors(messages: list[Any], prefix: str = "") -> list[str]:
    """Every call answered before the next message other than a result message; no stray results."""
    errors: list[str] = []
    pending: dict[str, int] = {}
    answered: set[str] = set()
    for index, msg in enumerate(messages):
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "FunctionExecutionResultMessage":
            if index and isinstance(messages[index - 1], dict) \
                    and messages[index - 1].get("type") == "FunctionExecutionResultMessage":
                errors.append(f"{prefix}message {index}: results of one turn's calls split over several "
                              "FunctionExecutionResultMessages (autogen writes them as one)")
            for result in msg.get("content") or []:
                call_id = result.get("call_id") if isinstance(result, dict) else None
                if call_id in pending:
                    del pending[call_id]
                    answered.add(call_id)
                elif call_id in answered:
                    errors.append(f"{prefix}message {index}: result answers call {call_id!r} a second time")
                else:
                    errors.append(
                        f"{prefix}message {index}: result answers {call_id!r}, which the "
                        "AssistantMessage before it did not call"
                    )
            continue
        if pending:
            errors.append(
                f"{prefix}message {index}: {kind} comes before calls {sorted(pending)} "
                f"(of message {', '.join(map(str, sorted(set(pending.values()))))}) are answered"
            )
        pending, answered = {}, set()
        if kind == "AssistantMessage" and isinstance(msg.get("content"), list):
            for call in msg["content"]:
                call_id = call.get("id") if isinstance(call, dict) else None
                if call_id in pending:
                    errors.append(f"{prefix}message {index}: call id {call_id!r} is used twice")
                elif isinstance(call_id, str):
                    pending[call_id] = index
    return errors


def check_messages(value: Any, prefix: str = "") -> list[str]:
    """Errors of a list of LLM messages (also used for ``HandoffMessage.context``)."""
    if not isinstance(value, list):
        return [f"{prefix}expected a JSON list of messages, got {type(value).__name__}"]
    try:
        loaded = MESSAGES.validate_python(value)
    except pydantic.ValidationError as exc:
        errors = pydantic_errors(f"{prefix}message ", exc)
    except Exception as exc:
        errors = [f"{prefix}{type(exc).__name__}: {exc}"]
    else:
        errors = []
        for index, (given, msg) in enumerate(zip(value, loaded, strict=True)):
            errors.extend(unknown_keys(given, msg.model_dump(mode="json"), f"{prefix}message {index}"))
    return errors + order_errors(value, prefix)


def check(value: Any) -> list[str]:
    if isinstance(value, dict) and set(value) == {"messages"}:  # a model context's saved state
        value = value["messages"]
    errors = check_messages(value)
    return errors[:MAX_ERRORS] + (
        [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    )


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
