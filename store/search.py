"""Full-text search over a namespace's messages, by the database's own engine.

Every block with text (text, reasoning, code, errors, a tool call's name and arguments, a
result's tool name and output) is indexed by the first search after it was written, and
leaves the index with it (``store.fulltext``): SQLite FTS5, PostgreSQL ``tsvector`` + GIN,
MariaDB/MySQL FULLTEXT.

One query syntax on every backend (:func:`parse`): words, all of which must match;
``"quoted phrases"``; ``word*`` for a prefix; ``-word`` or ``-"a phrase"`` to exclude.
Anything else (punctuation, operators of the engines) only separates words, so no query is
a syntax error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from pydantic import BaseModel

from . import fulltext
from .chains import chain_for
from .codec import SEARCHED
from .errors import ConversationNotFoundError, InputError
from .limits import MAX_COUNT, check_limit
from .listing import metadata_clause
from .model import Page
from .schema import MARK
from .operations import (
    Scope, blocks_t, conversations, decode_key, encode_key, messages_t, require, search_t,
)

DEFAULT_PAGE = 20
BATCH = fulltext.BATCH
ROLES = ("system", "user", "assistant", "tool")


class SearchHit(BaseModel):
    """A block whose text matches a search: where it is, and a snippet of it."""

    conversation_id: str
    seq: int
    """The message's position in its conversation."""
    position: int
    """The block's position in its message."""
    kind: str
    """The block's kind: text, reasoning, tool_call, tool_result, ..."""
    role: str
    title: str | None
    key: str | None
    snippet: str
    """A stretch of the matching text (``…`` where it was cut)."""
    highlights: list[tuple[int, int]]
    """``(start, end)`` offsets in ``snippet`` of the words that matched."""
    score: float
    """Higher is better: the engine's own relevance (not comparable across backends)."""


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]
    prefix: bool = False
    negated: bool = False
    token: str | None = None
    """The term as written where it is one token of words joined by other characters (``node.js``,
    ``bob@example.com``): PostgreSQL's parser indexes it whole, and finds it so."""


_TOKEN = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
_EDGES = "\"'()[]{},;:!?"  # around a token, not part of it
_WORD = re.compile(r"\w+")


def parse(query: Any) -> list[Term]:
    """The terms of a query (see the module's docstring); an ``InputError`` if nothing is left to find."""
    if not isinstance(query, str):
        raise InputError(f"a search query must be a string, got {query!r}")
    terms = []
    for match in _TOKEN.finditer(query):
        negated, text, prefix = bool(match[1] or match[3]), match[2], False
        if text is None:
            text, prefix = match[4], match[4].endswith("*")
        if words := tuple(_WORD.findall(text)):
            joined = len(words) > 1 and not prefix and text.isprintable() and not any(c.isspace() for c in text)
            terms.append(Term(words, prefix, negated, text.strip(_EDGES) if joined else None))
    if not any(not t.negated for t in terms):
        raise InputError(f"a search needs at least one word to find, got {query!r}")
    return terms


def _fts5(terms: list[Term]) -> str:
    def phrase(t: Term) -> str:
        return '"' + " ".join(t.words) + '"' + ("*" if t.prefix else "")
    wanted = " AND ".join(phrase(t) for t in terms if not t.negated)
    return f"({wanted})" + "".join(f" NOT {phrase(t)}" for t in terms if t.negated)


def _tsquery(terms: list[Term]) -> str:
    def phrase(t: Term) -> str:
        words = [f"'{w}'" for w in t.words]
        if t.prefix:
            words[-1] += ":*"
        text = " <-> ".join(words)
        if t.token:  # the words in a row, or the token whole as the parser indexes it
            quoted = t.token.replace("\\", "\\\\").replace("'", "''")
            text = f"({text}) | '{quoted}'"
        return f"!({text})" if t.negated else f"({text})"
    return " & ".join(phrase(t) for t in terms)


