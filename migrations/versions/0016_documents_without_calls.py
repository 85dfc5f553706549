"""OpenAI documents no longer hold a tool result or an assistant's calls.

A tool result ``{"role": "tool", "tool_call_id": "...", "content": "..."}`` says no more than its
block row (its call id and its text): its document is now empty, as revision 0015 made it for an
item of its role and its text (``store.docs.PLAIN``). An assistant item's ``"tool_calls"``, each
``{"id", "type": "function", "function": {"name", "arguments"}}``, say no more than the calls'
block rows: each is ``"\\u0001"`` in the document, led by ``"\\u0001#k"`` (k: the call's index).
A load makes them from the rows (``store.holes``). No table changes.

The upgrade rewrites the OpenAI documents so where they are what the rows say, and puts back the
text of a document led by ``"\\u0001#"`` for a text under a key starting with ``#``, which a load
would now take for a call's lead (none is led so since; such a document is not set aside: its
message's ``extras`` may take values from it, revision 0012). The downgrade writes the documents
revision 0015 reads: a tool result's led by its text's lead, each call whole again, its arguments
of 64 characters or more left to its block row (revision 0014's lead).
Both go by keyset pages of the messages they may change, and can run again to the same end.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"

HOLE = "\x01"
MARK = "\U000f0000"  # how convstore's columns keep a string holding NUL on PostgreSQL (or starting with MARK)
MIN_HOLE = 64
PAGE = 1000
_m = sa.table("messages", sa.column("conversation_id"), sa.column("seq"), sa.column("role"), sa.column("doc"),
              sa.column("source_format"), sa.column("text"))
_b = sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"), sa.column("kind"),
              sa.column("call_id"), sa.column("tool_name"), sa.column("payload"), sa.column("text"))


class Row(NamedTuple):
    """A message whose document may change: its role, text column and block rows."""

    role: str
    text: str | None
    blocks: list[tuple[Any, ...]]  # (kind, call_id, tool_name, payload, text)


def upgrade() -> None:
    openai = sa.and_(_m.c.source_format == "openai", sa.or_(
        _m.c.role == "tool", _m.c.doc.contains('"tool_calls":[')))
    _rewrite(sa.or_(_m.c.doc.contains("0001#"), openai), _new)


def downgrade() -> None:
    _rewrite(sa.or_(_m.c.doc.contains("0001#"), sa.and_(_m.c.doc == "", _m.c.role == "tool")), _old)


def _rewrite(where: Any, rewrite: Callable[[str, Row], str | None]) -> None:
    """Each document ``where`` holds, as ``rewrite(doc, row)`` gives it back."""
    bind = op.get_bind()
    first = (sa.select(_m.c.conversation_id, _m.c.seq, _m.c.role, _m.c.doc, _m.c.text)
             .where(_m.c.doc.is_not(None), where).order_by(_m.c.conversation_id, _m.c.seq).limit(PAGE))
    after = first.where(sa.tuple_(_m.c.conversation_id, _m.c.seq) > sa.tuple_(sa.bindparam("c"), sa.bindparam("s")))
    blocks = (sa.select(_b.c.kind, _b.c.call_id, _b.c.tool_name, _b.c.payload, _b.c.text)
              .where(_b.c.conversation_id == sa.bindparam("c"), _b.c.seq == sa.bindparam("s")).order_by(_b.c.position))
    put = (_m.update().where(_m.c.conversation_id == sa.bindparam("c"), _m.c.seq == sa.bindparam("s"))
           .values(doc=sa.bindparam("d")))
    plain = _text if bind.dialect.name == "postgresql" else (lambda value: value)
    rows = bind.execute(first).all()
    while rows:
        updates = []
        for cid, seq, role, doc, text in rows:
            # the string columns as convstore wrote them, read once (escaped on PostgreSQL only)
            found = [(kind, plain(call_id), plain(name), payload, plain(block_text))
                     for kind, call_id, name, payload, block_text in bind.execute(blocks, {"c": cid, "s": seq})]
            row = Row(role, plain(text), found)
            if (new := rewrite(doc, row)) != doc:
                updates.append({"c": cid, "s": seq, "d": new})
        if updates:
            bind.execute(put, updates)
        rows = bind.execute(after, {"c": rows[-1][0], "s": rows[-1][1]}).all()


def _new(doc: str, row: Row) -> str | None:
    """The document as this revision writes it (as it was where it is not one of those it changes)."""
    values = orjson.loads("[" + doc + "]")
    leads, item = values[:-1], values[-1]
    if _hash_leads(values):
        return _text_put_back(leads, item, row)
    if not isinstance(item, dict) or any(not isinstance(lead, str) or lead[:1] != HOLE for lead in leads):
        return doc  # several items: no lead
    kind, call_id, _, _, text = row.blocks[0] if row.blocks else (None,) * 5
    if row.role == "tool" and kind == "tool_result" and list(item) == ["role", "tool_call_id", "content"] \
            and item["role"] == "tool" and item["tool_call_id"] == call_id and text is not None \
            and (leads, item["content"]) in (([HOLE + "content"], HOLE), ([], text)):
        return ""
    calls = _calls_left_out(leads, item, row)
    if not calls:
        return doc
    kept = [lead for lead in leads if lead[1:2] != "@"]  # every call is left out whole: no arguments' lead stays
    return ",".join(orjson.dumps(v).decode() for v in [*kept, *calls, item])


def _calls_left_out(leads: list[str], item: dict[str, Any], row: Row) -> list[str]:
    """Leave the item's calls out where each is what its block row says: their leads."""
    calls = [(c, n, _raw(p)) for k, c, n, p, *_ in row.blocks if k == "tool_call"]
    stored = item.get("tool_calls")
    if not calls or not isinstance(stored, list) or len(stored) != len(calls):
        return []
    for k, ((call_id, name, raw), call) in enumerate(zip(calls, stored)):
        arguments = HOLE if f"{HOLE}@{k}" in leads else raw
        if raw is None or call != {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}} \
                or list(call) != ["id", "type", "function"] or list(call["function"]) != ["name", "arguments"]:
            return []
    item["tool_calls"] = [HOLE] * len(calls)
    return [f"{HOLE}#{k}" for k in range(len(calls))]


