"""Writes tests/fixtures/pydantic-ai.json with the real ``pydantic-ai-slim`` (conf-pydantic-ai venv).

The history is built from pydantic-ai's own message classes (``ModelRequest``,
``ModelResponse`` and their parts) and serialized by its own
``ModelMessagesTypeAdapter.dump_json``, as an application stores a run's
``result.all_messages()``. It covers every part the issue lists: a system prompt, a user
prompt with multimodal content (image, audio, video and document URLs, inline binary
image and PDF, a text-content item, an uploaded file, a cache point), thinking with a
signature (and Anthropic's redacted thinking), text, parallel tool calls with their
returns (one a JSON value), a failed tool return, a legacy retry-prompt (as 1.x stored
it: 2.x still writes a hand-built ``RetryPromptPart`` in its own shape) and a retry
feedback, builtin tool call and return, a file part, usage, model and provider details,
and a call still pending at the end. Fixed ids and timestamps keep it deterministic.

    .conformance/conf-pydantic-ai/bin/python tests/conformance/make_pydantic_ai.py
"""

from __future__ import annotations

import base64
import json
import warnings
from datetime import datetime, timezone
from pathlib import Path

from pydantic_ai.messages import (
    AudioUrl, BinaryContent, CachePoint, DocumentUrl, FilePart, ImageUrl, ModelMessagesTypeAdapter, ModelRequest,
    ModelResponse, NativeToolCallPart, NativeToolReturnPart, RetryFeedbackPart, RetryInfo, RetryPromptPart,
    SystemPromptPart, TextContent, TextPart, ThinkingPart, ToolCallPart, ToolReturnPart, UploadedFile, UserPromptPart,
    VideoUrl,
)
from pydantic_ai.usage import RequestUsage

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "pydantic-ai.json"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def at(minute: int, second: int = 0) -> datetime:
    return datetime(2025, 6, 1, 9, minute, second, tzinfo=timezone.utc)


def history() -> list:
    with warnings.catch_warnings():  # RetryPromptPart is deprecated in 2.x; old histories hold it
        warnings.simplefilter("ignore")
        legacy_retry = RetryPromptPart(content="city must be a known city name, not 'Kyoto-shi'",
                                       tool_name="get_weather", tool_call_id="call_w3", timestamp=at(3, 1))
    return [
        ModelRequest(parts=[
            SystemPromptPart("You are a travel agent. Use the tools.", timestamp=at(0)),
            UserPromptPart([
                "Plan a rainy day in Kyoto. My photo, a map and the guides are attached.",
                BinaryContent(PNG, media_type="image/png"),
                ImageUrl("https://example.com/kyoto-map.png"),
                DocumentUrl("https://example.com/rainy-kyoto.pdf", media_type="application/pdf"),
                BinaryContent(PDF, media_type="application/pdf", identifier="guide"),
                AudioUrl("https://example.com/voice-note.mp3"),
                VideoUrl("https://example.com/walk.mp4", vendor_metadata={"fps": 2}),
                TextContent("(sent from the mobile app)", metadata={"client": "ios"}),
                UploadedFile("file-abc123", provider_name="openai"),
                CachePoint(),
            ], timestamp=at(0)),
        ], timestamp=at(0), instructions="Answer in English.", run_id="run-1"),
        ModelResponse(parts=[
            ThinkingPart("Two cities' weather is needed; call both at once.", signature="EqQBCkYIBxgCKkA=",
                         provider_name="anthropic"),
            ThinkingPart("", id="redacted_thinking", signature="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT",
                         provider_name="anthropic"),
            TextPart("Let me check the weather first."),
            ToolCallPart("get_weather", {"city": "Kyoto"}, tool_call_id="call_w1"),
            ToolCallPart("get_weather", '{"city": "Osaka"}', tool_call_id="call_w2"),
        ], usage=RequestUsage(input_tokens=812, output_tokens=95, cache_read_tokens=400), model_name="claude-sonnet-4-5",
            timestamp=at(1), provider_name="anthropic", provider_details={"finish_reason": "tool_use"},
            provider_response_id="msg_01Fixture0001", finish_reason="tool_call", run_id="run-1"),
        ModelRequest(parts=[
            ToolReturnPart("get_weather", "Rain, 14C", tool_call_id="call_w1", timestamp=at(2)),
            ToolReturnPart("get_weather", {"error": "unknown city"}, tool_call_id="call_w2", timestamp=at(2),
                           outcome="failed"),
        ], timestamp=at(2), run_id="run-1"),
        ModelResponse(parts=[
            ToolCallPart("get_weather", {"city": "Kyoto-shi"}, tool_call_id="call_w3"),
        ], usage=RequestUsage(input_tokens=900, output_tokens=20), model_name="claude-sonnet-4-5", timestamp=at(3),
            provider_name="anthropic", finish_reason="tool_call", run_id="run-1"),
        ModelRequest(parts=[legacy_retry], timestamp=at(3, 1), run_id="run-1"),
        ModelResponse(parts=[
            ToolCallPart("get_weather", {"city": "Kyoto"}, tool_call_id="call_w4"),
            ToolCallPart("find_museums", {"city": "Kyoto", "open_on": "monday"}, tool_call_id="call_m1"),
        ], usage=RequestUsage(input_tokens=950, output_tokens=40), model_name="claude-sonnet-4-5", timestamp=at(4),
            provider_name="anthropic", finish_reason="tool_call", run_id="run-1"),
        ModelRequest(parts=[
            ToolReturnPart("get_weather", "Rain, 14C", tool_call_id="call_w4", timestamp=at(5)),
            ToolReturnPart("find_museums", ["Kyoto National Museum", "Kyoto Railway Museum"], tool_call_id="call_m1",
                           timestamp=at(5), metadata={"source": "city-api"}),
            RetryFeedbackPart("Please keep the plan under 100 words.", retry=RetryInfo(cause="model_retry"),
                              timestamp=at(5)),
        ], timestamp=at(5), run_id="run-1"),
        ModelResponse(parts=[
            NativeToolCallPart("web_search", {"query": "Kyoto rainy day ideas"}, tool_call_id="srvtoolu_01",
                               provider_name="anthropic"),
            NativeToolReturnPart("web_search", [{"title": "Rainy Kyoto", "url": "https://example.com/rain"}],
                                 tool_call_id="srvtoolu_01", timestamp=at(6), provider_name="anthropic"),
            TextPart("Morning: Kyoto National Museum. Afternoon: Nishiki Market (covered). Here is a map:"),
            FilePart(BinaryContent(PNG, media_type="image/png"), provider_name="openai"),
            ToolCallPart("book_table", {"restaurant": "Nishiki Sushi", "time": "19:00"}, tool_call_id="call_b1"),
        ], usage=RequestUsage(input_tokens=1200, output_tokens=150), model_name="claude-sonnet-4-5", timestamp=at(6),
            provider_name="anthropic", finish_reason="tool_call", run_id="run-1"),
    ]


def main() -> None:
    data = json.loads(ModelMessagesTypeAdapter.dump_json(history()))
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(data)} messages)")


if __name__ == "__main__":
    main()
