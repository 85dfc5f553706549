"""Microsoft Agent Framework history on convstore (agent-framework-core 1.23).

In 1.23 an agent keeps a session's messages through a ``HistoryProvider``
(a ``ContextProvider`` whose ``before_run`` loads the history into the model
call and whose ``after_run`` saves the turn's inputs and responses). Plug
convstore in as the agent's context provider::

    from store.integrations.agent_framework import ConvstoreHistoryProvider

    history = ConvstoreHistoryProvider("sqlite:///chat.db")    # or a store, or any convstore URL
    agent = Agent(client=client, tools=[...], context_providers=[history])
    await agent.run("Hi", session=agent.create_session(session_id="user-42"))

Each ``AgentSession``'s ``session_id`` names one convstore conversation; the
messages are kept in the ``agent-framework`` format (``Message.to_dict()``),
so a conversation written here can be read back in any other convstore format
and tool calls are found by id (``store.get_tool_call``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agent_framework import HistoryProvider, Message

try:  # what the built-in providers save with: only what the session does not end with yet
    from agent_framework._sessions import filter_new_messages
except ImportError:  # pragma: no cover - another agent-framework version: save everything
    def filter_new_messages(existing: Sequence[Message], incoming: Sequence[Message]) -> list[Message]:
        return list(incoming)

from ..aio import AsyncConversationStore
from . import async_store

__all__ = ["FORMAT", "ConvstoreHistoryProvider"]

FORMAT = "agent-framework"
"""The convstore format the messages are stored in (``Message.to_dict()``)."""


class ConvstoreHistoryProvider(HistoryProvider):
    """An agent-framework ``HistoryProvider`` that keeps each session's messages in convstore.

    Args:
        store: an :class:`~store.AsyncConversationStore` (shares its connection pool),
            a database URL, or ``None`` for the default SQLite file.
        session_id: pins every session of the agent to this one conversation key;
            by default each ``AgentSession.session_id`` is its own key.
        max_messages: load only the most recent ``max_messages`` messages into the
            model call (widened so a function call is never separated from its result);
            ``None`` loads the whole history. Everything is always stored.
        source_id: the provider's id (its slot in ``AgentSession.state``); None: the default.
        load_messages, store_inputs, store_context_messages, store_context_from,
        store_outputs: as for any ``HistoryProvider`` (e.g. ``load_messages=False``
            makes it a write-only audit log).
        skip_excluded: as for the built-in providers: ``get_messages`` leaves out the
            messages a ``CompactionProvider`` marked ``additional_properties["_excluded"]``
            (they stay stored); applied after the ``max_messages`` window.

    Saving is the built-in providers' too: a batch that repeats the end of the stored
    history (a caller replaying the whole transcript) adds only what is new, so a replay
    neither doubles the history nor reuses a stored call id.

    The provider records the convstore conversation id in the session's state
    (``session.state[source_id]["conversation_id"]``), so ``session.to_dict()``
    says where its history lives.
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "convstore"

    def __init__(
        self,
        store: AsyncConversationStore | str | None = None,
        session_id: str | None = None,
        *,
        max_messages: int | None = None,
        source_id: str | None = DEFAULT_SOURCE_ID,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: set[str] | None = None,
        store_outputs: bool = True,
        skip_excluded: bool = False,
    ) -> None:
        if max_messages is not None and max_messages < 1:
            raise ValueError("max_messages must be at least 1 (or None for the whole history)")
        super().__init__(
            source_id or self.DEFAULT_SOURCE_ID,
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_context_messages=store_context_messages,
            store_context_from=store_context_from,
            store_outputs=store_outputs,
        )
        # Only a store made here from a URL is ours to close.
        self._owns_store = not isinstance(store, AsyncConversationStore)
        self.store = async_store(store)
        self.session_id = session_id
        self.max_messages = max_messages
        self.skip_excluded = skip_excluded
        self._conversation_ids: dict[str, str] = {}

    # --- the HistoryProvider interface ---------------------------------------------

    async def get_messages(
        self,
        session_id: str | None,
        *,
        state: dict[str, Any] | None = None,
        last: int | None = None,
        **kwargs: Any,
    ) -> list[Message]:
        """The session's stored messages, oldest first (two store calls the first time, then one).

        ``last`` overrides ``max_messages`` for this call; either way the window
        keeps every function call together with its result. With ``skip_excluded``
        the window's excluded messages are left out.
        """
        cid = await self._conversation(session_id, state)
        window = last if last is not None else self.max_messages
        messages = [Message.from_dict(item) for item in await self.store.load(cid, FORMAT, last=window)]
        if self.skip_excluded:
            messages = [m for m in messages if not m.additional_properties.get("_excluded", False)]
        return messages

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append ``messages`` to the session's conversation in one transaction (all or
        nothing), less those the history already ends with, as the built-in providers do
        (two store calls: the stored tail, then the append)."""
        if not messages:
            return
        cid = await self._conversation(session_id, state)
        # The built-ins' overlap test looks at no more than len(messages) stored messages,
        # and at the whole history only when it is no longer: one more tells the two apart.
        tail = [Message.from_dict(item) for item in await self.store.load(cid, FORMAT, last=len(messages) + 1)]
        new = filter_new_messages(tail, messages)
        if new:
            await self.store.append(cid, [message.to_dict() for message in new], FORMAT)

    # --- editing a session's history -----------------------------------------------

    async def count(self, session_id: str | None = None) -> int:
        """How many messages the session holds."""
        return (await self.store.info(await self.conversation_id(session_id))).message_count

    async def pop(self, n: int = 1, session_id: str | None = None) -> list[Message]:
        """Remove the session's last ``n`` messages and return them, oldest first."""
        removed = await self.store.pop(await self.conversation_id(session_id), n, FORMAT)
        return [Message.from_dict(item) for item in removed]

    async def set_messages(self, messages: Sequence[Message], session_id: str | None = None) -> None:
        """Replace the session's whole history with ``messages`` (all or nothing), e.g. after
        summarising it."""
        cid = await self.conversation_id(session_id)
        await self.store.replace(cid, [message.to_dict() for message in messages], FORMAT)

    async def clear(self, session_id: str | None = None) -> None:
        """Remove every message of the session; its conversation (and key) stays."""
        await self.store.truncate(await self.conversation_id(session_id), 0)

    async def delete(self, session_id: str | None = None) -> None:
        """Delete the session's conversation and everything stored with it; the next
        use of the session starts a new, empty one."""
        key = self._key(session_id)
        await self.store.delete(await self.conversation_id(key))
        self._conversation_ids.pop(key, None)

    # --- plumbing -----------------------------------------------------------------

    async def conversation_id(self, session_id: str | None = None) -> str:
        """The convstore conversation id holding the session's history (created empty
        on first use; looked up once per session key)."""
        key = self._key(session_id)
        cid = self._conversation_ids.get(key)
        if cid is None:
            cid = self._conversation_ids[key] = await self.store.conversation_for(key)
        return cid

    async def close(self) -> None:
        """Close the store if this provider opened it from a URL."""
        if self._owns_store:
            await self.store.close()

    async def __aenter__(self) -> ConvstoreHistoryProvider:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _key(self, session_id: str | None) -> str:
        key = self.session_id or session_id
        if not key:
            raise ValueError("no session id: run the agent with a session, or give the provider a session_id")
        return key

    async def _conversation(self, session_id: str | None, state: dict[str, Any] | None) -> str:
        cid = await self.conversation_id(session_id)
        if state is not None:
            # Part of AgentSession.to_dict(): a saved session says where its history is.
            state["conversation_id"] = cid
        return cid
