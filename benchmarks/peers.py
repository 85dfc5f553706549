"""The peers: what agent frameworks ship to keep conversations in SQL (the ``bench`` extra).

- LangChain ``SQLChatMessageHistory`` (langchain-community): one row per message, its JSON in a
  TEXT column, through the SQLAlchemy ORM; the workload is turned into LangChain messages
  (``SystemMessage``/``HumanMessage``/``AIMessage`` with ``tool_calls`` and the reasoning in
  ``additional_kwargs``/``ToolMessage``) before any timing.
- OpenAI Agents ``SQLiteSession`` (sqlite3 in worker threads) and ``SQLAlchemySession`` (async:
  aiosqlite on SQLite, asyncpg on PostgreSQL): one row per Responses item, its JSON in a TEXT column;
  the workload is turned into Responses input items (message, reasoning, ``function_call``,
  ``function_call_output``) before any timing. An OpenAI message is 1-5 items; rates count OpenAI
  messages, and one append is all the items of one message in one ``add_items``.

Loads are their native reads (LangChain messages, Responses items): no conversion is charged to
them. "Last 50" is ``get_items(limit=50)`` (50 items) for the sessions and, LangChain having no
limit, the whole history sliced. A tool call by id is the best each can do: a ``LIKE`` scan of the
JSON column for the id on their own table and connection, then parsing the hits.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from typing import Any

import sqlalchemy as sa

from .contestant import Contestant
from .databases import Database


def _sqlite_durable(engine: sa.Engine) -> None:
    """WAL + synchronous=FULL, as convstore and the floors run (SQLite's default is already FULL)."""

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()


def _hits(rows: list[Any], call_id: str) -> dict[str, Any]:
    """The call and its result among rows that mention ``call_id`` (a LIKE scan's matches)."""
    found: dict[str, Any] = {}
    for (raw,) in rows:
        item = json.loads(raw)
        data = item.get("data", item)  # LangChain wraps a message as {"type", "data"}
        for call in data.get("tool_calls") or ():
            if call.get("id") == call_id:
                found.update(name=call["name"], arguments=call["args"])
        if data.get("tool_call_id") == call_id:
            found["result"] = data["content"]
        if data.get("call_id") == call_id:
            if data.get("type") == "function_call":
                found.update(name=data["name"], arguments=json.loads(data["arguments"]))
            elif data.get("type") == "function_call_output":
                found["result"] = data["output"]
    if "name" not in found:
        raise LookupError(call_id)
    return found


# --- LangChain -------------------------------------------------------------------


def to_langchain(m: dict[str, Any]) -> Any:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    role = m["role"]
    if role == "system":
        return SystemMessage(content=m["content"])
    if role == "user":
        return HumanMessage(content=m["content"])
    if role == "tool":
        return ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"])
    calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"],
              "type": "tool_call"} for c in m.get("tool_calls") or ()]
    extra = {"reasoning_content": m["reasoning_content"]} if "reasoning_content" in m else {}
    return AIMessage(content=m.get("content") or "", tool_calls=calls, additional_kwargs=extra)


class LangChainHistory(Contestant):
    name = "LangChain SQLChatMessageHistory"
    kind = "peer"
    family = "langchain"
    backends = ("sqlite", "postgresql")

    def prepare(self, messages: list[dict[str, Any]]) -> list[Any]:
        return [to_langchain(m) for m in messages]

    def open(self, db: Database) -> None:
        self.engine = sa.create_engine(db.sqlalchemy_url)
        if db.backend == "sqlite":
            _sqlite_durable(self.engine)
        self.new_conversation()  # imports, and creates the table: set-up, not timed

    def close(self) -> None:
        self.engine.dispose()

    def new_conversation(self) -> Any:
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        return SQLChatMessageHistory(session_id=str(uuid.uuid4()), connection=self.engine)

    def ingest(self, prepared: list[Any]) -> Any:
        history = self.new_conversation()
        history.add_messages(prepared)
        return history

    def append(self, conversation: Any, one: Any) -> None:
        conversation.add_message(one)

    def load(self, conversation: Any) -> Any:
        return conversation.messages

    def last(self, conversation: Any, n: int) -> Any:
        return conversation.messages[-n:]

    def tool_call(self, call_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT message FROM message_store WHERE message LIKE :p"),
                                {"p": f"%{call_id}%"}).all()
        return _hits(rows, call_id)


