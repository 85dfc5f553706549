"""Reading conversation files: a JSON array, an object with a ``messages`` list, or JSON Lines."""

from __future__ import annotations

import sys
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import orjson

from . import exactjson
from .errors import InputError


def read_text(path: str) -> str:
    """The file's text; ``-`` reads standard input."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None


def parse(text: str, name: str = "<input>") -> Any:
    """Parse JSON, or JSON Lines (one message per line) when the text is not one JSON value.
    Numbers are read exactly (:func:`store.exactjson.loads`): integers beyond 64 bits, and
    NaN, Infinity and -Infinity as the export writes them."""
    stripped = text.strip()
    if not stripped:
        raise InputError(f"{name}: empty input, expected JSON")
    try:
        return exactjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        if "\n" not in stripped or not stripped.startswith("{"):
            raise InputError(f"{name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    return _json_lines(stripped, name)


def _json_lines(text: str, name: str) -> list[Any]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(exactjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{name}: invalid JSON Lines at line {number}, column {exc.colno}: {exc.msg}") from None
    return out


def stream_json_lines(path: str) -> tuple[int, Iterator[Any]] | None:
    """``(number of messages, an iterator over them)`` for a JSON Lines file of two or
    more messages, read lazily line by line; None for anything else (stdin, JSON)."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as f:
            lines = (line for line in f if line.strip())
            first, second = next(lines, b""), next(lines, b"")
            if not second or not first.lstrip().startswith(b"{"):
                return None
            exactjson.loads(first)
            count = 2 + sum(1 for _ in lines)
    except (orjson.JSONDecodeError, OSError, ValueError):
        return None  # not JSON Lines, or unreadable: load() says why
    return count, _json_lines_of(path)


def _json_lines_of(path: str) -> Iterator[Any]:
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield exactjson.loads(line)
            except orjson.JSONDecodeError as exc:
                # the caller names the file (cli._import_stream)
                raise InputError(f"invalid JSON Lines at line {number}, column {exc.colno}: {exc.msg}") from None


_WHOLE = ("messages", "contents", "input_messages", "output_messages")
"""The members that make a JSON object a whole conversation."""


def single_message_as_list(data: Any) -> Any:
    """A lone JSON object that is not a whole conversation (no ``messages`` list, nor Gemini's
    ``contents``, nor OTel GenAI's ``input_messages`` / ``output_messages``) is one message: a
    file, or one line of JSON Lines on standard input."""
    if isinstance(data, dict) and not any(isinstance(data.get(k), list) for k in _WHOLE):
        return [data]
    return data


def load(path: str) -> Any:
    return parse(read_text(path), "standard input" if path == "-" else path)


def dumps(value: Any) -> str:
    """Indented JSON; NaN, Infinity and integers beyond 64 bits written as they are
    (orjson would write null or refuse), so that :func:`parse` reads them back."""
    return exactjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def dumps_line(value: Any) -> bytes:
    """One JSON Lines record, numbers as :func:`dumps` writes them."""
    return exactjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE)
