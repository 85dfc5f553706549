"""An AutoGen model context that keeps its messages in convstore.

:class:`ConvstoreChatCompletionContext` is an ``autogen_core`` ``ChatCompletionContext``:
hand it to an agent and every LLM message the agent adds lands in a convstore
conversation (one per session id), in the ``autogen-core`` format, so it survives
restarts, can be searched by tool-call id and read back in any other format::

    from store.integrations.autogen import ConvstoreChatCompletionContext
    agent = AssistantAgent("assistant", model_client=client,
                           model_context=ConvstoreChatCompletionContext("sqlite:///memory.db", "session-42"))

With ``buffer_size=N`` the agent sees only the last N messages, widened where needed
so that a tool call is never shown without its result (or a result without its call).
It is an AutoGen component: ``dump_component()`` writes the database URL (its password
in a separate secret field), namespace and session id, and ``load_component()``
reconnects to the same conversation.

Requires ``pip install 'convstore[autogen]'``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from autogen_core import Component
from autogen_core.model_context import ChatCompletionContext, ChatCompletionContextState
from autogen_core.models import LLMMessage
from pydantic import BaseModel, SecretStr, TypeAdapter
from typing_extensions import Self

from ..aio import AsyncConversationStore
from ..repository import DEFAULT_NAMESPACE
from . import async_store

__all__ = ["ConvstoreChatCompletionContext", "ConvstoreChatCompletionContextConfig"]

FORMAT = "autogen-core"
_MESSAGES = TypeAdapter(list[LLMMessage])


class ConvstoreChatCompletionContextConfig(BaseModel):
    """What ``dump_component()`` writes: where the conversation lives, not the store object.

    The password is kept out of ``url`` in a secret field, which AutoGen masks when
    the component is written as JSON (as it does API keys): a JSON dump then needs the
    password filled in again before it is loaded, or a URL that needs none.
    """

    session_id: str
    url: str | None = None
    """The database URL without its password (None: convstore's default database)."""
    password: SecretStr | None = None
    namespace: str = DEFAULT_NAMESPACE
    buffer_size: int | None = None
    initial_messages: list[LLMMessage] | None = None


def _dump(messages: Sequence[LLMMessage]) -> list[dict[str, Any]]:
    # JSON mode: images become {"data": <base64>}, the shape the autogen-core format reads.
    return [m.model_dump(mode="json") for m in messages]


class ConvstoreChatCompletionContext(ChatCompletionContext, Component[ConvstoreChatCompletionContextConfig]):
    """A model context stored in convstore: one conversation per ``session_id``.

    Args:
        store: an :class:`~store.AsyncConversationStore` (shares its connection pool),
            a database URL, or None for convstore's default database.
        session_id: your key for the conversation; it is created on first use.
        namespace: the tenant, when ``store`` is a URL (a store object brings its own).
        buffer_size: show the model only the last ``buffer_size`` messages (all of them
            when None), widened so that tool calls and their results stay together;
            everything stays stored.
        initial_messages: messages a new session starts with; written once, when the
            session's conversation is still empty on first use.

    Every method is one store call (plus, on first use, finding the conversation).
    ``clear()`` (what ``agent.on_reset()`` calls) empties the stored conversation.
    """

    component_config_schema = ConvstoreChatCompletionContextConfig
    component_provider_override = "store.integrations.autogen.ConvstoreChatCompletionContext"

    def __init__(self, store: AsyncConversationStore | str | sa.URL | None, session_id: str, *,
                 namespace: str | None = None, buffer_size: int | None = None,
                 initial_messages: list[LLMMessage] | None = None) -> None:
        super().__init__()  # no initial messages: the base class's list is never used here
        if buffer_size is not None and buffer_size <= 0:
            raise ValueError("buffer_size must be greater than 0.")  # BufferedChatCompletionContext's words
        self._owns_store = not isinstance(store, AsyncConversationStore)
        if not self._owns_store and namespace not in (None, store.namespace):
            raise ValueError(f"the store is in namespace {store.namespace!r}, not {namespace!r}")
        self.store = async_store(store, **({"namespace": namespace} if namespace is not None else {}))
        self.session_id = session_id
        self.buffer_size = buffer_size
        self._initial_messages = list(initial_messages) if initial_messages is not None else None
        self._cid: str | None = None
        self._guard = threading.Lock()
        self._opening: concurrent.futures.Future[str] | None = None

    async def conversation_id(self) -> str:
        """The id of this session's conversation (for the rest of convstore's API)."""
        # Two first calls at once must not seed twice, also from two event loops (threads
        # that each run one): an asyncio lock would only order the calls of one loop, so the
        # first caller opens and the others, whatever their loop, wait on a thread-safe future.
        while self._cid is None:
            with self._guard:
                opening, mine = self._opening, self._opening is None
                if opening is None:
                    opening = self._opening = concurrent.futures.Future()
            if not mine:
                # shielded: a cancelled waiter must not cancel the opener's future; if the
                # opener failed, the next turn of the loop tries again, as a first call
                with contextlib.suppress(Exception):
                    await asyncio.shield(asyncio.wrap_future(opening))
                continue
            try:
                self._cid = await self._open_conversation()
            except BaseException as exc:
                with self._guard:
                    self._opening = None
                opening.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
                raise
            opening.set_result(self._cid)
        return self._cid

    async def _open_conversation(self) -> str:
        cid = await self.store.conversation_for(self.session_id)
        if self._initial_messages and (await self.store.info(cid)).message_count == 0:
            await self.store.append(cid, _dump(self._initial_messages), format=FORMAT)
        return cid

    async def add_message(self, message: LLMMessage) -> None:
        """Append one message to the stored conversation."""
        await self.store.append(await self.conversation_id(), _dump([message]), format=FORMAT)

    async def add_messages(self, messages: Sequence[LLMMessage]) -> None:
        """Append several messages in one write, all or nothing."""
        if messages:
            await self.store.append(await self.conversation_id(), _dump(messages), format=FORMAT)

    async def get_messages(self) -> list[LLMMessage]:
        """The stored messages (the last ``buffer_size``, with tool calls kept whole)."""
        # convstore widens a window that would cut a call from its result; AutoGen's own
        # buffered context drops the orphan result instead, losing what the tool said.
        stored = await self.store.load(await self.conversation_id(), format=FORMAT, last=self.buffer_size)
        return _MESSAGES.validate_python(stored)

    async def clear(self) -> None:
        """Remove every message of this session (the conversation itself stays)."""
        await self.store.truncate(await self.conversation_id(), 0)

    async def save_state(self) -> Mapping[str, Any]:
        """``{"messages": [...]}``: the whole stored conversation, JSON-ready."""
        return {"messages": await self.store.load(await self.conversation_id(), format=FORMAT)}

    async def load_state(self, state: Mapping[str, Any]) -> None:
        """Replace the stored conversation with the messages of ``state``, all or nothing."""
        messages = ChatCompletionContextState.model_validate(state).messages  # models or dicts
        await self.store.replace(await self.conversation_id(), _dump(messages), format=FORMAT)

    async def close(self) -> None:
        """Close the database connections, when this context opened them from a URL."""
        if self._owns_store:
            await self.store.close()

    def _to_config(self) -> ConvstoreChatCompletionContextConfig:
        url = self.store.engine.url  # _replace: URL.set() ignores password=None
        return ConvstoreChatCompletionContextConfig(
            session_id=self.session_id, url=url._replace(password=None).render_as_string(hide_password=False),
            password=SecretStr(str(url.password)) if url.password is not None else None,
            namespace=self.store.namespace, buffer_size=self.buffer_size,
            initial_messages=self._initial_messages)

    @classmethod
    def _from_config(cls, config: ConvstoreChatCompletionContextConfig) -> Self:
        url: sa.URL | None = sa.make_url(config.url) if config.url is not None else None
        if url is not None and config.password is not None:
            url = url.set(password=config.password.get_secret_value())
        return cls(url, config.session_id, namespace=config.namespace, buffer_size=config.buffer_size,
                   initial_messages=config.initial_messages)
