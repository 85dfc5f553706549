"""A chunk of messages as rows: built in plain Python, written one executemany per table.

:func:`chunk_rows` is pure CPU (ids, limit checks, blobs by hash, tool-call links,
window starts); :func:`write_rows` sends the rows in one ``executemany`` (or
``COPY``) per table. :func:`insert` does both for a batch, chunk by chunk, looking up once
first what the batch links to (stored calls it answers, window starts of open calls).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from . import bulk, fused, links, onepass
from .chains import END, chain_of, within
from .codec import BlobSink, block_rows, message_rows
from .docs import Batch, documents, picked
from .errors import DuplicateToolCallError
from .gcpause import paused_gc
from .kept_once import keep_once
from .lean import Parts, Plain, Writable, canonical
from .limits import Budget, Limits
from .model import MESSAGES
from .prepared import Prepared, pipelined
from .schema import BlobRow, BlockRow, MessageRow, ToolCallRow

messages_t = MessageRow.__table__
blocks_t = BlockRow.__table__
blobs_t = BlobRow.__table__
tool_calls_t = ToolCallRow.__table__


def insert(conn: sa.Connection, limits: Limits, conversation_id: str, msgs: Sequence[Writable], *,
           first_seq: int, fresh: bool, index_base: int, chunk: int,
           progress: Callable[[int], None] | None = None) -> None:
    """Insert ``msgs`` at ``first_seq`` in chunks of ``chunk`` messages (bounded rows in memory,
    progress to report), in the caller's transaction. What they link to is read once
    (:class:`Linked`); each chunk's rows are then built from memory. Through psycopg's COPY, a
    chunk's rows are built while the server still takes the chunk before (see :func:`_overlapped`)."""
    if isinstance(msgs, fused.Rows):  # a new conversation's rows, made as its items were read
        _insert_made(conn, conversation_id, msgs, chunk=chunk, progress=progress)
        return
    linked = Linked.look_up(conn, conversation_id, msgs, first_seq=first_seq, fresh=fresh)
    built = _built(limits, conversation_id, msgs, linked, first_seq=first_seq, index_base=index_base,
                   chunk=chunk, bound=bound(conn.dialect, conversation_id))
    if len(msgs) > chunk and bulk.sync_psycopg(conn.dialect):
        _overlapped(conn, conversation_id, built, fresh=fresh, progress=progress)
        return
    try:
        for start, part, rows in built:
            write_rows(conn, conversation_id, rows, fresh=fresh and start == 0)
            if progress is not None:
                progress(len(part))
    except sa.exc.IntegrityError as exc:
        if (refused := _refused_call(conn, conversation_id, msgs, first_seq, index_base)) is not None:
            raise refused from exc
        raise


def _insert_made(conn: sa.Connection, conversation_id: str, made: fused.Rows, *, chunk: int,
                 progress: Callable[[int], None] | None) -> None:
    """:func:`insert` of the rows ``store.fused`` made (a new conversation's, from seq 0), sent ``chunk``
    messages at a time with their blocks and links (each link whole: its result is in it already)."""
    blocks_at = links_at = 0
    for start in range(0, len(made), chunk):
        stop = start + chunk
        blocks_to = bisect_left(made.blocks, stop, blocks_at, key=_SEQ)
        links_to = bisect_left(made.links, stop, links_at, key=_CALL_SEQ)
        rows = ChunkRows(made.blobs if start == 0 else BlobSink(conversation_id), made.messages[start:stop],
                         made.blocks[blocks_at:blocks_to], made.links[links_at:links_to], [], made.message_keys,
                         made.block_keys, made.bound)
        write_rows(conn, conversation_id, rows, fresh=start == 0)
        blocks_at, links_at = blocks_to, links_to
        if progress is not None:
            progress(len(rows.messages))


_CALL_SEQ = itemgetter("call_seq")


Built = Iterator[tuple[int, Sequence[Writable], "ChunkRows"]]
"""Each chunk's offset in the batch, its messages and its rows."""


def _built(limits: Limits, conversation_id: str, msgs: Sequence[Writable], linked: Linked, *, first_seq: int,
           index_base: int, chunk: int, bound: tuple[str, Any] | None) -> Built:
    """The chunks' rows, built in turn (what they link to carried in ``linked``)."""
    for start in range(0, len(msgs), chunk):
        part = msgs[start:start + chunk]
        rows = chunk_rows(limits, conversation_id, part, first_seq=first_seq + start, index_base=index_base + start,
                          known=linked.known, prior_starts=linked.starts, bound=bound)
        linked.add(rows)
        yield start, part, rows


