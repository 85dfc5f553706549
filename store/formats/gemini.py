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

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..lean import Call, Plain, Writable
from ..model import Message
from ._common import Losses, dump_json, made, note_first, unknown_keys, validate, validate_others

NAME = "gemini"


_OPEN = ConfigDict(extra="allow")
"""The SDK's types allow keys they do not declare: kept (``extras["gemini"]["fields"]``)."""

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# a part (see the Anthropic reader).


@with_config(_OPEN)
class Blob(TypedDict, total=False):
    data: str | None
    mime_type: str | None
    display_name: str | None


@with_config(_OPEN)
class FileData(TypedDict, total=False):
    file_uri: str | None
    mime_type: str | None
    display_name: str | None


@with_config(_OPEN)
class FunctionCall(TypedDict):
    name: str
    id: NotRequired[str | None]
    args: NotRequired[dict[str, Any] | None]


@with_config(_OPEN)
class FunctionResponse(TypedDict):
    name: str
    id: NotRequired[str | None]
    response: NotRequired[dict[str, Any] | None]


@with_config(_OPEN)
class ExecutableCode(TypedDict):
    code: str
    language: NotRequired[str | None]


@with_config(_OPEN)
class CodeExecutionResult(TypedDict, total=False):
    outcome: str | None
    output: str | None


@with_config(_OPEN)
class Part(TypedDict, total=False):
    text: str | None
    thought: bool | None
    thought_signature: str | None
    inline_data: Blob | None
    file_data: FileData | None
    function_call: FunctionCall | None
    function_response: FunctionResponse | None
    executable_code: ExecutableCode | None
    code_execution_result: CodeExecutionResult | None


@with_config(_OPEN)
class Content(TypedDict):
    role: NotRequired[Literal["user", "model"] | None]  # google-genai: "can be empty" (a user's, then)
    parts: list[Part]


@with_config(_OPEN)
class SystemInstruction(TypedDict):
    role: NotRequired[str | None]
    parts: list[Part]


@with_config(_OPEN)
class Request(TypedDict, total=False):
    system_instruction: str | SystemInstruction | None


def _keys(model: type) -> frozenset[str]:
    return frozenset(model.__annotations__)


_BLOB, _FILE, _CALL, _RESPONSE = _keys(Blob), _keys(FileData), _keys(FunctionCall), _keys(FunctionResponse)
_CODE, _CODE_RESULT, _CONTENT, _SYSTEM = _keys(ExecutableCode), _keys(CodeExecutionResult), _keys(Content), \
    _keys(SystemInstruction)


CONTENTS = TypeAdapter(list[Content])
REQUEST = TypeAdapter(Request)

# The part fields that say what a part is (the API's ``data`` oneof); a part with none
# or several of them is kept as it is.
_DATA = ("text", "inline_data", "file_data", "function_call", "function_response", "executable_code",
         "code_execution_result")
_OTHER_DATA = frozenset({"tool_call", "tool_response"})
_MEDIA_KINDS = (("image/", "image"), ("audio/", "audio"), ("video/", "video"))
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


def _media_in(ref: dict[str, Any], fields: dict[str, Any] | None, inline: bool) -> dict[str, Any]:
    mime_type = ref.get("mime_type")
    kind = next((k for prefix, k in _MEDIA_KINDS if (mime_type or "").startswith(prefix)), "file")
    media: dict[str, Any] = {"kind": kind, "media_type": mime_type, "filename": ref.get("display_name")}
    notes: dict[str, Any] = {"fields": fields, "inner": unknown_keys(ref, _BLOB if inline else _FILE)}
    if inline and (data := ref.get("data")) is not None:
        media["data"], notes["alphabet"] = _b64_in(data)
        if media["data"] is None:
            notes["raw"] = data  # not exact base64: kept as the text it was
    elif not inline:
        media["url"] = ref.get("file_uri")
    media["extras"] = _note(**notes, file=not inline or None)
    return media


def _is_result(block: dict[str, Any]) -> bool:
    return block["kind"] == "tool_result"