def _text_put_back(leads: list[Any], item: Any, row: Row) -> str | None:
    """A document led by a text's key starting with ``#`` as it was before a lead took its text out
    (its message's ``extras`` may take values from it: it is not set aside)."""
    text = row.text if row.text is not None else row.blocks[0][4] if row.blocks else None
    if text is None or len(leads) != 1 or not isinstance(item, dict) or item.get(leads[0][1:]) != HOLE:
        return None  # never so: revision 0015 led such a document by that text alone
    item[leads[0][1:]] = text
    return orjson.dumps(item).decode()


def _hash_leads(values: list[Any]) -> list[str]:
    """The leads of a document (parsed) that start with ``#`` (after HOLE)."""
    return [v for v in values[:-1] if isinstance(v, str) and v[:2] == HOLE + "#"]


def _old(doc: str, row: Row) -> str | None:
    """The document as revision 0015 writes it; None where it cannot be (the canonical path)."""
    if doc == "" and row.role == "tool":
        call_id = row.blocks[0][1] if row.blocks else None
        if call_id is None:
            return None
        return ",".join(orjson.dumps(v).decode() for v in (HOLE + "content", {
            "role": "tool", "tool_call_id": call_id, "content": HOLE}))
    values = orjson.loads("[" + doc + "]")
    wanted = _hash_leads(values)
    if not wanted:
        return doc
    leads, item = [v for v in values[:-1] if v[1:2] != "#"], values[-1]
    calls = [(c, n, _raw(p)) for k, c, n, p, *_ in row.blocks if k == "tool_call"]
    for lead in wanted:
        if lead[2:].isdigit() and int(lead[2:]) < len(calls) and None not in calls[k := int(lead[2:])]:
            call_id, name, raw = calls[k]
            if len(raw) >= MIN_HOLE:
                leads.append(f"{HOLE}@{k}")
            item["tool_calls"][k] = {"id": call_id, "type": "function",
                                     "function": {"name": name, "arguments": HOLE if len(raw) >= MIN_HOLE else raw}}
        else:
            return None
    return ",".join(orjson.dumps(v).decode() for v in [*leads, item])


def _text(value: str | None) -> str | None:
    """A string column's value as convstore wrote it on PostgreSQL (one holding NUL, or starting with MARK,
    is kept as MARK + its JSON); elsewhere the column holds it as it is."""
    return json.loads(value[len(MARK):]) if isinstance(value, str) and value.startswith(MARK) else value


def _raw(payload: str | dict[str, Any] | None) -> str | None:
    """A call's arguments as the source wrote them, from its payload as stored."""
    fields = json.loads(payload) if isinstance(payload, str) else payload or {}
    raw = fields.get("$arguments_raw", fields.get("arguments_raw"))
    if isinstance(raw, str) and isinstance(payload, str) and raw.startswith(MARK):  # JSON text as stored
        raw = json.loads(raw[len(MARK):])
    return raw if isinstance(raw, str) else None
