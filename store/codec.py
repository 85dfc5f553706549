"""Canonical messages to table rows and back.

A block row holds the queryable fields in columns (kind, text, media type, tool
name, call id) and the rest in a JSON ``payload``; bytes go to the ``blobs``
table by SHA-256 and are referenced as ``{"$blob": sha256}``, also inside tool
results that carry images.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple, TypeAlias

import orjson
import uuid_utils

from .gcpause import paused_gc
from .lean import Call, Plain, Result, Writable
from .limits import Budget
from .model import BLOCK, MESSAGES, Block, Message
from .schema import dumps

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
RAW_ARGUMENTS = "$arguments_raw"
"""A tool call's payload key for ``arguments_raw`` when ``arguments`` is exactly its parse,
which is then not stored (revision 0011): read back, the arguments are parsed from it. Since
revision 0017 such arguments are the call's ``text`` column instead (no JSON around them); rows
written before keep this key."""


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


class KeptResult(NamedTuple):
    """A tool result kept in its message row (revision 0020): its output, call id and tool name."""

    output: str
    call_id: str
    tool_name: str | None


Kept: TypeAlias = "str | KeptResult | None"


def block_rows(msgs: Sequence[Writable], dumped: Sequence[dict[str, Any] | None], *, conversation_id: str,
               seqs: Iterable[int], blobs: BlobSink, budgets: Sequence[Budget],
               ) -> tuple[list[dict[str, Any]], list[Kept]]:
    """The block rows of a batch stored at ``seqs``, and what each message row keeps of
    its content: where it is one plain text block (no field but its text), its text (revision
    0013); where it is one tool result of a text output, its call id and tool name alone, a
    :class:`KeptResult` (revision 0020); the message then has no block row. Most messages take one
    row, not two.

    ``dumped`` is the batch dumped once (``MESSAGES.dump_python``): one call into
    pydantic-core instead of one per block. A :class:`~store.lean.Plain` gives its rows itself."""
    rows: list[dict[str, Any]] = []
    texts: list[Kept] = []
    for seq, msg, dump, budget in zip(seqs, msgs, dumped, budgets):
        if msg.__class__ is Plain:
            if not msg.content:  # its text alone
                texts.append(budget.text(_FIRST_TEXT, msg.text))  # type: ignore[union-attr]
            elif msg.content[0].__class__ is Result:
                texts.append(_kept_result(msg.text, msg.content[0].call_id, msg.name, budget))  # type: ignore
            else:
                texts.append(None)
                rows += _plain_rows(msg, conversation_id, seq, budget)  # type: ignore[arg-type]
            continue
        if one_plain_text(msg):
            texts.append(budget.text(_FIRST_TEXT, msg.content[0].text))  # type: ignore[union-attr]
            continue
        if one_plain_result(msg):
            block = msg.content[0]
            texts.append(_kept_result(block.output, block.call_id, block.name, budget))  # type: ignore[union-attr]
            continue
        texts.append(None)
        for position, (block, payload) in enumerate(zip(msg.content, dump.get("content", ()))):
            kind = block.kind
            if kind == "tool_result" and isinstance(block.output, list):
                payload = dump_block(block)  # nested blocks keep their kind
            rows.append(_block_row(kind, payload, conversation_id=conversation_id, seq=seq,
                                   position=position, blobs=blobs, budget=budget))
    return rows, texts


_RESULT_AT = "block 0 (tool_result)"


def _kept_result(output: str, call_id: str, tool_name: str | None, budget: Budget) -> KeptResult:
    """A plain tool result as its message row keeps it, each value checked as :func:`_block_row`
    checks its block's, in the same order."""
    output = budget.text(_RESULT_AT, output)
    tool_name = budget.text(_RESULT_AT, tool_name, "tool_name")
    return KeptResult(output, budget.text(_RESULT_AT, call_id, "call_id"), tool_name)