class _Reader:
    """Converts one conversation, into canonical fields (validated in one call, ``made``); pairs responses
    without id with calls by name and order."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str]] = []  # (call id, name) of unanswered calls, oldest first

    def part(self, part: dict[str, Any], index: int, pos: int) -> dict[str, Any]:
        present = [k for k in _DATA if part.get(k) is not None]
        if len(present) != 1 or not _OTHER_DATA.isdisjoint(part):
            return {"kind": "data", "data": part, "extras": _note(part=True)}
        key = present[0]
        reasoning = key == "text" and part.get("thought") is True
        skip = _REASONING_SKIP if reasoning else (key,)
        others = len(part) > len(skip) or reasoning
        fields = {k: v for k, v in part.items() if k not in skip} if others else None
        if reasoning:
            return {"kind": "reasoning", "text": part["text"] or "",
                    "signature": part.get("thought_signature"),
                    "extras": _note(fields=fields or None)}
        return _PART_IN[key](self, part[key], fields or None, index, pos)

    def text(self, text: str, fields: Any, index: int, pos: int) -> dict[str, Any]:
        return {"kind": "text", "text": text or "", "extras": _note(fields=fields)}

    def inline_data(self, ref: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return _media_in(ref, fields, True)

    def file_data(self, ref: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        return _media_in(ref, fields, False)

    def code(self, code: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        language = code.get("language")
        return {"kind": "code", "code": code["code"], "language": LANGUAGES.get(language or "", language),
                "extras": _note(fields=fields, inner=unknown_keys(code, _CODE))}

    def code_result(self, result: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        outcome, output = result.get("outcome"), result.get("output")
        exit_code = _OUTCOMES.get(outcome or "")
        kept_outcome = outcome if outcome_out(exit_code) != outcome else None
        return {"kind": "code_result", "output": output or "", "exit_code": exit_code, "extras": _note(
            fields=fields, inner=unknown_keys(result, _CODE_RESULT), outcome=kept_outcome,
            no_output=output is None)}

    def call(self, call: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        given, name, args = call.get("id"), call["name"], call.get("args")
        call_id = given if given is not None else f"gemini_call_{index}_{pos}"
        self.pending.append((call_id, name))
        return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": args,
                "call_id_synthesized": given is None,
                "extras": _note(fields=fields, inner=unknown_keys(call, _CALL), no_args=args is None)}

    def response(self, resp: dict[str, Any], fields: Any, index: int, pos: int) -> dict[str, Any]:
        given, name = resp.get("id"), resp["name"]
        if given is not None:
            call = next((c for c in self.pending if c[0] == given), None)
        else:  # the API pairs responses without id by name, in order
            call = next((c for c in self.pending if c[1] == name), self.pending[0] if self.pending else None)
        if call is not None:
            self.pending.remove(call)
        call_id = given if given is not None else (call[0] if call else f"gemini_result_{index}_{pos}")
        body = resp.get("response")
        key = next(iter(body)) if isinstance(body, dict) and len(body) == 1 else None
        value = body[key] if key in _RESPONSE_KEYS else body
        if isinstance(value, str):
            output, as_json = value, None
        else:  # a JSON value is kept as its text: every format can hold text
            output, as_json = ("" if value is None else dump_json(value)), (key if key in _RESPONSE_KEYS else ".")
        return {"kind": "tool_result", "call_id": call_id, "name": name, "output": output,
                "is_error": _RESPONSE_KEYS.get(key, False),  # type: ignore[arg-type]
                "extras": _note(fields=fields, inner=unknown_keys(resp, _RESPONSE), no_id=given is None,
                                json=as_json, no_response=body is None)}

    def content(self, c: dict[str, Any], index: int) -> list[dict[str, Any]]:
        """One Content as canonical messages' fields: a user turn's function responses go into tool
        messages of their own (each run after the first marked ``joined``)."""
        blocks = [self.part(p, index, pos) for pos, p in enumerate(c["parts"])]
        role = c.get("role")
        head = _note(fields=unknown_keys(c, _CONTENT), role=None if role is not None else "null" if "role" in c
                     else "absent")
        if role == "model":
            return [{"role": "assistant", "content": blocks, "source_format": NAME, "extras": head}]
        out: list[dict[str, Any]] = []
        for results, run in groupby(blocks, key=_is_result):
            out.append({"role": "tool" if results else "user", "source_role": "user" if results else None,
                        "content": list(run), "source_format": NAME,
                        "extras": _note(joined=True) if out else head})
        return out or [{"role": "user", "source_format": NAME, "extras": head}]


_PART_IN = {"text": _Reader.text, "inline_data": _Reader.inline_data, "file_data": _Reader.file_data,
            "function_call": _Reader.call, "function_response": _Reader.response,
            "executable_code": _Reader.code, "code_execution_result": _Reader.code_result}
"""A part's canonical block by its one data key (``_DATA``)."""
_REASONING_SKIP = ("text", "thought", "thought_signature")


