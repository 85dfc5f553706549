"""Anthropic's writer in one pass, for the conversations agents keep.

``_anthropic_write.from_canonical`` makes a turn object of each message, then merges same-role
turns, puts a user turn first and answers every ``tool_use`` at the start of the next turn: three
passes. An agent's conversation needs none of them: a system prompt, then user and assistant
turns in alternation, each assistant's calls answered in order by the tool results right after
it. :func:`one_pass` writes such a conversation as it reads it, and gives up (None) as soon as
one of those passes would change anything; the full writer then starts again. Messages are
read as the full writer reads them (the same losses, in the same order), plain ones
(``store.lean``) without a turn object. tests/formats/test_anthropic_fast.py holds both writers to the
same output and the same losses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lean import Plain
from .anthropic import NAME

if TYPE_CHECKING:
    from ._anthropic_write import _Writer

class _Irregular(Exception):
    """The conversation needs the API's rules applied: written by the full writer."""


def one_pass(messages: list[Any], writer: _Writer) -> tuple[Any, list[dict[str, Any]]] | None:
    """(the system prompt or None, the messages) of an agent's conversation, written by
    ``writer`` in one pass; None, with no loss reported, where the full
    writer's passes would merge, move or add anything."""
    mark = len(writer.losses.items)
    run = _Run(writer)
    try:
        for index, msg in enumerate(messages):
            if msg.__class__ is Plain and not native(msg):
                run.plain(msg, index)
            else:
                run.turns(writer.plain(msg, index) if msg.__class__ is Plain else writer.turns(msg, index))
        run.close()
    except _Irregular:
        del writer.losses.items[mark:]
        return None
    return run.system, run.body


def native(msg: Plain) -> bool:
    """Whether a plain message was read from Anthropic (or carries its notes): written back as it was
    read, through its canonical message."""
    return msg.source_format == NAME or bool(msg.extras and NAME in msg.extras)


class _Run:
    """The body written so far, and what the next turn may be."""

    def __init__(self, writer: _Writer) -> None:
        self.writer = writer
        self.system: Any = None
        self.body: list[dict[str, Any]] = []
        self.last: str | None = None  # user, assistant or results: the last turn of the body
        self.calls: list[str] = []  # the last assistant turn's tool_use ids
        self.answered = 0  # how many of them the results turn after it answers, in order
        self.parts: list[dict[str, Any]] = []  # that results turn's content

    def plain(self, msg: Plain, index: int) -> None:
        """``_Writer.plain`` without its turn object."""
        writer = self.writer
        writer.lost_notes(msg, index)
        calls, text = msg.content, msg.text
        if calls and calls[0].kind == "tool_result":
            self.result(writer.plain_result(msg))
            return
        if text is None:
            if not calls:
                raise _Irregular  # no turn at all
        elif not text or text.isspace():
            raise _Irregular  # an empty or whitespace-only text: a loss, and maybe no turn at all
        if not calls:
            self.text(msg.role, text)
            return
        if msg.role != "assistant":
            raise _Irregular
        uses = writer.plain_uses(msg, index)
        self.assistant([{"type": "text", "text": text}, *uses] if text else uses, [u["id"] for u in uses])

    def turns(self, turns: list[Any]) -> None:
        """The turns the full writer made of one message, where each is a turn of its own."""
        if len(turns) > 1:
            raise _Irregular
        for turn in turns:
            if turn.native or turn.fields or turn.joined or turn.separate or not turn.blocks:
                raise _Irregular
            if turn.results:
                for part in turn.blocks:
                    self.result(part)
            elif turn.role == "assistant":
                ids = [p["id"] for p in turn.blocks if p.get("type") == "tool_use"]
                self.assistant(content(turn.blocks, turn.form), ids)
            elif turn.role in ("user", "system") and all(p.get("type") != "tool_result" for p in turn.blocks):
                self.text(turn.role, content(turn.blocks, turn.form))
            else:  # a role-system message kept inline, a result among other parts
                raise _Irregular

    def text(self, role: str, value: Any) -> None:
        if role == "assistant":
            self.assistant(value, [])
        elif role == "system":
            if self.body or self.system is not None:
                raise _Irregular  # a prompt after the chat or a second one: moved or merged
            self.system = value
        elif role != "user" or self.last in ("user", "results") or self.calls and self.last == "assistant":
            raise _Irregular  # merged with the turn before, or calls left unanswered
        else:
            self.body.append({"role": "user", "content": value})
            self.last = "user"

    def assistant(self, value: Any, calls: list[str]) -> None:
        if self.last is None or self.last == "assistant" or len(set(calls)) != len(calls):
            raise _Irregular  # a user turn put first, turns merged, a call id twice
        self.close()
        self.body.append({"role": "assistant", "content": value})
        self.last, self.calls = "assistant", calls

    def result(self, part: dict[str, Any]) -> None:
        if self.last == "assistant" and self.calls:
            self.parts, self.answered = [part], 0
            self.body.append({"role": "user", "content": self.parts})
        elif self.last == "results":
            self.parts.append(part)
        else:
            raise _Irregular  # a result answering no call of the turn before
        if self.answered >= len(self.calls) or part.get("tool_use_id") != self.calls[self.answered]:
            raise _Irregular  # answered out of order, or twice
        self.answered += 1
        self.last = "results"

    def close(self) -> None:
        if self.last == "results" and self.answered != len(self.calls):
            raise _Irregular  # a call left unanswered: the full writer adds its result


def content(blocks: list[dict[str, Any]], form: str | None) -> Any:
    """A turn's content: its one text as a string, unless the source wrote a list."""
    if form != "list" and len(blocks) == 1 and blocks[0].get("type") == "text" and len(blocks[0]) == 2:
        return blocks[0]["text"]
    return blocks
