"""What every contestant does, and convstore itself through its public API."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from store import ConversationStore

from .databases import Database


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

    def last(self, conversation: Any, n: int) -> Any:
        raise NotImplementedError

    def tool_call(self, call_id: str) -> Any:
        raise NotImplementedError

    def as_openai(self, loaded: Any) -> list[dict[str, Any]] | None:
        """What ``load`` returned, as OpenAI messages, for the correctness check (None: not comparable)."""
        return None


class Convstore(Contestant):
    """convstore: ``save`` (validation, normalization, links and blobs included), ``append`` of one
    message, ``load(format="openai")``, ``load(last=50)``, ``get_tool_call``."""

    name = "convstore"
    kind = "convstore"
    family = "openai"
    backends = ("sqlite", "postgresql", "mariadb")

    def __init__(self) -> None:
        self.store: ConversationStore | None = None
        self.statements = 0

    def open(self, db: Database) -> None:
        self.store = ConversationStore(db.url, format="openai")
        sa.event.listen(self.store.engine, "before_cursor_execute", self._count)

    def _count(self, *_: Any) -> None:
        self.statements += 1

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def ingest(self, prepared: list[Any]) -> Any:
        return self.store.save(prepared, format="openai")

    def new_conversation(self) -> Any:
        return self.store.save([], format="openai")

    def append(self, conversation: Any, one: Any) -> None:
        self.store.append(conversation, [one], format="openai")

    def load(self, conversation: Any) -> Any:
        return self.store.load(conversation, format="openai")

    def last(self, conversation: Any, n: int) -> Any:
        return self.store.load(conversation, format="openai", last=n)

    def tool_call(self, call_id: str) -> Any:
        return self.store.get_tool_call(call_id)

    def as_openai(self, loaded: Any) -> list[dict[str, Any]]:
        return loaded

    def count_statements(self, fn: Any, *args: Any) -> int:
        """How many SQL statements ``fn(*args)`` sends."""
        before = self.statements
        fn(*args)
        return self.statements - before
