"""Conformance checker for the ``langchain`` format; runs under the isolated venv conf-langchain.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that langchain-core loads
and passes on:

- each item loads as LangChain loads it: a ``messages_to_dict`` item with
  ``messages_from_dict``, a ``dumpd`` constructor with ``langchain_core.load.load``, a bare
  message dict as ``messages_from_dict`` loads its ``data``;
- serializing the loaded messages again gives the items back exactly (``messages_to_dict``,
  ``dumpd`` or ``model_dump``): nothing was dropped, renamed or rebuilt on loading;
- ``convert_to_openai_messages`` accepts the messages (it refuses media OpenAI cannot take);
- every ``ToolMessage`` answers a tool call of an earlier ``AIMessage`` (``tool_calls``) that
  no earlier ToolMessage answered; a conversation may end with calls still pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from langchain_core.load import dumpd, load
from langchain_core.messages import AIMessage, ToolMessage, convert_to_openai_messages, messages_from_dict, messages_to_dict

MAX_ERRORS = 20


def _load(index: int, item: Any) -> tuple[Any, list[str]]:
    """The message of one item, and the problems of loading it and writing it back."""
    prefix = f"message {index}: "
    if not isinstance(item, dict):
        return None, [f"{prefix}expected an object, got {type(item).__name__}"]
    try:
        if item.get("lc") == 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                msg = load(item)
            again = dumpd(msg)
        elif item.keys() == {"type", "data"}:
            msg = messages_from_dict([item])[0]
            again = messages_to_dict([msg])[0]
        else:
            msg = messages_from_dict([{"type": item.get("type"), "data": item}])[0]
            again = msg.model_dump()
    except Exception as exc:  # the loader's own refusal, whatever its type
        return None, [f"{prefix}does not load: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"]
    if json.loads(json.dumps(again, default=str)) != item:
        return msg, [f"{prefix}loading and serializing again changes it: {json.dumps(again, default=str)[:300]} "
                     f"!= {json.dumps(item)[:300]}"]
    return msg, []


def _order_errors(messages: list[Any]) -> list[str]:
    errors = []
    pending: set[str] = set()
    for index, msg in enumerate(messages):
        if isinstance(msg, AIMessage):
            pending |= {c["id"] for c in msg.tool_calls if c.get("id")}
            pending |= {c["id"] for c in msg.invalid_tool_calls if c.get("id")}
        elif isinstance(msg, ToolMessage):
            if msg.tool_call_id not in pending:
                errors.append(f"message {index}: ToolMessage answers {msg.tool_call_id!r}, which no earlier "
                              "AIMessage called (or which was answered already)")
            pending.discard(msg.tool_call_id)
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    errors: list[str] = []
    messages = []
    for index, item in enumerate(value):
        msg, problems = _load(index, item)
        errors += problems
        messages.append(msg)
    if not errors:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "OpenAI may require a filename": a warning, not a refusal
                convert_to_openai_messages(messages)
        except Exception as exc:
            errors.append(f"convert_to_openai_messages refuses it: {type(exc).__name__}: {str(exc)[:300]}")
        errors += _order_errors(messages)
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
