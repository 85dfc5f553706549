"""Export of the ``gemini`` format (see :mod:`store.formats.gemini`): canonical messages as
Gemini contents. Native contents are written back as they were; foreign ones keep to the
API's rules: system messages become the one ``system_instruction``, tool results one user turn
after the model turn whose calls they answer (in the calls' order, a missing response
answered with an error), what Gemini has no part for rendered as text (reported).
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..lean import ANY_ROLE, Call, Plain, canonical, writable
from ..model import (
    AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, ErrorBlock, FileBlock, HandoffBlock, ImageBlock,
    Message, ReasoningBlock, RefusalBlock, TextBlock, ToolCallBlock, ToolResultBlock, UsageBlock, VideoBlock,
)
from ._common import Losses, call_text, dump_json, merge_own, parse_data_uri, parse_json, report_extras
from .gemini import LANGUAGE_OUT, LANGUAGES, NAME, b64_out, is_b64, outcome_out

_NOT_IN_GEMINI = ("name", "external_id", "created_at", "model", "usage", "metadata")
_NO_RESULT = "(no result was recorded)"


_merge = partial(merge_own, fmt=NAME)


def _own(msg: Message | Plain) -> dict[str, Any]:
    return msg.extras.get(NAME, {}) if msg.extras else {}


class _Writer:
    def __init__(self, messages: list[Message], losses: Losses) -> None:
        self.losses = losses
        calls = [b for m in messages for b in m.content if b.kind == "tool_call"]
        self.anonymous = {b.call_id for m in messages for b in m.content if b.kind == "tool_call" and (
            b.__class__ is not Call and b.call_id_synthesized or (not b.call_id and m.source_format != NAME))}
        self.names = {b.call_id: b.name for b in calls}  # a response names its function; some results do not

    def part(self, block: Block, index: int, native: bool) -> dict[str, Any] | None:
        own = block.extras.get(NAME, {})
        match block:
            case TextBlock():
                if native or block.text:  # an empty text part is refused by the API; it holds nothing
                    return _merge({"text": block.text}, block.extras)
            case ReasoningBlock():
                return self._reasoning(block, index, native)
            case ImageBlock() | AudioBlock() | VideoBlock() | FileBlock():
                return self._media(block, index)
            case ToolCallBlock():
                return self._call(block, index)
            case ToolResultBlock():
                return self._response(block, index)
            case CodeBlock():
                language = LANGUAGE_OUT.get(block.language or "", block.language)
                if language is not None and language not in LANGUAGES and not native:
                    self.losses.add(index, "code.language", "approximated",
                                    f"Gemini runs Python only: {language!r} sent as LANGUAGE_UNSPECIFIED")
                    language = "LANGUAGE_UNSPECIFIED"
                code = {"code": block.code, **({"language": language} if language is not None else {})}
                return _merge({"executable_code": code}, block.extras, "executable_code")
            case CodeResultBlock():
                result: dict[str, Any] = {}
                outcome = own["outcome"] if "outcome" in own else outcome_out(block.exit_code)
                if outcome is not None:
                    result["outcome"] = outcome
                if block.output or not own.get("no_output"):
                    result["output"] = block.output
                return _merge({"code_execution_result": result}, block.extras, "code_execution_result")
            case DataBlock() if own.get("part") and isinstance(block.data, dict):
                return dict(block.data)
            case DataBlock():
                return self._stand_in(index, "data", dump_json(block.data))
            case RefusalBlock():
                return self._stand_in(index, "refusal", block.text)
            case ErrorBlock():
                return self._stand_in(index, "error", f"[error] {block.message}")
            case HandoffBlock():
                return self._stand_in(index, "handoff", f"[handoff to {block.target}]")
            case UsageBlock():
                self.losses.add(index, "usage", detail="Gemini contents have no usage")
        return None

    def plain_parts(self, msg: Plain, index: int) -> list[dict[str, Any]]:
        """The parts of a plain message (``store.lean``) that :func:`_takes`, as :meth:`part` writes its
        canonical one's, with the same losses (tests/test_lean_load.py holds them to be the same)."""
        content = msg.content
        if content and content[0].__class__ is not Call:  # a tool result
            call_id, error = content[0].call_id, content[0].is_error
            name = msg.name if msg.name is not None else self.names.get(call_id, "")
            resp: dict[str, Any] = {"name": name}
            if call_id not in self.anonymous:
                resp["id"] = call_id
            if not name and msg.name is None:
                self.losses.add(index, "tool_result.name", "approximated", "Gemini responses name their function: sent ''")
            resp["response"] = {"error" if error else "output": msg.text}
            return [{"function_response": resp}]
        parts = [{"text": msg.text}] if msg.text else []  # an empty text part is refused: it holds nothing
        for c in content:
            call: dict[str, Any] = {"name": c.name}  # type: ignore[union-attr]
            if c.call_id not in self.anonymous:
                call["id"] = c.call_id
            arguments = c.parsed()  # type: ignore[union-attr]
            if arguments.__class__ is dict:
                call["args"] = arguments
            elif arguments is not None or c.arguments_raw.strip():  # type: ignore[union-attr]
                self.losses.add(index, "tool_call.arguments", "approximated",
                                f"function_call args must be a JSON object; sent {{}} instead of {c.arguments_raw[:80]!r}")  # type: ignore[union-attr]
                call["args"] = {}
            parts.append({"function_call": call})
        return parts

    def parts(self, msg: Message | Plain, index: int, native: bool) -> list[dict[str, Any]]:
        if msg.__class__ is Plain:
            return self.plain_parts(msg, index)  # type: ignore[arg-type]
        return [p for b in msg.content if (p := self.part(b, index, native))]

    def _stand_in(self, index: int, kind: str, text: str) -> dict[str, Any] | None:
        if not text:  # nothing to keep, and the API refuses an empty text part
            return None
        self.losses.add(index, kind, "approximated", "rendered as text")
        return {"text": text}

    def _reasoning(self, block: ReasoningBlock, index: int, native: bool) -> dict[str, Any] | None:
        if block.redacted:
            self.losses.add(index, "reasoning", detail="redacted reasoning has no Gemini form")
            return None
        if not block.text and block.signature is None and not native:
            return None  # empty: the API refuses an empty text part
        part: dict[str, Any] = {"text": block.text, "thought": True}
        if block.signature is not None and (native or is_b64(block.signature)):
            part["thought_signature"] = block.signature
        elif block.signature is not None:
            self.losses.add(index, "reasoning.signature", detail="not base64, which thought_signature must be")
        return _merge(part, block.extras)

    def _media(self, block: ImageBlock | AudioBlock | VideoBlock | FileBlock, index: int) -> dict[str, Any] | None:
        own = block.extras.get(NAME, {})
        data, media = block.data, block.media_type
        if data is None and block.url and (decoded := parse_data_uri(block.url)):
            media, data = decoded
        if data is not None or own.get("raw") is not None or (NAME in block.extras and not own.get("file")):
            ref: dict[str, Any] = {}
            if data is not None or own.get("raw") is not None:
                ref["data"] = own.get("raw") or b64_out(data or b"", own.get("alphabet"))
            key = "inline_data"
        elif block.url is not None or own.get("file"):
            ref, key = ({"file_uri": block.url} if block.url is not None else {}), "file_data"
        else:
            self.losses.add(index, block.kind, detail="a file id is no Gemini file URI")
            return None
        if media is None and NAME not in block.extras:
            media = mimetypes.guess_type(block.filename or block.url or "")[0] or "application/octet-stream"
            self.losses.add(index, f"{block.kind}.media_type", "approximated", f"Gemini needs one: sent {media}")
        if media is not None:
            ref["mime_type"] = media
        if block.filename is not None:
            ref["display_name"] = block.filename
        return _merge({key: ref}, block.extras, key)

    def _call(self, block: ToolCallBlock, index: int) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        call: dict[str, Any] = {"name": block.name}
        if block.call_id not in self.anonymous:
            call["id"] = block.call_id
        if isinstance(block.arguments, dict):
            call["args"] = block.arguments
        elif not own.get("no_args") and (block.arguments is not None or (block.arguments_raw or "").strip()):
            raw = call_text(block)
            self.losses.add(index, "tool_call.arguments", "approximated",
                            f"function_call args must be a JSON object; sent {{}} instead of {raw[:80]!r}")
            call["args"] = {}
        return _merge({"function_call": call}, block.extras, "function_call")

    def _response(self, block: ToolResultBlock, index: int) -> dict[str, Any]:
        own = block.extras.get(NAME, {})
        resp: dict[str, Any] = {"name": block.name if block.name is not None else self.names.get(block.call_id, "")}
        if block.call_id not in self.anonymous and not own.get("no_id"):
            resp["id"] = block.call_id
        if not resp["name"] and block.name is None:
            self.losses.add(index, "tool_result.name", "approximated", "Gemini responses name their function: sent ''")
        if not own.get("no_response"):
            resp["response"] = self._response_body(block, own, index)
        return _merge({"function_response": resp}, block.extras, "function_response")

    def _response_body(self, block: ToolResultBlock, own: dict[str, Any], index: int) -> dict[str, Any]:
        key = "error" if block.is_error else "output"
        output = block.output
        if not isinstance(output, str):
            texts = [b.text for b in output if isinstance(b, TextBlock)]
            if len(texts) < len(output):
                self.losses.add(index, "tool_result.output", detail="Gemini responses hold JSON, not media")
            output = "\n".join(texts)
        if block.error is not None:
            self.losses.add(index, "tool_result.error", detail="Gemini responses have only the error text")
        if own.get("json") is not None:
            value, failed = parse_json(output) if output else (None, None)
            if failed is None:
                return value if own["json"] == "." else {own["json"]: value}
        return {key: output}

    def results(self, blocks: list[dict[str, Any]], calls: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
        """The responses of a user turn after a model turn with ``calls``: in the calls' order,
        a missing one answered with an error (the API wants every call answered)."""
        responses = [b for b in blocks if "function_response" in b]
        rest = [b for b in blocks if "function_response" not in b]
        ordered: list[dict[str, Any]] = []
        for call in calls:
            match = next((r for r in responses if _answers(r, call)), None)
            if match is None:
                self.losses.add(index, "tool_result", "approximated",
                                f"no response for {call.get('name')!r}: answered with {_NO_RESULT!r}")
                match = {"function_response": {"name": call["name"], "response": {"error": _NO_RESULT},
                                               **({"id": call["id"]} if "id" in call else {})}}
            else:
                responses.remove(match)
            ordered.append(match)
        for stray in responses:  # answers no call of the turn before: the API would refuse it
            self.losses.add(index, "tool_result", "approximated", "answers no function_call before it: as text")
            resp = stray["function_response"]
            rest.append({"text": f"[result of {resp['name']}] {dump_json(resp.get('response'))}"})
        present = [r for r in ordered if any(r is b for b in blocks)]  # not the made-up answers
        if blocks[: len(present)] != present:
            self.losses.add(index, "tool_result", "approximated", "put in the order of the calls, first in the turn")
        return ordered + rest


def _answers(response: dict[str, Any], call: dict[str, Any]) -> bool:
    resp = response["function_response"]
    return resp.get("id") == call.get("id") if "id" in call or "id" in resp else resp["name"] == call["name"]


def _report(msg: Message | Plain, index: int, losses: Losses) -> None:
    if msg.__class__ is not Plain:
        for name in _NOT_IN_GEMINI:
            if getattr(msg, name):
                losses.add(index, name, detail="Gemini contents have no such field")
    else:  # those of these fields a plain message may have
        for name, value in msg.named():
            if value:
                losses.add(index, name, detail="Gemini contents have no such field")
    report_extras(msg, index, losses, NAME)


def _system_out(messages: list[tuple[int, Message]], writer: _Writer, first_chat: int | None) -> Any:
    """The one system_instruction, from every system message in order."""
    parts: list[dict[str, Any]] = []
    for n, (index, msg) in enumerate(messages):
        if n:
            writer.losses.add(index, "role", "approximated", "merged into the one system_instruction")
        elif first_chat is not None and index > first_chat:
            writer.losses.add(index, "role", "approximated", "moved to the system_instruction")
        native = msg.source_format == NAME
        _report(msg, index, writer.losses)
        for block in msg.content:
            part = writer.part(block, index, native)
            if part is not None and (native or part.keys() == {"text"}):
                parts.append(part)
            elif part is not None:
                writer.losses.add(index, block.kind, detail="Gemini's system_instruction holds text only")
        if msg.__class__ is Plain and msg.text:  # a plain system message is its text
            parts.append({"text": msg.text})
    own = _own(messages[0][1])
    if not parts and not any(m.source_format == NAME for _, m in messages):
        return None  # nothing to say, and an empty system_instruction is no use
    if len(messages) == 1 and own.get("content") == "str" and len(parts) == 1 and parts[0].keys() == {"text"}:
        return parts[0]["text"]
    out: dict[str, Any] = {"parts": parts}
    if own.get("system_role") is not None:
        out["role"] = own["system_role"]
    return _merge(out, messages[0][1].extras or {})


def _takes(msg: Any) -> bool:
    """Whether a plain message is written as its canonical one would be (:meth:`_Writer.plain_parts`)."""
    return writable(msg, NAME, texts=ANY_ROLE, own=False, ids=True, speakers=True)  # it ignores source_type


def write(messages: list[Message | Plain], losses: Losses) -> dict[str, Any] | list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as ``{"system_instruction"?, "contents"}``
    (or the bare list they were read from)."""
    messages = canonical(messages, unless=_takes)
    writer = _Writer(messages, losses)
    system = [(i, m) for i, m in enumerate(messages) if m.role == "system"]
    chat = [(i, m) for i, m in enumerate(messages) if m.role != "system"]
    turns: list[_Turn] = []
    for index, msg in chat:
        own, native = _own(msg), msg.source_format == NAME
        _report(msg, index, losses)
        parts = writer.parts(msg, index, native)
        results = not native and msg.role == "tool"
        if turns and (own.get("joined") or (results and turns[-1].results)):
            turns[-1].content["parts"] += parts  # the rest of one Content, or responses to one model turn
        elif parts or native:  # an empty foreign message holds nothing (dropped blocks were reported)
            content = {"role": "model" if msg.role == "assistant" else "user", "parts": parts}
            turns.append(_Turn(_merge(content, msg.extras) if native else content, index, native, results,
                               own.get("role") if native else None))
    contents = _link(turns, writer)
    for turn in turns:  # a Content read without its role (a user's): written so, once linked
        if turn.role == "absent":
            turn.content.pop("role")
        elif turn.role == "null":
            turn.content["role"] = None
    head = _own(messages[0]) if messages else {}
    prompt = _system_out(system, writer, chat[0][0] if chat else None) if system else None
    if head.get("form") == "list" and prompt is None:
        return contents
    out: dict[str, Any] = dict(head.get("request") or {})
    if prompt is not None:
        out["system_instruction"] = prompt
    out["contents"] = contents
    return out


@dataclass
class _Turn:
    """A Content being written; ``index`` is its first canonical message's."""

    content: dict[str, Any]
    index: int
    native: bool  # read from Gemini: written back as it was
    results: bool  # foreign tool responses only
    role: str | None = None  # how a Content read without a role had it: "absent" or "null"


def _link(turns: list[_Turn], writer: _Writer) -> list[dict[str, Any]]:
    """A model turn's calls answered by the next turn, a user one, its responses first in the
    calls' order (the API's rule; a conversation may end with calls pending)."""
    out: list[dict[str, Any]] = []
    for n, turn in enumerate(turns):
        out.append(turn.content)
        calls = [p["function_call"] for p in turn.content["parts"] if "function_call" in p]
        if not calls or turn.content["role"] != "model" or n + 1 == len(turns):
            continue
        after = turns[n + 1]
        if turn.native and after.native:
            continue
        if after.content["role"] != "user":
            after = _Turn({"role": "user", "parts": []}, turn.index, False, True)
            turns.insert(n + 1, after)
        after.content["parts"] = writer.results(after.content["parts"], calls, after.index)
    return out
