"""Canonical messages to table rows and back.

A block row holds the queryable fields in columns (kind, text, media type, tool
name, call id) and the rest in a JSON ``payload``; bytes go to the ``blobs``
table by SHA-256 and are referenced as ``{"$blob": sha256}``, also inside tool
results that carry images.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import uuid_utils

from .limits import Budget
from .model import BLOCK, Block, Message, Usage

# The block field each kind keeps in the ``text`` column.
TEXT_FIELD = {
    "text": "text",
    "refusal": "text",
    "reasoning": "text",
    "code": "code",
    "code_result": "output",
    "error": "message",
    "tool_result": "output",
}
TOOL_NAME_FIELD = {"tool_call": "name", "tool_result": "name"}
BLOB_REF = "$blob"


def new_id() -> str:
    """A time-ordered UUIDv7, generated here so a batch needs no round trip for ids."""
    return str(uuid_utils.uuid7())


class BlobSink:
    """Collects the binary payloads of a batch, once each."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.rows: dict[str, dict[str, Any]] = {}

    def put(self, data: bytes, media_type: str | None) -> str:
        sha = hashlib.sha256(data).hexdigest()
        if sha not in self.rows:
            self.rows[sha] = {
                "conversation_id": self.conversation_id, "sha256": sha,
                "media_type": media_type, "size": len(data), "data": data,
            }
        return sha

    def externalize(self, value: Any, budget: Budget, where: str) -> Any:
        """Replace every ``bytes`` inside a dumped block by a blob reference."""
        if isinstance(value, bytes):
            budget.blob(where, len(value))
            return {BLOB_REF: self.put(value, None)}
        if isinstance(value, dict):
            return {k: self.externalize(v, budget, where) for k, v in value.items()}
        if isinstance(value, list):
            return [self.externalize(v, budget, where) for v in value]
        return value


def dump_block(block: Block) -> dict[str, Any]:
    """The block's non-default fields, always with its ``kind`` (nested ones too)."""
    payload = block.model_dump(exclude_defaults=True)
    payload["kind"] = block.kind
    if block.kind == "tool_result" and isinstance(block.output, list):
        payload["output"] = [dump_block(b) for b in block.output]
    return payload


def block_row(block: Block, *, conversation_id: str, message_id: str, position: int,
              blobs: BlobSink, budget: Budget) -> dict[str, Any]:
    """The row of one block; its values checked against the message's ``budget``."""
    payload = dump_block(block)
    kind = payload.pop("kind")
    where = f"block {position} ({kind})"
    text_field = TEXT_FIELD.get(kind)
    name_field = TOOL_NAME_FIELD.get(kind)
    text = payload.pop(text_field, "") if text_field and isinstance(payload.get(text_field, ""), str) else None
    row: dict[str, Any] = {
        "id": new_id(), "conversation_id": conversation_id, "message_id": message_id,
        "position": position, "kind": kind, "blob_sha256": None,
        "text": budget.text(where, text),
        "tool_name": budget.text(where, payload.pop(name_field, None) if name_field else None, "tool_name"),
        "call_id": budget.text(where, payload.pop("call_id", None), "call_id"),
        "media_type": budget.text(where, payload.pop("media_type", None), "media_type"),
    }
    data = payload.pop("data", None)
    if isinstance(data, bytes):
        budget.blob(where, len(data))
        row["blob_sha256"] = blobs.put(data, row["media_type"])
    elif data is not None:
        payload["data"] = data
    if kind == "tool_result":  # the one kind whose payload can nest blocks with bytes
        payload = blobs.externalize(payload, budget, where)
    row["payload"] = budget.json(where, payload or None)
    return row


def block_from_row(row: Mapping[str, Any], blobs: Mapping[str, bytes]) -> Block:
    fields: dict[str, Any] = dict(row["payload"] or {})
    if blobs and row["kind"] == "tool_result":
        fields = _internalize(fields, blobs)
    kind = row["kind"]
    fields["kind"] = kind
    if (text_field := TEXT_FIELD.get(kind)) and row["text"] is not None:
        fields[text_field] = row["text"]
    if (name_field := TOOL_NAME_FIELD.get(kind)) and row["tool_name"] is not None:
        fields[name_field] = row["tool_name"]
    for column in ("call_id", "media_type"):
        if row[column] is not None:
            fields[column] = row[column]
    if row["blob_sha256"] is not None:
        fields["data"] = blobs[row["blob_sha256"]]
    return BLOCK.validate_python(fields)


def _internalize(value: Any, blobs: Mapping[str, bytes]) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and BLOB_REF in value:
            return blobs[value[BLOB_REF]]
        return {k: _internalize(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [_internalize(v, blobs) for v in value]
    return value


def blob_refs(payload: Any) -> Iterable[str]:
    """The blob hashes referenced inside a payload (tool results with images)."""
    if isinstance(payload, dict):
        if len(payload) == 1 and BLOB_REF in payload:
            yield payload[BLOB_REF]
        else:
            for v in payload.values():
                yield from blob_refs(v)
    elif isinstance(payload, list):
        for v in payload:
            yield from blob_refs(v)


def to_utc(value: datetime | None) -> tuple[datetime | None, int | None]:
    """UTC wall time for the column, and the source's offset in minutes (None when naive)."""
    if value is None or value.tzinfo is None:
        return value, None
    offset = value.utcoffset() or timedelta(0)
    return value.astimezone(timezone.utc).replace(tzinfo=None), int(offset.total_seconds() // 60)


def from_utc(value: datetime | None, offset: int | None) -> datetime | None:
    if value is None or offset is None:
        return value
    return value.replace(tzinfo=timezone.utc).astimezone(timezone(timedelta(minutes=offset)))


_MESSAGE_TEXT = ("source_role", "name", "source_format", "source_type", "external_id", "model")


def message_row(msg: Message, *, id: str, conversation_id: str, seq: int, window_start: int,
                budget: Budget) -> dict[str, Any]:
    created_at, offset = to_utc(msg.created_at)
    row = {
        "id": id, "conversation_id": conversation_id, "seq": seq, "window_start": window_start,
        "role": msg.role, "created_at": created_at, "utc_offset": offset,
        "usage": budget.json("usage", msg.usage.model_dump(exclude_defaults=True) if msg.usage else None),
        "metadata": budget.json("metadata", msg.metadata or None),
        "extras": budget.json("extras", msg.extras or None),
    }
    for field in _MESSAGE_TEXT:
        row[field] = budget.text(field, getattr(msg, field), field)
    return row


def message_from_row(row: Mapping[str, Any], blocks: list[Block]) -> Message:
    return Message(
        role=row["role"], content=blocks, source_role=row["source_role"], name=row["name"],
        source_format=row["source_format"], source_type=row["source_type"],
        external_id=row["external_id"], model=row["model"],
        created_at=from_utc(row["created_at"], row["utc_offset"]),
        usage=Usage.model_validate(row["usage"]) if row["usage"] is not None else None,
        metadata=row["metadata"] or {}, extras=row["extras"] or {},
    )
