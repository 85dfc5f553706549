"""Conformance checker for the ``agentscope`` format (AgentScope 1.x); runs under int-agentscope1.

Reads ``{case_id: exported_value}`` (JSON) on stdin and writes ``{case_id: [error, ...]}``
on stdout; an empty list means the value is a list of messages that agentscope 1.0.21
accepts and that obeys the ordering its formatters (and the model APIs behind them) need:

- ``agentscope.message.Msg.from_dict`` builds each message, and ``to_dict()`` gives back
  every key that was given (``invocation_id`` apart, which ``to_dict`` never writes); the
  result is JSON-serializable. No top-level key that ``from_dict`` would drop.
- ``name`` is a string (the package requires a speaker), ``metadata`` an object,
  ``timestamp`` and ``id`` strings.
- every content block validates as the package's own block ``TypedDict`` its ``type``
  selects (``TextBlock``, ``ThinkingBlock``, ``ImageBlock``/``AudioBlock``/``VideoBlock``
  with ``URLSource``/``Base64Source``, ``ToolUseBlock``, ``ToolResultBlock`` and the
  blocks of its ``output``), with no key the ``TypedDict`` does not declare (``from_dict``
  does not validate blocks at all, so this is checked here).
- ``tool_use`` blocks only in ``assistant`` messages; a message holding ``tool_result``
  blocks holds nothing else (results travel in messages of their own, as ``ReActAgent``
  writes them).
- every ``tool_result`` answers an earlier, still unanswered ``tool_use`` of the same
  name; call ids are unique; the calls of a message are answered before the next message
  that is not a tool-result message. A conversation may end with calls pending.

Exit status 0 unless the checker itself crashes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pydantic
from agentscope.message import (
    AudioBlock,
    Base64Source,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    URLSource,
    VideoBlock,
)

BLOCKS: dict[str, Any] = {
    "text": TextBlock,
    "thinking": ThinkingBlock,
    "image": ImageBlock,
    "audio": AudioBlock,
    "video": VideoBlock,
    "tool_use": ToolUseBlock,
    "tool_result": ToolResultBlock,
}
OUTPUT_TYPES = {"text", "image", "audio", "video"}
SOURCES: dict[str, Any] = {"url": URLSource, "base64": Base64Source}
ADAPTERS = {name: pydantic.TypeAdapter(cls) for name, cls in BLOCKS.items()}
MSG_KEYS = {"id", "name", "role", "content", "metadata", "timestamp", "invocation_id"}
MAX_ERRORS = 20


def _keys(cls: Any) -> set[str]:
    return set(cls.__required_keys__) | set(cls.__optional_keys__)


def _unknown(block: dict[str, Any], where: str) -> list[str]:
    """Keys the block's TypedDicts (the block, its source, its output blocks) do not declare."""
    errors = [
        f"{where}.{k}: unknown key (not a field of agentscope's {BLOCKS[block['type']].__name__})"
        for k in block.keys() - _keys(BLOCKS[block["type"]])
    ]
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") in SOURCES:
        cls = SOURCES[source["type"]]
        errors += [
            f"{where}.source.{k}: unknown key (not a field of agentscope's {cls.__name__})"
            for k in source.keys() - _keys(cls)
        ]
    output = block.get("output")
    if block["type"] == "tool_result" and isinstance(output, list):
        for i, inner in enumerate(output):
            errors += (
                _unknown(inner, f"{where}.output[{i}]")
                if isinstance(inner, dict) and inner.get("type") in OUTPUT_TYPES
                else []
            )
    return errors