def _plain_rows(msg: Plain, conversation_id: str, seq: int, budget: Budget) -> list[dict[str, Any]]:
    """The block rows of a plain assistant's calls: what :func:`_block_row` makes of their blocks,
    each value checked in the same order."""
    rows = []
    if msg.text is not None:
        rows.append({"conversation_id": conversation_id, "seq": seq, "position": 0, "kind": "text",
                     "blob_sha256": None, "text": budget.text(_FIRST_TEXT, msg.text), "tool_name": None,
                     "call_id": None, "media_type": None, "payload": None})
    calls: tuple[Call, ...] = msg.content  # type: ignore[assignment]
    for position, call in enumerate(calls, start=len(rows)):
        where = f"block {position} (tool_call)"
        rows.append({"conversation_id": conversation_id, "seq": seq, "position": position, "kind": "tool_call",
                     "blob_sha256": None, "tool_name": budget.text(where, call.name, "tool_name"),
                     "call_id": budget.text(where, call.call_id, "call_id"), "media_type": None,
                     "text": budget.text(where, call.arguments_raw), "payload": None})
    return rows


def one_plain_text(msg: Message) -> bool:
    """Whether the message's content is one text block with no field but its text: its text is kept
    in its message row, and it has no block row (revision 0013)."""
    return len(msg.content) == 1 and msg.content[0].kind == "text" and not msg.content[0].extras


def one_plain_result(msg: Message) -> bool:
    """Whether the message's content is one tool result of a text output with no field but its
    call id and tool name: it is kept in its message row, with no block row (revision 0020)."""
    if len(msg.content) != 1 or (block := msg.content[0]).kind != "tool_result":
        return False
    return block.output.__class__ is str and not block.is_error and block.error is None and not block.extras


_FIRST_TEXT = "block 0 (text)"  # where a kept text is checked: as its block row would be


def first_text(msg: Writable) -> str | None:
    """The ``text`` column of the message's first block row: what ``store.docs`` may leave
    out of the message's document."""
    if msg.__class__ is Plain:
        return msg.text  # type: ignore[return-value]  # its text, its result's output, the text before its calls
    if not msg.content:
        return None
    block = msg.content[0]
    field = TEXT_FIELD.get(block.kind)
    value = None if field is None else getattr(block, field)
    return value if isinstance(value, str) else None


SEARCHED = frozenset(TEXT_FIELD) | {"tool_call"}
"""The kinds of block whose text is indexed for ``search``."""
SEARCH_CHARS = 100_000
"""How much of one block's text is indexed: PostgreSQL refuses a tsvector over 1 MB."""


def block_text(kind: str, payload: Mapping[str, Any]) -> str:
    """What ``search`` finds a block by (``payload``: the block's fields, ``block_fields``): its
    text; a tool call's name and arguments as the source wrote them; a result's tool name and
    output, the text of every nested block included."""
    if kind == "tool_call":
        args = payload.get("arguments_raw")
        if args is None and payload.get("arguments") is not None:
            args = json.dumps(payload["arguments"], ensure_ascii=False, default=str)
        parts = [payload.get("name"), args]
    elif kind == "tool_result":
        output = payload.get("output", "")
        parts = [payload.get("name"), *([output] if isinstance(output, str) else
                                        (block_text(b.get("kind", ""), b) for b in output
                                         if b.get("kind") in SEARCHED))]
    else:
        parts = [payload.get(TEXT_FIELD[kind])]
    text = " ".join(p for p in parts if isinstance(p, str) and p)
    return text[:SEARCH_CHARS]


def _block_row(kind: str, payload: dict[str, Any], *, conversation_id: str, seq: int, position: int,
               blobs: BlobSink, budget: Budget) -> dict[str, Any]:
    """The row of one block; its values checked against the message's ``budget``."""
    payload.pop("kind", None)
    where = f"block {position} ({kind})"
    text_field = TEXT_FIELD.get(kind)
    name_field = TOOL_NAME_FIELD.get(kind)
    text = payload.pop(text_field, "") if text_field and isinstance(payload.get(text_field, ""), str) else None
    row: dict[str, Any] = {
        "conversation_id": conversation_id, "seq": seq, "position": position, "kind": kind, "blob_sha256": None,
        "text": None if text is None else budget.text(where, text),
        "tool_name": None, "call_id": None, "media_type": None,
    }
    if payload:  # most blocks are bare text: nothing more to take out
        for column, key in (("tool_name", name_field), ("call_id", "call_id"), ("media_type", "media_type")):
            if key is not None and (value := payload.pop(key, None)) is not None:
                row[column] = budget.text(where, value, column)
    data = payload.pop("data", None)
    if isinstance(data, bytes):
        budget.blob(where, len(data))
        row["blob_sha256"] = blobs.put(data, row["media_type"])
    elif data is not None:
        payload["data"] = data
    if kind == "tool_result":  # the one kind whose payload can nest blocks with bytes
        payload = blobs.externalize(payload, budget, where)
    elif kind == "tool_call" and "arguments" in payload and _parsed(payload.get("arguments_raw"), payload["arguments"]):
        del payload["arguments"]
        row["text"] = budget.text(where, payload.pop("arguments_raw"))
    row["payload"] = budget.json(where, payload or None)
    return row


