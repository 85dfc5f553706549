"""Conformance checker for the ``autogen`` format; runs under the isolated venv int-autogen.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of AgentChat messages and events
that autogen-agentchat itself loads and that make sense as a transcript:

- each item loads with ``MessageFactory().create`` (the registry AgentChat uses for
  team and agent state), ``StructuredMessage[X]`` types registered on the fly with a
  permissive content model ``X``, since the factory does not know them;
- no key the class does not declare (pydantic would drop it silently), and the
  loaded message dumps again (``dump()``) without error;
- every ``ToolCallExecutionEvent`` result answers a call of an earlier
  ``ToolCallRequestEvent``;
- a ``HandoffMessage.context`` obeys the autogen-core rules of ``check_autogen_core``
  (calls answered before the next message), since it becomes the target's model context.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pydantic
from autogen_agentchat.messages import MessageFactory, StructuredMessage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_autogen_core import MAX_ERRORS, order_errors, pydantic_errors, unknown_keys


class _Factory:
    """``MessageFactory`` plus the ``StructuredMessage[X]`` types a value uses."""

    def __init__(self) -> None:
        self.factory = MessageFactory()

    def create(self, data: dict[str, Any]) -> Any:
        kind = data.get("type")
        if isinstance(kind, str) and kind.startswith("StructuredMessage[") and kind.endswith("]"):
            self._register(kind[len("StructuredMessage[") : -1])
        return self.factory.create(data)

    def _register(self, content_name: str) -> None:
        content = pydantic.create_model(content_name, __config__=pydantic.ConfigDict(extra="allow"))
        message = StructuredMessage[content]  # type: ignore[valid-type]
        if not self.factory.is_registered(message):
            self.factory.register(message)


def _shape_errors(index: int, item: Any, factory: _Factory) -> tuple[list[str], Any]:
    prefix = f"message {index}: "
    if not isinstance(item, dict):
        return [f"{prefix}expected an object, got {type(item).__name__}"], None
    try:
        message = factory.create(item)
    except pydantic.ValidationError as exc:
        return pydantic_errors(prefix, exc), None
    except Exception as exc:
        return [f"{prefix}{type(exc).__name__}: {exc}"], None
    try:
        dumped = message.dump()
    except Exception as exc:
        return [f"{prefix}dump() failed: {exc!r}"], None
    return unknown_keys(item, dumped, f"message {index}"), message


def _links(value: list[Any]) -> list[str]:
    errors: list[str] = []
    calls: set[str] = set()
    for index, item in enumerate(value):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "ToolCallRequestEvent":
            calls.update(c.get("id") for c in item.get("content") or [] if isinstance(c, dict))
        elif kind == "ToolCallExecutionEvent":
            for result in item.get("content") or []:
                call_id = result.get("call_id") if isinstance(result, dict) else None
                if call_id not in calls:
                    errors.append(
                        f"message {index}: result for {call_id!r} answers no earlier ToolCallRequestEvent"
                    )
        elif kind == "HandoffMessage" and isinstance(item.get("context"), list):
            errors.extend(order_errors(item["context"], f"message {index}: context "))
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    factory = _Factory()
    errors: list[str] = []
    for index, item in enumerate(value):
        errors.extend(_shape_errors(index, item, factory)[0])
    errors.extend(_links(value))
    return errors[:MAX_ERRORS] + (
        [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    )


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
