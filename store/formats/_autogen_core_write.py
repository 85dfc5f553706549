"""Export of the ``autogen-core`` format (see :mod:`store.formats.autogen_core`): canonical
messages as autogen-core LLM message dicts, each call answered before the next message; also the
messages of the ``autogen`` format's handoff contexts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lean import Call, Plain, canonical, writable
from ..model import Block, CodeBlock, ImageBlock, Message, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ._common import Losses, call_text, report_extras, report_fields
from .autogen_core import (
    NAME, NO_RESULT, call_out, finish, image_out, result_out, result_stand_in, result_text, stand_in,
)

# --- from canonical --------------------------------------------------------------------------

_NOT_IN_CORE = ("external_id", "created_at", "model", "usage")
# AgentChat events that are no model input: a streaming chunk repeats part of the message that
# follows it; the others only steer the team.
_NOT_IN_CONTEXT = frozenset({"ModelClientStreamingChunkEvent", "UserInputRequestedEvent",
                             "SelectSpeakerEvent"})


TAKES_PLAIN = True


@dataclass(slots=True, eq=False)
class _Result:
    """A plain message's tool result (``store.lean``) as the writer reads a result block."""

    call_id: str
    output: str
    name: str | None
    is_error: bool
    error: None = None
    extras: dict[str, Any] = field(default_factory=dict)
    kind: str = "tool_result"

    def stand_in(self) -> str:
        """``autogen_core.stand_in`` of the block."""
        return result_stand_in(self.name, self.call_id, self.output)


