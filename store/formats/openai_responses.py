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

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter
from typing_extensions import assert_never

from ..errors import SchemaError
from ..model import (
    AudioBlock,
    Block,
    DataBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    RefusalBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ._common import Losses, b64decode_exact, message_list, parse_data_uri, parse_json, validate

NAME = "openai-responses"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- content parts ----------------------------------------------------------------


class InputText(_Open):
    type: Literal["input_text"]
    text: str


class OutputText(_Open):
    type: Literal["output_text"]
    text: str


class Refusal(_Open):
    type: Literal["refusal"]
    refusal: str


class InputImage(_Open):
    type: Literal["input_image"]
    image_url: str | None = None
    file_id: str | None = None


class InputFile(_Open):
    type: Literal["input_file"]
    file_data: str | None = None
    file_id: str | None = None
    file_url: str | None = None
    filename: str | None = None


class AudioData(_Open):
    data: str
    format: str


class InputAudio(_Open):
    """Not in the openai SDK's message content union, but the Agents SDK reads and writes it."""

    type: Literal["input_audio"]
    input_audio: AudioData


Part = Annotated[
    Union[InputText, OutputText, Refusal, InputImage, InputFile, InputAudio], Field(discriminator="type"),
]
ResultPart = Annotated[Union[InputText, InputImage, InputFile], Field(discriminator="type")]


# --- items --------------------------------------------------------------------------


class MessageItem(_Open):
    """Easy (``type`` absent), input and assistant output messages: one model, told apart by role."""

    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[Part]
    type: Literal["message"] | None = None


class FunctionCall(_Open):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


class CustomCall(_Open):
    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str


class CallOutput(_Open):
    type: Literal["function_call_output", "custom_tool_call_output"]
    call_id: str
    output: str | list[ResultPart]
    name: str | None = None


class SummaryText(_Open):
    type: Literal["summary_text"]
    text: str


class ReasoningText(_Open):
    type: Literal["reasoning_text"]
    text: str


class Reasoning(_Open):
    type: Literal["reasoning"]
    summary: list[SummaryText]
    content: list[ReasoningText] | None = None
    encrypted_content: str | None = None


class ItemReference(_Open):
    type: Literal["item_reference"] | None = None
    id: str


class OtherItem(_Open):
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

_MAPPED: dict[type, frozenset[str]] = {
    InputText: frozenset({"type", "text"}), OutputText: frozenset({"type", "text"}),
    Refusal: frozenset({"type", "refusal"}), InputImage: frozenset({"type", "image_url", "file_id"}),
    InputFile: frozenset({"type", "file_data", "file_id", "file_url", "filename"}),
    InputAudio: frozenset({"type", "input_audio"}), MessageItem: frozenset({"role", "content"}),
    FunctionCall: frozenset({"type", "call_id", "name", "arguments"}),
    CustomCall: frozenset({"type", "call_id", "name", "input"}),
    CallOutput: frozenset({"type", "call_id", "output"}),
    Reasoning: frozenset({"type", "summary", "content", "encrypted_content"}),
}
"""Keys each model maps to canonical fields; every other key is kept as given (``fields``)."""


def _rest(model: BaseModel) -> dict[str, Any]:
    """The keys of ``model`` that no canonical field holds, as they were given."""
    mapped = _MAPPED[type(model)]
    return {k: v for k, v in model.model_dump(exclude_unset=True).items() if k not in mapped}


def _own(**notes: Any) -> dict[str, Any]:
    """The ``extras["openai-responses"]`` entry from notes, empty ones left out (an empty
    ``fields`` is kept where it says that a required key was absent)."""
    kept = {k: v for k, v in notes.items() if v is not None and v is not False}
    return {NAME: kept} if kept else {}


# --- to canonical --------------------------------------------------------------


def _part_notes(part: BaseModel, context: str, **more: Any) -> dict[str, Any]:
    rest = _rest(part)
    kind = getattr(part, "type")
    fields = rest if rest or kind in DEFAULTS else None
    text_type = kind if kind in TEXT_TYPE.values() and kind != TEXT_TYPE[context] else None
    return _own(fields=fields, type=text_type, **more)


def _text_in(part: InputText | OutputText, context: str) -> Block:
    return TextBlock(text=part.text, extras=_part_notes(part, context))


def _refusal_in(part: Refusal, context: str) -> Block:
    return RefusalBlock(text=part.refusal, extras=_part_notes(part, context))


def _decoded(value: str | None) -> tuple[str, bytes] | None:
    """Media type and bytes of an exact data URI that names its type (else the value is kept as given)."""
    decoded = parse_data_uri(value) if value else None
    return (decoded[0], decoded[1]) if decoded and decoded[0] else None


def _image_in(part: InputImage, context: str) -> Block:
    decoded = _decoded(part.image_url)
    extras = _part_notes(part, context)
    if decoded is not None:
        return ImageBlock(media_type=decoded[0], data=decoded[1], file_id=part.file_id, extras=extras)
    return ImageBlock(url=part.image_url, file_id=part.file_id, extras=extras)


def _file_in(part: InputFile, context: str) -> Block:
    decoded = _decoded(part.file_data)
    # file_data that is not an exact data URI (bare base64, say) is kept as given
    raw = part.file_data if part.file_data is not None and decoded is None else None
    return FileBlock(
        url=part.file_url, file_id=part.file_id, filename=part.filename,
        media_type=decoded[0] if decoded else None, data=decoded[1] if decoded else None,
        extras=_part_notes(part, context, file_data=raw),
    )


def _audio_in(part: InputAudio, context: str) -> Block:
    audio = part.input_audio
    data = b64decode_exact(audio.data)
    media_type = AUDIO_MEDIA_TYPES.get(audio.format)
    exact = data is not None and media_type is not None and not audio.model_extra
    raw = None if exact else audio.model_dump()
    return AudioBlock(data=data if exact else None, media_type=media_type if exact else None,
                      extras=_part_notes(part, context, audio=raw or True))


_PARTS_IN: dict[type, Callable[[Any, str], Block]] = {
    InputText: _text_in, OutputText: _text_in, Refusal: _refusal_in, InputImage: _image_in,
    InputFile: _file_in, InputAudio: _audio_in,
}


def parts_in(parts: list[Any], context: str) -> list[Block]:
    return [_PARTS_IN[type(part)](part, context) for part in parts]


def _with_notes(block: Block, **notes: Any) -> Block:
    own = {**block.extras.get(NAME, {}), **_own(**notes).get(NAME, {})}
    return block.model_copy(update={"extras": {**block.extras, NAME: own}})


class _Reader:
    """Converts one batch; remembers call names and kinds for the outputs that follow."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.calls: dict[str, tuple[str, bool]] = {}
        """call id -> (tool name, custom tool call)."""

    def turn(self) -> list[Block]:
        """The blocks of the assistant turn in progress (a new one after anything else)."""
        last = self.messages[-1] if self.messages else None
        if last is None or last.role != "assistant":
            last = Message(role="assistant", source_format=NAME)
            self.messages.append(last)
        return last.content

    def item(self, item: MessageItem | FunctionCall | CustomCall | CallOutput | Reasoning | ItemReference | OtherItem,
             ) -> None:
        match item:
            case MessageItem(role="assistant"):
                turn = self.turn()
                turn.extend(self._assistant(item, first=not turn))
            case MessageItem():
                self._message(item)
            case FunctionCall() | CustomCall():
                self.turn().append(self._call(item))
            case CallOutput():
                self.messages.append(Message(role="tool", source_format=NAME, content=[self._output(item)]))
            case Reasoning():
                self.turn().append(self._reasoning(item))
            case ItemReference() | OtherItem():  # no canonical meaning: the item itself, in the turn
                self.turn().append(DataBlock(data=item.model_dump(exclude_unset=True), extras=_own(item=True)))
            case _:
                assert_never(item)

    def _message(self, item: MessageItem) -> None:
        content = item.content
        blocks = [TextBlock(text=content)] if isinstance(content, str) else parts_in(content, "input")
        role = "system" if item.role == "developer" else item.role
        form = "list" if isinstance(item.content, list) else None
        self.messages.append(Message(
            role=role, source_role=item.role if item.role != role else None, content=blocks,
            source_format=NAME, extras=_own(fields=_rest(item) or None, content=form),
        ))

    @staticmethod
    def _assistant(item: MessageItem, first: bool) -> list[Block]:
        """An assistant message's parts; the first one marks where the item starts and holds its keys (but
        an easy message's text that starts its turn: the writer writes a text without notes so)."""
        if not item.content:  # a list without parts: nothing to hang the item on, so keep it whole
            return [DataBlock(data=item.model_dump(exclude_unset=True), extras=_own(item=True))]
        if isinstance(item.content, str):
            rest = _rest(item)
            notes = {} if first and not rest else _own(item=rest, string=True)
            return [TextBlock(text=item.content, extras=notes)]
        blocks = parts_in(item.content, "output")
        return [_with_notes(blocks[0], item=_rest(item)), *blocks[1:]]

    def _call(self, item: FunctionCall | CustomCall) -> ToolCallBlock:
        custom = isinstance(item, CustomCall)
        self.calls[item.call_id] = (item.name, custom)
        # a custom tool's input is free text: parsed like any arguments, so that it compares
        # the same as the function call other formats make of it
        raw = item.input if isinstance(item, CustomCall) else item.arguments
        arguments, error = parse_json(raw)
        return ToolCallBlock(call_id=item.call_id, name=item.name, arguments=arguments, arguments_raw=raw,
                             parse_error=error, extras=_own(type="custom" if custom else None,
                                                            fields=_rest(item) or None))

    def _output(self, item: CallOutput) -> ToolResultBlock:
        output = item.output if isinstance(item.output, str) else parts_in(item.output, "input")
        fields = _rest(item)
        named = isinstance(fields.get("name"), str)
        if named:  # the item's own ``name`` (openai 3.x); otherwise the name of the call it answers
            del fields["name"]
        known = self.calls.get(item.call_id)
        return ToolResultBlock(
            call_id=item.call_id, name=item.name if named else known[0] if known else None, output=output,
            # the kind is always noted: a function_call_output may answer a custom call, or none
            extras=_own(type="custom" if item.type == "custom_tool_call_output" else "function", name=named,
                        fields=fields or None),
        )

    @staticmethod
    def _reasoning(item: Reasoning) -> ReasoningBlock:
        """Text from the summary (or, without one, the raw reasoning text); the parts as given
        where that text would not give them back, and ``encrypted_content`` as the opaque data."""
        dumped = item.model_dump(exclude_unset=True)
        summary, content = [p.text for p in item.summary], [p.text for p in item.content or []]
        text = "\n\n".join(summary if summary or not content else content)
        fields = _rest(item)
        for key in ("content", "encrypted_content"):  # kept as given: the text does not say them
            if key in dumped and (key == "content" or item.encrypted_content is None):
                fields[key] = dumped[key]
        return ReasoningBlock(
            text=text, data=item.encrypted_content, redacted=not text and item.encrypted_content is not None,
            extras=_own(fields=fields,
                        summary=dumped["summary"] if dumped["summary"] != summary_of(text) else None),
        )


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
    return reader.messages


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