def _overlapped(conn: sa.Connection, conversation_id: str, built: Built, *, fresh: bool,
                progress: Callable[[int], None] | None) -> None:
    """:func:`insert`'s chunks where the end of a COPY waits for the server to take its rows (~4 us a
    message of the workload, after ~2 us sending them): a worker thread waits for it, without the GIL,
    while this one builds the next chunk's rows and parameters, and sends nothing until the wait is
    over: the connection is never used by both at once. (A worker that sent the rows too, while this
    one built, had both wait for the GIL in turn, and gained nothing.)"""
    ending: Future[None] | None = None
    done = 0

    def wait() -> None:  # for the chunk before (its error, if any, is raised here), then its progress
        if ending is not None:
            ending.result()
        if done and progress is not None:
            progress(done)

    with ThreadPoolExecutor(1, thread_name_prefix="convstore-copy") as worker:
        for start, part, rows in built:
            batches = _prepared(conn.dialect, rows)
            wait()
            end = _send(conn, conversation_id, rows, batches, fresh=fresh and start == 0)
            ending, done = None if end is None else worker.submit(end), len(part)
        wait()


@dataclass
class Linked:
    """What the chunks of one batch link to: the calls stored before it or written by an
    earlier chunk (``known``: a call id is used once in a conversation), and the window starts
    from the earliest call still unanswered on (``links.plan``). Read from the database once a
    batch, then kept in memory: one statement or two, whatever the number of chunks."""

    known: dict[str, links.KnownCall]
    starts: dict[int, int]
    waiting: list[tuple[int, str]]  # a heap of (seq, id) of calls that were unanswered when added
    since: int = END  # no seq in ``starts`` is lower

    @classmethod
    def look_up(cls, conn: sa.Connection, conversation_id: str, msgs: Sequence[Writable], *, first_seq: int,
                fresh: bool) -> Linked:
        known, prior, lo = ({}, {}, links.earliest_open_call(msgs, {})) if fresh \
            else _calls_and_starts(conn, conversation_id, msgs)
        if lo is not None and len(prior) < first_seq - lo:  # a fork answering a call of its shared prefix
            prior = {seq: start for owner, low, high in within(chain_of(conn, conversation_id), lo)
                     for seq, start in _PRIOR_STARTS.run(conn, cid=owner, lo=low, hi=high)}
        waiting = [(call.call_seq, call_id) for call_id, call in known.items() if not call.answered]
        heapq.heapify(waiting)
        return cls(known, prior, waiting, END if lo is None else lo)

    def add(self, rows: ChunkRows) -> None:
        """What a chunk just built adds: its calls, and the window starts a later chunk may need."""
        for row in rows.tool_calls:
            self.known[row["call_id"]] = links.KnownCall(row["call_seq"], row["result_seq"] is not None)
            if row["result_seq"] is None:
                heapq.heappush(self.waiting, (row["call_seq"], row["call_id"]))
        while self.waiting and self.known[self.waiting[0][1]].answered:  # ``plan`` marks the calls it answers
            heapq.heappop(self.waiting)
        lo = self.waiting[0][0] if self.waiting else END  # only ever grows: a chunk's calls come after the rest
        if lo > self.since:  # the starts below it are needed no more
            self.starts = {seq: start for seq, start in self.starts.items() if seq >= lo}
        self.since = lo
        self.starts.update((row[1], row[2]) for row in rows.messages if row[1] >= lo)  # seq, window_start


@dataclass
class ChunkRows:
    """Everything one chunk of messages writes: rows per table, and links of stored calls
    that the chunk answers (no ``search`` rows: a search writes them, ``store.fulltext``).
    Message and block rows are listed (``bulk.listed``): each a list of the columns some row sets, in
    table order (``message_keys``, ``block_keys``; a message row's first three are its conversation
    id, seq and window start)."""

    blobs: BlobSink
    messages: list[list[Any]]
    blocks: list[list[Any]]
    tool_calls: list[dict[str, Any]]
    link_updates: list[dict[str, Any]]
    message_keys: tuple[str, ...]
    block_keys: tuple[str, ...]
    bound: bool = False
    """Whether the message and block rows are already the driver's parameters (SQLite: see
    ``onepass.linked_rows``), sent as they are."""