def _parsed(raw: Any, arguments: Any) -> bool:
    """Whether ``arguments`` is exactly what parsing ``raw`` gives, and JSON as it is stored
    (no value ``schema.escape`` rewrites, so a downgrade can write it back as it is)."""
    if type(raw) is not str:
        return False
    try:
        text = orjson.dumps(arguments)
        return orjson.dumps(orjson.loads(raw)) == text and dumps(arguments) == text.decode()
    except (orjson.JSONDecodeError, orjson.JSONEncodeError, TypeError, ValueError):
        return False


def call_arguments(payload: Mapping[str, Any] | None, text: str | None = None) -> tuple[Any, str | None]:
    """A tool call's ``arguments`` and ``arguments_raw`` from its block row's payload and text."""
    if (raw := text if text is not None else payload.get(RAW_ARGUMENTS) if payload else None) is not None:
        return orjson.loads(raw), raw
    return (payload.get("arguments"), payload.get("arguments_raw")) if payload else (None, None)


def raw_arguments(payload: Mapping[str, Any] | None, text: str | None = None) -> str | None:
    """``call_arguments(payload, text)[1]``, without parsing the arguments."""
    if text is not None:
        return text
    if not payload:
        return None
    raw = payload.get(RAW_ARGUMENTS)
    return payload.get("arguments_raw") if raw is None else raw


def block_fields(row: Sequence[Any], blobs: Mapping[str, bytes]) -> dict[str, Any]:
    """A block row ``(kind, text, media_type, tool_name, call_id, blob_sha256, payload)``
    as the block's fields."""
    kind, text, media_type, tool_name, call_id, blob_sha256, payload = row
    fields: dict[str, Any] = dict(payload) if payload else {}
    if blobs and kind == "tool_result":
        fields = _internalize(fields, blobs)
    elif kind == "tool_call" and (text is not None or RAW_ARGUMENTS in fields):
        fields["arguments"], fields["arguments_raw"] = call_arguments(fields, text)
        fields.pop(RAW_ARGUMENTS, None)
    fields["kind"] = kind
    if text is not None and (text_field := TEXT_FIELD.get(kind)):
        fields[text_field] = text
    if tool_name is not None and (name_field := TOOL_NAME_FIELD.get(kind)):
        fields[name_field] = tool_name
    if call_id is not None:
        fields["call_id"] = call_id
    if media_type is not None:
        fields["media_type"] = media_type
    if blob_sha256 is not None:
        fields["data"] = blobs[blob_sha256]
    return fields


def block_from_row(row: Any, blobs: Mapping[str, bytes]) -> Block:
    return BLOCK.validate_python(block_fields(row, blobs))


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


_PLAIN_ROW = dict.fromkeys(("conversation_id", "seq", "window_start", "role", "created_at", "utc_offset", "usage",
                            "metadata", "extras", "doc", "text", "call_id", "tool_name", "source_role", "name",
                            "source_type", "external_id", "model", "source_format"))


PLAIN_COLUMNS = frozenset(("conversation_id", "seq", "window_start", "role", "source_format", "text",
                           "extras", "doc", "call_id", "tool_name"))
"""The columns :func:`plain_row` sets (and ``store.onepass.rows`` after it): the others stay None."""


