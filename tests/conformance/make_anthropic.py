"""Writes tests/fixtures/anthropic.json with the real ``anthropic`` SDK (int-openai-agents venv).

The conversation is built from the SDK's own request types (``TextBlockParam``,
``ImageBlockParam``, ``DocumentBlockParam``, ``ToolResultBlockParam``, ...), with the
assistant turns taken from response ``Message`` objects the way a client replays
them (``{"role": "assistant", "content": response.content}``), and serialized by the
SDK's own request serializer (``anthropic._utils.serialize_data``, which also reads
and base64-encodes the file inputs). It covers every kind the issue lists for the
format: a top-level system prompt (text blocks with ``cache_control``), text, images
(base64, URL and file sources), documents (base64 PDF, plain text, URL and file
sources, with title, context and citations), thinking with its signature,
redacted_thinking, tool_use, tool_result (string content, block content, is_error)
and text with citations. Fixed ids and data keep it deterministic.

    .conformance/int-openai-agents/bin/python tests/conformance/make_anthropic.py
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from anthropic._utils import serialize_data
from anthropic.types import (
    Base64ImageSourceParam,
    Base64PDFSourceParam,
    CacheControlEphemeralParam,
    CitationsConfigParam,
    DocumentBlockParam,
    FileDocumentSourceParam,
    FileImageSourceParam,
    ImageBlockParam,
    Message,
    MessageParam,
    PlainTextSourceParam,
    TextBlockParam,
    ToolResultBlockParam,
    URLImageSourceParam,
    URLPDFSourceParam,
)

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic.json"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def response(n: int, content: list[dict[str, Any]], stop_reason: str = "tool_use") -> Message:
    """A response as the API returns it (only the fields the API sends are set)."""
    return Message.model_validate({
        "id": f"msg_01Fixture{n:04d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 100 + n, "output_tokens": 20 + n},
    })


def user_turn() -> MessageParam:
    return {"role": "user", "content": [
        TextBlockParam(type="text", text="Plan a rainy day in Kyoto for me. My photo, a map and the guides are attached."),
        ImageBlockParam(type="image", source=Base64ImageSourceParam(type="base64", media_type="image/png",
                                                                     data=io.BytesIO(PNG))),
        ImageBlockParam(type="image", source=URLImageSourceParam(type="url", url="https://example.com/kyoto-map.png")),
        ImageBlockParam(type="image", source=FileImageSourceParam(type="file", file_id="file_011CNha8iCJcU1wXNR6q4V8w")),
        DocumentBlockParam(
            type="document", source=Base64PDFSourceParam(type="base64", media_type="application/pdf", data=io.BytesIO(PDF)),
            title="kyoto-guide.pdf", context="The official city guide", citations=CitationsConfigParam(enabled=True),
            cache_control=CacheControlEphemeralParam(type="ephemeral"),
        ),
        DocumentBlockParam(type="document", title="hours.txt", source=PlainTextSourceParam(
            type="text", media_type="text/plain", data="Most temples open 8:30-17:00. Museums close on Mondays.")),
        DocumentBlockParam(type="document", source=URLPDFSourceParam(type="url", url="https://example.com/rainy-kyoto.pdf")),
        DocumentBlockParam(type="document", source=FileDocumentSourceParam(type="file", file_id="file_011CPMxVD3fHLUhvTqtsQA5w")),
    ]}


def conversation() -> dict[str, Any]:
    first = response(1, [
        {"type": "thinking", "thinking": "Rain matters: check the weather, then indoor events.",
         "signature": "EqQBCkYIBxgCKkBsig1fixture0000000000000000000000000000000000000000000000000000000000000000"},
        {"type": "text", "text": "Let me check the weather and the indoor events.", "citations": None},
        {"type": "tool_use", "id": "toolu_01WeatherKyoto", "name": "get_weather", "input": {"city": "Kyoto"}},
        {"type": "tool_use", "id": "toolu_01EventsKyoto", "name": "find_events", "input": {"city": "Kyoto", "indoor": True}},
    ])
    second = response(2, [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
        {"type": "tool_use", "id": "toolu_01Advisory", "name": "check_advisory", "input": {"country": "JP"}},
    ])
    third = response(3, [
        {"type": "text", "text": "Bring an umbrella and visit the temples before 17:00; museums are closed on Mondays.",
         "citations": [{"type": "char_location", "cited_text": "Most temples open 8:30-17:00.", "document_index": 1,
                        "document_title": "hours.txt", "start_char_index": 0, "end_char_index": 29}]},
    ], stop_reason="end_turn")
    messages: list[MessageParam] = [
        user_turn(),
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [
            ToolResultBlockParam(type="tool_result", tool_use_id="toolu_01WeatherKyoto", content="Rain all day, 14C"),
            ToolResultBlockParam(type="tool_result", tool_use_id="toolu_01EventsKyoto", content=[
                TextBlockParam(type="text", text="Museum night at the National Museum, 18:00. Poster:"),
                ImageBlockParam(type="image", source=Base64ImageSourceParam(type="base64", media_type="image/png",
                                                                             data=io.BytesIO(PNG))),
            ]),
            TextBlockParam(type="text", text="Also check the travel advisory, please."),
        ]},
        {"role": "assistant", "content": second.content},
        {"role": "user", "content": [
            ToolResultBlockParam(type="tool_result", tool_use_id="toolu_01Advisory", is_error=True,
                                 content="Advisory service unavailable (HTTP 503)"),
        ]},
        {"role": "assistant", "content": third.content},
        {"role": "user", "content": "Thanks! Which temple first?"},
        {"role": "assistant", "content": "Start with Kiyomizu-dera: it opens earliest."},
    ]
    system = [TextBlockParam(type="text", text="You are a travel assistant. Use the tools before answering.",
                             cache_control=CacheControlEphemeralParam(type="ephemeral", ttl="1h"))]
    return json.loads(serialize_data({"system": system, "messages": messages}, location="body"))


def main() -> None:
    OUT.write_text(json.dumps(conversation(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