def chunk_rows(limits: Limits, conversation_id: str, msgs: Sequence[Writable], *, first_seq: int,
               index_base: int = 0, known: dict[str, links.KnownCall] | None = None,
               prior_starts: dict[int, int] | None = None, bound: tuple[str, Any] | None = None) -> ChunkRows:
    """The rows of ``msgs`` stored from ``first_seq`` on, checked against ``limits``
    (pure CPU: no I/O). ``known`` are stored calls the chunk may answer, ``prior_starts`` the
    window starts of stored messages from the earliest open call on. ``bound``: the conversation id
    as the driver binds it and the NULL its rows take (SQLite's, see :func:`bound`), for a chunk whose
    rows are then built as the driver's parameters (``ChunkRows.bound``) where every message is checked."""
    blobs = BlobSink(conversation_id)
    with paused_gc():  # pure CPU, no I/O inside: the collector is back on before anything else runs
        ready = onepass.checked(msgs, limits)  # read and checked under these limits: their rows at once
        if len(ready) == len(msgs):  # all of them (an agent's append, a chunk of plain items): no general stage
            cid, null = (conversation_id, None) if bound is None else bound
            rows, keys, blocks, block_keys, inserts, updates = onepass.linked_rows(
                msgs, cid, first_seq, index_base, known or {}, prior_starts or {}, blobs, null)
            return ChunkRows(blobs, rows, blocks, inserts, updates, keys, block_keys, bound is not None)
        offsets = _others(len(msgs), ready) if ready else range(len(msgs))
        general = _unparted(picked(msgs, offsets) if ready else msgs)
        budgets = [Budget(index_base + i, limits) for i in offsets]
        seqs = [first_seq + i for i in offsets]
        dumped = _dumped(general)
        # values checked before the links: an error names the first message that has one
        block_dicts, texts = block_rows(general, dumped, conversation_id=conversation_id, seqs=seqs, blobs=blobs,
                                        budgets=budgets)
        plan = links.plan(msgs, conversation_id=conversation_id, first_seq=first_seq, index_base=index_base,
                          known=known or {}, prior_starts=prior_starts or {})
        at = {offset: i for i, offset in enumerate(offsets)} if ready else None
        docs = documents(general, skip=plan.unanswered if at is None else
                         {at[offset] for offset in plan.unanswered if offset in at})
        keep_once(dumped, docs, budgets)
        starts = plan.window_starts if at is None else [plan.window_starts[i] for i in offsets]
        message_dicts = message_rows(general, dumped, conversation_id=conversation_id, seqs=seqs,
                                     window_starts=starts, budgets=budgets, docs=docs, texts=texts)
        for budget in budgets:
            budget.check()
        rows, keys = bulk.listed(messages_t, message_dicts)
        blocks, block_keys = bulk.listed(blocks_t, block_dicts)
        if ready:
            rows, keys, blocks, block_keys = _with_ready(msgs, ready, offsets, (rows, keys, blocks, block_keys),
                                                         conversation_id, first_seq, plan, blobs)
    return ChunkRows(blobs, rows, blocks, plan.inserts, plan.updates, keys, block_keys)


def _unparted(msgs: Sequence[Writable]) -> Sequence[Writable]:
    """``msgs`` with each :class:`~store.lean.Parts` (read under other limits) as its canonical message,
    whose rows and document the general path makes as for any item of parts (none is given)."""
    out = canonical(msgs, of=(Parts,))
    return Batch(out, msgs.given) if out is not msgs and isinstance(msgs, Batch) else out


def _others(n: int, ready: list[int]) -> list[int]:
    taken = set(ready)
    return [i for i in range(n) if i not in taken]


Listed = tuple[list[list[Any]], tuple[str, ...], list[list[Any]], tuple[str, ...]]
"""A chunk's message rows and their columns, and its block rows and theirs (``bulk.listed``)."""


