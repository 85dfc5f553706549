"""Size limits, and the checks every row passes before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import orjson

from .errors import InputError
from .schema import JSONText, dumps

MiB = 1024 * 1024

# Bounded columns: longer values are refused here rather than by the database mid-write.
BOUNDS = {
    "name": 255, "external_id": 255, "model": 255, "media_type": 255, "tool_name": 255, "call_id": 255,
    "source_role": 64, "source_type": 64, "source_format": 32,
}


@dataclass(frozen=True)
class Limits:
    """The largest message (its text and JSON, without binary payloads) and the largest
    binary payload (an image, audio, ...) a store accepts."""

    max_message_bytes: int = 32 * MiB
    max_blob_bytes: int = 64 * MiB

    escaped: bool = False
    """Count sizes as the MariaDB/MySQL driver sends them: escaped, a backslash, quote,
    NUL or line break taking two bytes (set by :meth:`capped`)."""

    def capped(self, packet_bytes: int) -> Limits:
        """MariaDB/MySQL refuse any statement above max_allowed_packet: stay below it, the
        driver's escaping counted (text and JSON exactly; a binary payload, which may hold
        any byte, at worst twice its size)."""
        cap = max(packet_bytes - MiB, MiB)
        return replace(self, max_message_bytes=min(self.max_message_bytes, cap),
                       max_blob_bytes=min(self.max_blob_bytes, max(cap // 2, MiB)), escaped=True)


ESCAPED = ("\\", "'", '"', "\x00", "\n", "\r", "\x1a")  # what the MySQL drivers escape


def escapes(text: str) -> int:
    return sum(text.count(c) for c in ESCAPED)


def stored_size(text: str, escaped: bool) -> int:
    """The bytes ``text`` takes of a message's budget: its UTF-8, and MariaDB's escapes where
    ``escaped``. A lone surrogate raises ``UnicodeEncodeError``."""
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    return size + escapes(text) if escaped else size


def _mb(n: int) -> str:
    return f"{n} bytes" if n < 10 * 1024 else f"{n / 1024:.0f} KiB" if n < 10 * MiB else f"{n / MiB:.1f} MiB"


class Budget:
    """Checks one message's values as its rows are built; errors name the message index."""

    __slots__ = ("index", "limits", "used", "escaped")  # three calls a message: attribute reads count

    def __init__(self, index: int, limits: Limits) -> None:
        self.index = index
        self.limits = limits
        self.used = 0
        self.escaped = limits.escaped

    def fail(self, where: str, why: str) -> InputError:
        return InputError(f"message {self.index}, {where}: {why}")

    def text(self, where: str, value: str | None, column: str | None = None) -> str | None:
        if value is None:
            return None
        if column is not None and (bound := BOUNDS.get(column)) is not None:
            if len(value) > bound:
                raise self.fail(where, f"{len(value)} characters, the most this store takes is {bound}")
            if column == "source_format" and "\x00" in value:
                raise self.fail(where, NUL_IN_NAME)
        try:
            self.used += stored_size(value, self.escaped)
        except UnicodeEncodeError as exc:
            raise self.fail(where, f"not valid Unicode (a lone surrogate at character {exc.start})") from None
        return value

    def json(self, where: str, value: Any) -> JSONText | None:
        if value is None:
            return None
        try:
            text = JSONText(dumps(value))
        except (ValueError, TypeError) as exc:
            raise self.fail(where, str(exc)) from None
        self.used += stored_size(text, self.escaped)  # its UTF-8: a limit in bytes, and under MariaDB's packet
        return text

    def blob(self, where: str, size: int) -> None:
        if size > self.limits.max_blob_bytes:
            raise self.fail(where, f"a binary payload of {_mb(size)} is over this store's limit "
                                   f"of {_mb(self.limits.max_blob_bytes)} (Limits.max_blob_bytes)")

    def check(self) -> None:
        if self.used > self.limits.max_message_bytes:
            raise self.fail("size", f"{_mb(self.used)} of text and JSON is over this store's limit "
                                    f"of {_mb(self.limits.max_message_bytes)} (Limits.max_message_bytes)")