def _system_in(system: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(system, str):
        return {"role": "system", "content": [{"kind": "text", "text": system}], "source_format": NAME,
                "extras": _note(content="str")}
    reader = _Reader()
    blocks = [reader.part(p, 0, pos) for pos, p in enumerate(system["parts"])]
    return {"role": "system", "content": blocks, "source_format": NAME,
            "extras": _note(fields=unknown_keys(system, _SYSTEM, skip="role"),
                            system_role=system.get("role"))}


def to_canonical(data: Any) -> list[Message]:
    """Validate Gemini contents (``{"system_instruction"?, "contents", ...}`` or a bare list)
    and convert them to canonical messages."""
    return _read(data, lean=False)  # type: ignore[return-value]


def to_writable(data: Any) -> list[Writable]:
    """:func:`to_canonical`, with a :class:`~store.lean.Plain` standing in for each content of one text
    part (``{"role", "parts": [{"text"}]}``) or of a model's calls (``{"function_call": {"name", "id",
    "args"}}`` parts, after a text part or not), for a writer that takes them (``formats.convert``): read
    from the item itself, whose plain types are its validation. A property test holds it to
    :func:`to_canonical` (tests/test_lean_read.py)."""
    return _read(data, lean=True)


_PLAIN_ROLES = {"user": "user", "model": "assistant"}


def _plain_text(c: Any) -> Plain | None:
    """A content of one text part, or a model's function calls (each of a name, an id and an object of
    arguments) after a text part or not, as its message; None for any other."""
    if c.__class__ is not dict or len(c) != 2 or (parts := c.get("parts")).__class__ is not list or not parts \
            or (part := parts[0]).__class__ is not dict or len(part) != 1:
        return None
    text = part.get("text")
    if len(parts) == 1 and text.__class__ is str and (role := _PLAIN_ROLES.get(c.get("role"))) is not None:  # type: ignore[arg-type]
        return Plain(role, text, NAME)
    if c.get("role") != "model" or text is not None and text.__class__ is not str:
        return None
    calls = []
    for part in parts[text is not None:]:
        if part.__class__ is not dict or len(part) != 1 or (call := part.get("function_call")).__class__ is not dict \
                or call.keys() != _PLAIN_CALL or (name := call["name"]).__class__ is not str \
                or (call_id := call["id"]).__class__ is not str or (args := call["args"]).__class__ is not dict:
            return None
        calls.append(Call(call_id, name, None, arguments=args))
    return Plain("assistant", text, NAME, tuple(calls)) if calls else None


_PLAIN_CALL = {"name", "id", "args"}


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
    system = None if request is None else request.get("system_instruction")
    out: list[Any] = [] if system is None else [_system_in(system)]
    reader = _Reader()
    for index, p in enumerate(plain):
        if p is None:
            out += reader.content(next(parsed), index)
        else:
            if p.content:  # calls waiting for a response, as the reader notes them
                reader.pending.extend((call.call_id, call.name) for call in p.content)  # type: ignore[union-attr]
            out.append(p)
    others = None if request is None else {k: v for k, v in request.items() if k != "system_instruction"}
    if out and (request is None or others):
        note_first(out, NAME, {"form": "list"} if request is None else {"request": others})
    return made(out)


def to_canonical_stream(chunks: Iterable[list[Any]]) -> Iterator[list[Message]]:
    """:func:`to_canonical` of a bare list, chunk by chunk: one reader spans the chunks (a
    response pairs with a call in an earlier chunk); errors name the index in the whole list."""
    reader, base = _Reader(), 0
    for chunk in chunks:
        parsed = validate(CONTENTS, chunk, NAME, first=base)
        out = [m for i, c in enumerate(parsed) for m in reader.content(c, base + i)]
        if base == 0 and out:
            note_first(out, NAME, {"form": "list"})
        base += len(chunk)
        yield made(out)


_PART_KEYS = frozenset({*Part.__annotations__, *_OTHER_DATA, "video_metadata", "media_resolution",
                        "part_metadata"})


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
