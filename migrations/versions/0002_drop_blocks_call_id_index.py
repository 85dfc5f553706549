"""Drop the index on blocks.call_id: nothing reads blocks by call id (tool calls are
found through tool_calls, which has its own index), and every block insert paid for it.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"


def upgrade() -> None:
    op.drop_index(op.f("ix_blocks_call_id"), table_name="blocks")


def downgrade() -> None:
    op.create_index(op.f("ix_blocks_call_id"), "blocks", ["call_id"])
