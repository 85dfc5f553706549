"""The relational schema: typed ORM rows over seven tables (revision 0020).

Hybrid rows: what users query (kind, text, call id, tool name, media type,
sequence) is a real column; the rest of a block goes into a JSON ``payload``;
a message of a format written message by message also keeps its ``doc`` (``store.docs``).
Every table's primary key starts with ``conversation_id`` (the partition key)
and addresses rows by their natural keys: a message by its position ``seq``, a
block by ``(seq, position)``, a tool-call link by its call id; no surrogate ids,
so a batch inserts with one executemany per table and PostgreSQL can partition
every table but ``conversations`` by hash of the conversation id. The rows written
per message (messages, blocks, links) have no foreign keys: a key is checked row by row (on
PostgreSQL a trigger query each, as costly as the insert), and the writes keep them consistent
themselves (revision 0019). Conversation ids are client-generated UUIDv7 (time-ordered).
Change this file only together with a migration under ``migrations/versions``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import json
import math
import re

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from .exactjson import I64_MIN, U64_MAX, has_nonfinite

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# PostgreSQL refuses NUL (U+0000) in text and in JSONB. Strings holding one (or starting
# with MARK, so the scheme stays reversible) are stored as MARK + their JSON literal.
# Numbers JSONB or orjson would change are stored the same way, on every backend: NaN and
# the infinities (JSONB refuses them, orjson writes null), -0.0 (JSONB drops the sign),
# floats from 1e16 up (JSONB gives them back as integers) and integers beyond 64 bits
# (orjson refuses them, and reads them back as floats).
MARK = "\U000f0000"
_MARK_BYTES = MARK.encode()  # psycopg hands JSONB over as bytes: searched without decoding them
_EXPONENT = re.compile(r"\de\+\d")  # how orjson writes a float from 1e16 up: 1e+16


def escape(value: Any) -> Any:
    """``value`` as convstore stores it in JSON: strings and numbers JSON would change, marked."""
    if isinstance(value, str):
        return MARK + json.dumps(value) if "\x00" in value or value.startswith(MARK) else value
    if isinstance(value, dict):
        return {escape(k): escape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape(v) for v in value]
    if isinstance(value, float):
        if value - value != 0 or abs(value) >= 1e16 or (value == 0 and math.copysign(1.0, value) < 0):
            return MARK + json.dumps(value)  # NaN, Infinity, -Infinity, -0.0, 1e+16
    elif isinstance(value, int) and not I64_MIN <= value <= U64_MAX:
        return MARK + str(value)
    return value


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return json.loads(value[len(MARK):]) if value.startswith(MARK) else value
    if isinstance(value, dict):
        return {_unescape(k): _unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    return value


def needs_escape(text: str, value: Any) -> bool:
    """Whether ``value``, dumped as ``text`` by orjson, holds what :func:`escape` rewrites.
    Text searches first: the walk for non-finite floats (which orjson wrote as null) runs
    only when there is a null."""
    return ("\\u0000" in text or MARK in text or "-0.0" in text
            or ("e+" in text and _EXPONENT.search(text) is not None)
            or ("null" in text and has_nonfinite(value)))


def _dump_escaped(value: Any) -> str:
    value = escape(value)
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:
        if "recursion" not in str(exc).lower():
            raise ValueError(f"cannot store as JSON: {exc}") from None
    try:  # orjson stops at 255 levels of nesting
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (RecursionError, ValueError) as exc:
        raise ValueError(f"cannot store as JSON: {exc}") from None


class JSONText(str):
    """JSON already serialized (and checked) before the write: bound as it is."""

    __slots__ = ()  # no __dict__: not an object the garbage collector has to track


def dumps(value: Any) -> str:
    """JSON text for a JSON column, NUL-safe on every backend, every number kept."""
    if isinstance(value, JSONText):
        return value
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:
        reason = str(exc)
        if "Integer exceeds" not in reason and "recursion" not in reason.lower():
            raise ValueError(f"cannot store as JSON: {exc}") from None
        return _dump_escaped(value)  # an integer beyond 64 bits, or deeper than orjson goes
    return _dump_escaped(value) if needs_escape(text, value) else text


def loads(text: str | bytes) -> Any:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:  # beyond orjson's nesting or integer range
        value = json.loads(text)
    if (MARK in text) if isinstance(text, str) else (_MARK_BYTES in bytes(text)):
        value = _unescape(value)
    return value


class JSONDocument(TypeDecorator[Any]):
    """JSONB on PostgreSQL; LONGTEXT on MariaDB/MySQL and TEXT on SQLite, which take any
    nesting depth (MariaDB's JSON type refuses more than 32 levels)."""

    impl = sa.Text
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            # (de)serialized by the engine's json_serializer / json_deserializer: dumps / loads
            return dialect.type_descriptor(postgresql.JSONB(none_as_null=True))
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.LONGTEXT())
        return dialect.type_descriptor(sa.Text())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return str(dumps(value))

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return loads(value)


