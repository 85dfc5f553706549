"""Extras kept once (revision 0012): a message's ``extras`` do not repeat a long string its
stored document keeps (:mod:`store.docs`).

The value of a key a format has no field for (``extras[format]["fields"]``, as OpenAI's
``reasoning_content``) is HOLE there where the document's item holds it as it is
(:func:`keep_once`); a load in the stored format reads it from the document, and a canonical
read takes it from the document read beside the row (:func:`fill`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa

from .codec import MESSAGE_COLUMNS
from .docs import MIN_HOLE
from .holes import HOLE, HOLE_JSON, leads
from .limits import ESCAPED, Budget, stored_size
from .schema import MARK, MessageRow, dumps

_m = MessageRow.__table__


def keep_once(dumped: Sequence[dict[str, Any] | None], docs: list[str | None], budgets: Sequence[Budget]) -> None:
    """Leave out of the dumped messages' ``extras`` the long strings their documents keep:
    where a key of ``extras[source_format]["fields"]`` holds a string of :data:`MIN_HOLE`
    characters or more, and the item of the message's one-item document holds the same
    string under that key, HOLE stands in for it (a load in the stored format reads it from
    the document; :func:`fill` puts it back for the others), and the message's budget counts
    the string still (:func:`kept_size`). A message whose fields hold HOLE itself keeps no
    document: a read would take the value for a stand-in."""
    for index, dump in enumerate(dumped):
        if dump is None:  # a plain item (``store.lean``) without extras
            continue
        fields = _fields(dump.get("extras"), dump.get("source_format"))
        if fields is None or docs[index] is None:
            continue
        if HOLE in fields.values():
            docs[index] = None
            continue
        long = [key for key, value in fields.items() if value.__class__ is str and len(value) >= MIN_HOLE]
        if long and (item := _item(docs[index])) is not None:
            for key in long:
                if item.get(key) == fields[key]:
                    budgets[index].used += kept_size(fields[key], budgets[index].escaped)
                    fields[key] = HOLE


def kept_size(value: str, escaped: bool) -> int:
    """What a string its document keeps for its ``extras`` takes of a message's budget: its JSON's
    bytes as the extras held it (``limits.stored_size`` of it), less what HOLE takes in its stead.
    One orjson call: the bytes are the UTF-8, and MariaDB's escapes are ASCII."""
    if "\x00" in value or value[:1] == MARK:  # stored escaped (``schema.escape``)
        return stored_size(dumps(value), escaped) - _HOLE_SIZE[escaped]
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:  # a lone surrogate: refused where it is read
        raise ValueError(f"cannot store as JSON: {value[:20]!r}...") from None
    if escaped:
        return len(data) + sum(map(data.count, _ESCAPED)) - _HOLE_SIZE[True]
    return len(data) - _HOLE_SIZE[False]


_ESCAPED = tuple(c.encode() for c in ESCAPED)
_HOLE_SIZE = {escaped: stored_size(HOLE_JSON, escaped) for escaped in (False, True)}


def _fields(extras: Any, source_format: Any) -> dict[str, Any] | None:
    own = extras.get(source_format) if extras.__class__ is dict else None
    fields = own.get("fields") if own.__class__ is dict else None
    return fields if fields.__class__ is dict else None


def _item(doc: str | None) -> dict[str, Any] | None:
    """The item of a one-item document, without its leads (its holes stay HOLE)."""
    if doc is None:
        return None
    try:
        items = orjson.loads("[" + doc[leads(doc)[1]:] + "]")
    except ValueError:  # not JSON (orjson's and json's errors are ValueErrors)
        return None
    return items[0] if len(items) == 1 and items[0].__class__ is dict else None


_EXTRAS, _FORMAT = MESSAGE_COLUMNS.index("extras"), MESSAGE_COLUMNS.index("source_format")
DOC_IF_HELD = sa.case((sa.cast(_m.c.extras, sa.Text).like(sa.literal_column("'%u0001%'")), _m.c.doc)).label("held_doc")
"""A message row's document where its extras may have left a value to it (the JSON text of
HOLE is ``"\\u0001"``; PostgreSQL's JSONB writes it so too), else NULL: read beside the row
for :func:`fill`, with no statement of its own."""


def fill(rows: Sequence[Sequence[Any]]) -> None:
    """Put back into message rows (``codec.MESSAGE_COLUMNS`` then :data:`DOC_IF_HELD`) the
    ``extras`` values their documents keep (:func:`keep_once`)."""
    for row in rows:
        if (doc := row[-1]) is None or (fields := _fields(row[_EXTRAS], row[_FORMAT])) is None:
            continue
        if HOLE in fields.values() and (item := _item(doc)) is not None:
            for key, value in fields.items():
                if value == HOLE and (kept := item.get(key)).__class__ is str:
                    fields[key] = kept
