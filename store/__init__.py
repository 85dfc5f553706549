"""convstore: a SQL-backed conversation store for AI agents.

Store conversations from any supported agent framework's message schema in
SQLite, PostgreSQL or MariaDB/MySQL, find tool calls by id, and rebuild a
conversation in another schema::

    from store import ConversationStore
    s = ConversationStore("sqlite:///convstore.db")
    cid = s.save(messages, format="openai")
    s.load(cid, format="openai", last=20)
"""

from .errors import ConvstoreError
from .formats import FORMATS, Loss, convert
from .limits import Limits
from .model import Block, Conversation, Message, Page, ToolCallRecord
from .repository import ConversationInfo, ConversationStore
from .aio import AsyncConversationStore
from .retention import PruneReport
from .search import SearchHit
from .usage import ConversationUsage, ModelUsage

__all__ = [
    "AsyncConversationStore",
    "FORMATS",
    "Block",
    "Conversation",
    "ConversationInfo",
    "ConversationStore",
    "ConversationUsage",
    "ConvstoreError",
    "Limits",
    "Loss",
    "Message",
    "ModelUsage",
    "Page",
    "PruneReport",
    "SearchHit",
    "ToolCallRecord",
    "convert",
]