class SafeText(TypeDecorator[str]):
    """Text that may hold NUL characters, also on PostgreSQL."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        if value is not None and dialect.name == "postgresql" and ("\x00" in value or value.startswith(MARK)):
            return MARK + json.dumps(value)
        return value

    def process_result_value(self, value: str | None, dialect: sa.Dialect) -> str | None:
        if value is not None and dialect.name == "postgresql" and value.startswith(MARK):
            return json.loads(value[len(MARK):])
        return value

    @staticmethod
    def any_escaped(values: list[str]) -> bool:
        """Whether :meth:`process_bind_param` changes any of ``values`` on PostgreSQL: two scans of
        one joined string at C speed instead of a call a value (a batch insert, ``store.bulk``)."""
        joined = "\x00".join(values)
        return joined.count("\x00") != len(values) - 1 or joined.startswith(MARK) or "\x00" + MARK in joined

    # Elsewhere text is stored as it is: no per-value call on the hot paths.
    def bind_processor(self, dialect: sa.Dialect) -> Any:
        return super().bind_processor(dialect) if dialect.name == "postgresql" else None

    def result_processor(self, dialect: sa.Dialect, coltype: Any) -> Any:
        if dialect.name != "postgresql":
            return None
        # The driver returns str already: one plain function per value, not TypeDecorator's chain.
        def process(value: str | None) -> str | None:
            return json.loads(value[len(MARK):]) if value is not None and value.startswith(MARK) else value
        return process


class SafeString(SafeText):
    """A bounded string that may hold NUL characters, also on PostgreSQL."""

    impl = sa.String
    cache_ok = True


class Uuid(sa.Uuid[str]):
    """A UUID given as a string. Where it is stored as text (SQLite, MariaDB/MySQL), any
    spelling the caller hands over (upper case, without dashes) is bound in the one
    stored spelling: an id is found on every backend however it was typed."""

    cache_ok = True

    def __init__(self) -> None:
        super().__init__(as_uuid=False)

    def bind_processor(self, dialect: sa.Dialect) -> Any:
        if dialect.supports_native_uuid and self.native_uuid:
            return None  # PostgreSQL parses every spelling itself
        return lambda value: None if value is None else value.replace("-", "").lower()


Id = Uuid()
BINARY_COLLATIONS = {"mariadb": "utf8mb4_nopad_bin", "mysql": "utf8mb4_0900_bin"}
"""MariaDB/MySQL compare text with the server's default collation, which ignores case,
accents and trailing spaces: tenant "TENANT_B" would see tenant "tenant_b". Every table is
converted to a byte-exact, no-pad collation (migration 0003); SQLite and PostgreSQL
compare bytes already."""
LongText = SafeText().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
LongBlob = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Name = SafeString(255)
DocText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
"""JSON text as orjson writes it: never a raw NUL, so no escaping on PostgreSQL."""


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONDocument(), Any: JSONDocument(), datetime: Timestamp}


# SQLite keeps a table keyed by conversation clustered by that key (WITHOUT ROWID), so
# loading a conversation reads contiguous pages however its appends interleaved with
# others'. Blobs keep their rowid: SQLite advises against WITHOUT ROWID for large rows.
CLUSTERED = {"sqlite_with_rowid": False}


class ConversationRow(Base):
    """Not partitioned (one row per conversation): it holds the one key that does not
    start with the conversation id, the caller's own name for it."""

    __tablename__ = "conversations"
    # (namespace, key) also serves every lookup by namespace (its leading column). The two
    # indexes give list_conversations a page from an index range, in either order it sorts by.
    # The index on parent_id finds a conversation's forks (before a delete, prune or truncate).
    # The one on (namespace, index_from) finds what a search must index first (store.fulltext).
    __table_args__ = (sa.UniqueConstraint("namespace", "key"),
                      sa.Index(None, "namespace", "created_at", "id"),
                      sa.Index(None, "namespace", "updated_at", "id"),
                      sa.Index(None, "parent_id"),
                      sa.Index(None, "namespace", "index_from"))

    id: Mapped[str] = mapped_column(Id, primary_key=True)
    namespace: Mapped[str] = mapped_column(SafeString(128))
    key: Mapped[str | None] = mapped_column(Name)
    """The caller's own name for the conversation (a session id), unique in the namespace."""
    title: Mapped[str | None] = mapped_column(SafeString(500))
    source_format: Mapped[str | None] = mapped_column(sa.String(32))
    message_count: Mapped[int] = mapped_column(sa.Integer, default=0)
    """Also the sequence number the next message gets; appends lock this row."""
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata")
    expires_at: Mapped[datetime | None]
    """When ``prune`` may delete the conversation (UTC); NULL: never by this rule."""
    parent_id: Mapped[str | None] = mapped_column(Id, sa.ForeignKey("conversations.id"))
    """A fork's parent: the conversation whose first ``fork_seq`` messages it shares (``store.forks``)."""
    fork_seq: Mapped[int | None]
    index_from: Mapped[int | None]
    """The first of the conversation's own messages the full-text index does not hold yet
    (all from there on); NULL: it holds them all. Writes set it, a search indexes from it
    (revision 0009, ``store.fulltext``)."""