# --- OpenAI Agents ---------------------------------------------------------------


def to_items(m: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One OpenAI Chat Completions message as Responses input items (``n`` makes item ids)."""
    role = m["role"]
    content = m.get("content")
    if role == "tool":
        return [{"type": "function_call_output", "call_id": m["tool_call_id"], "output": content}]
    if role in ("system", "user"):
        if isinstance(content, list):
            content = [{"type": "input_text", "text": p["text"]} if p["type"] == "text"
                       else {"type": "input_image", "image_url": p["image_url"]["url"], "detail": "auto"}
                       for p in content]
        return [{"role": role, "content": content}]
    items: list[dict[str, Any]] = []
    if "reasoning_content" in m:
        items.append({"type": "reasoning", "id": f"rs_{n}",
                      "summary": [{"type": "summary_text", "text": m["reasoning_content"]}]})
    if content:
        items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                      "content": [{"type": "output_text", "text": content, "annotations": []}]})
    for call in m.get("tool_calls") or ():
        items.append({"type": "function_call", "id": f"fc_{call['id']}", "call_id": call["id"],
                      "name": call["function"]["name"], "arguments": call["function"]["arguments"],
                      "status": "completed"})
    return items


class _AgentsSession(Contestant):
    kind = "peer"
    family = "responses"

    def prepare(self, messages: list[dict[str, Any]]) -> list[Any]:
        return [to_items(m, n) for n, m in enumerate(messages)]

    def open(self, db: Database) -> None:
        self.loop = asyncio.new_event_loop()
        self.sessions: list[Any] = []

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        for session in self.sessions:
            session.close()
        self.loop.close()

    def new_conversation(self) -> Any:
        raise NotImplementedError

    def ingest(self, prepared: list[Any]) -> Any:
        session = self.new_conversation()
        self.run(session.add_items([item for items in prepared for item in items]))
        return session

    def append(self, conversation: Any, one: Any) -> None:
        self.run(conversation.add_items(one))

    def load(self, conversation: Any) -> Any:
        return self.run(conversation.get_items())

    def last(self, conversation: Any, n: int) -> Any:
        return self.run(conversation.get_items(limit=n))


class AgentsSQLiteSession(_AgentsSession):
    name = "OpenAI Agents SQLiteSession"
    backends = ("sqlite",)

    def open(self, db: Database) -> None:
        super().open(db)
        self.path = db.path
        self.run(self.new_conversation().get_items())  # imports, tables, worker threads: not timed
        self.reader = sqlite3.connect(db.path, check_same_thread=False)

    def close(self) -> None:
        self.reader.close()
        super().close()

    def new_conversation(self) -> Any:
        from agents import SQLiteSession

        session = SQLiteSession(str(uuid.uuid4()), db_path=self.path)
        self.sessions.append(session)
        return session

    def tool_call(self, call_id: str) -> dict[str, Any]:
        rows = self.reader.execute("SELECT message_data FROM agent_messages WHERE message_data LIKE ?",
                                   (f"%{call_id}%",)).fetchall()
        return _hits(rows, call_id)


class AgentsSQLAlchemySession(_AgentsSession):
    name = "OpenAI Agents SQLAlchemySession"
    backends = ("sqlite", "postgresql")

    def open(self, db: Database) -> None:
        from sqlalchemy.ext.asyncio import create_async_engine

        super().open(db)
        self.engine = create_async_engine(db.async_url)
        if db.backend == "sqlite":
            _sqlite_durable(self.engine.sync_engine)
        self.run(self.new_conversation().get_items())  # imports, tables, connections: not timed

    def close(self) -> None:
        self.run(self.engine.dispose())
        super().close()

    def new_conversation(self) -> Any:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        return SQLAlchemySession(str(uuid.uuid4()), engine=self.engine, create_tables=True)

    def tool_call(self, call_id: str) -> dict[str, Any]:
        async def scan() -> list[Any]:
            async with self.engine.connect() as conn:
                result = await conn.execute(
                    sa.text("SELECT message_data FROM agent_messages WHERE message_data LIKE :p"),
                    {"p": f"%{call_id}%"})
                return result.all()

        return _hits(self.run(scan()), call_id)


PEERS: tuple[type[Contestant], ...] = (LangChainHistory, AgentsSQLiteSession, AgentsSQLAlchemySession)