def _with_ready(msgs: Sequence[Writable], ready: list[int], others: Sequence[int], listed: Listed,
                conversation_id: str, first_seq: int, plan: links.LinkPlan, blobs: BlobSink) -> Listed:
    """The chunk's message and block rows in seq order, each widened to the columns either side sets:
    those of the other messages (``listed``, at offsets ``others``) and those of the messages
    ``store.onepass`` checked (at offsets ``ready``)."""
    rows, keys, blocks, block_keys = listed
    ready_rows, ready_keys, ready_blocks, ready_block_keys = onepass.rows(msgs, ready, conversation_id, first_seq,
                                                                          plan, blobs)
    all_keys, all_block_keys = bulk.union(messages_t, keys, ready_keys), bulk.union(blocks_t, block_keys,
                                                                                     ready_block_keys)
    rows, ready_rows = bulk.narrowed(rows, keys, all_keys), bulk.narrowed(ready_rows, ready_keys, all_keys)
    blocks = bulk.narrowed(blocks, block_keys, all_block_keys)
    ready_blocks = bulk.narrowed(ready_blocks, ready_block_keys, all_block_keys)
    merged: list[list[Any]] = []
    at = 0  # the ready rows taken: the others are few (an image here and there), the ready ones sliced
    for taken, (offset, row) in enumerate(zip(others, rows)):
        merged += ready_rows[at:offset - taken]
        merged.append(row)
        at = offset - taken
    merged += ready_rows[at:]
    if ready_blocks:
        blocks = _merged_blocks(ready_blocks, blocks)
    return merged, all_keys, blocks, all_block_keys


def _merged_blocks(ready: list[list[Any]], others: list[list[Any]]) -> list[list[Any]]:
    """Two runs of listed block rows as one, in seq order (no seq in both): the others, few, placed among
    the ready ones by bisection."""
    merged: list[list[Any]] = []
    at = 0
    for block in others:
        upto = bisect_left(ready, block[1], at, key=_SEQ)
        merged += ready[at:upto]
        merged.append(block)
        at = upto
    merged += ready[at:]
    return merged


_SEQ = itemgetter(1)  # a listed row's seq, after its conversation id


def _dumped(msgs: Sequence[Writable]) -> list[dict[str, Any] | None]:
    """Each canonical message's fields (``exclude_defaults``), dumped in one call; for a Plain, its
    extras (None without), copied: ``keep_once`` may put HOLE in them."""
    full = iter(MESSAGES.dump_python([m for m in msgs if m.__class__ is not Plain], exclude_defaults=True))
    return [(_plain_dump(m) if m.extras else None) if m.__class__ is Plain else next(full)  # type: ignore[union-attr]
            for m in msgs]


def _plain_dump(msg: Plain) -> dict[str, Any]:
    extras = {name: {key: dict(value) if value.__class__ is dict else value for key, value in notes.items()}
              if notes.__class__ is dict else notes for name, notes in msg.extras.items()}  # type: ignore[union-attr]
    return {"source_format": msg.source_format, "extras": extras}


def write_rows(conn: sa.Connection, conversation_id: str, rows: ChunkRows, *, fresh: bool) -> None:
    """Insert a chunk's rows, one executemany (or COPY) per table. A small chunk (an agent's
    append) goes out pipelined on PostgreSQL: one round trip for all its statements."""
    end = _send(conn, conversation_id, rows, _prepared(conn.dialect, rows), fresh=fresh)
    if end is not None:
        end()


def _prepared(dialect: sa.Dialect, rows: ChunkRows) -> list[bulk.Batch | None]:
    """The chunk's statements and parameters: blocks, calls, then messages (pure CPU)."""
    listed = bulk.prepare_listed
    if rows.bound:  # built as the driver's parameters: sent as they are
        listed = _as_built
    return [listed(dialect, blocks_t, rows.blocks, rows.block_keys),
            bulk.prepare(dialect, tool_calls_t, rows.tool_calls),
            listed(dialect, messages_t, rows.messages, rows.message_keys)]


def _as_built(dialect: sa.Dialect, table: sa.Table, listed: list[list[Any]], keys: tuple[str, ...]) -> bulk.Batch | None:
    return bulk.sent_as_built(listed, bulk._statement(table, dialect, keys)) if listed else None


def bound(dialect: sa.Dialect, conversation_id: str) -> tuple[str, Any] | None:
    """On SQLite, the conversation id as its driver binds it and 0 for NULL (``bulk._Insert.zeroed``:
    every nullable text column of a message or block row takes ``NULLIF(?, 0)``): the rows of a chunk
    of checked messages are then its parameters as built, converted by no second walk (0.35-0.7 us a
    message). Elsewhere None: a COPY or PyMySQL's executemany takes None for NULL, as built."""
    if dialect.name != "sqlite":
        return None
    return bulk.bound(dialect, messages_t.c.conversation_id, conversation_id), 0


