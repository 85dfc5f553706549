"""Plain items stored without a canonical message.

Half of an agent's OpenAI messages are an item of its role and its text alone, and a
quarter a tool result of its call id and its text. Their rows say all of them (their
document is ``holes.PLAIN``), so a write builds those rows straight from the item: no
canonical :class:`~store.model.Message` validated, dumped and walked again. A
:class:`Plain` stands in for such a message between the read (``store.docs.read``) and
the rows (``store.rows``); every other message takes the canonical path. A property test
holds the two to the very same rows and the very same errors (tests/test_lean.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, TypeAlias

from .model import Message


class Result(NamedTuple):
    """A plain tool result as ``store.links`` reads a result block."""

    call_id: str
    kind: str = "tool_result"
    is_error: bool = False


@dataclass(slots=True)
class Plain:
    """A message that is its role and its text (``content`` empty), or a tool result (``content``
    its one :class:`Result`; ``name``, the tool's name where an earlier call of the batch gave it)."""

    role: str
    text: str
    source_format: str
    content: tuple[Result, ...] = ()
    name: str | None = None


Writable: TypeAlias = Message | Plain
"""What a write takes: canonical messages, with plain items standing in for some."""
