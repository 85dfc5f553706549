"""A tool call's arguments are its block's text, not a JSON payload around them.

Since revision 0011 a call whose arguments are exactly the parse of the string its source wrote
kept that string alone, as ``{"$arguments_raw": "..."}`` in its block's ``payload``. The string
is now the block row's ``text`` column (empty for calls until now), and ``payload`` keeps what
else the call has, NULL most often: no JSON object, key and escaped quotes around the arguments.
The search index reads the same words (the block's tool name, text and payload are its text).
The upgrade moves each such string to ``text``, the downgrade back to ``payload``, by keyset
pages of the calls that have one; each can run again to the same end.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0016"

RAW = "$arguments_raw"
PAGE = 1000


def _blocks(dialect: str) -> sa.TableClause:
    payload = postgresql.JSONB(none_as_null=True) if dialect == "postgresql" else sa.Text()
    return sa.table("blocks", sa.column("conversation_id"), sa.column("seq"), sa.column("position"),
                    sa.column("kind"), sa.column("text"), sa.column("payload", payload))


def upgrade() -> None:
    b = _blocks(op.get_bind().dialect.name)
    _move(b, sa.and_(b.c.kind == "tool_call", b.c.text.is_(None), b.c.payload.is_not(None)), _to_text)


def downgrade() -> None:
    b = _blocks(op.get_bind().dialect.name)
    _move(b, sa.and_(b.c.kind == "tool_call", b.c.text.is_not(None)), _to_payload)


def _to_text(text: str | None, payload: dict[str, Any]) -> tuple[str | None, dict[str, Any]] | None:
    """(text, payload) with the arguments out of the payload; None where it holds none."""
    if not isinstance(raw := payload.get(RAW), str):
        return None
    rest = {k: v for k, v in payload.items() if k != RAW}
    return raw, rest


def _to_payload(text: str | None, payload: dict[str, Any]) -> tuple[str | None, dict[str, Any]] | None:
    return None, {**payload, RAW: text}


def _dumps(value: dict[str, Any]) -> str:
    """JSON text of a payload as convstore writes it (orjson; json past orjson's 255 levels of nesting)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False)


def _move(b: sa.TableClause, where: Any,
          change: Callable[[str | None, dict[str, Any]], tuple[str | None, dict[str, Any]] | None]) -> None:
    """Rewrite ``(text, payload)`` of the call rows ``where`` selects as ``change`` gives them."""
    bind = op.get_bind()
    pg = bind.dialect.name == "postgresql"
    key = (b.c.conversation_id, b.c.seq, b.c.position)
    first = sa.select(*key, b.c.text, b.c.payload).where(where).order_by(*key).limit(PAGE)
    after = first.where(sa.tuple_(*key) > sa.tuple_(sa.bindparam("c"), sa.bindparam("s"), sa.bindparam("p")))
    put = (b.update().where(b.c.conversation_id == sa.bindparam("c"), b.c.seq == sa.bindparam("s"),
                            b.c.position == sa.bindparam("p"))
           .values(text=sa.bindparam("t"), payload=sa.bindparam("d", type_=b.c.payload.type)))
    rows = bind.execute(first).all()
    while rows:
        updates = []
        for cid, seq, position, text, stored in rows:
            payload = stored if pg else json.loads(stored) if stored else {}
            if (changed := change(text, payload or {})) is not None:
                new_text, new_payload = changed
                value = (new_payload or None) if pg else _dumps(new_payload) if new_payload else None
                updates.append({"c": cid, "s": seq, "p": position, "t": new_text, "d": value})
        if updates:
            bind.execute(put, updates)
        last = rows[-1]
        rows = bind.execute(after, {"c": last[0], "s": last[1], "p": last[2]}).all()
