"""Format adapters: one module per schema, each a pure ``to_canonical`` / ``from_canonical`` pair."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import SchemaError, UnknownFormatError
from ..model import Message
from . import openai
from ._common import Loss, Losses

__all__ = ["FORMATS", "Format", "Loss", "Losses", "convert", "get_format"]


@dataclass(frozen=True)
class Format:
    name: str
    to_canonical: Callable[[Any], list[Message]]
    from_canonical: Callable[[list[Message], Losses], Any]
    description: str

    @classmethod
    def from_module(cls, module: ModuleType, description: str) -> Format:
        return cls(module.NAME, module.to_canonical, module.from_canonical, description)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format.from_module(openai, "OpenAI Chat Completions messages"),
    )
}


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name, sorted(FORMATS)) from None


def read(data: Any, format: str) -> list[Message]:
    """Validate ``data`` (a list of messages, or an object with a ``messages`` list)
    in ``format`` and return canonical messages."""
    fmt = get_format(format)
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and format == "openai":
        data = data["messages"]
    if not isinstance(data, list):
        raise SchemaError(format, [(None, "", f"expected a list of messages, got {type(data).__name__}")])
    return fmt.to_canonical(data)


def write(messages: list[Message], format: str, *, strict: bool = False) -> tuple[Any, Losses]:
    """Canonical messages in ``format``, with what could not be expressed there."""
    losses = Losses(format, strict)
    return get_format(format).from_canonical(messages, losses), losses


def convert(messages: Any, *, from_: str, to: str, strict: bool = False,
            on_loss: Callable[[Loss], None] | None = None) -> Any:
    """Convert messages between formats in memory, without a database.

    Returns the target format's JSON-ready value. Whatever the target cannot
    express is passed to ``on_loss`` (one :class:`Loss` each); with ``strict``
    the first loss raises :class:`~store.errors.LossError` instead.
    """
    value, losses = write(read(messages, from_), to, strict=strict)
    if on_loss is not None:
        for loss in losses:
            on_loss(loss)
    return value
