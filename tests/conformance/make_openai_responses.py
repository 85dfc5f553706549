"""Writes tests/fixtures/openai-responses.json with the real ``openai`` SDK (int-openai-agents venv).

The conversation is what an OpenAI Agents SDK Session holds after a few turns: the
caller's input items built from the SDK's own request types (``EasyInputMessageParam``,
``ResponseInputTextParam``, ``ResponseInputImageParam``, ``ResponseInputFileParam``,
``FunctionCallOutput``, ...) and the model's output items taken from response objects
(``ResponseReasoningItem``, ``ResponseOutputMessage``, ``ResponseFunctionToolCall``,
``ResponseFunctionWebSearch``, ``ResponseFileSearchToolCall``, ``ResponseCustomToolCall``)
the way the Agents SDK replays them (``model_dump(exclude_unset=True)``, its
``RunItem.to_input_item()``). The list is serialized by the SDK's own request transform
(``openai._utils.maybe_transform`` to ``ResponseInputParam``, as ``responses.create`` does).

It covers easy messages (string and list content) of every role, a typed input message,
input_text / input_image (data URI, URL, file id; detail) / input_file (data URI, file id,
URL) parts, reasoning (summary parts with encrypted content; raw reasoning text), output
messages with annotations and a refusal, parallel function calls with string and part-list
outputs, arguments that are not JSON, a custom tool call and its output, and item types
convstore keeps whole (web_search_call, file_search_call, item_reference). Fixed ids and
data keep it deterministic.

    .conformance/int-openai-agents/bin/python tests/conformance/make_openai_responses.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai._utils import maybe_transform
from openai.types.responses import (
    EasyInputMessageParam,
    ResponseCustomToolCall,
    ResponseCustomToolCallOutputParam,
    ResponseFileSearchToolCall,
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseInputFileParam,
    ResponseInputImageParam,
    ResponseInputItemParam,
    ResponseInputParam,
    ResponseInputTextParam,
    ResponseOutputMessage,
    ResponseReasoningItem,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput, ItemReference, Message
from openai.types.responses.response_input_image_content_param import ResponseInputImageContentParam
from openai.types.responses.response_input_text_content_param import ResponseInputTextContentParam
from pydantic import BaseModel

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "openai-responses.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKJSVFT0YK"


def replayed(output: BaseModel) -> ResponseInputItemParam:
    """An output item as the Agents SDK stores and replays it (``RunItem.to_input_item()``)."""
    return output.model_dump(exclude_unset=True)  # type: ignore[return-value]


def first_turn() -> list[ResponseInputItemParam]:
    reasoning = ResponseReasoningItem.model_validate({
        "id": "rs_0001", "type": "reasoning", "status": "completed",
        "summary": [{"type": "summary_text", "text": "**Checking the weather**\n\nRain decides the plan."},
                    {"type": "summary_text", "text": "Two cities: call the tool twice."}],
        "encrypted_content": "gAAAAABoFixtureEncryptedReasoning0001==",
    })
    message = ResponseOutputMessage.model_validate({
        "id": "msg_0001", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Let me check both cities.", "annotations": [], "logprobs": []}],
    })
    calls = [ResponseFunctionToolCall.model_validate({
        "id": f"fc_000{n}", "type": "function_call", "status": "completed", "call_id": f"call_{city.lower()}",
        "name": "get_weather", "arguments": json.dumps(arguments),
    }) for n, (city, arguments) in enumerate([("Kyoto", {"city": "Kyoto"}), ("Paris", {"city": "Paris", "unit": "C"})], 1)]
    return [replayed(reasoning), replayed(message), *map(replayed, calls),
            FunctionCallOutput(type="function_call_output", call_id="call_kyoto", output="Rain all day, 14C"),
            FunctionCallOutput(type="function_call_output", call_id="call_paris", output=[
                ResponseInputTextContentParam(type="input_text", text="Sunny, 21C. Radar:"),
                ResponseInputImageContentParam(type="input_image", image_url=f"data:image/png;base64,{PNG}"),
            ])]


def search_turn() -> list[ResponseInputItemParam]:
    search = ResponseFunctionWebSearch.model_validate({
        "id": "ws_0001", "type": "web_search_call", "status": "completed",
        "action": {"type": "search", "query": "Kyoto museums open Monday"},
    })
    files = ResponseFileSearchToolCall.model_validate({
        "id": "fs_0001", "type": "file_search_call", "status": "completed", "queries": ["rainy day Kyoto"],
        "results": [{"file_id": "file-guide", "filename": "guide.pdf", "score": 0.92, "text": "Temples open 8:30."}],
    })
    answer = ResponseOutputMessage.model_validate({
        "id": "msg_0002", "type": "message", "role": "assistant", "status": "completed", "phase": "final_answer",
        "content": [{"type": "output_text", "text": "Kyoto: rain, so museums; Paris: sunny.", "annotations": [
            {"type": "url_citation", "url": "https://example.com/kyoto-museums", "title": "Kyoto museums",
             "start_index": 0, "end_index": 6},
            {"type": "file_citation", "file_id": "file-guide", "filename": "guide.pdf", "index": 12},
        ]}],
    })
    return [replayed(search), replayed(files), replayed(answer)]


def later_turns() -> list[ResponseInputItemParam]:
    refusal = ResponseOutputMessage.model_validate({
        "id": "msg_0003", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "I can plan it, ", "annotations": []},
                    {"type": "refusal", "refusal": "but I cannot book flights."}],
    })
    thinking = ResponseReasoningItem.model_validate({
        "id": "rs_0002", "type": "reasoning", "summary": [],
        "content": [{"type": "reasoning_text", "text": "The user wants a patch to the itinerary file."}],
    })
    patch = ResponseCustomToolCall.model_validate({
        "id": "ctc_0001", "type": "custom_tool_call", "call_id": "call_patch", "name": "apply_patch",
        "input": "*** Begin Patch\n+ Day 2: Fushimi Inari\n*** End Patch",
    })
    broken = ResponseFunctionToolCall.model_validate({
        "id": "fc_0003", "type": "function_call", "status": "completed", "call_id": "call_search",
        "name": "search", "arguments": "{not json",
    })
    return [
        EasyInputMessageParam(role="user", content="Thanks! Book me a flight to Kyoto too."),
        replayed(refusal),
        Message(type="message", role="user", content=[ResponseInputTextParam(type="input_text",
                                                                             text="Then add Fushimi Inari to day 2.")]),
        replayed(thinking), replayed(patch),
        ResponseCustomToolCallOutputParam(type="custom_tool_call_output", call_id="call_patch", output="Done: 1 line added"),
        replayed(broken),
        FunctionCallOutput(type="function_call_output", call_id="call_search", output="error: arguments are not JSON"),
        ItemReference(type="item_reference", id="msg_0002"),
        EasyInputMessageParam(role="assistant", content="Day 2 now starts at Fushimi Inari."),
    ]


def conversation() -> list[ResponseInputItemParam]:
    return [
        EasyInputMessageParam(role="developer", content="You are a travel assistant. Use the tools."),
        Message(type="message", role="system", content=[ResponseInputTextParam(type="input_text",
                                                                               text="Answer briefly.")]),
        EasyInputMessageParam(role="user", content=[
            ResponseInputTextParam(type="input_text", text="Weather in Kyoto and Paris? My photo, a map and guides:"),
            ResponseInputImageParam(type="input_image", detail="low", image_url=f"data:image/png;base64,{PNG}"),
            ResponseInputImageParam(type="input_image", detail="auto", image_url="https://example.com/kyoto-map.png"),
            ResponseInputImageParam(type="input_image", detail="high", file_id="file-photo"),
            ResponseInputFileParam(type="input_file", filename="guide.pdf", file_data=f"data:application/pdf;base64,{PDF}"),
            ResponseInputFileParam(type="input_file", file_id="file-itinerary"),
            ResponseInputFileParam(type="input_file", file_url="https://example.com/rainy-kyoto.pdf"),
        ]),
        *first_turn(),
        *search_turn(),
        *later_turns(),
    ]


def main() -> None:
    items: Any = maybe_transform(conversation(), ResponseInputParam)
    OUT.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
