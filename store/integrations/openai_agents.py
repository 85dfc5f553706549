"""An OpenAI Agents SDK session that keeps its items in convstore.

:class:`ConvstoreSession` implements the SDK's ``Session`` protocol (it is a
``SessionABC``): pass it to the runner and every item of the conversation (the
user's input, reasoning, function calls, their outputs, the answers) lands in a
convstore conversation, one per session id, in the ``openai-responses`` format, so
it survives restarts, can be searched by tool-call id and read back in any other
format::

    from store.integrations.openai_agents import ConvstoreSession
    result = await Runner.run(agent, "Hi", session=ConvstoreSession("sqlite:///memory.db", "user-42"))

It is a drop-in replacement for the SDK's ``SQLiteSession`` and ``SQLAlchemySession``:
the same methods, the same ``session_settings`` (``SessionSettings(limit=N)`` or
``{"limit": N}``: the model sees the newest N items; an unknown key is the SDK's
``TypeError``), ``from_url(session_id, url=...)``, writes that finish even when the
caller is cancelled, and the same results, on SQLite, PostgreSQL or MariaDB/MySQL.
Their table-name, ``create_tables`` and ``ensure_ascii`` options have no meaning here
(convstore owns its schema and creates it when missing). One difference: convstore
links each call to its output by call id, so an id is used once per session; a batch
that reuses one is refused whole (``DuplicateToolCallError``).

Requires ``pip install 'convstore[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import sqlalchemy as sa
from agents.items import TResponseInputItem
from agents.memory import SessionABC, SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from ..aio import AsyncConversationStore
from ..formats import write
from . import LoopLock, async_store

__all__ = ["FORMAT", "ConvstoreSession"]

FORMAT = "openai-responses"
T = TypeVar("T")


def _settings(value: SessionSettings | dict[str, Any] | None) -> SessionSettings:
    # The SDK's own coercion, so a dict with an unknown key or a value of another type is
    # the TypeError its sessions raise ("Unknown session settings: ..."), not silently kept.
    return coerce_session_settings(value) if value is not None else SessionSettings()


async def _to_the_end(write: Awaitable[T]) -> T:
    """``write``, finished even if the caller is cancelled meanwhile; the cancellation is
    raised once it is done. The SDK's sessions do the same, so a run cancelled mid-write
    never leaves the caller unsure whether the write happened (and its retry doubling it)."""
    task = asyncio.ensure_future(write)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # seen: the caller hears of the cancellation, not of this
        raise cancelled
    return task.result()


class ConvstoreSession(SessionABC):
    """A session stored in convstore: one conversation per ``session_id``.

    Args:
        store: an :class:`~store.AsyncConversationStore` (shares its connection pool),
            a database URL, or None for convstore's default database.
        session_id: your key for the conversation; it is created on first use.
        namespace: the tenant, when ``store`` is a URL (a store object brings its own).
        session_settings: the SDK's ``SessionSettings`` (or a dict of them, checked as
            the SDK checks it); its ``limit`` is what ``get_items()`` returns when given
            no limit.

    Items are stored as the SDK gives them and come back equal, every key and value kept
    (the ``openai-responses`` format), so the SDK's item fingerprints match. convstore
    keeps a model turn's consecutive items (its reasoning, calls and text) as one
    assistant message; ``get_items(limit)`` and ``pop_item()`` still count items, as the
    SDK does. Every method is one store call
    (plus, on first use, finding the conversation), except in the rare case
    ``get_items`` describes.
    """

    def __init__(self, store: AsyncConversationStore | str | sa.URL | None, session_id: str, *,
                 namespace: str | None = None,
                 session_settings: SessionSettings | dict[str, Any] | None = None) -> None:
        self._owns_store = not isinstance(store, AsyncConversationStore)
        if not self._owns_store and namespace not in (None, store.namespace):
            raise ValueError(f"the store is in namespace {store.namespace!r}, not {namespace!r}")
        self.store = async_store(store, **({"namespace": namespace} if namespace is not None else {}))
        self.session_id = session_id
        self.session_settings = _settings(session_settings)
        self._cid: str | None = None
        self._lock = LoopLock()
        """Serializes this object's writes (each is one transaction of the store anyway)."""

    @classmethod
    def from_url(cls, session_id: str, *, url: str | sa.URL, namespace: str | None = None,
                 session_settings: SessionSettings | dict[str, Any] | None = None) -> ConvstoreSession:
        """A session on its own store at ``url``, as ``SQLAlchemySession.from_url``
        (any convstore URL; ``close()`` closes it)."""
        return cls(url, session_id, namespace=namespace, session_settings=session_settings)

    async def conversation_id(self) -> str:
        """The id of this session's conversation (for the rest of convstore's API)."""
        if self._cid is None:
            self._cid = await self.store.conversation_for(self.session_id)  # safe under races
        return self._cid

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first; with ``limit`` (else ``session_settings.limit``)
        the newest ``limit`` of them, as ``SQLiteSession`` returns them (0: none, negative: all).

        Exactly ``limit`` items, even where that cuts a function call from its output:
        the SDK compares such tails item by item when it rewinds or resumes a write, and
        the runner drops an output whose call fell out of the window before calling the
        model. Everything stays stored; ``store.load(..., last=N)`` gives windows of
        whole messages that keep calls with their results.
        """
        # as the SDK resolves it: also a dict assigned to session_settings later is checked
        limit = resolve_session_limit(limit, self.session_settings)
        if limit == 0:
            return []
        cid = await self.conversation_id()
        if limit is None or limit < 0:
            return await self.store.load(cid, format=FORMAT)
        # A stored message is one item or more (but see below), so the last `limit` messages
        # (widened by convstore to keep calls with results) hold the last `limit` items.
        messages = await self.store.load_messages(cid, last=limit)
        items: list[Any] = write(messages, FORMAT)[0]
        if len(items) < limit <= len(messages):
            # Some messages were no item at all (written in another format, e.g. only usage):
            # the window was too short, so read everything once.
            items = write(await self.store.load_messages(cid), FORMAT)[0]
        return items[-limit:]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in one write, all or nothing; a cancelled caller does not
        interrupt it (it is cancelled once the write is done)."""
        if items:
            await _to_the_end(self._add_items(list(items)))

    async def _add_items(self, items: list[TResponseInputItem]) -> None:
        async with self._lock:
            await self.store.append(await self.conversation_id(), items, format=FORMAT)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest item and return it (None when the session is empty).

        One atomic ``pop_item`` of the store: when the last stored message held several
        items (a model turn's reasoning and answer, stored as one message), the items
        before the newest one go back in the same transaction, so no other reader or
        writer sees the turn half popped; a stored message that gives no item (written
        in another format) is removed on the way. A cancelled caller does not interrupt it
        (it is cancelled once the pop is done; the item stays popped).
        """
        return await _to_the_end(self._pop_item())

    async def _pop_item(self) -> TResponseInputItem | None:
        async with self._lock:
            return await self.store.pop_item(await self.conversation_id(), format=FORMAT)

    async def clear_session(self) -> None:
        """Remove every item of this session (the conversation itself stays, empty); a
        cancelled caller does not interrupt it."""
        await _to_the_end(self._clear_session())

    async def _clear_session(self) -> None:
        async with self._lock:
            await self.store.truncate(await self.conversation_id(), 0)

    async def close(self) -> None:
        """Close the database connections, when this session opened them from a URL."""
        if self._owns_store:
            await self.store.close()
