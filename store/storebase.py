"""What the synchronous store (:mod:`store.repository`) and its asyncio twin (:mod:`store.aio`)
share around the SQL of :mod:`store.operations`: settings, reading input, writing output."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from . import docs, fused, listing, onepass, rows, streaming
from . import operations as ops
from .codec import new_id
from .errors import InputError
from .formats import Loss, get_format, read, write
from .formats._common import validate
from .gcpause import paused_gc
from .lean import Writable
from .limits import Limits, check_metadata, check_source_format, check_text
from .model import MESSAGES, Message
from .operations import Scope

DEFAULT_URL = "sqlite:///convstore.db"
DEFAULT_NAMESPACE = "default"
NAMESPACE_CHARS, KEY_CHARS, TITLE_CHARS = 128, 255, 500  # their columns' lengths (store.schema)
_SAVED_FIELDS = frozenset({"title", "metadata", "source_format", "tags", "expires_at"})
"""A conversation's own fields that ``save_many`` takes, as ``save``'s keywords."""


class StoreBase:
    """What the sync and async stores share: settings, reading input, writing output."""

    def __init__(self, *, namespace: str, format: str, limits: Limits | None) -> None:
        check_text("namespace", namespace, NAMESPACE_CHARS)
        self.namespace = namespace
        self.format = format
        self.limits = limits or Limits()

    def _check_conversation(self, *, key: str | None = None, title: str | None = None,
                            metadata: Any = None) -> None:
        """The conversation's own fields, checked before any statement runs."""
        check_text("key", key, KEY_CHARS)
        check_text("title", title, TITLE_CHARS)
        check_metadata(metadata, self.limits)

    def _fields(self, *, title: Any, metadata: Any, tags: Any, expires_at: Any) -> dict[str, Any]:
        """A conversation's own fields, checked and normalized (``listing.UNSET``: not given)."""
        self._check_conversation(title=None if title is listing.UNSET else title,
                                 metadata=None if metadata is listing.UNSET else metadata)
        fields = {"title": title, "metadata": metadata, "tags": tags, "expires_at": expires_at}
        if tags is not listing.UNSET:
            fields["tags"] = listing.check_tags(tags)
        if expires_at is not listing.UNSET:
            fields["expires_at"] = ops.stored_time(expires_at, "expires_at")
        return {k: v for k, v in fields.items() if v is not listing.UNSET}

    @staticmethod
    def _check_lookup(**values: str | None) -> None:
        for what, value in values.items():
            check_text(what, value)

    @staticmethod
    def _check_required(**values: Any) -> None:
        """Names a lookup cannot go without (a tool call's id, a conversation's key): None is
        refused here, where a query would take it for "any" and answer for another record (their
        other checks are the usual ones, after this)."""
        for what, value in values.items():
            if value is None:
                raise InputError(f"{what} must be a string, got None")

    @property
    def scope(self) -> Scope:
        return Scope(self.namespace, self.limits)

    def _canonical(self, messages: Any, format: str | None) -> list[Writable]:
        format = format or self.format
        if format == "canonical":  # Message objects pass as they are; dicts are validated, errors located
            return validate(MESSAGES, messages, "canonical")
        with paused_gc():
            if format == "openai" and messages.__class__ is list:  # its plain items checked as they are read
                return onepass.read(messages, self.limits)
            return docs.read(messages, format)

    def _planned(self, conversations: Iterable[tuple[Any, dict[str, Any]]], format: str | None,
                 ) -> list[tuple[str, Sequence[Writable], dict[str, Any]]]:
        """``save_many``'s conversations, every one read and checked before any is written: its id, its
        messages and its own fields."""
        planned = []
        for index, (messages, given) in enumerate(conversations):
            if unknown := given.keys() - _SAVED_FIELDS:
                raise InputError(f"conversation {index}: unknown fields {sorted(unknown)} "
                                 f"(a conversation takes {', '.join(sorted(_SAVED_FIELDS))})")
            fields = self._fields(**{key: given.get(key) for key in ("title", "metadata", "tags", "expires_at")})
            fields["source_format"] = self._source_format(format, given.get("source_format"))
            planned.append((new_id(), self._canonical(messages, format), fields))
        return planned

    def _new_messages(self, messages: Any, format: str | None, conversation_id: str) -> Sequence[Writable] | fused.Rows:
        """What a save of ``messages`` as the new conversation ``conversation_id`` writes: an OpenAI list's
        rows made as its items are read (``store.fused``) where every item is read in one pass, else
        :meth:`_canonical`."""
        # SQLite only: on a server a save builds a chunk's rows while the server takes the chunk before
        # (``rows._overlapped``), and the straight way, which builds them all first, was slower there
        # (PostgreSQL: 31.8k msg/s against 57.4k for the rows at driver speed, benchmarks/README.md).
        bound = rows.bound(self.engine.dialect, conversation_id)
        if bound is not None and (format or self.format) == "openai" and messages.__class__ is list:
            with paused_gc():
                made = fused.rows(messages, self.limits, conversation_id, bound)
            if made is not None:
                return made
        return self._canonical(messages, format)

    def _chunks(self, messages: Iterator[Any], format: str | None) -> Iterator[list[Message]]:
        return streaming.read_chunks(messages, format or self.format)

    def _export_part(self, part: list[Message], start: int, target: str, strict: bool,
                     on_loss: Callable[[Loss], None] | None) -> list[Any]:
        """One part of a streamed export, its losses numbered in the whole conversation."""
        value = self._output(part, target, strict,
                             on_loss and (lambda loss: on_loss(replace(loss, index=loss.index + start))), start)
        if not isinstance(value, list):
            raise InputError(f"{target} exports one object, not a list of messages: use load()")
        return value

    def _item_split(self, target: str) -> Callable[[list[Message]], tuple[Any, list[Message]]]:
        """For ``pop_item``: a popped message as (its newest element in ``target``, the
        canonical messages holding the elements before it)."""
        def split(popped: list[Message]) -> tuple[Any, list[Message]]:
            items = self._export_part(popped, 0, target, False, None)
            if not items:
                return None, []
            return items[-1], read(items[:-1], target) if len(items) > 1 else []
        return split

    def _streams(self, target: str) -> bool:
        return target in streaming.STREAM_WRITES

    def _source_format(self, format: str | None, source_format: str | None) -> str | None:
        check_source_format(source_format)
        fmt = format or self.format
        return source_format or (fmt if fmt not in ("canonical", "auto") else None)

    def _target(self, format: str | None) -> str:
        return get_format(format or self.format).name  # an unknown format fails before any query

    @classmethod
    def _loaded(cls, loaded: tuple[list[Any] | None, list[Message]], target: str, strict: bool,
                on_loss: Callable[[Loss], None] | None) -> Any:
        """What ``ops.load`` read, in ``target``. Its canonical messages are freed on return,
        before a pause of the collector around the load ends (see ``_store``)."""
        items, msgs = loaded
        return items if items is not None else cls._output(msgs, target, strict, on_loss)

    @staticmethod
    def _output(messages: list[Message], target: str, strict: bool,
                on_loss: Callable[[Loss], None] | None, first: int = 0) -> Any:
        with paused_gc():
            value, losses = write(messages, target, strict=strict, first=first, stored=True)
        if on_loss is not None:
            for loss in losses:
                on_loss(loss)
        return value

    def _cap_limits(self, max_allowed_packet: int | None) -> None:
        if max_allowed_packet is not None:
            self.limits = self.limits.capped(int(max_allowed_packet))


def packet_size(conn: sa.Connection) -> int | None:
    """MariaDB/MySQL refuse rows above max_allowed_packet; other backends have no such cap."""
    if conn.dialect.name not in ("mysql", "mariadb"):
        return None
    return int(conn.exec_driver_sql("SELECT @@max_allowed_packet").scalar_one())
