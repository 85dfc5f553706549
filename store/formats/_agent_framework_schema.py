"""The source models of the ``agent-framework`` format (:mod:`store.formats.agent_framework`): what
``Message.to_dict()`` / ``Content.to_dict()`` of agent-framework-core write, and the seed's MEAI shapes.

They are TypedDicts: validated in pydantic-core, they are dicts, read without a model object a content
(see the Anthropic reader).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Tag, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

CONTENT_TYPES = frozenset({
    "text", "text_reasoning", "data", "uri", "error", "function_call", "function_result", "usage",
    "hosted_file", "hosted_vector_store", "code_interpreter_tool_call", "code_interpreter_tool_result",
    "image_generation_tool_call", "image_generation_tool_result", "mcp_server_tool_call",
    "mcp_server_tool_result", "search_tool_call", "search_tool_result", "shell_tool_call",
    "shell_tool_result", "shell_command_output", "computer_tool_call", "computer_tool_result",
    "function_approval_request", "function_approval_response", "oauth_consent_request",
})
"""agent-framework-core 1.23's ``ContentType`` literal."""

_OPEN = ConfigDict(extra="allow")


@with_config(_OPEN)
class _Content(TypedDict):
    type: NotRequired[str | None]
    additional_properties: NotRequired[dict[str, Any] | None]


@with_config(_OPEN)
class TextContent(_Content):
    text: NotRequired[str | None]


@with_config(_OPEN)
class ReasoningContent(_Content):
    text: NotRequired[str | None]
    protected_data: NotRequired[str | None]


@with_config(_OPEN)
class DataContent(_Content):
    """``data`` and ``uri`` contents; the seed's DataContent gives base64 ``data`` / ``base64`` instead."""

    media_type: NotRequired[str | None]
    name: NotRequired[str | None]
    file_id: NotRequired[str | None]
    uri: str


def _seed_data(value: Any) -> Any:
    payload = value.get("data", value.get("base64")) if isinstance(value, dict) else None
    if isinstance(payload, str) and "uri" not in value:
        value = {k: v for k, v in value.items() if k not in ("data", "base64")}
        value["uri"] = f"data:{value.get('media_type') or 'application/octet-stream'};base64,{payload}"
    return value


@with_config(_OPEN)
class HostedFileContent(_Content):
    media_type: NotRequired[str | None]
    name: NotRequired[str | None]
    file_id: str


@with_config(_OPEN)
class FunctionCallContent(_Content):
    call_id: str
    name: str
    arguments: NotRequired[str | dict[str, Any] | None]


@with_config(_OPEN)
class FunctionResultContent(_Content):
    call_id: str
    result: NotRequired[Any]
    items: NotRequired[list[AnyContent] | None]
    exception: NotRequired[str | None]


@with_config(_OPEN)
class ErrorContent(_Content):
    message: NotRequired[str | None]
    error_code: NotRequired[str | None]
    error_details: NotRequired[str | None]
    details: NotRequired[str | None]  # the seed's name for error_details


@with_config(_OPEN)
class UsageContent(_Content):
    usage_details: NotRequired[dict[str, int | None] | None]
    details: NotRequired[dict[str, Any] | None]  # the seed's UsageDetails (with additional_counts)


@with_config(_OPEN)
class OtherContent(TypedDict):
    """Any other content type of the package (approvals, hosted tools, ...), kept as data."""

    type: str
    additional_properties: NotRequired[dict[str, Any] | None]


_ALIASES = {  # the seed's MEAI class names
    "TextContent": "text", "TextReasoningContent": "text_reasoning", "DataContent": "data",
    "UriContent": "uri", "ErrorContent": "error", "FunctionCallContent": "function_call",
    "FunctionResultContent": "function_result", "UsageContent": "usage", "HostedFileContent": "hosted_file",
}
_INFER = (  # the seed's contents carry no `type`: tell them by their fields, most specific first
    (("call_id", "name"), "function_call"), (("call_id",), "function_result"), (("text",), "text"),
    (("uri",), "uri"), (("data",), "data"), (("base64",), "data"), (("file_id",), "hosted_file"),
    (("error_code",), "error"), (("message",), "error"), (("usage_details",), "usage"),
    (("details",), "usage"),
)
_TAGS = {  # content type -> the model that reads it (tags are class names: no clash with field names)
    "text": "TextContent", "text_reasoning": "ReasoningContent", "data": "DataContent", "uri": "DataContent",
    "hosted_file": "HostedFileContent", "function_call": "FunctionCallContent",
    "function_result": "FunctionResultContent", "error": "ErrorContent", "usage": "UsageContent",
}


_TAG_OF = {
    **{t: "OtherContent" for t in CONTENT_TYPES}, **_TAGS, **{a: _TAGS[t] for a, t in _ALIASES.items()},
}


def _tag(value: Any) -> str | None:
    if type(value) is dict:
        kind = value.get("type")
        if kind is None:
            kind = next((t for keys, t in _INFER if all(k in value for k in keys)), None)
        return _TAG_OF.get(kind) if isinstance(kind, str) else None
    return "str" if isinstance(value, str) else None


AnyContent = Annotated[
    Union[
        Annotated[str, Tag("str")],
        Annotated[TextContent, Tag("TextContent")],
        Annotated[ReasoningContent, Tag("ReasoningContent")],
        Annotated[DataContent, BeforeValidator(_seed_data), Tag("DataContent")],
        Annotated[HostedFileContent, Tag("HostedFileContent")],
        Annotated[FunctionCallContent, Tag("FunctionCallContent")],
        Annotated[FunctionResultContent, Tag("FunctionResultContent")],
        Annotated[ErrorContent, Tag("ErrorContent")],
        Annotated[UsageContent, Tag("UsageContent")],
        Annotated[OtherContent, Tag("OtherContent")],
    ],
    Discriminator(_tag, custom_error_type="content_type",
                  custom_error_message="not a content: expected a string or an object whose `type` is one of "
                                       "agent-framework's content types"),
]
_KEYS = {m.__name__: frozenset(m.__annotations__) for m in (
    TextContent, ReasoningContent, DataContent, HostedFileContent, FunctionCallContent, FunctionResultContent,
    ErrorContent, UsageContent, OtherContent)}
"""Each content model's declared keys (by its tag); a content's others are its unknown ones."""


class RoleObject(BaseModel):
    """Pre-1.0 releases serialized the role as ``{"type": "role", "value": "user"}``. A model, not a
    TypedDict: a role of another shape is refused naming this model, as before (a rare shape)."""

    model_config = _OPEN
    value: str


@with_config(_OPEN)
class AFMessage(TypedDict):
    type: NotRequired[Literal["message", "chat_message"] | None]
    role: str | RoleObject
    contents: NotRequired[list[AnyContent] | str | None]  # the package reads a lone string as one text
    author_name: NotRequired[str | None]
    author: NotRequired[str | None]  # the seed's name for author_name
    message_id: NotRequired[str | None]
    additional_properties: NotRequired[dict[str, Any] | None]


MESSAGES = TypeAdapter(list[AFMessage])
_AF_KEYS = frozenset(AFMessage.__annotations__)
