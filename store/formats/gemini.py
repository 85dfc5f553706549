"""Google Gemini contents (``google.genai.types.Content``, as ``model_dump(mode="json", exclude_none=True)`` writes it).

Reads ``{"system_instruction": ..., "contents": [...]}`` (other request keys are kept) or a
bare list of ``Content``: ``role`` user/model and parts holding one of text (``thought``
marks reasoning), inline_data, file_data, function_call, function_response,
executable_code or code_execution_result. Part modifiers the canonical block has no field
for (``thought_signature`` beside a call or text, ``video_metadata``, ``media_resolution``)
and unknown keys are kept in ``extras["gemini"]``; a part of another kind (``tool_call``,
a signature-only part) is kept unchanged in a :class:`~store.model.DataBlock`.

Bytes are base64 as the SDK writes them (URL-safe alphabet); standard base64 is read too and
written back as it came. ``function_response.response`` follows the API's convention:
``{"output": ...}`` is the result, ``{"error": ...}`` an error; any other value is kept as
its JSON text. Calls and responses without ``id`` are paired by name and order (the API's
own rule); their ids are made up on import and left out again on export.

function_response parts live in user turns: they become canonical ``tool`` messages on import
and one user turn again on export, the responses in the order of their calls. Gemini contents
have no names, ids, timestamps, model or usage: those are reported dropped.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..errors import SchemaError
from ..lean import Plain, Writable, canonical
from ..model import (
    AudioBlock, Block, CodeBlock, CodeResultBlock, DataBlock, FileBlock, ImageBlock, Message, ReasoningBlock,
    TextBlock, ToolCallBlock, ToolResultBlock, VideoBlock,
)
from ._common import Losses, dump_json, unknown_fields, validate, validate_others

NAME = "gemini"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Blob(_Open):
    data: str | None = None
    mime_type: str | None = None
    display_name: str | None = None


class FileData(_Open):
    file_uri: str | None = None
    mime_type: str | None = None
    display_name: str | None = None


class FunctionCall(_Open):
    name: str
    id: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(_Open):
    name: str
    id: str | None = None
    response: dict[str, Any] | None = None


class ExecutableCode(_Open):
    code: str
    language: str | None = None


class CodeExecutionResult(_Open):
    outcome: str | None = None
    output: str | None = None


class Part(_Open):
    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    inline_data: Blob | None = None
    file_data: FileData | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    executable_code: ExecutableCode | None = None
    code_execution_result: CodeExecutionResult | None = None


class Content(_Open):
    role: Literal["user", "model"]
    parts: list[Part]


class SystemInstruction(_Open):
    role: str | None = None
    parts: list[Part]


class Request(_Open):
    system_instruction: str | SystemInstruction | None = None


CONTENTS = TypeAdapter(list[Content])
REQUEST = TypeAdapter(Request)

# The part fields that say what a part is (the API's ``data`` oneof); a part with none
# or several of them is kept as it is.
_DATA = ("text", "inline_data", "file_data", "function_call", "function_response", "executable_code",
         "code_execution_result")
_OTHER_DATA = frozenset({"tool_call", "tool_response"})
_MEDIA_KINDS = (("image/", ImageBlock), ("audio/", AudioBlock), ("video/", VideoBlock))
LANGUAGES = {"PYTHON": "python"}
LANGUAGE_OUT = {v: k for k, v in LANGUAGES.items()}
_OUTCOMES = {"OUTCOME_OK": 0, "OUTCOME_FAILED": 1}
_RESPONSE_KEYS = {"output": False, "error": True}  # response key -> is_error (the API's convention)


# --- base64 --------------------------------------------------------------------------

def _b64_in(text: str) -> tuple[bytes | None, str | None]:
    """Bytes of base64 ``text`` and its alphabet (None: URL-safe, the SDK's), when encoding
    them again gives ``text`` back exactly; ``(None, None)`` otherwise."""
    for alphabet, altchars in ((None, b"-_"), ("standard", b"+/")):
        try:
            data = base64.b64decode(text, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        if base64.b64encode(data, altchars=altchars).decode("ascii") == text:
            return data, alphabet
    return None, None


def b64_out(data: bytes, alphabet: str | None = None) -> str:
    return base64.b64encode(data, altchars=b"+/" if alphabet == "standard" else b"-_").decode("ascii")


def is_b64(text: str) -> bool:
    """Whether the SDK's bytes field takes ``text`` (a signature from another format)."""
    try:
        base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def outcome_out(exit_code: int | None) -> str | None:
    return None if exit_code is None else ("OUTCOME_OK" if exit_code == 0 else "OUTCOME_FAILED")


# --- to canonical --------------------------------------------------------------------

def _note(**shape: Any) -> dict[str, Any]:
    kept = {k: v for k, v in shape.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


def _media_in(ref: Blob | FileData, fields: dict[str, Any] | None, inline: bool) -> Block:
    kind = next((cls for prefix, cls in _MEDIA_KINDS if (ref.mime_type or "").startswith(prefix)), FileBlock)
    media: dict[str, Any] = {"media_type": ref.mime_type, "filename": ref.display_name}
    notes: dict[str, Any] = {"fields": fields, "inner": unknown_fields(ref)}
    if isinstance(ref, Blob) and ref.data is not None:
        media["data"], notes["alphabet"] = _b64_in(ref.data)
        if media["data"] is None:
            notes["raw"] = ref.data  # not exact base64: kept as the text it was
    elif isinstance(ref, FileData):
        media["url"] = ref.file_uri
    return kind(**media, extras=_note(**notes, file=not inline or None))


class _Reader:
    """Converts one conversation; pairs responses without id with calls by name and order."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str]] = []  # (call id, name) of unanswered calls, oldest first

    def part(self, part: Part, index: int, pos: int) -> Block:
        given = part.model_fields_set | set(part.__pydantic_extra__ or ())
        present = [k for k in _DATA if getattr(part, k) is not None]
        if len(present) != 1 or given & _OTHER_DATA:
            return DataBlock(data=part.model_dump(mode="json", exclude_unset=True), extras=_note(part=True))
        key = present[0]
        reasoning = key == "text" and part.thought is True
        skip = {key, "thought", "thought_signature"} if reasoning else {key}
        dumped = part.model_dump(mode="json", include=given - skip) if given - skip else None
        fields = {k: dumped[k] if k in dumped else part.__pydantic_extra__[k] for k in dumped} if dumped else None
        if reasoning:
            return ReasoningBlock(text=part.text or "", signature=part.thought_signature, extras=_note(fields=fields))
        match key:
            case "text":
                return TextBlock(text=part.text or "", extras=_note(fields=fields))
            case "inline_data" | "file_data":
                return _media_in(getattr(part, key), fields, key == "inline_data")
            case "function_call":
                return self.call(part.function_call, fields, index, pos)
            case "function_response":
                return self.response(part.function_response, fields, index, pos)
            case "executable_code":
                code = part.executable_code
                return CodeBlock(code=code.code, language=LANGUAGES.get(code.language or "", code.language),
                                 extras=_note(fields=fields, inner=unknown_fields(code)))
        result = part.code_execution_result
        exit_code = _OUTCOMES.get(result.outcome or "")
        kept_outcome = result.outcome if outcome_out(exit_code) != result.outcome else None
        return CodeResultBlock(output=result.output or "", exit_code=exit_code, extras=_note(
            fields=fields, inner=unknown_fields(result), outcome=kept_outcome, no_output=result.output is None))

    def call(self, call: FunctionCall, fields: Any, index: int, pos: int) -> ToolCallBlock:
        call_id = call.id if call.id is not None else f"gemini_call_{index}_{pos}"
        self.pending.append((call_id, call.name))
        return ToolCallBlock(call_id=call_id, name=call.name, arguments=call.args, call_id_synthesized=call.id is None,
                             extras=_note(fields=fields, inner=unknown_fields(call), no_args=call.args is None))

    def response(self, resp: FunctionResponse, fields: Any, index: int, pos: int) -> ToolResultBlock:
        if resp.id is not None:
            call = next((c for c in self.pending if c[0] == resp.id), None)
        else:  # the API pairs responses without id by name, in order
            call = next((c for c in self.pending if c[1] == resp.name), self.pending[0] if self.pending else None)
        if call is not None:
            self.pending.remove(call)
        call_id = resp.id if resp.id is not None else (call[0] if call else f"gemini_result_{index}_{pos}")
        body = resp.response
        key = next(iter(body)) if isinstance(body, dict) and len(body) == 1 else None
        value = body[key] if key in _RESPONSE_KEYS else body
        if isinstance(value, str):
            output, as_json = value, None
        else:  # a JSON value is kept as its text: every format can hold text
            output, as_json = ("" if value is None else dump_json(value)), (key if key in _RESPONSE_KEYS else ".")
        return ToolResultBlock(call_id=call_id, name=resp.name, output=output, is_error=_RESPONSE_KEYS.get(key, False),
                               extras=_note(fields=fields, inner=unknown_fields(resp), no_id=resp.id is None,
                                            json=as_json, no_response=body is None))

    def content(self, c: Content, index: int) -> list[Message]:
        """One Content as canonical messages: a user turn's function responses go into tool
        messages of their own (each run after the first marked ``joined``)."""
        blocks = [self.part(p, index, pos) for pos, p in enumerate(c.parts)]
        head = _note(fields=unknown_fields(c))
        if c.role == "model":
            return [Message(role="assistant", content=blocks, source_format=NAME, extras=head)]
        out: list[Message] = []
        for results, run in groupby(blocks, key=lambda b: isinstance(b, ToolResultBlock)):
            out.append(Message(role="tool" if results else "user", source_role="user" if results else None,
                               content=list(run), source_format=NAME, extras=_note(joined=True) if out else head))
        return out or [Message(role="user", source_format=NAME, extras=head)]


def _system_in(system: str | SystemInstruction) -> Message:
    if isinstance(system, str):
        return Message(role="system", content=[TextBlock(text=system)], source_format=NAME, extras=_note(content="str"))
    reader = _Reader()
    blocks = [reader.part(p, 0, pos) for pos, p in enumerate(system.parts)]
    return Message(role="system", content=blocks, source_format=NAME,
                   extras=_note(fields=unknown_fields(system, skip="role"), system_role=system.role))


def to_canonical(data: Any) -> list[Message]:
    """Validate Gemini contents (``{"system_instruction"?, "contents", ...}`` or a bare list)
    and convert them to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each content of one text
    part (``{"role", "parts": [{"text"}]}``), for a writer that takes them (``formats.convert``): read
    from the item itself, whose plain types are its validation. A property test holds it to
    :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


_PLAIN_ROLES = {"user": "user", "model": "assistant"}


def _plain_text(c: Any) -> Plain | None:
    if c.__class__ is dict and len(c) == 2 and (parts := c.get("parts")).__class__ is list and len(parts) == 1 \
            and (part := parts[0]).__class__ is dict and len(part) == 1 and (text := part.get("text")).__class__ is str \
            and (role := _PLAIN_ROLES.get(c.get("role"))) is not None:  # type: ignore[arg-type]
        return Plain(role, text, NAME)
    return None


def _read(data: Any, lean: bool) -> list[Writable]:
    if isinstance(data, dict) and isinstance(data.get("contents"), list):
        request = validate(REQUEST, {k: v for k, v in data.items() if k != "contents"}, NAME)
        contents = data["contents"]
    elif isinstance(data, list):
        request, contents = None, data
    else:
        raise SchemaError(NAME, [(None, "", f"expected a list of contents or an object with a contents list, "
                                            f"got {type(data).__name__}")])
    plain = [_plain_text(c) if c.__class__ is dict and c.get("role").__class__ is str else None for c in contents] \
        if lean else [None] * len(contents)
    parsed = iter(validate_others(CONTENTS, contents, plain, NAME))
    out: list[Writable] = [_system_in(request.system_instruction)] \
        if request and request.system_instruction is not None else []
    reader = _Reader()
    for index, p in enumerate(plain):
        out.extend(reader.content(next(parsed), index) if p is None else (p,))
    if out and (request is None or request.model_extra):
        wrapper = {"form": "list"} if request is None else {"request": request.model_extra}
        out[0] = canonical(out[:1])[0]
        out[0].extras.setdefault(NAME, {}).update(wrapper)  # type: ignore[union-attr]
    return out


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` of a bare list, chunk by chunk: one reader spans the chunks (a
    response pairs with a call in an earlier chunk); errors name the index in the whole list."""
    reader, base = _Reader(), 0
    for chunk in chunks:
        parsed = validate(CONTENTS, chunk, NAME, first=base)
        out = [m for i, c in enumerate(parsed) for m in reader.content(c, base + i)]
        if base == 0 and out:
            out[0].extras.setdefault(NAME, {})["form"] = "list"
        base += len(chunk)
        yield out


_PART_KEYS = frozenset({*Part.model_fields, *_OTHER_DATA, "video_metadata", "media_resolution", "part_metadata"})


def _looks_like_content(c: Any) -> bool:
    return (isinstance(c, dict) and c.keys() <= {"role", "parts"} and c.get("role") in ("user", "model")
            and isinstance(c.get("parts"), list)
            and all(isinstance(p, dict) and p and p.keys() <= _PART_KEYS for p in c["parts"]))


def looks_like(data: Any) -> bool:
    """``{role, parts}`` items only (no other format has ``parts`` without more keys), Gemini's
    roles and part keys; or an object with a ``contents`` list of them."""
    contents = data.get("contents") if isinstance(data, dict) and "messages" not in data else data
    return isinstance(contents, list) and bool(contents or isinstance(data, dict)) and all(
        _looks_like_content(c) for c in contents)


# --- from canonical --------------------------------------------------------------------


TAKES_PLAIN = True


def from_canonical(messages: list[Message], losses: Losses) -> dict[str, Any] | list[dict[str, Any]]:
    """Canonical messages as ``{"system_instruction"?, "contents"}`` (or the bare list they were read from)."""
    from ._gemini_write import write  # the writer imports the helpers above

    return write(messages, losses)