def plain_row(conversation_id: str, seq: int, window_start: int, role: str, source_format: str | None,
              text: str | None, extras: str | None, doc: str | None, call_id: str | None = None,
              tool_name: str | None = None) -> dict[str, Any]:
    """The message row of a :class:`~store.lean.Plain`: the columns it sets, the others None. A copy
    of one template: half the time of a literal of its 19 keys, once a message of a bulk write."""
    row = _PLAIN_ROW.copy()
    row["conversation_id"], row["seq"], row["window_start"], row["role"] = conversation_id, seq, window_start, role
    row["source_format"], row["text"], row["extras"], row["doc"] = source_format, text, extras, doc
    row["call_id"], row["tool_name"] = call_id, tool_name
    return row


def message_rows(msgs: Sequence[Writable], dumped: Sequence[dict[str, Any] | None], *, conversation_id: str,
                 seqs: Iterable[int], window_starts: Sequence[int], budgets: Sequence[Budget],
                 docs: Sequence[str | None], texts: Sequence[Kept]) -> list[dict[str, Any]]:
    """The message rows of a batch: ``dumped`` as :func:`block_rows` takes it (for a
    :class:`~store.lean.Plain`, whose row is its role, source format and extras: its extras or None),
    ``texts`` what :func:`block_rows` says each row keeps of its content."""
    rows = []
    # Iterated, not indexed: a Batch's __getitem__ is Python code
    for seq, msg, dump, start, budget, doc, text in zip(seqs, msgs, dumped, window_starts, budgets, docs, texts):
        if text.__class__ is KeptResult:
            text, call_id, tool_name = text  # type: ignore[misc]
        else:
            call_id = tool_name = None
        if msg.__class__ is Plain:
            rows.append(plain_row(conversation_id, seq, start, msg.role,
                                  budget.text("source_format", msg.source_format, "source_format"), text,
                                  None if dump is None else budget.json("extras", dump["extras"]), doc,
                                  call_id, tool_name))
            continue
        try:
            created_at, offset = to_utc(dump.get("created_at"))
        except OverflowError:  # 9999-12-31T23:00-05:00 has no UTC time within datetime's range
            raise budget.fail("created_at", f"{dump['created_at'].isoformat()} is out of range "
                                            "in UTC (years 1 to 9999)") from None
        row = {
            "conversation_id": conversation_id, "seq": seq, "window_start": start,
            "role": dump["role"], "created_at": created_at, "utc_offset": offset,
            "usage": None if (usage := dump.get("usage")) is None else budget.json("usage", usage),
            "metadata": None if (meta := dump.get("metadata")) is None else budget.json("metadata", meta),
            "extras": None if (extras := dump.get("extras")) is None else budget.json("extras", extras),
            "doc": doc, "text": text, "call_id": call_id, "tool_name": tool_name,
        }
        for field in _MESSAGE_TEXT:
            value = dump.get(field)
            row[field] = None if value is None else budget.text(field, value, field)
        rows.append(row)
    return rows


MESSAGE_COLUMNS = ("seq", "role", *_MESSAGE_TEXT, "created_at", "utc_offset", "usage", "metadata", "extras", "text",
                   "call_id", "tool_name")
BLOCK_COLUMNS = ("kind", "text", "media_type", "tool_name", "call_id", "blob_sha256", "payload")
"""The columns :func:`messages_from_rows` takes: a message row's, and a block row's after its ``seq``."""


def messages_from_rows(messages: Sequence[Sequence[Any]], blocks: Sequence[Sequence[Any]],
                       blobs: Mapping[str, bytes]) -> list[Message]:
    """Messages from their rows in seq order and their blocks' rows in (seq, position)
    order: validated in one call into pydantic-core."""
    with paused_gc():
        return MESSAGES.validate_python(_message_fields(messages, blocks, blobs))


