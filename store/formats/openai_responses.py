"""OpenAI Responses API input items (``openai.types.responses.ResponseInputItemParam``).

The flat item list that ``client.responses.create(input=[...])`` takes and that the
OpenAI Agents SDK keeps in its Sessions (``agents.items.TResponseInputItem``): easy and
typed messages (input_text/input_image/input_file/input_audio parts; assistant
output_text/refusal parts), ``function_call`` / ``function_call_output``,
``custom_tool_call`` / ``custom_tool_call_output``, ``reasoning``, and every other item
type (web_search_call, computer_call, item_reference, ...).

Import: the consecutive model-side items of a turn (reasoning, assistant messages,
calls, other tool items) become ONE canonical assistant message; each call output
becomes a ``tool`` message; a user/system/developer message stays one message. Item
types with no canonical meaning are kept whole as a :class:`DataBlock`. What the
canonical fields do not hold (ids, status, annotations, ``detail``, item boundaries,
string-or-list content) is kept in ``extras["openai-responses"]``, so a same-format
round trip is exact.

Export (see ``_openai_responses_write``): calls and their outputs as items, outputs
moved after their call, reasoning before the output it belongs to. Items have no
extension field, so what they cannot express is approximated or dropped (reported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import SchemaError
from ..model import Message
from ._common import (Losses, b64decode_exact, made, message_list, parse_data_uri, parse_json, undeclared,
                      validate)

NAME = "openai-responses"


_OPEN = ConfigDict(extra="allow")

# The source models are TypedDicts: validated in pydantic-core, they are dicts, read without a model object
# an item (see the Anthropic reader); canonical blocks and messages are fields, validated in one call.


# --- content parts ----------------------------------------------------------------


@with_config(_OPEN)
class InputText(TypedDict):
    type: Literal["input_text"]
    text: str


@with_config(_OPEN)
class OutputText(TypedDict):
    type: Literal["output_text"]
    text: str


@with_config(_OPEN)
class Refusal(TypedDict):
    type: Literal["refusal"]
    refusal: str


@with_config(_OPEN)
class InputImage(TypedDict):
    type: Literal["input_image"]
    image_url: NotRequired[str | None]
    file_id: NotRequired[str | None]


@with_config(_OPEN)
class InputFile(TypedDict):
    type: Literal["input_file"]
    file_data: NotRequired[str | None]
    file_id: NotRequired[str | None]
    file_url: NotRequired[str | None]
    filename: NotRequired[str | None]


@with_config(_OPEN)
class AudioData(TypedDict):
    data: str
    format: str


@with_config(_OPEN)
class InputAudio(TypedDict):
    """Not in the openai SDK's message content union, but the Agents SDK reads and writes it."""

    type: Literal["input_audio"]
    input_audio: AudioData


Part = Annotated[
    Union[InputText, OutputText, Refusal, InputImage, InputFile, InputAudio], Field(discriminator="type"),
]
ResultPart = Annotated[Union[InputText, InputImage, InputFile], Field(discriminator="type")]


# --- items --------------------------------------------------------------------------


@with_config(_OPEN)
class MessageItem(TypedDict):
    """Easy (``type`` absent), input and assistant output messages: one model, told apart by role."""

    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[Part]  # type: ignore[valid-type]
    type: NotRequired[Literal["message"] | None]


