"""Drop-in memory backends for agent frameworks, one module each.

Each module imports its framework (install the matching extra, e.g.
``pip install 'convstore[autogen]'``); ``import store`` never imports them.
Every backend keeps one conversation per session key, in the framework's own
format, on an :class:`~store.AsyncConversationStore` (pass one to share its
connection pool, or a database URL).
"""

from __future__ import annotations

from typing import Any

from ..aio import AsyncConversationStore


def async_store(store: AsyncConversationStore | str | None, **kwargs: Any) -> AsyncConversationStore:
    """``store`` itself, or a new store on the URL (``None``: the default SQLite file)."""
    if isinstance(store, AsyncConversationStore):
        return store
    return AsyncConversationStore(store, **kwargs) if store is not None else AsyncConversationStore(**kwargs)