class _Writer:
    """Writes one conversation; keeps the calls still waiting for results, because a model
    client needs every call answered (FunctionExecutionResultMessage) before the next message."""

    def __init__(self, messages: list[Message], losses: Losses) -> None:
        self.losses = losses
        self.out: list[dict[str, Any]] = []
        self.pending: dict[str, tuple[str, int]] = {}  # call id -> (tool name, message index)
        self.used: set[int] = set()  # ids of result blocks moved up to answer their call
        self.results: dict[str, list[ToolResultBlock]] = {}
        # The FunctionExecutionResultMessage answering the latest AssistantMessage's calls, while it
        # is the last message written: results of parallel calls that came as separate messages
        # (OpenAI tool messages) join it, since autogen writes one such message per call turn.
        self.group: dict[str, Any] | None = None
        self.plain_results: dict[int, _Result] = {}  # id of a plain result message -> its result
        for msg in messages:
            if msg.__class__ is Plain:
                if msg.content and msg.content[0].__class__ is not Call:
                    result = self.plain_results[id(msg)] = _Result(
                        msg.content[0].call_id, msg.text, msg.name, msg.content[0].is_error)  # type: ignore
                    self.results.setdefault(result.call_id, []).append(result)  # type: ignore[arg-type]
                continue
            for block in msg.content:
                if isinstance(block, ToolResultBlock):
                    self.results.setdefault(block.call_id, []).append(block)

    def message(self, msg: Message, index: int) -> None:
        if msg.source_type in _NOT_IN_CONTEXT:
            self.losses.add(index, "message", detail=f"an AgentChat {msg.source_type} is no model input")
            return
        self._report_fields(msg, index)
        rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
        calls = [b for b in rest if isinstance(b, ToolCallBlock)]
        own = {c.call_id for c in calls}
        results = [b for b in msg.content if isinstance(b, ToolResultBlock) and id(b) not in self.used]
        if before := [b for b in results if b.call_id not in own]:
            self._results(before, msg, index)
        if rest or msg.role != "tool":
            self._rest(msg, rest, calls, index)
        if after := [b for b in results if b.call_id in own and id(b) not in self.used]:
            self._results(after, msg, index)  # results inside the calling message come after its calls

    def plain(self, msg: Plain, index: int) -> None:
        """:meth:`message` of a plain message (``store.lean``) that :func:`_takes`: the same messages and
        losses, made without its canonical message (tests/test_lean_load.py holds them to be the same)."""
        if msg.external_id is not None:  # the one of _NOT_IN_CORE a plain message may have
            self.losses.add(index, "external_id", detail="autogen-core messages have no such field")
        report_extras(msg, index, self.losses, NAME)
        content, text = msg.content, msg.text
        if content and content[0].__class__ is not Call:  # a tool result
            if id(result := self.plain_results[id(msg)]) not in self.used:
                self._results([result], msg, index)  # type: ignore[list-item]
            return
        self.flush()
        if content:  # an assistant's calls
            if text:
                self.losses.add(index, "text", "approximated", "text beside tool calls goes into thought")
            self.out.append({"content": [{"id": c.call_id, "arguments": call_text(c), "name": c.name}  # type: ignore[union-attr]
                                         for c in content], "thought": text or None,
                             "source": msg.speaker or "assistant", "type": "AssistantMessage"})
            self.pending = {c.call_id: (c.name, index) for c in content}  # type: ignore[union-attr]
            self.group = None
        elif msg.role == "assistant":
            self.out.append({"content": text, "thought": None, "source": msg.speaker or "assistant",
                             "type": "AssistantMessage"})
            self.pending, self.group = {}, None
        elif msg.role == "system":
            self.out.append({"content": text, "type": "SystemMessage"})
        else:
            self.out.append({"content": text, "source": msg.speaker or "user", "type": "UserMessage"})

    def _rest(self, msg: Message, rest: list[Block], calls: list[ToolCallBlock], index: int) -> None:
        if msg.role == "assistant":
            self._assistant(msg, rest, calls, index)
            return
        if calls:
            self.losses.add(index, "tool_call", "approximated", f"a {msg.role} message cannot call tools; "
                            "the calls become an AssistantMessage")
        others = [b for b in rest if not isinstance(b, ToolCallBlock)]
        if others or not calls:
            self.flush()
            write = self._system if msg.role == "system" else self._user
            self.out.append(write(msg, others, index))
        if calls:
            self._assistant(msg, calls, calls, index)

    def _report_fields(self, msg: Message, index: int) -> None:
        report_fields(msg, index, self.losses, NAME, _NOT_IN_CORE, "autogen-core messages have no such field")

    def _texts(self, blocks: list[Block], index: int, where: str) -> list[str]:
        texts = []
        written = [b.text for b in blocks if isinstance(b, TextBlock)]
        for block in blocks:
            if isinstance(block, CodeBlock) and any(block.code in t for t in written):
                self.losses.add(index, "code", "approximated", "the code is in the message text already")
                continue
            text = stand_in(block)
            if not isinstance(block, TextBlock):
                action = "dropped" if text is None else "approximated"
                how = "" if text is None else "; rendered as text"
                self.losses.add(index, block.kind, action, f"{where} holds text only{how}")
            if text is not None:
                texts.append(text)
        return texts

    def _system(self, msg: Message, blocks: list[Block], index: int) -> dict[str, Any]:
        notes = msg.extras.get(NAME, {})
        if msg.name is not None:
            self.losses.add(index, "name", detail="a SystemMessage has no source")
        texts = self._texts(blocks, index, "a SystemMessage")
        if len(texts) > 1:
            self.losses.add(index, "content", "approximated", "several text parts joined into one")
        return finish({"content": "\n".join(texts), "type": "SystemMessage"}, notes)

    def _user(self, msg: Message, blocks: list[Block], index: int) -> dict[str, Any]:
        notes = msg.extras.get(NAME, {})
        parts: list[Any] = []
        for block in blocks:
            image = image_out(block, NAME) if isinstance(block, ImageBlock) else None
            if image is not None:
                parts.append(image)
            else:
                parts.extend(self._texts([block], index, "a UserMessage"))
        if msg.role not in ("user", "system"):
            self.losses.add(index, "role", "approximated", f"a {msg.role} message without tool results "
                            "becomes a UserMessage")
        single = len(parts) == 1 and isinstance(parts[0], str) and notes.get("content") != "list"
        content = parts[0] if single else (parts if parts or notes.get("content") == "list" else "")
        source = msg.name or msg.role
        return finish({"content": content, "source": source, "type": "UserMessage"}, notes)

    def _assistant(self, msg: Message, blocks: list[Block], calls: list[ToolCallBlock], index: int) -> None:
        self.flush()
        notes = msg.extras.get(NAME, {})
        thoughts = [b for b in blocks if isinstance(b, ReasoningBlock)]
        for r in thoughts:
            if r.signature or r.redacted or r.data:
                self.losses.add(index, "reasoning", detail="a thought is plain text (no signature or data)")
        rest = [b for b in blocks if not isinstance(b, (ReasoningBlock, ToolCallBlock))]
        texts = self._texts(rest, index, "an AssistantMessage")
        thought = [r.text for r in thoughts]
        if calls and any(texts):
            self.losses.add(index, "text", "approximated", "text beside tool calls goes into thought")
            thought += [t for t in texts if t]
        elif len(texts) > 1:
            self.losses.add(index, "content", "approximated", "several text parts joined into one")
        if len(thoughts) > 1:
            self.losses.add(index, "reasoning", "approximated", "reasoning parts joined in one thought")
        content: Any = [call_out(c, NAME) for c in calls] if calls or notes.get("content") == "list" \
            else "\n".join(texts)
        out = {"content": content, "thought": "\n".join(thought) if thought else None,
               "source": msg.name or "assistant", "type": "AssistantMessage"}
        self.out.append(finish(out, notes))
        self.pending = {c.call_id: (c.name, index) for c in calls}
        self.group = None

    def _results(self, blocks: list[ToolResultBlock], msg: Message, index: int) -> None:
        answered = []
        for block in blocks:
            if id(block) in self.used:  # moved up by a flush meanwhile
                continue
            if block.call_id in self.pending:
                answered.append(self._answer(block, index))
            else:
                self._emit_answers(answered)
                answered = []
                self.losses.add(index, "tool_result", "approximated", f"no call {block.call_id!r} waits "
                                "for this result just before it; rendered as a UserMessage")
                self.used.add(id(block))
                self.flush()
                shown = block.stand_in() if block.__class__ is _Result else stand_in(block)  # type: ignore[attr-defined]
                self.out.append({"content": shown, "source": "tool", "type": "UserMessage"})
        # autogen-core's own result messages stay as they came (a same-format round trip is exact)
        native = msg.source_format == NAME and msg.source_type == "FunctionExecutionResultMessage"
        self._emit_answers(answered, msg.extras.get(NAME, {}) if msg.extras else {}, joins=not native)

    def _answer(self, block: ToolResultBlock, index: int) -> dict[str, Any]:
        name = self.pending.pop(block.call_id)[0]
        self.used.add(id(block))
        if result_text(block)[1]:
            self.losses.add(index, "tool_result.output", "approximated", "a result is one string; "
                            "only its text parts were kept")
        if block.error:
            self.losses.add(index, "tool_result.error", detail="results carry only is_error")
        return result_out(block, name, NAME)

    def _emit_answers(self, answered: list[dict[str, Any]], notes: dict[str, Any] | None = None,
                      joins: bool = True) -> None:
        if not answered:
            return
        if joins and self.group is not None and self.out and self.out[-1] is self.group:
            self.group["content"].extend(answered)
            return
        self.group = finish({"content": answered, "type": "FunctionExecutionResultMessage"}, notes or {})
        self.out.append(self.group)

    def flush(self) -> None:
        """Answer the calls still pending before another message: with their result from further
        on (moved up), or with an error result saying there was none."""
        if not self.pending:
            return
        answered = []
        for call_id, (name, at) in list(self.pending.items()):
            later = [b for b in self.results.get(call_id, ()) if id(b) not in self.used]
            if later:
                answered.append(self._answer(later[0], at))
                self.losses.add(at, "tool_result", "approximated", f"the result of {call_id!r} was moved up "
                                "to answer its call before the next message")
            else:
                self.pending.pop(call_id)
                self.losses.add(at, "tool_result", "approximated", f"call {call_id!r} has no result "
                                "before the next message; an error result says so")
                answered.append({"content": NO_RESULT, "name": name, "call_id": call_id, "is_error": True})
        self._emit_answers(answered)


def _takes(msg: Any) -> bool:
    """Whether :meth:`_Writer.plain` writes a plain message as its canonical one would be: of a source
    message type that is model input (the canonical path looks at no other); a user's or assistant's speaker
    its source (a SystemMessage has none: the canonical path reports it); an id reported as it reports it."""
    return writable(msg, NAME, ids=True, speakers=msg.role in _SOURCED) \
        and msg.source_type not in _NOT_IN_CONTEXT


_SOURCED = frozenset({"user", "assistant"})


def messages_out(messages: list[Message | Plain], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as autogen-core LLM message dicts
    (also used for handoff contexts)."""
    messages = canonical(messages, unless=_takes)
    writer = _Writer(messages, losses)  # type: ignore[arg-type]
    for index, msg in enumerate(messages):
        if msg.__class__ is Plain:
            writer.plain(msg, index)  # type: ignore[arg-type]
        else:
            writer.message(msg, index)  # type: ignore[arg-type]
    return writer.out


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages as autogen-core LLM message dicts, each call answered before the next message."""
    return messages_out(messages, losses)
