"""What every contestant does, and convstore itself through its public API."""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlalchemy as sa

from store import ConversationStore, holes, operations as ops, rows
from store.chains import END
from store.codec import new_id
from store.formats import read
from store.gcpause import paused_gc
from store.limits import Limits

from .databases import Database
from .report import OTHER_FORMAT


class Contestant:
    """One way of storing conversations, measured on the same workload as the others.

    ``prepare`` turns OpenAI messages into the contestant's own input, one element per OpenAI
    message, before any timing. Then, on one fresh database: ``ingest`` (all at once, one
    conversation), ``tool_call`` (by id, across everything stored), ``load`` / ``last`` of a
    conversation, and ``append`` (one message per transaction) to a ``new_conversation``.
    """

    name = "?"
    kind = "?"  # convstore | floor | peer
    backends: tuple[str, ...] = ()
    family = ""
    """What its prepared input is, so contestants of one family share it."""

    def prepare(self, messages: list[dict[str, Any]]) -> list[Any]:
        return messages

    def open(self, db: Database) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def ingest(self, prepared: list[Any]) -> Any:
        raise NotImplementedError

    def new_conversation(self) -> Any:
        raise NotImplementedError

    def append(self, conversation: Any, one: Any) -> None:
        raise NotImplementedError

    def load(self, conversation: Any) -> Any:
        raise NotImplementedError

    other_format: str | None = None
    """The format ``load_other`` converts to (None: the contestant has no such load)."""

    def load_other(self, conversation: Any) -> Any:
        """The conversation read back in ``other_format``, not the one it was stored in."""
        raise NotImplementedError

    def last(self, conversation: Any, n: int) -> Any:
        raise NotImplementedError

    def tool_call(self, call_id: str) -> Any:
        raise NotImplementedError

    def as_openai(self, loaded: Any) -> list[dict[str, Any]] | None:
        """What ``load`` returned, as OpenAI messages, for the correctness check (None: not comparable)."""
        return None


class _OnStore(Contestant):
    """A contestant working on a convstore store: opening and closing it, a new empty
    conversation, and the tool call by id are convstore's own."""

    backends = ("sqlite", "postgresql", "mariadb")

    def __init__(self) -> None:
        self.store: ConversationStore | None = None

    def open(self, db: Database) -> None:
        self.store = ConversationStore(db.url, format="openai")

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def new_conversation(self) -> Any:
        return self.store.save([], format="openai")

    def tool_call(self, call_id: str) -> Any:
        return self.store.get_tool_call(call_id)


class Convstore(_OnStore):
    """convstore: ``save`` (validation, normalization, links and blobs included), ``append`` of one
    message, ``load(format="openai")``, ``load(last=50)``, ``get_tool_call``."""

    name = "convstore"
    kind = "convstore"
    family = "openai"

    def __init__(self) -> None:
        super().__init__()
        self.statements = 0

    def _count(self, *_: Any) -> None:
        self.statements += 1

    def ingest(self, prepared: list[Any]) -> Any:
        return self.store.save(prepared, format="openai")

    def append(self, conversation: Any, one: Any) -> None:
        self.store.append(conversation, [one], format="openai")

    def load(self, conversation: Any) -> Any:
        return self.store.load(conversation, format="openai")

    other_format = OTHER_FORMAT
    """Stored as OpenAI, read as Anthropic Messages: the system prompt moves out to ``system``, tool
    results become ``tool_result`` blocks of user turns (consecutive ones merged), calls become
    ``tool_use`` blocks with parsed arguments, images ``base64`` sources; the reasoning kept in
    OpenAI extras is dropped (a reported loss, not an error)."""

    def load_other(self, conversation: Any) -> Any:
        return self.store.load(conversation, format=self.other_format)

    def last(self, conversation: Any, n: int) -> Any:
        return self.store.load(conversation, format="openai", last=n)

    def as_openai(self, loaded: Any) -> list[dict[str, Any]]:
        return loaded

    def count_statements(self, fn: Any, *args: Any) -> int:
        """How many SQL statements ``fn(*args)`` sends. Counted by a listener there only then: a statement
        listener costs every statement it sees (``prepared.driver_execute`` dispatches to it), and the
        timed calls are the store's as a user runs it, with none."""
        before = self.statements
        sa.event.listen(self.store.engine, "before_cursor_execute", self._count)
        try:
            fn(*args)
        finally:
            sa.event.remove(self.store.engine, "before_cursor_execute", self._count)
        return self.statements - before


