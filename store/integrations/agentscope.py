"""AgentScope memory that keeps its messages in convstore.

AgentScope 2.x has no memory class: an ``Agent`` keeps its history in ``agent.state``
(``context``, a list of ``Msg``, and ``summary``). :class:`ConvstoreMemory` is a
middleware that ties them to a convstore conversation, one per session id, in the
``agentscope2`` format::

    from store.integrations.agentscope import ConvstoreMemory
    agent = Agent(name="Friday", system_prompt="...", model=model, toolkit=toolkit,
                  middlewares=[ConvstoreMemory("sqlite:///memory.db", "session-42")])

The stored history becomes the agent's context when it first replies (or give it
``state=await memory.load_state()``); after every reply, also a parked, interrupted or
failed one, what changed is written back: new messages with one ``append``, anything
else (a message completed in place, a compressed context) with one atomic ``replace``.
A summary is stored as the first message (a user message, as the model sees it),
marked ``metadata["convstore_summary"]``. After ``agent.observe()`` or
``agent.compress_context()`` outside a reply, ``await memory.save_state()`` writes at once.

It also has AgentScope 1.x's ``MemoryBase`` methods, with their signatures, on the
stored conversation (an attached agent's context follows them): ``add``, ``delete``,
``delete_by_mark``, ``update_messages_mark``, ``size``, ``clear``, ``get_memory``
(``last=N``: the recent window, never cutting a tool call from its result) and
``state_dict``/``load_state_dict`` (the session id). Marks are kept in each message's
``metadata["convstore_marks"]``. Under agentscope 1.x the same class *is* a
``MemoryBase`` (format ``agentscope``): ``ReActAgent(memory=ConvstoreMemory(...))``.

One agent per session at a time: what another writer stored meanwhile is overwritten
when the agent next edits its context. Requires ``pip install 'convstore[agentscope]'``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Any

import sqlalchemy as sa

from ..aio import AsyncConversationStore
from . import LoopLock, async_store

try:  # agentscope 1.x: a MemoryBase that ReActAgent calls
    from agentscope.memory import MemoryBase as _Base
    from agentscope.message import Msg

    AgentState: Any = None
    FORMAT = "agentscope"
except ImportError:  # 2.x: no memory class; the history is AgentState's, kept by a middleware
    from agentscope.message import Msg, TextBlock
    from agentscope.middleware import MiddlewareBase as _Base
    from agentscope.state import AgentState

    FORMAT = "agentscope2"

__all__ = ["FORMAT", "MARKS_KEY", "SUMMARY_KEY", "ConvstoreMemory"]

V2 = FORMAT == "agentscope2"
MARKS_KEY = "convstore_marks"
SUMMARY_KEY = "convstore_summary"
"""Metadata key of the stored summary message: ``"str"`` or ``"blocks"`` (the summary's type)."""


def _dump(msg: Msg) -> dict[str, Any]:
    return msg.model_dump(mode="json") if V2 else copy.deepcopy(msg.to_dict())


def _msg(data: dict[str, Any]) -> Msg:
    return Msg.model_validate(data) if V2 else Msg.from_dict(copy.deepcopy(data))


def _meta(data: dict[str, Any]) -> dict[str, Any]:
    return data.get("metadata") or {}


def _marks(data: dict[str, Any]) -> list[str]:
    return list(_meta(data).get(MARKS_KEY) or ())


def _mark_list(marks: str | list[str] | None) -> list[str]:
    """``add``'s marks, refused as ``InMemoryMemory.add`` refuses them (its words)."""
    if marks is None:
        return []
    if isinstance(marks, str):
        return [marks]
    if isinstance(marks, list) and all(isinstance(m, str) for m in marks):
        return list(marks)
    raise TypeError(f"The mark should be a string, a list of strings, or None, but got {type(marks)}.")


def _marks_to_delete(mark: str | list[str]) -> list[str]:
    """``delete_by_mark``'s marks: a string or a list of strings (``InMemoryMemory``'s words)."""
    if isinstance(mark, str):
        return [mark]
    if isinstance(mark, list) and all(isinstance(m, str) for m in mark):
        return mark
    kinds = f" with elements of types {[type(m) for m in mark]}" if isinstance(mark, list) else ""
    raise TypeError(f"The mark should be a string or a list of strings, but got {type(mark)}{kinds}.")


def _check_filter(name: str, mark: str | None) -> None:
    if not (mark is None or isinstance(mark, str)):
        raise TypeError(f"The {name} should be a string or None, but got {type(mark)}.")


def _with_marks(data: dict[str, Any], marks: list[str]) -> dict[str, Any]:
    meta = {k: v for k, v in _meta(data).items() if k != MARKS_KEY}
    return {**data, "metadata": {**meta, MARKS_KEY: marks} if marks else meta}


def _with_ids(dumps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages another format wrote have no id (``Msg`` would make a new one each load):
    each gets one derived from its content, numbered among identical ones, so the same on
    every load and ``delete``/marks by id find it; the next rewrite stores it."""
    seen: Counter[str] = Counter()
    out = []
    for data in dumps:
        if data.get("id"):
            out.append(data)
            continue
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:24]
        seen[digest] += 1
        out.append({**data, "id": f"convstore-{digest}-{seen[digest]}"})
    return out


def _split(dumps: list[dict[str, Any]]) -> tuple[Any, dict[str, Any] | None, list[dict[str, Any]]]:
    """``(summary, its stored message, the other messages)``; ``("", None, dumps)`` without one."""
    kind = _meta(dumps[0]).get(SUMMARY_KEY) if dumps else None
    if kind is None:
        return "", None, dumps
    head = _msg(dumps[0])
    return (head.get_text_content() or "" if kind == "str" else list(head.content)), dumps[0], dumps[1:]


class ConvstoreMemory(_Base):
    """An agent's history in a convstore conversation: one per ``session_id``.

    Args:
        store: an :class:`~store.AsyncConversationStore` (shares its connection pool),
            a database URL, or None for convstore's default database.
        session_id: your key for the conversation; it is created on first use.
        namespace: the tenant, when ``store`` is a URL (a store object brings its own).

    Every method is a fixed number of store calls (plus, on first use, finding the
    conversation): ``add`` one ``append`` (after one ``load`` unless
    ``allow_duplicates``), ``get_memory``/``size`` one ``load``, ``clear`` one
    ``truncate``, the edits one ``load`` and one ``replace``.
    """

    def __init__(self, store: AsyncConversationStore | str | sa.URL | None, session_id: str, *,
                 namespace: str | None = None) -> None:
        super().__init__()
        self._owns_store = not isinstance(store, AsyncConversationStore)
        self.store = async_store(store, **({"namespace": namespace} if namespace is not None else {}))
        self._lock = LoopLock()
        self.session_id = session_id
        if not V2:  # 1.x StateModule: state_dict() holds the session id (and the base's summary)
            self.register_state("session_id")

    @property
    def session_id(self) -> str:
        return self._session_id

    @session_id.setter
    def session_id(self, value: str) -> None:
        # another session: forget the conversation and detach from the agent's state, whose
        # messages belong to the old session (they are replaced, not kept, when it reattaches)
        self._previous = getattr(self, "_state", None) or getattr(self, "_previous", None)
        self._session_id = value
        self._cid: str | None = None
        self._state: Any = None
        self._saved: list[dict[str, Any]] = []  # what the store holds for the attached state
        self._summary: tuple[Any, dict[str, Any]] | None = None  # (summary, its stored message)

    async def conversation_id(self) -> str:
        """The id of this session's conversation (for the rest of convstore's API)."""
        if self._cid is None:
            async with self._lock:
                if self._cid is None:
                    self._cid = await self.store.conversation_for(self._session_id)
        return self._cid

    async def _load(self, last: int | None = None) -> list[dict[str, Any]]:
        return _with_ids(await self.store.load(await self.conversation_id(), format=FORMAT, last=last))

    # --- the memory interface (1.x MemoryBase) ------------------------------------------

    async def add(self, memories: Msg | list[Msg] | None, marks: str | list[str] | None = None,
                  allow_duplicates: bool = False, **kwargs: Any) -> None:
        """Append message(s), with ``marks``, in one write; unless ``allow_duplicates``,
        those whose id is already stored are skipped (as in ``InMemoryMemory``)."""
        msgs = [memories] if isinstance(memories, Msg) else list(memories or [])
        dumps = [_with_marks(_dump(m), _mark_list(marks)) for m in msgs]
        if not allow_duplicates and dumps:
            stored = {d.get("id") for d in await self._load()}
            dumps = [d for d in dumps if d.get("id") not in stored]
        if dumps:
            await self.store.append(await self.conversation_id(), dumps, format=FORMAT)
            self._follow(self._saved + dumps)

    async def delete(self, msg_ids: list[str], **kwargs: Any) -> int:
        """Remove the messages with these ids; return how many were removed."""
        ids = set(msg_ids)
        return await self._edit(lambda d: None if d.get("id") in ids else d)

    async def delete_by_mark(self, mark: str | list[str], *args: Any, **kwargs: Any) -> int:
        """Remove the messages that have any of these marks; return how many were removed."""
        marks = set(_marks_to_delete(mark))
        return await self._edit(lambda d: None if marks.intersection(_marks(d)) else d)

    async def update_messages_mark(self, new_mark: str | None, old_mark: str | None = None,
                                   msg_ids: list[str] | None = None) -> int:
        """Add, change or (``new_mark=None``) remove a mark, as ``InMemoryMemory`` does;
        return how many messages changed."""
        counted = 0

        def update(data: dict[str, Any]) -> dict[str, Any]:
            nonlocal counted
            marks = _marks(data)
            if (msg_ids is not None and data.get("id") not in msg_ids) or (
                    old_mark is not None and old_mark not in marks):
                return data
            if new_mark is None and old_mark not in marks:
                return data
            if old_mark in marks:  # removed, or replaced by new_mark
                marks.remove(old_mark)
            if new_mark is None or new_mark not in marks:
                counted += 1  # as InMemoryMemory counts: a mark removed or added
                if new_mark is not None:
                    marks.append(new_mark)
            return _with_marks(data, marks)

        await self._edit(update)
        return counted

    async def _edit(self, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
        """Apply ``change`` (a message -> itself, a new version, or None to drop it) to
        every stored message; write the result in one ``replace`` if anything changed."""
        dumps = await self._load()
        changed = [change(d) for d in dumps]
        kept = [d for d in changed if d is not None]
        count = sum(new is not d for new, d in zip(changed, dumps, strict=True))
        if count:
            await self.store.replace(await self.conversation_id(), kept, format=FORMAT)
            self._follow(kept)
        return count

    async def size(self) -> int:
        """The number of stored messages (the summary not counted)."""
        return len(_split(await self._load())[2])

    async def clear(self) -> None:
        """Remove every message of this session (the conversation itself stays)."""
        await self.store.truncate(await self.conversation_id(), 0)
        self._follow([])

    async def get_memory(self, mark: str | None = None, exclude_mark: str | None = None,
                         prepend_summary: bool = True, **kwargs: Any) -> list[Msg]:
        """The stored messages with ``mark`` and without ``exclude_mark``; ``last=N``: of
        the last N (canonical) messages only, widened to keep tool calls with their results.
        With ``prepend_summary`` the summary (if stored, and in the window) comes first."""
        _check_filter("mark", mark)  # before any query, as InMemoryMemory checks them
        _check_filter("exclude_mark", exclude_mark)
        _, head, dumps = _split(await self._load(kwargs.get("last")))
        out = [_msg(_with_marks(d, [])) for d in dumps  # the marks key is ours: not shown
               if (mark is None or mark in _marks(d))
               and (exclude_mark is None or exclude_mark not in _marks(d))]
        if prepend_summary and head is not None:
            out.insert(0, _msg(head))
        if prepend_summary and not V2 and self._compressed_summary:  # 1.x keeps it in the object
            out.insert(0, Msg("user", self._compressed_summary, "user"))
        return out

    if V2:  # 1.x's StateModule has these (sync, the same signatures)
        def state_dict(self) -> dict[str, Any]:
            """``{"session_id": ...}``: the messages themselves are in the database."""
            return {"session_id": self.session_id}

        def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
            """Switch to the session of ``state_dict``."""
            if "session_id" in state_dict:
                self.session_id = state_dict["session_id"]
            elif strict:
                raise KeyError("the state dict has no 'session_id'")

    async def close(self) -> None:
        """Close the database connections, when this memory opened them from a URL."""
        if self._owns_store:
            await self.store.close()

    # --- AgentScope 2.x: the agent's state ----------------------------------------------

    def _follow(self, dumps: list[dict[str, Any]]) -> None:
        """An attached state takes the stored messages ``dumps`` after a memory-method write."""
        if self._state is not None:
            self._take(self._state, dumps)

    def _take(self, state: Any, dumps: list[dict[str, Any]], keep_own: bool = False) -> None:
        """``state`` gets the stored summary and messages and becomes the attached state;
        with ``keep_own`` its messages the store does not have (by id) follow them."""
        summary, head, rest = _split(dumps)
        history = [_msg(d) for d in rest]
        known = {m.id for m in history}
        own = [m for m in state.context if m.id not in known] if keep_own else []
        state.context = history + own
        if head is not None or not keep_own:
            state.summary = summary
        self._summary = (copy.deepcopy(summary), head) if head is not None else None
        # baseline in 2.x's own dump: a message another format wrote compares equal next time
        self._saved = ([head] if head is not None else []) + [_dump(m) for m in history]
        self._state = state
        last = state.context[-1] if state.context else None
        if last is not None and state.get_awaiting_tool_calls(last.name):
            state.reply_id = last.id  # a parked reply goes on in its message (its iteration count restarts)

    async def load_state(self, state: Any = None) -> Any:
        """The session's ``AgentState`` (context and summary from the store; pass a
        state to fill that one, keeping its other fields). Give it to ``Agent(state=...)``."""
        if not V2:
            raise NotImplementedError("agentscope 1.x agents call the memory methods themselves")
        state = state if state is not None else AgentState(session_id=self.session_id)
        self._take(state, await self._load(), keep_own=True)
        return state

    async def save_state(self, state: Any = None) -> None:
        """Write what changed in the attached ``state`` (default: the attached one):
        new messages with one ``append``, any other change with one ``replace``."""
        state = state if state is not None else self._state
        if state is None:
            raise RuntimeError("no agent state attached: call load_state() first")
        if state is not self._state:
            raise RuntimeError("this memory is attached to another agent state")
        dumps = [_dump(m) for m in state.context]
        if state.summary:
            if self._summary is None or self._summary[0] != state.summary:
                text = isinstance(state.summary, str)
                head = Msg(name="user", role="user", content=[TextBlock(text=state.summary)] if text
                           else list(state.summary), metadata={SUMMARY_KEY: "str" if text else "blocks"})
                self._summary = (copy.deepcopy(state.summary), _dump(head))
            dumps.insert(0, self._summary[1])
        cid = await self.conversation_id()
        done = len(self._saved)
        if dumps[:done] == self._saved:
            if dumps[done:]:
                await self.store.append(cid, dumps[done:], format=FORMAT)
        else:
            await self.store.replace(cid, dumps, format=FORMAT)
        self._saved = dumps

    async def on_reply(self, agent: Any, input_kwargs: dict,
                       next_handler: Callable[..., AsyncGenerator]) -> AsyncGenerator:
        """Middleware hook: attach the agent's state on its first reply, save it after each."""
        if agent.state is not self._state:
            self._take(agent.state, await self._load(), keep_own=agent.state is not self._previous)
        try:
            async for item in next_handler(**input_kwargs):
                yield item
        finally:  # a parked, interrupted or failed reply is saved too
            await self.save_state(agent.state)
