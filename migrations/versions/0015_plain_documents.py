"""An OpenAI message whose item is its role and its text has an empty document.

Half the messages of an agent's memory are ``{"role": ..., "content": "..."}`` and nothing
else; since revisions 0010 and 0013 their document was a lead and the item with its text left
out, ``"\\u0001content",{"role":"user","content":"\\u0001"}``, which says no more than the row
(its role, and its text in ``messages.text`` or its first block row). Such a document is now
the empty string (``store.docs.PLAIN``); a load in the stored format makes the item from the
row. The upgrade empties those documents where the row's role is the document's; the downgrade
writes them back, so the code of revision 0014 reads them (a short text too: it fills a lead
whatever the length of the text). Each is one statement per role, run again to the same end.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"

ROLES = ("system", "user", "assistant")


def _lead(role: str) -> str:
    """The document of revision 0014 for such a message, as orjson wrote it."""
    return '"\\u0001content",{"role":"%s","content":"\\u0001"}' % role


def _messages() -> sa.TableClause:
    return sa.table("messages", sa.column("role"), sa.column("source_format"), sa.column("doc"))


def upgrade() -> None:
    m = _messages()
    for role in ROLES:
        op.execute(m.update().where(m.c.source_format == "openai", m.c.role == role, m.c.doc == _lead(role))
                   .values(doc=""))


def downgrade() -> None:
    m = _messages()
    for role in ROLES:
        op.execute(m.update().where(m.c.doc == "", m.c.role == role).values(doc=_lead(role)))