def _boolean_mode(terms: list[Term]) -> str:
    def phrase(t: Term) -> str:
        sign = "-" if t.negated else "+"
        if len(t.words) == 1:
            return sign + t.words[0] + ("*" if t.prefix else "")
        return sign + '"' + " ".join(t.words) + '"'
    return " ".join(phrase(t) for t in terms)


def _pg_config(conn: sa.Connection) -> str:
    """The text search configuration the index was built with (revision 0006, kept by 0009)."""
    definition = conn.execute(sa.text("SELECT pg_get_indexdef(to_regclass('ix_search_body'))")).scalar()
    found = re.search(r"to_tsvector\('([^']+)'::regconfig", definition or "")
    return found[1] if found else "english"


@dataclass(frozen=True)
class _Engine:
    """A backend's way to match: what to select from, the keyed table (``search`` or
    ``blocks``), the match condition, the score (higher is better) and the matched text."""

    source: Any
    keyed: sa.Table
    where: list[Any]
    score: Any
    text: Any


def _engine(conn: sa.Connection, terms: list[Term]) -> _Engine:
    dialect, s, b, fts = conn.dialect.name, search_t, blocks_t, fulltext.FTS
    if dialect == "sqlite":
        source = fts.join(s, sa.literal_column("search.rowid") == fts.c.rowid).outerjoin(b, fulltext.ON_BLOCK)
        match = sa.literal_column("search_fts").op("MATCH")(sa.bindparam("q", _fts5(terms)))
        return _Engine(source, s, [match], -fts.c.rank, sa.literal_column(fulltext.TEXT_SQL["sqlite"]))
    if dialect == "postgresql":
        config = sa.literal_column(f"'{_pg_config(conn)}'::regconfig")
        query = sa.func.to_tsquery(config, sa.bindparam("q", _tsquery(terms)))
        vector = sa.func.to_tsvector(config, s.c.body)  # the expression the GIN index holds
        return _Engine(s, s, [vector.op("@@")(query)], sa.func.ts_rank(vector, query), s.c.body)
    match = mysql.match(s.c.body, against=sa.bindparam("q", _boolean_mode(terms))).in_boolean_mode()
    return _Engine(s, s, [match], match, s.c.body)


def _decode(cursor: str | None, query: str) -> int:
    def accept(key: list[Any]) -> int | None:
        version, q, offset = key
        return offset if version == 1 and q == query and isinstance(offset, int) and 0 <= offset <= MAX_COUNT else None
    return 0 if cursor is None else decode_key(cursor, accept, "query")


class IndexBehind(Exception):
    """The index lacks messages of the namespace: index them (``fulltext.catch_up``, in a
    write transaction), then search again with ``indexed=True``."""


def catch_up(conn: sa.Connection, scope: Scope, limit: int | None = None) -> int:
    """``fulltext.catch_up`` for the scope's namespace (a write transaction's work)."""
    return fulltext.catch_up(conn, scope.namespace, limit)


def pending(conn: sa.Connection, scope: Scope) -> int:
    return fulltext.pending(conn, scope.namespace)