@with_config(_OPEN)
class FunctionCall(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


@with_config(_OPEN)
class CustomCall(TypedDict):
    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str


@with_config(_OPEN)
class CallOutput(TypedDict):
    type: Literal["function_call_output", "custom_tool_call_output"]
    call_id: str
    output: str | list[ResultPart]  # type: ignore[valid-type]
    name: NotRequired[str | None]


@with_config(_OPEN)
class SummaryText(TypedDict):
    type: Literal["summary_text"]
    text: str


@with_config(_OPEN)
class ReasoningText(TypedDict):
    type: Literal["reasoning_text"]
    text: str


@with_config(_OPEN)
class Reasoning(TypedDict):
    type: Literal["reasoning"]
    summary: list[SummaryText]
    content: NotRequired[list[ReasoningText] | None]
    encrypted_content: NotRequired[str | None]


@with_config(_OPEN)
class ItemReference(TypedDict):
    type: NotRequired[Literal["item_reference"] | None]
    id: str


@with_config(_OPEN)
class OtherItem(TypedDict):
    """Any other item type (web_search_call, computer_call, mcp_call, ...): kept whole."""

    type: str


_TYPED: dict[str, str] = {
    "message": "message", "function_call": "function_call", "custom_tool_call": "custom_tool_call",
    "function_call_output": "output", "custom_tool_call_output": "output", "reasoning": "reasoning",
    "item_reference": "item_reference",
}


def _tag(item: Any) -> str:
    if not isinstance(item, dict):
        return "other"  # refused before validation (to_canonical), so never reached
    kind = item.get("type")
    if kind is None:  # an easy message, or an item reference (whose ``type`` is optional)
        return "message" if "role" in item or "content" in item else "item_reference"
    return _TYPED.get(kind, "other") if isinstance(kind, str) else "other"


Item = Annotated[
    Union[
        Annotated[MessageItem, Tag("message")],
        Annotated[FunctionCall, Tag("function_call")],
        Annotated[CustomCall, Tag("custom_tool_call")],
        Annotated[CallOutput, Tag("output")],
        Annotated[Reasoning, Tag("reasoning")],
        Annotated[ItemReference, Tag("item_reference")],
        Annotated[OtherItem, Tag("other")],
    ],
    Discriminator(_tag),
]
ITEMS = TypeAdapter(list[Item])

FAKE_ID = "__fake_id__"
"""The Agents SDK's placeholder item id (``agents.models.fake_id.FAKE_RESPONSES_ID``), which it
strips before sending: written where the SDK types require an id that convstore does not have."""

DEFAULTS: dict[str, dict[str, Any]] = {"output_text": {"annotations": []}, "input_image": {"detail": "auto"}}
"""Keys the SDK types require that the canonical model has no field for: written with these
values unless the block came from this format (then its own ``fields`` say what was there)."""

TEXT_TYPE = {"input": "input_text", "output": "output_text"}
"""The part type of a text block where nothing else is said: input parts, except in assistant output."""

AUDIO_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}