class SchemaBound(_OnStore):
    """convstore's own tables at driver speed: the bound no validating, normalizing code on this
    schema can beat. Its rows are the exact ones convstore writes, built before any timing
    (``store.rows.chunk_rows``); ``ingest`` and ``append`` only send them through convstore's
    driver path (one executemany or COPY per table, the append's reservation, commit; the
    collector paused as convstore pauses it);
    ``load`` / ``last`` run convstore's statements and stop at the raw rows: the stored
    documents of the range and the texts they leave out (``store.holes.stored``), as a load in
    the stored format reads them; on a server a window's one statement (``store.holes.window``). No
    validation, no conversion, no link lookups (an appended result is not linked to its call)."""

    name = "convstore rows (bound)"
    kind = "bound"
    family = "convstore-rows"

    def prepare(self, messages: list[dict[str, Any]]) -> list[Any]:
        canonical = read(messages, "openai")
        conversation_id = new_id()
        whole = rows.chunk_rows(Limits(), conversation_id, canonical, first_seq=0)
        one_by_one = [rows.chunk_rows(Limits(), conversation_id, [m], first_seq=0) for m in canonical]
        return _RowsWorkload(one_by_one, conversation_id=conversation_id, whole=whole)

    def ingest(self, prepared: list[Any]) -> Any:
        cid = prepared.conversation_id
        with paused_gc(), self.store._writer.transaction() as conn:  # as convstore pauses it
            ops.new_conversation(conn, self.store.scope, cid, message_count=len(prepared))
            rows.write_rows(conn, cid, _fresh(prepared.whole), fresh=True)
        return cid

    def append(self, conversation: Any, one: Any) -> None:
        with self.store._writer.transaction() as conn:  # convstore's connection for writes
            seq = ops.reserve(conn, self.store.scope, conversation, 1)
            rows.write_rows(conn, conversation, _retarget(_fresh(one), conversation, seq), fresh=False)

    def load(self, conversation: Any) -> Any:
        return self._rows(conversation, None)

    def last(self, conversation: Any, n: int) -> Any:
        store = self.store
        if store.engine.dialect.name == "sqlite":
            return self._rows(conversation, n)
        with paused_gc():  # a server: the window's one statement (store.holes.window), run as a load runs it
            return store._lookup(lambda conn, scope: holes.WINDOW_ROWS.run(
                conn, cid=conversation, ns=scope.namespace, last=n, fmt="openai"))

    def _rows(self, conversation: Any, last: int | None) -> Any:
        store = self.store
        with paused_gc(), store._connect() as conn:  # a load's transaction and its statements
            found, start = ops.locate_range(conn, store.scope, conversation, last)
            found_docs = holes.stored(conn, [(conversation, 0, END)], start, END, "openai", found.source_format,
                                     found.message_count)
            assert found_docs is not None, "every message of the workload keeps a document"
            return found_docs


class _RowsWorkload(list):
    """Rows message by message (for appends), and of the whole list at once (for an ingest)."""

    def __init__(self, items: list[Any], *, conversation_id: str, whole: Any) -> None:
        super().__init__(items)
        self.conversation_id = conversation_id
        self.whole = whole


def _fresh(chunk: Any) -> Any:
    """A copy of a chunk's rows to write: a write converts them in place (``bulk.prepare_listed``), and the
    workload's are written again in each round (convstore's own, built a write, are not copied)."""
    return dataclasses.replace(chunk, messages=list(map(list.copy, chunk.messages)),
                               blocks=list(map(list.copy, chunk.blocks)), tool_calls=list(map(dict.copy, chunk.tool_calls)))


def _retarget(chunk: Any, conversation_id: str, seq: int) -> Any:
    """Rows built for seq 0 of another conversation, moved to ``seq`` of ``conversation_id``."""
    for row in (*chunk.tool_calls, *chunk.blobs.rows.values()):
        row["conversation_id"] = conversation_id
    for row in chunk.messages:  # listed: conversation id, seq, window start first
        row[0], row[1], row[2] = conversation_id, seq, seq
    for row in chunk.blocks:
        row[0], row[1] = conversation_id, seq
    for row in chunk.tool_calls:
        row["call_seq"] = seq
        if row.get("result_seq") is not None:
            row["result_seq"] = seq
    return chunk
