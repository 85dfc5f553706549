"""Drop the index on blocks.call_id: nothing reads blocks by call id (tool calls are
found through tool_calls, which has its own index), and every block insert paid for it.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"


def upgrade() -> None:
    # Checked first: MariaDB/MySQL commit DDL at once, so an upgrade killed after the drop
    # but before recording 0002 runs this again (a downgrade likewise).
    if _indexed():
        op.drop_index(op.f("ix_blocks_call_id"), table_name="blocks")


def downgrade() -> None:
    if not _indexed():
        op.create_index(op.f("ix_blocks_call_id"), "blocks", ["call_id"])


def _indexed() -> bool:
    return "ix_blocks_call_id" in {ix["name"] for ix in sa.inspect(op.get_bind()).get_indexes("blocks")}
