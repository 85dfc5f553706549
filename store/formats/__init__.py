"""Format adapters: one module per schema, each a pure ``to_canonical`` / ``from_canonical`` pair."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import ConvstoreError, FormatDetectionError, InputError, UnknownFormatError
from ..gcpause import paused_gc
from ..lean import Writable, canonical, convertible
from ..limits import check_input
from ..model import Message
from . import (
    agent_framework,
    agentscope,
    agentscope2,
    anthropic,
    autogen,
    autogen_core,
    docent,
    langchain,
    gemini,
    openai,
    openai_responses,
    otel_genai,
    pydantic_ai,
    qwen,
    vercel_ai,
)
from ._blocknotes import report_block_extras
from ._common import Loss, Losses, StandIn, validated
from ._ids import UNIQUE_CALL_IDS, fill_call_ids, missing_ids, repeated_ids

__all__ = ["FORMATS", "Format", "Loss", "Losses", "convert", "detect", "get_format", "read", "write"]


@dataclass(frozen=True)
class Format:
    name: str
    to_canonical: Callable[[Any], list[Message]]
    from_canonical: Callable[[list[Message], Losses], Any]
    looks_like: Callable[[Any], bool]
    """Whether a JSON value has this format's shape (for ``format="auto"``)."""
    description: str
    to_canonical_stream: Callable[[Iterable[list[Any]]], Iterator[list[Message]]] | None = None
    """``to_canonical`` chunk by chunk, for formats that can read message by message."""
    write_message: Callable[[Message, int, Losses], list[Any]] | None = None
    """One message's items (its index, where losses go), for formats whose ``from_canonical``
    writes each message on its own, its output their concatenation: such messages keep a
    stored document (``store.docs``)."""
    verbatim: Callable[[Any], bool] | None = None
    """Whether ``write_message`` gives an input item back as it is (then the item is its
    message's stored document, not written again); for formats reading an item per message."""
    read_fields: Callable[..., tuple[list[Any], list[bool]]] | None = None
    """``to_canonical`` before the canonical model validates its fields (dicts), and for each
    input item whether ``verbatim`` accepts it (the reader tells it anyway: it reads those items
    without their source models); its second argument is ``read_marked``'s ``stand_in``."""
    read_fields_stream: Callable[..., Iterator[tuple[list[Any], list[Any], list[bool]]]] | None = None
    """``read_fields`` chunk by chunk (one reader spans the chunks), for ``read_stream_marked``."""
    to_writable: Callable[[Any], list[Writable]] | None = None
    """``to_canonical`` for a conversion (``convert``), for formats without ``read_fields``: the items of
    plain shapes read from the items themselves, without the source models, as :class:`~store.lean.Plain`
    messages (for a writer that takes them; their ids and speakers too) or, where a message has something a
    plain one does not (per-part notes, a thought), as canonical messages built from their fields."""
    takes_plain: bool = False
    """Whether ``from_canonical`` takes :class:`~store.lean.Plain` messages among the canonical
    ones (a load then reads plain rows as those: ``codec.readable_from_rows``)."""

    @classmethod
    def from_module(cls, module: ModuleType, description: str) -> Format:
        return cls(module.NAME, module.to_canonical, module.from_canonical, module.looks_like, description,
                   getattr(module, "to_canonical_stream", None), getattr(module, "write_message", None),
                   getattr(module, "verbatim", None), getattr(module, "read_fields", None),
                   getattr(module, "read_fields_stream", None), getattr(module, "to_writable", None),
                   getattr(module, "TAKES_PLAIN", False))


_ADAPTERS: tuple[tuple[ModuleType, str], ...] = (
    (openai, "OpenAI Chat Completions messages"),
    (openai_responses, "OpenAI Responses API input items (Agents SDK sessions)"),
    (anthropic, "Anthropic Messages ({system, messages})"),
    (qwen, "Qwen-Agent Message"),
    (autogen, "AutoGen AgentChat messages and events"),
    (autogen_core, "autogen-core LLM messages (model context)"),
    (agentscope, "AgentScope 1.x Msg (and the seed's Java JSON)"),
    (agentscope2, "AgentScope 2.x Msg"),
    (agent_framework, "Microsoft Agent Framework Message (MEAI ChatMessage)"),
    (docent, "Docent chat messages"),
    (langchain, "LangChain messages (messages_to_dict items, dumpd, model_dump)"),
    (gemini, "Google Gemini contents ({system_instruction, contents})"),
    (pydantic_ai, "Pydantic AI message history (ModelMessagesTypeAdapter JSON)"),
    (otel_genai, "OpenTelemetry GenAI messages ({system_instructions, input_messages, output_messages})"),
    (vercel_ai, "Vercel AI SDK UIMessage[] (useChat messages, AI SDK 5+)"),
)
FORMATS: dict[str, Format] = {
    module.NAME: Format.from_module(module, description)
    for module, description in _ADAPTERS
    if not getattr(module, "PLANNED", False)
}


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name, sorted(FORMATS)) from None


def _fits(fmt: Format, data: Any) -> bool:
    """``fmt.looks_like(data)``; a shape test that trips over a value (a list where a tag is
    expected: unhashable) has its answer: not this format."""
    try:
        return bool(fmt.looks_like(data))
    except (TypeError, AttributeError, KeyError, ValueError):
        return False


