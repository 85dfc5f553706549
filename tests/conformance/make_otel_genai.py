"""Writes ``tests/fixtures/otel-genai.json`` (and the sample ``store/samples/otel-genai.json``).

Hand-written: no package writes this schema the way a framework's own classes write theirs
(instrumentations emit it as span attributes), so the fixture follows the examples of the
specification (semantic-conventions v1.41.1, ``docs/gen-ai/non-normative/examples-llm-calls.md``:
tool calls and their responses, system instructions, reasoning, the built-in code interpreter)
and is checked by ``check_otel_genai.py`` against the published JSON Schemas. It covers what
the format lists: ``system_instructions`` apart and a system message among the input
messages, a named user with text, an inline image (``blob``), an image by ``uri`` and audio by
``file`` id; reasoning; parallel tool calls with their responses (one a JSON object, one an
error reported in the response, as the schema has no error flag); server tool calls (the code
interpreter with its logs, and a web search); a response without id; and output messages
ending with a call still pending (``finish_reason`` ``tool_call``). Runs with any Python:

    python3 tests/conformance/make_otel_genai.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OUT = (REPO / "tests" / "fixtures" / "otel-genai.json", REPO / "store" / "samples" / "otel-genai.json")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def response(call_id: str | None, value: Any) -> dict[str, Any]:
    return {"type": "tool_call_response", **({"id": call_id} if call_id else {}), "response": value}


def attributes() -> dict[str, Any]:
    return {
        "system_instructions": [text("You are a travel assistant. Use the tools before answering.")],
        "input_messages": [
            {"role": "system", "parts": [text("Answer in English; prices in EUR.")]},
            {"role": "user", "name": "alice", "parts": [
                text("Plan a rainy day in Kyoto for me. My photo, the map and a voice note are attached."),
                {"type": "blob", "modality": "image", "mime_type": "image/png", "content": PNG},
                {"type": "uri", "modality": "image", "mime_type": "image/jpeg",
                 "uri": "https://example.com/maps/kyoto-center.jpg"},
                {"type": "file", "modality": "audio", "mime_type": "audio/wav", "file_id": "file-voice-note-7"},
            ]},
            {"role": "assistant", "parts": [
                {"type": "reasoning", "content": "Rain all day: look at the forecast and indoor museums first."},
                call("call_weather_01", "get_weather", {"city": "Kyoto", "unit": "celsius"}),
                call("call_museums_02", "find_museums", {"city": "Kyoto", "indoor": True}),
            ]},
            {"role": "tool", "parts": [
                response("call_weather_01", {"condition": "rain", "temp_c": 11, "wind_kmh": 14.5}),
                response("call_museums_02", {"error": "museum service timed out after 30s"}),
            ]},
            {"role": "assistant", "parts": [
                {"type": "server_tool_call", "id": "ci_01", "name": "code_interpreter", "server_tool_call": {
                    "type": "code_interpreter", "code": "print(2 * 1800 + 2 * 600)",
                    "container_id": "cntr_kyoto_01"}},
                {"type": "server_tool_call_response", "id": "ci_01", "server_tool_call_response": {
                    "type": "code_interpreter", "outputs": [{"type": "logs", "logs": "4800\n"}]}},
                {"type": "server_tool_call", "id": "ws_01", "name": "web_search", "server_tool_call": {
                    "type": "web_search", "query": "Kyoto National Museum opening hours"}},
                {"type": "server_tool_call_response", "id": "ws_01", "server_tool_call_response": {
                    "type": "web_search", "results": [{"url": "https://www.kyohaku.go.jp/eng/",
                                                      "title": "Kyoto National Museum"}]}},
                text("It will rain (11 °C). Tickets for two: 4800 JPY. The museum search failed; "
                     "shall I retry it?"),
            ], "finish_reason": "stop"},
            {"role": "user", "name": "alice", "parts": [text("Yes, retry it, and put the museum in my calendar.")]},
            {"role": "assistant", "parts": [call("call_museums_03", "find_museums", {"city": "Kyoto"})]},
            {"role": "tool", "parts": [response(None, "Kyoto National Museum (open 9:30-17:00)")]},
        ],
        "output_messages": [
            {"role": "assistant", "parts": [
                {"type": "reasoning", "content": "The museum is open; add it for the afternoon."},
                text("The Kyoto National Museum is open 9:30-17:00. Adding it to your calendar."),
                call("call_calendar_04", "add_to_calendar", {"title": "Kyoto National Museum", "start": "14:00"}),
            ], "finish_reason": "tool_call"},
        ],
    }


def main() -> None:
    text_out = json.dumps(attributes(), indent=2, ensure_ascii=False) + "\n"
    for path in OUT:
        path.write_text(text_out, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