_MAPPED: dict[str, frozenset[str]] = {
    "input_text": frozenset({"type", "text"}), "output_text": frozenset({"type", "text"}),
    "refusal": frozenset({"type", "refusal"}), "input_image": frozenset({"type", "image_url", "file_id"}),
    "input_file": frozenset({"type", "file_data", "file_id", "file_url", "filename"}),
    "input_audio": frozenset({"type", "input_audio"}), "message": frozenset({"role", "content"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "custom_tool_call": frozenset({"type", "call_id", "name", "input"}),
    "output": frozenset({"type", "call_id", "output"}),
    "reasoning": frozenset({"type", "summary", "content", "encrypted_content"}),
}
"""Keys each part type and item kind maps to canonical fields; every other key is kept as given
(``fields``)."""


def _rest(value: dict[str, Any], kind: str) -> dict[str, Any]:
    """The keys of ``value`` that no canonical field holds, as they were given."""
    return undeclared(value, _MAPPED[kind]) or {}


def _own(**notes: Any) -> dict[str, Any]:
    """The ``extras["openai-responses"]`` entry from notes, empty ones left out (an empty
    ``fields`` is kept where it says that a required key was absent)."""
    kept = {k: v for k, v in notes.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


def _part_notes(part: dict[str, Any], context: str, **more: Any) -> dict[str, Any]:
    kind = part["type"]
    rest = _rest(part, kind)
    fields = rest if rest or kind in DEFAULTS else None
    text_type = kind if kind in TEXT_TYPE.values() and kind != TEXT_TYPE[context] else None
    return _own(fields=fields, type=text_type, **more)


def _text_in(part: dict[str, Any], context: str) -> dict[str, Any]:
    return {"kind": "text", "text": part["text"], "extras": _part_notes(part, context)}


def _refusal_in(part: dict[str, Any], context: str) -> dict[str, Any]:
    return {"kind": "refusal", "text": part["refusal"], "extras": _part_notes(part, context)}


def _decoded(value: str | None) -> tuple[str, bytes] | None:
    """Media type and bytes of an exact data URI that names its type (else the value is kept as given)."""
    decoded = parse_data_uri(value) if value else None
    return (decoded[0], decoded[1]) if decoded and decoded[0] else None


def _image_in(part: dict[str, Any], context: str) -> dict[str, Any]:
    url = part.get("image_url")
    decoded = _decoded(url)
    block = {"kind": "image", "file_id": part.get("file_id"), "extras": _part_notes(part, context)}
    if decoded is not None:
        return {**block, "media_type": decoded[0], "data": decoded[1]}
    return {**block, "url": url}


def _file_in(part: dict[str, Any], context: str) -> dict[str, Any]:
    file_data = part.get("file_data")
    decoded = _decoded(file_data)
    # file_data that is not an exact data URI (bare base64, say) is kept as given
    raw = file_data if file_data is not None and decoded is None else None
    return {"kind": "file", "url": part.get("file_url"), "file_id": part.get("file_id"),
            "filename": part.get("filename"), "media_type": decoded[0] if decoded else None,
            "data": decoded[1] if decoded else None, "extras": _part_notes(part, context, file_data=raw)}


def _audio_in(part: dict[str, Any], context: str) -> dict[str, Any]:
    audio = part["input_audio"]
    data = b64decode_exact(audio["data"])
    media_type = AUDIO_MEDIA_TYPES.get(audio["format"])
    exact = data is not None and media_type is not None and audio.keys() <= _AUDIO_KEYS
    raw = None if exact else audio
    return {"kind": "audio", "data": data if exact else None, "media_type": media_type if exact else None,
            "extras": _part_notes(part, context, audio=raw or True)}


_AUDIO_KEYS = frozenset(AudioData.__annotations__)
_PARTS_IN: dict[str, Callable[[Any, str], dict[str, Any]]] = {
    "input_text": _text_in, "output_text": _text_in, "refusal": _refusal_in, "input_image": _image_in,
    "input_file": _file_in, "input_audio": _audio_in,
}


def parts_in(parts: list[Any], context: str) -> list[dict[str, Any]]:
    return [_PARTS_IN[part["type"]](part, context) for part in parts]


def _with_notes(block: dict[str, Any], **notes: Any) -> dict[str, Any]:
    extras = block.get("extras") or {}
    own = {**extras.get(NAME, {}), **_own(**notes).get(NAME, {})}
    return {**block, "extras": {**extras, NAME: own}}


class _Reader:
    """Converts one batch into canonical fields (validated in one call, ``made``); remembers call names and
    kinds for the outputs that follow."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.calls: dict[str, tuple[str, bool]] = {}
        """call id -> (tool name, custom tool call)."""

    def turn(self) -> list[Any]:
        """The blocks of the assistant turn in progress (a new one after anything else)."""
        last = self.messages[-1] if self.messages else None
        if last.__class__ is not dict or last["role"] != "assistant":  # type: ignore[index]
            last = {"role": "assistant", "source_format": NAME, "content": []}
            self.messages.append(last)
        return last["content"]  # type: ignore[index, no-any-return]

    def item(self, item: dict[str, Any]) -> None:
        kind = _tag(item)
        if kind == "message":
            if item["role"] == "assistant":
                turn = self.turn()
                turn.extend(self._assistant(item, first=not turn))
            else:
                self._message(item)
        elif kind == "function_call" or kind == "custom_tool_call":
            self.turn().append(self._call(item))
        elif kind == "output":
            self.messages.append({"role": "tool", "source_format": NAME, "content": [self._output(item)]})
        elif kind == "reasoning":
            self.turn().append(self._reasoning(item))
        else:  # an item reference or another item: no canonical meaning, the item itself, in the turn
            self.turn().append({"kind": "data", "data": item, "extras": _own(item=True)})

    def _message(self, item: dict[str, Any]) -> None:
        content, source = item["content"], item["role"]
        blocks = [{"kind": "text", "text": content}] if isinstance(content, str) \
            else parts_in(content, "input")
        role = "system" if source == "developer" else source
        form = "list" if isinstance(content, list) else None
        self.messages.append({
            "role": role, "source_role": source if source != role else None, "content": blocks,
            "source_format": NAME, "extras": _own(fields=_rest(item, "message") or None, content=form),
        })

    @staticmethod
    def _assistant(item: dict[str, Any], first: bool) -> list[dict[str, Any]]:
        """An assistant message's parts; the first one marks where the item starts and holds its keys (but
        an easy message's text that starts its turn: the writer writes a text without notes so)."""
        content = item["content"]
        if not content:  # a list without parts: nothing to hang the item on, so keep it whole
            return [{"kind": "data", "data": item, "extras": _own(item=True)}]
        rest = _rest(item, "message")
        if isinstance(content, str):
            notes = {} if first and not rest else _own(item=rest, string=True)
            return [{"kind": "text", "text": content, "extras": notes}]
        blocks = parts_in(content, "output")
        return [_with_notes(blocks[0], item=rest), *blocks[1:]]

    def _call(self, item: dict[str, Any]) -> dict[str, Any]:
        custom = item["type"] == "custom_tool_call"
        call_id, name = item["call_id"], item["name"]
        self.calls[call_id] = (name, custom)
        # a custom tool's input is free text: parsed like any arguments, so that it compares
        # the same as the function call other formats make of it
        raw = item["input"] if custom else item["arguments"]
        arguments, error = parse_json(raw)
        return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments,
                "arguments_raw": raw, "parse_error": error,
                "extras": _own(type="custom" if custom else None, fields=_rest(item, item["type"]) or None)}

    def _output(self, item: dict[str, Any]) -> dict[str, Any]:
        output, call_id = item["output"], item["call_id"]
        fields = _rest(item, "output")
        named = isinstance(fields.get("name"), str)
        if named:  # the item's own ``name`` (openai 3.x); otherwise the name of the call it answers
            del fields["name"]
        known = self.calls.get(call_id)
        custom = item["type"] == "custom_tool_call_output"
        # the kind is noted but where the writer tells it anyway: a text output of a function call read before
        # it (a function_call_output may answer a custom call, or none; an append, a popped item, may hold
        # results alone, which the writer takes for function outputs; its parts of a list depend on the note)
        told = known is not None and not known[1] and not custom and isinstance(output, str)
        return {
            "kind": "tool_result", "call_id": call_id,
            "name": item["name"] if named else known[0] if known else None,
            "output": output if isinstance(output, str) else parts_in(output, "input"),
            "extras": _own(type=None if told else "custom" if custom else "function", name=named,
                           fields=fields or None),
        }

    @staticmethod
    def _reasoning(item: dict[str, Any]) -> dict[str, Any]:
        """Text from the summary (or, without one, the raw reasoning text); the parts as given
        where that text would not give them back, and ``encrypted_content`` as the opaque data."""
        summary = [p["text"] for p in item["summary"]]
        content = [p["text"] for p in item.get("content") or ()]
        encrypted = item.get("encrypted_content")
        text = "\n\n".join(summary if summary or not content else content)
        fields = _rest(item, "reasoning")
        for key in ("content", "encrypted_content"):  # kept as given: the text does not say them
            if key in item and (key == "content" or encrypted is None):
                fields[key] = item[key]
        return {"kind": "reasoning", "text": text, "data": encrypted,
                "redacted": not text and encrypted is not None,
                "extras": _own(fields=fields,
                               summary=item["summary"] if item["summary"] != summary_of(text) else None)}


def summary_of(text: str) -> list[dict[str, Any]]:
    """The summary a reasoning item gets from canonical text: one part, none for no text."""
    return [{"type": "summary_text", "text": text}] if text else []


def items_of(data: Any) -> list[dict[str, Any]]:
    """The input items, each an object (else an error naming those that are not)."""
    raw = message_list(data, NAME)
    bad = [(i, "", f"expected an item object, got {type(m).__name__}")
           for i, m in enumerate(raw) if not isinstance(m, dict)]
    if bad:
        raise SchemaError(NAME, bad)
    return raw


def to_canonical(data: Any) -> list[Message]:
    """Validate Responses input items and convert them to canonical messages."""
    raw = items_of(data)
    reader = _Reader()
    for item in validate(ITEMS, raw, NAME):
        reader.item(item)
    return made(reader.messages)


# --- detection ------------------------------------------------------------------------

ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "reasoning", "item_reference", "file_search_call", "computer_call", "computer_call_output",
    "web_search_call", "tool_search_call", "tool_search_output", "additional_tools", "configuration_update",
    "compaction", "compaction_trigger", "image_generation_call", "code_interpreter_call", "local_shell_call",
    "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call", "program", "program_output",
})
"""The item types of ``ResponseInputItemParam`` (openai 3.54)."""
_PART_TYPES = frozenset({"input_text", "input_image", "input_file", "input_audio", "output_text", "refusal"})
_MESSAGE_KEYS = frozenset({"role", "content", "type", "id", "status", "phase", "provider_data"})
_ROLES = frozenset({"user", "system", "developer", "assistant"})