def detect(data: Any) -> str:
    """The one format whose shape ``data`` has; an error naming the candidates otherwise."""
    matches = [f.name for f in FORMATS.values() if _fits(f, data)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise FormatDetectionError("cannot tell the format of this input; pass the format's name "
                                   f"(one of {', '.join(FORMATS)})")
    raise FormatDetectionError(f"the input fits several formats ({', '.join(matches)}); pass one of them")


def read(data: Any, format: str) -> list[Message]:
    """Validate ``data`` (a list of messages, or an object with a ``messages`` list)
    in ``format`` (or ``"auto"``) and return canonical messages."""
    return read_marked(data, format)[0]


def read_marked(data: Any, format: str, stand_in: StandIn | None = None, *, lean: bool = False,
                ) -> tuple[list[Any], Format, list[bool] | None]:
    """:func:`read`, the format read, and for each input item whether its ``verbatim``
    accepts it (None: the format has no such test). ``stand_in(item, names)`` may give, for
    an item ``verbatim`` accepts, what to take instead of its canonical message, which is then
    neither made nor validated (``names``: the tool names of the calls before it, by call id). With
    ``lean``, a format without ``read_fields`` reads with its ``to_writable``, where it has one."""
    if format == "auto":
        format = detect(data)
    fmt = get_format(format)
    check_input(data, fmt.name)
    try:
        if fmt.read_fields is None:
            reader = fmt.to_writable if lean and fmt.to_writable is not None else fmt.to_canonical
            return reader(data), fmt, None
        fields, plain = fmt.read_fields(data, stand_in)
        return validated(fields, lambda: fmt.read_fields(data)[0]), fmt, plain  # type: ignore[misc]
    except (RecursionError, ValueError, UnicodeError, OverflowError) as exc:
        raise _input_error(exc, f"cannot read {fmt.name} input") from None


def read_stream_marked(chunks: Iterable[list[Any]], fmt: Format, stand_in: StandIn,
                       ) -> Iterator[tuple[list[Any], list[Any], list[bool]]]:
    """:func:`read_marked` of a stream of chunks (lists of input items) in ``fmt``, which has
    ``read_fields_stream``: each chunk, its messages (stand-ins among them) and verbatim marks."""
    fields_of = fmt.read_fields_stream(chunks, stand_in)  # type: ignore[misc]
    while True:
        try:
            chunk, fields, plain = next(fields_of)
            msgs = validated(fields, lambda: fmt.read_fields(chunk)[0])  # type: ignore[misc]
        except StopIteration:
            return
        except (RecursionError, ValueError, UnicodeError, OverflowError) as exc:
            raise _input_error(exc, f"cannot read {fmt.name} input") from None
        yield chunk, msgs, plain


NEEDS_CALL_IDS = frozenset({"openai", "openai-responses", "anthropic", "docent"})
"""Targets whose results find their call by a non-empty id: empty ids get one (``_ids``)."""


CARRIES_BLOCK_NOTES = frozenset({"qwen", "autogen", "agentscope", "agentscope2", "agent-framework", "docent"})
"""Targets whose extension field carries other formats' block notes; the others drop them, reported
(``_blocknotes.report_block_extras``)."""


def write(messages: list[Writable], format: str, *, strict: bool = False, first: int = 0,
          stored: bool = False) -> tuple[Any, Losses]:
    """Canonical messages in ``format``, with what could not be expressed there (``first``: the
    index of ``messages[0]`` in its conversation, when they are a part of it). Plain ones
    (``store.lean``) go as they are to a writer that takes them. ``stored``: messages of a stored
    conversation, whose call ids the store keeps unique (not looked for again)."""
    fmt = get_format(format)
    losses = Losses(fmt.name, strict)
    try:
        if not fmt.takes_plain:
            messages = canonical(messages)
        if fmt.name in NEEDS_CALL_IDS and (missing_ids(messages) or (
                not stored and fmt.name in UNIQUE_CALL_IDS and repeated_ids(messages, fmt.name))):
            messages = fill_call_ids(canonical(messages), losses, first, fmt.name)
        value = fmt.from_canonical(messages, losses)
        if fmt.name not in CARRIES_BLOCK_NOTES:
            report_block_extras(messages, losses, fmt.name)
        return value, losses
    except (RecursionError, ValueError, UnicodeError, OverflowError) as exc:
        raise _input_error(exc, f"cannot write {format}") from None


def _input_error(exc: Exception, doing: str) -> ConvstoreError:
    """An adapter's stray exception as one of ours (our own pass through untouched)."""
    if isinstance(exc, ConvstoreError):
        return exc
    return InputError(f"{doing}: {' '.join(str(exc).split())[:300] or type(exc).__name__}")


def convert(messages: Any, *, from_: str, to: str, strict: bool = False,
            on_loss: Callable[[Loss], None] | None = None) -> Any:
    """Convert messages between formats in memory, without a database.

    ``from_`` may be ``"auto"``. Returns the target format's JSON-ready value.
    Whatever the target cannot express is passed to ``on_loss`` (one
    :class:`Loss` each); with ``strict`` the first loss raises
    :class:`~store.errors.LossError` instead.
    """
    with paused_gc():  # bulk object building: see store.gcpause
        # Plain items go to a writer that takes them as they are read (store.lean). The messages are
        # an argument, not a local: freed before the pause ends, the collector's next pass skips them.
        lean = get_format(to).takes_plain
        value, losses = write(read_marked(messages, from_, convertible if lean else None, lean=lean)[0], to,
                              strict=strict)
    if on_loss is not None:
        for loss in losses:
            on_loss(loss)
    return value