def search(conn: sa.Connection, scope: Scope, query: str, *, role: str | None = None, kind: str | None = None,
           conversation_id: str | None = None, metadata: Mapping[str, Any] | None = None,
           limit: int | None = DEFAULT_PAGE, cursor: str | None = None, indexed: bool = False) -> Page[SearchHit]:
    """One page of the namespace's blocks matching ``query``, best first (see
    ``ConversationStore.search``): two statements (four scoped to a conversation), one when
    ``indexed`` (the caller has just brought the index up to date). Raises ``IndexBehind``
    when the index lacks messages of the namespace."""
    terms = parse(query)
    check_limit(limit)
    offset = _decode(cursor, query)
    if role is not None and role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if kind is not None and kind not in SEARCHED:
        raise InputError(f"kind must be one of {', '.join(sorted(SEARCHED))}, got {kind!r}")
    if limit == 0:
        return Page()
    if not indexed and fulltext.behind(conn, scope.namespace):
        raise IndexBehind
    m, c = messages_t, conversations
    engine = _engine(conn, terms)
    k = engine.keyed.c
    where = [*engine.where, c.c.namespace == scope.namespace]
    if role is not None:
        where.append(m.c.role == role)
    if kind is not None:
        where.append(k.kind == kind)
    scoped = None
    if conversation_id is not None:  # its own rows, and a fork's shared prefix where its ancestors hold it
        try:
            scoped = require(conn, scope, conversation_id)
        except ConversationNotFoundError:  # as find_tool_calls: no such conversation, nothing in it
            return Page()
        where.append(sa.or_(*(sa.and_(k.conversation_id == owner, k.seq >= lo, k.seq < hi)
                              for owner, lo, hi in chain_for(conn, scoped.id, scoped.parent_id))))
    for i, (name, value) in enumerate((metadata or {}).items()):
        where.append(metadata_clause(conn.dialect.name, i, name, value))
    columns = [k.conversation_id, k.seq, k.position, k.kind, m.c.role, c.c.title, c.c.key,
               engine.score.label("score"), engine.text.label("text")]
    statement = (
        sa.select(*columns).select_from(engine.source).join(c, c.c.id == k.conversation_id)
        .join(m, sa.and_(m.c.conversation_id == k.conversation_id, m.c.seq == k.seq))
        .where(*where).order_by(sa.desc("score"), k.conversation_id, k.seq, k.position).offset(offset)
    )
    rows = conn.execute(statement.limit(limit + 1) if limit is not None else statement).all()
    more = limit is not None and len(rows) > limit
    hits = [_hit(row, terms) for row in rows[:limit]]
    if scoped is not None:  # hits in a shared prefix are in the fork's history too: named as the fork's
        hits = [h.model_copy(update={"conversation_id": scoped.id, "title": scoped.title, "key": scoped.key})
                for h in hits]
    return Page(hits, next_cursor=encode_key([1, query, offset + len(hits)]) if more else None)


def _hit(row: Any, terms: list[Term]) -> SearchHit:
    text, spans = _snippet(_unmarked(row.text or ""), terms)
    return SearchHit(conversation_id=str(row.conversation_id), seq=row.seq, position=row.position, kind=row.kind,
                     role=row.role, title=row.title, key=row.key, snippet=text, highlights=spans,
                     score=float(row.score or 0.0))


_MARKED = re.compile(re.escape(MARK) + r'"((?:[^"\\]|\\.)*)"?')


def _unmarked(text: str) -> str:
    """PostgreSQL: a searched text joins stored values in SQL, and a value holding NUL is stored
    escaped (``schema.SafeText``: MARK, then its JSON string). Each such value as it was written
    (one the index's length cut inside an escape, as stored)."""
    if MARK not in text:
        return text

    def written(match: re.Match[str]) -> str:
        try:
            return json.loads(f'"{match[1]}"')
        except ValueError:
            return match[1]
    return _MARKED.sub(written, text)


def _snippet(body: str, terms: list[Term], width: int = 160) -> tuple[str, list[tuple[int, int]]]:
    """A stretch of the text around the first matching word, made here on every backend (SQLite's
    contentless index keeps no text to cut; PostgreSQL's ts_headline drops what it takes for
    markup). Words are highlighted by their start: a stemmed form may not be."""
    body = " ".join(body.split())  # one line: the parts of the text are joined by spaces
    words = [w for t in terms if not t.negated for w in t.words]
    # A word starts after a letter or digit does not (engines split at "_" too), prefix-wise.
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(w) for w in words) + r")[^\W_]*", re.IGNORECASE)
    first = pattern.search(body)
    begin = 0 if first is None else max(0, first.start() - width // 4)
    end = min(len(body), begin + width)
    text = ("…" if begin else "") + body[begin:end] + ("…" if end < len(body) else "")
    return text, [(m.start(), m.end()) for m in pattern.finditer(text)]
