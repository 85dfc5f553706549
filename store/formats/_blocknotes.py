"""What a target without an extension field drops of other formats' block notes, reported: the source's
unknown keys of a block (an Anthropic text's ``cache_control``, a Responses item's ``id``), which a same-format
round trip writes back and a carrying target (qwen ``extra``, ...) carries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Message
from ._common import _EMPTY, _NO_KEYS, SPELLING_FIELDS, Losses

BLOCK_NOTES = ("fields", "inner")
"""The notes of a block's ``extras`` entry that hold information: the source's unknown keys of the block
(``fields``) and of an object inside it (``inner``: an OpenAI ``image_url``'s ``detail``). Its other
notes say how the source spelled the block."""


def lost_block_extras(msg: Any, target: str) -> list[str]:
    """The source keys in the block extras of formats other than ``target`` (:data:`BLOCK_NOTES`), also
    of a result's blocks, named ``<kind>.extras.<format>.<key>`` (``text.extras.anthropic.cache_control``)."""
    lost: list[str] = []
    for block in msg.content:
        if block.extras:
            _block_notes(block, target, lost)
        if block.kind == "tool_result" and block.output.__class__ is list:
            for part in block.output:
                if part.extras:
                    _block_notes(part, target, lost)
    return lost


def _block_notes(block: Any, target: str, lost: list[str]) -> None:
    for fmt, own in block.extras.items():
        if fmt == target or own.__class__ is not dict:
            continue
        skip = SPELLING_FIELDS.get(fmt, _NO_KEYS)
        for note in BLOCK_NOTES:
            if (keys := own.get(note)).__class__ is dict:
                lost += [f"{block.kind}.extras.{fmt}.{k}" for k, v in keys.items() if k not in skip and v not in _EMPTY]


def report_block_extras(messages: Sequence[Any], losses: Losses, target: str) -> None:
    """Report, per message, the source keys in other formats' block extras (:func:`lost_block_extras`),
    which a ``target`` without an extension field drops; not for a block the writer reported dropped."""
    dropped: set[tuple[int, str]] | None = None
    reported = len(losses)
    for index, msg in enumerate(messages):
        if msg.__class__ is not Message:  # a plain message (store.lean): no block notes
            continue
        for block in msg.content:  # a loop, not any(): most messages of a load have no notes at all
            if block.extras or block.kind == "tool_result":
                break
        else:
            continue
        for name in dict.fromkeys(lost_block_extras(msg, target)):
            if dropped is None:
                dropped = {(loss.index, loss.field) for loss in losses if loss.action == "dropped"}
            if (index, name.split(".", 1)[0]) not in dropped:
                losses.add(index, name, detail="a field of another format")
    if len(losses) > reported:  # the report in message order, as the writer made it
        losses.items.sort(key=lambda loss: loss.index)