def _send(conn: sa.Connection, conversation_id: str, rows: ChunkRows, batches: list[bulk.Batch | None], *,
          fresh: bool) -> Callable[[], None] | None:
    """Write a chunk's prepared rows; the messages go last (the largest batch, no foreign key between
    the tables), and the end of their COPY, if any, is returned to be waited for."""
    _insert_blobs(conn, conversation_id, rows.blobs, fresh)
    blocks, calls, messages = batches
    small = max(len(rows.messages), len(rows.blocks), len(rows.tool_calls)) < bulk.COPY_FROM
    with pipelined(conn) if small else nullcontext():
        bulk.send(conn, blocks)
        bulk.send(conn, calls)
        _LINK_RESULT.run_many(conn, rows.link_updates)
        return bulk.send(conn, messages, defer=True)


_PRIOR_STARTS = Prepared(sa.select(messages_t.c.seq, messages_t.c.window_start).where(
    messages_t.c.conversation_id == sa.bindparam("cid"), messages_t.c.seq >= sa.bindparam("lo"),
    messages_t.c.seq < sa.bindparam("hi")))
_LINK_RESULT = Prepared(
    tool_calls_t.update().where(tool_calls_t.c.conversation_id == sa.bindparam("cid"),
                                tool_calls_t.c.call_id == sa.bindparam("call"))
    .values(status=sa.bindparam("status"), result_seq=sa.bindparam("result_seq"),
            result_position=sa.bindparam("result_position")))


def in_conversation(conn: sa.Connection, columns: tuple[sa.Column[Any], ...], key: sa.Column[Any],
                     conversation_id: str, values: Iterable[str]) -> list[list[Any]]:
    """The rows of ``key``'s table in a conversation whose ``key`` is one of ``values``."""
    values = list(values)
    if conn.dialect.name == "postgresql":
        return _joined_statement(columns, key).run(conn, cid=conversation_id, values=values)
    found: list[list[Any]] = []
    for at in range(0, len(values), IN_LIST):
        size, bound = _padded(values[at:at + IN_LIST])
        found += _in_statement(columns, key, size).run(conn, cid=conversation_id, **bound)
    return found


def _padded(values: list[str]) -> tuple[int, dict[str, str]]:
    """``values`` as the parameters ``v0``, ``v1``, ... of an IN list, padded with repeats to a power of
    two (a few statement shapes serve any number of values), and that size."""
    size = 1 << (len(values) - 1).bit_length()
    return size, {f"v{i}": v for i, v in enumerate(values + values[-1:] * (size - len(values)))}


IN_LIST = 4096
"""The most values one IN list binds (SQLite takes 32,766 parameters, MariaDB 65,535): a batch
of any size looks its calls up in statements of at most this many."""


@lru_cache(maxsize=64)
def _in_statement(columns: tuple[sa.Column[Any], ...], key: sa.Column[Any], size: int) -> Prepared:
    return Prepared(sa.select(*columns).where(
        key.table.c.conversation_id == sa.bindparam("cid"),
        key.in_([sa.bindparam(f"v{i}") for i in range(size)])))


@lru_cache(maxsize=8)
def _joined_statement(columns: tuple[sa.Column[Any], ...], key: sa.Column[Any]) -> Prepared:
    """PostgreSQL: the values as one array, joined to the key (an index probe each). An IN
    list of parameters is a list PostgreSQL searches one by one for every row of the
    conversation once the plan is generic: a chunk of 5,000 messages looked ~4,000 call ids
    up among the conversation's calls in 0.5 s, 70% of a 100k-message save."""
    # an array of the key's own type: its values escaped as the key's column stores them (a call id's NUL)
    values = sa.bindparam("values", type_=postgresql.ARRAY(key.type))
    wanted = sa.func.unnest(values).table_valued("value").render_derived(name="wanted")
    return Prepared(sa.select(*columns).select_from(wanted).join(
        key.table, sa.and_(key.table.c.conversation_id == sa.bindparam("cid"), key == wanted.c.value)))


_KNOWN = (tool_calls_t.c.call_id, tool_calls_t.c.call_seq, tool_calls_t.c.result_seq)


def _aborts_on_error(conn: sa.Connection) -> bool:
    """PostgreSQL aborts a transaction on a failed statement; SQLite and MariaDB/MySQL undo the
    statement alone."""
    return conn.dialect.name == "postgresql"


def _looked_up(conn: sa.Connection, msgs: Sequence[Writable]) -> set[str]:
    """The call ids a batch looks up before it writes: those its results answer. Its own calls' ids
    need no look-up where the links' key, which refuses an id the conversation used before, leaves
    the transaction usable after the refusal: :func:`_refused_call` then names the call (a statement
    fewer on an assistant's append of calls). Elsewhere they are looked up with the rest, at once."""
    if _aborts_on_error(conn):
        return links.referenced_call_ids(msgs)
    return links.referenced_call_ids(msgs, ("tool_result",))