MAX_DEPTH = 200
"""The deepest nesting of lists and objects a message may hold. Deeper values could be
stored but not written back: several formats' serializers stop near 255 levels, counting
their own wrappers. Checked on input, before anything is written."""
_ORJSON_DEPTH = 255  # orjson refuses to serialize deeper values: the check below runs in C
_PAD = _ORJSON_DEPTH - MAX_DEPTH


def json_problem(value: Any) -> str | None:
    """Why ``value`` cannot be stored as JSON (too deep, a lone surrogate), or None.
    One orjson pass inside ``_PAD`` extra levels: no tree walk in Python."""
    for _ in range(_PAD):
        value = [value]
    try:
        orjson.dumps(value, default=_anything, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS)
    except orjson.JSONEncodeError as exc:
        reason = str(exc)
        if "Recursion" in reason:
            return f"nested deeper than {MAX_DEPTH} levels (the most this store takes)"
        if "surrogates" in reason:
            return "not valid Unicode (a lone surrogate)"
    return None  # anything else (numbers orjson cannot write, odd types) is checked where it is stored


def _anything(_: Any) -> None:
    return None


def check_input(messages: Any, format: str, first: int = 0) -> None:
    """Refuse input nested deeper than :data:`MAX_DEPTH` or holding lone surrogates,
    naming the message (``first``: the index of a chunk's first message in its stream)."""
    if json_problem(messages) is None:
        return
    items = messages.get("messages") if isinstance(messages, dict) else messages
    if isinstance(items, list):
        for index, item in enumerate(items):
            if (why := json_problem(item)) is not None:
                raise InputError(f"invalid {format} input: message {first + index}: {why}")
    raise InputError(f"invalid {format} input: {json_problem(messages)}")


MAX_COUNT = 2**31 - 1
"""The largest count a query takes: PostgreSQL's ``integer`` (a ``LIMIT`` beyond it, or SQLite's 64 bits,
would fail in the driver, not here)."""


def check_count(what: str, value: Any) -> None:
    """A count the caller hands over (``limit``, ``last``, ``n``, ``keep``): an integer from 0 to
    :data:`MAX_COUNT`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InputError(f"{what} must be an integer from 0 to {MAX_COUNT}, got {value!r}")


def check_chunk(chunk: Any) -> None:
    """A part's size (``export``'s ``chunk``): an integer >= 1."""
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise InputError(f"chunk must be an integer >= 1, got {chunk!r}")


def check_limit(limit: int | None) -> None:
    """A ``limit`` is None (no limit) or a count: 0 asks for nothing, a negative one is refused."""
    if limit is not None:
        check_count("limit", limit)


NUL_IN_NAME = "a NUL character, which a format's name may not hold"
"""``source_format`` is stored as it is on every backend (no NUL escape, unlike other texts):
PostgreSQL would refuse it mid-write."""


def check_source_format(value: str | None) -> None:
    """A conversation's source format (a format's name, or the caller's own): a string within its column."""
    check_text("source_format", value, BOUNDS["source_format"])
    if value is not None and "\x00" in value:
        raise InputError(f"source_format: {NUL_IN_NAME}")


def check_text(what: str, value: str | None, bound: int | None = None) -> None:
    """A name the caller hands over (namespace, key, title, id): within its column, and
    encodable (a lone surrogate is refused here, not by the driver mid-write)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}")
    if bound is not None and len(value) > bound:
        raise InputError(f"{what}: {len(value)} characters, the most this store takes is {bound}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what}: not valid Unicode (a lone surrogate at character {exc.start})") from None


def check_metadata(metadata: Any, limits: Limits) -> None:
    """Conversation metadata: JSON the store can keep, within ``max_message_bytes``."""
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise InputError(f"metadata must be a JSON object (a dict), got {type(metadata).__name__}")
    if (why := json_problem(metadata)) is not None:
        raise InputError(f"metadata: {why}")
    try:
        size = stored_size(dumps(metadata), limits.escaped)
    except (ValueError, TypeError) as exc:
        raise InputError(f"metadata: {exc}") from None
    if size > limits.max_message_bytes:
        raise InputError(f"metadata: {_mb(size)} of JSON is over this store's limit of "
                         f"{_mb(limits.max_message_bytes)} (Limits.max_message_bytes)")
