"""Size limits, and the checks every row passes before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

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

    def capped(self, packet_bytes: int) -> Limits:
        """MariaDB/MySQL refuse any row above max_allowed_packet: stay below it."""
        cap = max(packet_bytes - MiB, MiB)
        return replace(self, max_message_bytes=min(self.max_message_bytes, cap),
                       max_blob_bytes=min(self.max_blob_bytes, cap))


def _mb(n: int) -> str:
    return f"{n} bytes" if n < 10 * 1024 else f"{n / 1024:.0f} KiB" if n < 10 * MiB else f"{n / MiB:.1f} MiB"


class Budget:
    """Checks one message's values as its rows are built; errors name the message index."""

    def __init__(self, index: int, limits: Limits) -> None:
        self.index = index
        self.limits = limits
        self.used = 0

    def fail(self, where: str, why: str) -> InputError:
        return InputError(f"message {self.index}, {where}: {why}")

    def text(self, where: str, value: str | None, column: str | None = None) -> str | None:
        if value is None:
            return None
        bound = BOUNDS.get(column or "")
        if bound is not None and len(value) > bound:
            raise self.fail(where, f"{len(value)} characters, the most this store takes is {bound}")
        try:
            self.used += len(value) if value.isascii() else len(value.encode("utf-8"))
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
        self.used += len(text)
        return text

    def blob(self, where: str, size: int) -> None:
        if size > self.limits.max_blob_bytes:
            raise self.fail(where, f"a binary payload of {_mb(size)} is over this store's limit "
                                   f"of {_mb(self.limits.max_blob_bytes)} (Limits.max_blob_bytes)")

    def check(self) -> None:
        if self.used > self.limits.max_message_bytes:
            raise self.fail("size", f"{_mb(self.used)} of text and JSON is over this store's limit "
                                    f"of {_mb(self.limits.max_message_bytes)} (Limits.max_message_bytes)")