def _is_message(m: dict[str, Any]) -> bool:
    content = m.get("content")
    parts = not isinstance(content, list) or all(
        isinstance(p, dict) and p.get("type") in _PART_TYPES for p in content)
    return m.get("role") in _ROLES and "content" in m and m.keys() <= _MESSAGE_KEYS and parts


def _is_item(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    kind = m.get("type")
    if kind is None or kind == "message":
        return _is_message(m)
    return kind in ITEM_TYPES


def _only_here(m: dict[str, Any]) -> bool:
    """Something Chat Completions messages never have: an item ``type``, or a Responses part type."""
    content = m.get("content")
    return "type" in m or isinstance(content, list) and any(p.get("type") != "refusal" for p in content)


def looks_like(data: Any) -> bool:
    """A list of Responses items, at least one of which no Chat Completions message could be
    (plain ``{"role", "content": str}`` messages are left to the ``openai`` format)."""
    try:
        items = message_list(data, NAME)
    except SchemaError:
        return False
    return bool(items) and all(_is_item(m) for m in items) and any(_only_here(m) for m in items)


TAKES_PLAIN = True

from ._openai_responses_lean import to_writable  # noqa: E402  (it reads with the reader above)


def from_canonical(messages: list[Message], losses: Losses) -> list[dict[str, Any]]:
    """Canonical messages (plain ones among them: ``store.lean``) as Responses input items."""
    from ._openai_responses_write import Writer  # the writer imports the helpers above

    return Writer(losses).run(messages)
