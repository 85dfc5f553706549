"""The `qwen` format (not implemented yet: see issue 3)."""

from __future__ import annotations

from typing import Any

from ..model import Message
from ._common import Losses

NAME = "qwen"
PLANNED = True  # remove once the adapter is implemented; the registry skips planned formats


def looks_like(data: Any) -> bool:
    return False


def to_canonical(data: Any) -> list[Message]:
    raise NotImplementedError(NAME)


def from_canonical(messages: list[Message], losses: Losses) -> Any:
    raise NotImplementedError(NAME)