def _conversation_id() -> Mapped[str]:
    return mapped_column(Id, sa.ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)


def _per_message_key() -> Mapped[str]:
    """The conversation id of a row written per message: no foreign key (revision 0019). Every
    write creates or locks the conversation's row first, in the same transaction, and every path
    that removes messages removes their blocks and links itself (``operations``); every read
    starts from the conversation's row."""
    return mapped_column(Id, primary_key=True)


class ConversationTagRow(Base):
    """A tag of a conversation. The index on the tag serves listings filtered by one."""

    __tablename__ = "conversation_tags"
    __table_args__ = (sa.Index(None, "tag"), CLUSTERED)

    conversation_id: Mapped[str] = _conversation_id()
    tag: Mapped[str] = mapped_column(Name, primary_key=True)


class MessageRow(Base):
    """A message, addressed by (conversation_id, seq): its position in the conversation."""

    __tablename__ = "messages"
    # Comparisons, not IN (...): SQLite builds a temporary index of an IN list for every row
    # it inserts (revision 0018).
    __table_args__ = (sa.CheckConstraint("role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool'",
                                         name="role"),
                      CLUSTERED)

    conversation_id: Mapped[str] = _per_message_key()
    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    """0-based position in the conversation."""
    window_start: Mapped[int]
    """Earliest seq a window that contains this message must start at to keep every
    tool result with its call (see ``store.links``)."""
    role: Mapped[str] = mapped_column(sa.String(16))
    source_role: Mapped[str | None] = mapped_column(SafeString(64))
    name: Mapped[str | None] = mapped_column(Name)
    source_format: Mapped[str | None] = mapped_column(sa.String(32))
    source_type: Mapped[str | None] = mapped_column(SafeString(64))
    external_id: Mapped[str | None] = mapped_column(Name)
    """The source's own id of the message, kept as it came."""
    model: Mapped[str | None] = mapped_column(Name)
    created_at: Mapped[datetime | None]
    """UTC; ``utc_offset`` keeps the source's offset (minutes), NULL for naive times."""
    utc_offset: Mapped[int | None] = mapped_column(sa.SmallInteger)
    usage: Mapped[dict[str, Any] | None]
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata")
    extras: Mapped[dict[str, Any] | None]
    doc: Mapped[str | None] = mapped_column(DocText)
    """The message as its source format writes it, JSON items separated by commas, where
    that format writes messages one by one (``store.docs``): what a load in that format
    returns without building canonical models. NULL: the load writes it from the rest.
    It leaves out a text its first block row keeps: a JSON string of U+0001 stands in for
    it, and a lead names the key it fills (revision 0010, ``store.docs.hollow``). Empty: an
    OpenAI item of the row's role and its text alone (revision 0015, ``store.docs.PLAIN``)."""
    text: Mapped[str | None] = mapped_column(LongText)
    """The text of a message whose content is one plain text block (no other field): kept
    here, with no block row (revision 0013, ``store.codec.block_rows``); or, with ``call_id``,
    the output of one plain tool result (revision 0020). NULL: the blocks are rows."""
    call_id: Mapped[str | None] = mapped_column(Name)
    """The call id of a message whose content is one tool result of a text output and nothing but
    its call id and tool name: the result is kept in this row (``text``, ``call_id``, ``tool_name``),
    with no block row (revision 0020): a third of an agent's messages, whose block row cost
    PostgreSQL more than their output. NULL: not such a message."""
    tool_name: Mapped[str | None] = mapped_column(Name)
    """That result's tool name, where it has one."""