def _block_errors(block: Any, where: str) -> list[str]:
    if not isinstance(block, dict) or block.get("type") not in BLOCKS:
        kind = block.get("type") if isinstance(block, dict) else type(block).__name__
        return [f"{where}: {kind!r} is not an agentscope 1.x content block (one of {sorted(BLOCKS)})"]
    try:
        ADAPTERS[block["type"]].validate_python(block, strict=True)
    except pydantic.ValidationError as exc:
        return [f"{where}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]
    return _unknown(block, where)


def _message_errors(index: int, msg: Any) -> list[str]:
    prefix = f"message {index}"
    if not isinstance(msg, dict):
        return [f"{prefix}: expected an object, got {type(msg).__name__}"]
    errors = [f"{prefix}.{k}: unknown key (Msg.from_dict drops it)" for k in msg.keys() - MSG_KEYS]
    try:
        built = Msg.from_dict(msg)
        written = json.loads(json.dumps(built.to_dict()))
    except (AssertionError, KeyError, TypeError, ValueError) as exc:
        why = str(exc) or "an assertion failed (role user, assistant or system; content a string or a list)"
        return errors + [f"{prefix}: Msg.from_dict rejects it: {type(exc).__name__}: {why}"]
    errors += [
        f"{prefix}.{k}: Msg.to_dict() gives {written[k]!r} back"
        for k in msg.keys() & written.keys()
        if written[k] != msg[k]
    ]
    for key, kind in (("name", str), ("metadata", dict), ("timestamp", str), ("id", str)):
        if key in msg and not isinstance(msg[key], kind):
            errors.append(f"{prefix}.{key}: expected {kind.__name__}, got {type(msg[key]).__name__}")
    if isinstance(msg["content"], list):
        for i, block in enumerate(msg["content"]):
            errors += _block_errors(block, f"{prefix}.content[{i}]")
    return errors + _placement_errors(prefix, msg)


def _types(msg: dict[str, Any]) -> list[Any]:
    content = msg.get("content")
    return [b.get("type") for b in content if isinstance(b, dict)] if isinstance(content, list) else ["text"]


def _placement_errors(prefix: str, msg: dict[str, Any]) -> list[str]:
    types = _types(msg)
    errors = []
    if "tool_use" in types and msg.get("role") != "assistant":
        errors.append(
            f"{prefix}: a {msg.get('role')} message holds tool_use blocks "
            "(only assistant messages call tools)"
        )
    if "tool_result" in types and set(types) != {"tool_result"}:
        errors.append(
            f"{prefix}: tool_result blocks share the message with {sorted(set(types) - {'tool_result'})} "
            "(results travel in messages of their own)"
        )
    return errors


def _order_errors(messages: list[Any]) -> list[str]:
    errors: list[str] = []
    pending: dict[str, tuple[str, int]] = {}  # call id -> (tool name, index of the calling message)
    seen: set[str] = set()
    for index, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            blocks: list[Any] = []
        else:
            blocks = [b for b in msg["content"] if isinstance(b, dict)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if pending and not (results and len(results) == len(blocks)):
            errors.append(
                f"message {index}: comes before tool calls {sorted(pending)} (of message "
                f"{', '.join(str(i) for i in sorted({i for _, i in pending.values()}))}) are answered"
            )
            pending = {}
        for block in results:
            call = pending.pop(block.get("id"), None)
            if call is None:
                errors.append(
                    f"message {index}: tool_result {block.get('id')!r} answers no earlier, "
                    "unanswered tool_use"
                )
            elif block.get("name") != call[0]:
                errors.append(
                    f"message {index}: tool_result {block.get('id')!r} names {block.get('name')!r}, "
                    f"the call was to {call[0]!r}"
                )
        for block in blocks:
            if block.get("type") == "tool_use":
                if block.get("id") in seen:
                    errors.append(f"message {index}: tool_use id {block.get('id')!r} is used twice")
                seen.add(block.get("id"))
                pending[block.get("id")] = (block.get("name"), index)
    return errors


def check(value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"expected a JSON list of messages, got {type(value).__name__}"]
    errors: list[str] = []
    for index, msg in enumerate(value):
        errors.extend(_message_errors(index, msg))
    errors.extend(_order_errors(value))
    return errors[:MAX_ERRORS] + (
        [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
    )


def main() -> None:
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)


if __name__ == "__main__":
    main()
