"""JSON with every number kept: orjson's speed without its silent changes.

orjson writes NaN, Infinity and -Infinity as ``null``, refuses integers beyond 64 bits,
reads such integers back as (rounded) floats and refuses NaN. Python's json module does
none of this: it writes and reads NaN, Infinity and -Infinity (not standard JSON, but
what Python and JSON5 write) and integers of any size. Here orjson does the work and the
json module, or a walk, takes over only where such a number can be: the checks cost a
text search on ordinary data.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pydantic_core

I64_MIN = -(2**63)
U64_MAX = 2**64 - 1
"""orjson writes and reads integers in this range exactly; others it refuses or rounds."""

# Any integer orjson rounds has 19 digits or more. Mapping every digit to "0" and looking
# for nineteen of them is one C pass over the text; a regex (\d{19}) takes ten times longer.
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG = b"0" * 19


def long_digits(text: str | bytes) -> bool:
    """Whether ``text`` has a run of 19 digits, where an integer beyond 64 bits may be."""
    # str.translate is slow beyond ASCII: the UTF-8 bytes are searched instead (digits are ASCII)
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    return _LONG in data.translate(_DIGITS)


def loads(text: str | bytes) -> Any:
    """``orjson.loads``, exact: integers beyond 64 bits stay integers, and NaN, Infinity and
    -Infinity (as Python's json writes them) are read as floats instead of refused.
    Raises ``orjson.JSONDecodeError`` (orjson's message, its position) for anything else."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        words = ("NaN", "Infinity") if isinstance(text, str) else (b"NaN", b"Infinity")
        if any(word in text for word in words):
            try:
                return json.loads(text)
            except (ValueError, RecursionError):
                pass
        raise  # orjson's error; kept in no local, which would tie it to this frame in a reference cycle
    if not long_digits(text):
        return value
    try:
        return json.loads(text)
    except RecursionError:  # deeper than the json module goes: orjson's reading stands
        return value


def has_nonfinite(value: Any) -> bool:
    """Whether a float inside ``value`` is NaN or infinite."""
    try:  # pydantic-core writes them as NaN / Infinity, in Rust: six times faster than the walk
        data = pydantic_core.to_json(value, inf_nan_mode="constants")
    except (ValueError, TypeError, RecursionError):  # a type it does not write: walk
        return _walk_nonfinite(value)
    return (b"NaN" in data or b"Infinity" in data) and _walk_nonfinite(value)  # or in a string


def _walk_nonfinite(value: Any) -> bool:
    stack = [value]  # iterative: no recursion limit
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if item - item != 0:  # NaN for NaN and both infinities, 0.0 for every finite float
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps``, exact: NaN and the infinities written as Python's json writes them
    (``NaN``, ``Infinity``, ``-Infinity``; orjson writes ``null``), integers beyond 64 bits
    written whole (orjson refuses them)."""
    try:
        data = orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        if "Integer exceeds" not in str(exc):
            raise
    else:
        # A non-finite float comes out as null: only output with a null can hide one.
        if b"null" not in data or not has_nonfinite(value):
            return data
    return orjson.dumps(_literals(value), option=option)


def _literals(value: Any) -> Any:
    """``value`` with its non-finite floats and long integers as literal JSON fragments."""
    if isinstance(value, float) and value - value != 0:
        return orjson.Fragment(b"NaN" if value != value else b"Infinity" if value > 0 else b"-Infinity")
    if isinstance(value, int) and not isinstance(value, bool) and not I64_MIN <= value <= U64_MAX:
        return orjson.Fragment(str(value).encode())
    if isinstance(value, dict):
        return {k: _literals(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_literals(v) for v in value]
    return value