class BlockRow(Base):
    """A content block, addressed by (conversation_id, seq, position): its message and its
    place in it. No foreign keys: to its message, see :func:`_per_message_key`; to blobs, it
    would need an index of its own on MariaDB, paid by every block insert (blobs are written
    first in the same transaction)."""

    __tablename__ = "blocks"
    __table_args__ = (CLUSTERED,)

    conversation_id: Mapped[str] = _per_message_key()
    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(sa.String(16))
    text: Mapped[str | None] = mapped_column(LongText)
    """The block's text (``codec.TEXT_FIELD``); a tool call's arguments as its source wrote them, where
    their parse is the call's ``arguments`` (revision 0017)."""
    media_type: Mapped[str | None] = mapped_column(Name)
    tool_name: Mapped[str | None] = mapped_column(Name)
    call_id: Mapped[str | None] = mapped_column(Name)
    blob_sha256: Mapped[str | None] = mapped_column(sa.String(64))
    payload: Mapped[dict[str, Any] | None]


class SearchRow(Base):
    """A block with searchable text (text, reasoning, a tool call's name and arguments, a
    result's output), as the database's full-text engine needs it (``store.fulltext``;
    revisions 0006 and 0009), written when a search first needs it: on SQLite the key, whose
    rowid names the FTS5 entry (so a rowid table); on PostgreSQL and MariaDB/MySQL the text
    too, under a GIN index on its ``tsvector`` or a FULLTEXT index."""

    __tablename__ = "search"
    __table_args__ = (
        sa.ForeignKeyConstraint(["conversation_id", "seq"], ["messages.conversation_id", "messages.seq"],
                                ondelete="CASCADE"),
    )

    conversation_id: Mapped[str] = mapped_column(Id, primary_key=True)
    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(sa.String(16))
    body: Mapped[str | None] = mapped_column(DocText)
    """Computed in SQL from stored values on PostgreSQL, those holding NUL in their escaped form
    (``SafeText``), which no text type could decode as a whole: read as stored (``search._unmarked``)."""


class BlobRow(Base):
    """Binary payloads (images, audio, ...), stored once per conversation by content hash."""

    __tablename__ = "blobs"

    conversation_id: Mapped[str] = _conversation_id()
    sha256: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    media_type: Mapped[str | None] = mapped_column(Name)
    size: Mapped[int]
    data: Mapped[bytes] = mapped_column(LongBlob)


class ToolCallRow(Base):
    """The link between a tool call and its result, addressed by (conversation_id, call_id);
    each end is a block's (seq, position). Links have no foreign keys to blocks (MariaDB
    would want an index per key): every write that removes blocks removes or unlinks their
    links in the same transaction."""

    __tablename__ = "tool_calls"
    __table_args__ = (
        sa.CheckConstraint("status = 'pending' OR status = 'answered' OR status = 'error'", name="status"),
        # The schema's only secondary indexes, both for find_tool_calls across a namespace:
        # by call id (get_tool_call without a conversation) and by tool name.
        sa.Index(None, "call_id"),
        sa.Index(None, "name"),
        CLUSTERED,
    )

    conversation_id: Mapped[str] = _per_message_key()
    call_id: Mapped[str] = mapped_column(Name, primary_key=True)
    name: Mapped[str] = mapped_column(Name)
    status: Mapped[str] = mapped_column(sa.String(16))
    call_seq: Mapped[int]
    call_position: Mapped[int]
    result_seq: Mapped[int | None]
    result_position: Mapped[int | None]


metadata = Base.metadata
