"""Drop-in memory backends for agent frameworks, one module each.

Each module imports its framework (install the matching extra, e.g.
``pip install 'convstore[autogen]'``); ``import store`` never imports them.
Every backend keeps one conversation per session key, in the framework's own
format, on an :class:`~store.AsyncConversationStore` (pass one to share its
connection pool, or a database URL).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from ..aio import AsyncConversationStore


def async_store(store: AsyncConversationStore | str | None, **kwargs: Any) -> AsyncConversationStore:
    """``store`` itself, or a new store on the URL (``None``: the default SQLite file)."""
    if isinstance(store, AsyncConversationStore):
        return store
    return AsyncConversationStore(store, **kwargs) if store is not None else AsyncConversationStore(**kwargs)


class LoopLock:
    """An ``asyncio.Lock`` per running event loop. A plain ``asyncio.Lock`` binds to the
    first loop that waits on it and then fails in any other ("bound to a different event
    loop"); a framework may drive one memory object from several loops (threads that
    each run their own). Within a loop it serializes as a lock does; across loops the
    store's transactions keep every write whole."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
        self._guard = threading.Lock()

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._guard:
            if (lock := self._locks.get(loop)) is None:
                lock = self._locks[loop] = asyncio.Lock()
            return lock

    async def __aenter__(self) -> None:
        await self._lock().acquire()

    async def __aexit__(self, *_: object) -> None:
        self._lock().release()