def readable_from_rows(messages: Sequence[Sequence[Any]], blocks: Sequence[Sequence[Any]],
                       blobs: Mapping[str, bytes]) -> list[Writable]:
    """:func:`messages_from_rows`, with a :class:`~store.lean.Plain` for each message its rows make
    one of (:func:`_plain`): for a writer that takes them (``Format.takes_plain``). The others are
    validated in one call, as there."""
    out: list[Any] = []
    canonical: list[int] = []
    fields: list[dict[str, Any]] = []
    i, n = 0, len(blocks)
    with paused_gc():
        for row in messages:
            seq, j = row[0], i
            while j < n and blocks[j][0] == seq:  # both in seq order: the blocks of this message
                j += 1
            if row[2] is None and row[3] is None and row[5:12] == _NO_FIELDS:
                if i == j and row[13] is not None:  # its text or its tool result in its row: most of them
                    if row[14] is not None:
                        out.append(Plain(row[1], row[13], row[4], (Result(row[14]),), row[15], row[12]))
                        continue
                    if row[1] != "tool":
                        out.append(Plain(row[1], row[13], row[4], (), None, row[12]))
                        continue  # (no block row to pass: i == j)
                plain = _plain(row, blocks, i, j)
            else:
                plain = None
            if plain is None:
                canonical.append(len(out))
                fields.append(_one_message(row, blocks, i, j, blobs))
            out.append(plain)
            i = j
        for index, msg in zip(canonical, MESSAGES.validate_python(fields)):
            out[index] = msg
    return out


_NO_FIELDS = [None] * 7  # source_type, external_id, model, created_at, utc_offset, usage, metadata


def _plain(row: Sequence[Any], blocks: Sequence[Sequence[Any]], i: int, j: int) -> Plain | None:
    """The message of ``row`` (its other fields None) and its block rows ``blocks[i:j]`` as a
    :class:`~store.lean.Plain`, where it is one (besides a text kept in its row, which the caller
    knows): one tool result's output and call id; an assistant's calls (each with its arguments as
    its text), a text before them or not. Every block row bare: no payload, media type nor blob."""
    role, source_format, extras, text = row[1], row[4], row[12], row[13]
    if i == j or role not in ("tool", "assistant"):
        return None
    first = blocks[i]
    if text is not None or first[2] is None or not _bare(first):
        return None
    if role == "tool":
        if j - i == 1 and first[1] == "tool_result" and first[5]:
            return Plain(role, first[2], source_format, (Result(first[5]),), first[4], extras)
        return None
    lead = None
    if first[1] == "text":
        lead, i = first[2], i + 1
    calls = []
    for block in blocks[i:j]:
        if block[1] != "tool_call" or block[2] is None or not block[5] or block[4] is None or not _bare(block):
            return None
        calls.append(Call(block[5], block[4], block[2]))
    return Plain(role, lead, source_format, tuple(calls), extras=extras) if calls else None


def _bare(block: Sequence[Any]) -> bool:
    return block[3] is None and block[6] is None and block[7] is None


def _message_fields(messages: Sequence[Sequence[Any]], blocks: Sequence[Sequence[Any]],
                    blobs: Mapping[str, bytes]) -> list[dict[str, Any]]:
    fields: list[dict[str, Any]] = []
    i, n = 0, len(blocks)
    for row in messages:
        seq, j = row[0], i
        while j < n and blocks[j][0] == seq:  # both in seq order: the blocks of this message
            j += 1
        fields.append(_one_message(row, blocks, i, j, blobs))
        i = j
    return fields


def _one_message(row: Sequence[Any], blocks: Sequence[Sequence[Any]], i: int, j: int,
                 blobs: Mapping[str, bytes]) -> dict[str, Any]:
    """A message's fields from its row and its block rows ``blocks[i:j]``."""
    message = {name: value for name, value in zip(MESSAGE_COLUMNS, row) if value is not None}
    del message["seq"]
    if "call_id" in message:  # a tool result kept in its row (``block_rows``)
        content = [{"kind": "tool_result", "call_id": message.pop("call_id"), "output": message.pop("text")}]
        if "tool_name" in message:
            content[0]["name"] = message.pop("tool_name")
    else:
        content = [{"kind": "text", "text": message.pop("text")}] if "text" in message else []
    content += [block_fields(blocks[k][1:], blobs) for k in range(i, j)]
    message["content"] = content
    if "created_at" in message:
        message["created_at"] = from_utc(message["created_at"], message.pop("utc_offset", None))
    return message
