"""Builds tests/fixtures/autogen.json and tests/fixtures/autogen-core.json with the real packages.

Run under the isolated venv that holds autogen-agentchat and autogen-core (int-autogen):

    .conformance/int-autogen/bin/python tests/conformance/make_autogen.py

``autogen.json`` is an AgentChat transcript holding every message and event type
(each written with its own ``dump()``); ``autogen-core.json`` is a model context
(``LLMMessage`` s dumped in JSON mode). Ids and timestamps are fixed, so the output
is the same on every run.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from autogen_agentchat.messages import (
    CodeExecutionEvent,
    CodeGenerationEvent,
    HandoffMessage,
    MemoryQueryEvent,
    MessageFactory,
    ModelClientStreamingChunkEvent,
    MultiModalMessage,
    SelectSpeakerEvent,
    StopMessage,
    StructuredMessage,
    TextMessage,
    ThoughtEvent,
    ToolCallExecutionEvent,
    ToolCallRequestEvent,
    ToolCallSummaryMessage,
    UserInputRequestedEvent,
)
from autogen_core import FunctionCall, Image
from autogen_core.code_executor import CodeBlock, CodeResult
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from PIL import Image as PILImage
from pydantic import BaseModel, TypeAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
START = datetime(2025, 3, 14, 9, 26, 54, tzinfo=timezone.utc)


class WeatherReport(BaseModel):
    city: str
    temperature_c: float
    conditions: str


def image(color: tuple[int, int, int]) -> Image:
    return Image.from_pil(PILImage.new("RGB", (2, 2), color))


def stamp(i: int) -> dict[str, Any]:
    """A fixed id and creation time for message ``i``."""
    return {
        "id": f"00000000-0000-4000-8000-{i:012d}",
        "created_at": START + timedelta(seconds=i, microseconds=i * 1000),
    }


WEATHER = [
    FunctionCall(id="call_kyoto", arguments='{"city": "Kyoto"}', name="get_weather"),
    FunctionCall(id="call_paris", arguments='{"city": "Paris", "unit": "C"}', name="get_weather"),
]
WEATHER_RESULTS = [
    FunctionExecutionResult(content="Sunny, 21C", name="get_weather", call_id="call_kyoto", is_error=False),
    FunctionExecutionResult(
        content="Error: weather service timed out", name="get_weather", call_id="call_paris", is_error=True
    ),
]
TRANSFER = FunctionCall(id="call_transfer", arguments="{}", name="transfer_to_planner")
TRANSFER_RESULT = FunctionExecutionResult(
    content="Transferred to planner, adopting the role of planner immediately.",
    name="transfer_to_planner",
    call_id="call_transfer",
    is_error=False,
)


def core_context() -> list[LLMMessage]:
    """A model context: what an agent's model saw (also the context of the handoff)."""
    return [
        SystemMessage(content="You are a helpful weather assistant."),
        UserMessage(content="What is the weather in Kyoto and Paris?", source="user"),
        UserMessage(content=["And here is a map:", image((200, 30, 30))], source="user"),
        AssistantMessage(content=WEATHER, thought="I will look both cities up.", source="assistant"),
        FunctionExecutionResultMessage(content=WEATHER_RESULTS),
        AssistantMessage(content="Kyoto is sunny (21C); Paris could not be checked.", source="assistant"),
        AssistantMessage(
            content="Let me retry Paris later.", thought="The service timed out.", source="assistant"
        ),
        AssistantMessage(content=[TRANSFER], source="assistant"),
        FunctionExecutionResultMessage(content=[TRANSFER_RESULT]),
    ]


def transcript() -> list[Any]:
    """One message or event of every AgentChat type, in a plausible order."""
    report = WeatherReport(city="Kyoto", temperature_c=21.0, conditions="sunny")
    return [
        TextMessage(
            content="What is the weather in Kyoto and Paris?", source="user", metadata={"channel": "web"}
        ),
        MultiModalMessage(content=["And here is a map:", image((200, 30, 30))], source="user"),
        MemoryQueryEvent(
            source="assistant",
            content=[
                MemoryContent(
                    content="The user prefers Celsius.",
                    mime_type=MemoryMimeType.TEXT,
                    metadata={"score": 0.92},
                ),
                MemoryContent(content={"home": "Kyoto"}, mime_type=MemoryMimeType.JSON),
            ],
        ),
        ThoughtEvent(content="I will look both cities up.", source="assistant"),
        ToolCallRequestEvent(
            content=WEATHER,
            source="assistant",
            models_usage=RequestUsage(prompt_tokens=120, completion_tokens=31),
        ),
        ToolCallExecutionEvent(content=WEATHER_RESULTS, source="assistant"),
        ModelClientStreamingChunkEvent(
            content="Kyoto is sunny", source="assistant", full_message_id=stamp(7)["id"]
        ),
        ToolCallSummaryMessage(
            content="Sunny, 21C\nError: weather service timed out",
            source="assistant",
            tool_calls=WEATHER,
            results=WEATHER_RESULTS,
            models_usage=RequestUsage(prompt_tokens=160, completion_tokens=12),
        ),
        SelectSpeakerEvent(content=["coder"], source="selector"),
        CodeGenerationEvent(
            retry_attempt=0,
            source="coder",
            content="Converting:\n```python\nprint(21 * 9 / 5 + 32)\n```",
            code_blocks=[CodeBlock(code="print(21 * 9 / 5 + 32)", language="python")],
        ),
        CodeExecutionEvent(retry_attempt=0, source="coder", result=CodeResult(exit_code=0, output="69.8\n")),
        StructuredMessage[WeatherReport](
            content=report, source="reporter", format_string="{city}: {temperature_c}C, {conditions}"
        ),
        ToolCallRequestEvent(content=[TRANSFER], source="assistant"),
        ToolCallExecutionEvent(content=[TRANSFER_RESULT], source="assistant"),
        HandoffMessage(
            content=TRANSFER_RESULT.content, target="planner", source="assistant", context=core_context()[2:]
        ),
        UserInputRequestedEvent(request_id="request-1", source="user_proxy"),
        TextMessage(content="Plan a trip to Kyoto for the sunny days.", source="user"),
        StopMessage(content="TERMINATE", source="planner", metadata={"reason": "done"}),
    ]


def agentchat() -> list[Any]:
    """The transcript as ``dump()`` writes it, with fixed ids and times (the chunk's
    ``full_message_id`` is the id of the message after it)."""
    messages = transcript()
    for i, message in enumerate(messages):
        for key, value in stamp(i).items():
            setattr(message, key, value)
    return [m.dump() for m in messages]


def check_loadable(dumped: list[Any]) -> None:
    factory = MessageFactory()
    factory.register(StructuredMessage[WeatherReport])
    for item in dumped:
        assert factory.create(item).dump() == item, item["type"]


def main() -> None:
    chat = agentchat()
    check_loadable(chat)
    context = TypeAdapter(list[LLMMessage]).dump_python(core_context(), mode="json")
    TypeAdapter(list[LLMMessage]).validate_python(context)
    for name, value in (("autogen", chat), ("autogen-core", context)):
        path = FIXTURES / f"{name}.json"
        path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(value)} messages)")


if __name__ == "__main__":
    main()