def _calls_and_starts(conn: sa.Connection, conversation_id: str, msgs: Sequence[Writable],
                      ) -> tuple[dict[str, links.KnownCall], dict[int, int], int | None]:
    """The stored calls a batch looks up (:func:`_looked_up`), the window starts of the stored
    messages from the earliest of them still unanswered on, and the seq of that call
    (``links.earliest_open_call``): the batch's results answer those calls, and a message's window
    starts at its oldest open call."""
    call_ids = _looked_up(conn, msgs)
    if not call_ids:
        return {}, {}, links.earliest_open_call(msgs, {})
    if not _aborts_on_error(conn) and len(call_ids) <= IN_LIST:  # only results' calls: see _looked_up
        known, prior = _calls_then_starts(conn, conversation_id, call_ids)
        return known, prior, links.earliest_open_call(msgs, known)
    known = _known_calls(conn, conversation_id, call_ids)
    lo = links.earliest_open_call(msgs, known)
    return known, ({} if lo is None else dict(_PRIOR_STARTS.run(conn, cid=conversation_id, lo=lo, hi=END))), lo


def _calls_then_starts(conn: sa.Connection, conversation_id: str,
                       call_ids: set[str]) -> tuple[dict[str, links.KnownCall], dict[int, int]]:
    """:func:`_calls_and_starts` in one statement, when every call looked up is one a result of the
    batch answers (a statement fewer on a tool result's append, a quarter of an agent's)."""
    size, bound = _padded(list(call_ids))
    known: dict[str, links.KnownCall] = {}
    prior: dict[int, int] = {}
    for call_id, call_seq, result_seq, seq, start in _calls_then_starts_statement(size).run(
            conn, cid=conversation_id, **bound):
        if call_id is None:
            prior[seq] = start
        else:
            known[call_id] = links.KnownCall(call_seq, result_seq is not None)
    return known, prior


@lru_cache(maxsize=16)
def _calls_then_starts_statement(size: int) -> Prepared:
    calls, msgs = tool_calls_t.c, messages_t.c
    wanted = sa.and_(calls.conversation_id == sa.bindparam("cid"),
                     calls.call_id.in_([sa.bindparam(f"v{i}") for i in range(size)]))
    earliest_open = sa.select(sa.func.min(calls.call_seq)).where(wanted, calls.result_seq.is_(None))
    nothing = sa.null()
    return Prepared(sa.union_all(
        sa.select(calls.call_id, calls.call_seq, calls.result_seq, nothing, nothing).where(wanted),
        sa.select(nothing, nothing, nothing, msgs.seq, msgs.window_start).where(
            msgs.conversation_id == sa.bindparam("cid"), msgs.seq >= earliest_open.scalar_subquery())))


def _refused_call(conn: sa.Connection, conversation_id: str, msgs: Sequence[Writable], first_seq: int,
                  index_base: int) -> DuplicateToolCallError | None:
    """After a write of ``msgs`` failed on a key: the first of their calls whose id the conversation
    used before them, if any (the failed statement undone, the transaction still open)."""
    if _aborts_on_error(conn):
        return None
    made = links.calls(msgs)
    known = _known_calls(conn, conversation_id, {call_id for _, call_id in made})
    return next((DuplicateToolCallError(call_id, index_base + offset) for offset, call_id in made
                 if call_id in known and known[call_id].call_seq < first_seq), None)


def _known_calls(conn: sa.Connection, conversation_id: str, call_ids: set[str]) -> dict[str, links.KnownCall]:
    if not call_ids:
        return {}
    rows = in_conversation(conn, _KNOWN, tool_calls_t.c.call_id, conversation_id, call_ids)
    return {call_id: links.KnownCall(seq, result is not None) for call_id, seq, result in rows}


def _insert_blobs(conn: sa.Connection, conversation_id: str, blobs: BlobSink, fresh: bool) -> None:
    if not blobs.rows:
        return
    new = blobs.rows
    if not fresh:
        stored = {row[0] for row in in_conversation(conn, (blobs_t.c.sha256,), blobs_t.c.sha256,
                                                      conversation_id, new)}
        new = {k: v for k, v in new.items() if k not in stored}
    bulk.insert(conn, blobs_t, list(new.values()))
