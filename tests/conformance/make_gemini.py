"""Writes tests/fixtures/gemini.json with the real ``google-genai`` SDK (conf-gemini venv).

The conversation is built from the SDK's own classes (``types.Content``, ``types.Part`` and
its constructors ``from_bytes``, ``from_uri``, ``from_function_call``,
``from_function_response``, ``from_executable_code``, ``from_code_execution_result``), the
model turns taken from ``GenerateContentResponse`` candidates the way a chat keeps its
history, and serialized the way the SDK dumps its models
(``model_dump(mode="json", exclude_none=True)``: snake_case keys, bytes as URL-safe
base64). It covers what the format lists: a system instruction, text, an inline image,
inline audio, file_data (a PDF and a video with ``video_metadata``), thought parts with
``thought_signature``, parallel function calls with ids (the first signed, as Gemini 3
signs them), their responses (one an error), a call and response without ids (paired by
order, as Vertex AI sends them), executable_code with its code_execution_result, and a
call still pending at the end. Fixed data keeps it deterministic.

    .conformance/conf-gemini/bin/python tests/conformance/make_gemini.py
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from google.genai import types

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "gemini.json"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
FILES = "https://generativelanguage.googleapis.com/v1beta/files/"


def signature(n: int) -> bytes:
    """An opaque thought signature, as the API returns one (bytes)."""
    return bytes((n * 37 + i * 11) % 256 for i in range(48))


def model_turn(parts: list[types.Part]) -> types.Content:
    """A model turn as a response candidate holds it (what chats append to their history)."""
    response = types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts),
                                    finish_reason=types.FinishReason.STOP, index=0)],
        model_version="gemini-3-pro-preview",
    )
    return response.candidates[0].content


def call(name: str, args: dict[str, Any], call_id: str | None, signed: int | None = None) -> types.Part:
    part = types.Part.from_function_call(name=name, args=args)
    part.function_call.id = call_id
    if signed is not None:
        part.thought_signature = signature(signed)
    return part


def response(name: str, body: dict[str, Any], call_id: str | None) -> types.Part:
    part = types.Part.from_function_response(name=name, response=body)
    part.function_response.id = call_id
    return part


def conversation() -> dict[str, Any]:
    system = types.Content(parts=[types.Part.from_text(
        text="You are a travel assistant. Use the tools before answering; run code for arithmetic.")])
    video = types.Part.from_uri(file_uri=FILES + "kyoto-rain-clip", mime_type="video/mp4")
    video.video_metadata = types.VideoMetadata(start_offset="1.5s", end_offset="12s")
    contents = [
        types.UserContent(parts=[
            types.Part.from_text(text="Plan a rainy day in Kyoto for me. My photo, a voice note, the guide and a clip are attached."),
            types.Part.from_bytes(data=PNG, mime_type="image/png"),
            types.Part.from_bytes(data=WAV, mime_type="audio/wav"),
            types.Part.from_uri(file_uri=FILES + "kyoto-guide-pdf", mime_type="application/pdf"),
            video,
        ]),
        model_turn([
            types.Part(text="The user wants indoor options; check the weather and the museums first.", thought=True,
                       thought_signature=signature(1)),
            call("get_weather", {"city": "Kyoto", "unit": "celsius"}, "call_weather_01", signed=2),
            call("find_museums", {"city": "Kyoto", "open_on": "2026-11-25"}, "call_museums_02"),
        ]),
        types.UserContent(parts=[
            response("get_weather", {"output": {"condition": "rain", "temp_c": 11, "wind_kmh": 14.5}}, "call_weather_01"),
            response("find_museums", {"error": "museum service timed out after 30s"}, "call_museums_02"),
        ]),
        model_turn([
            types.Part.from_executable_code(code="hours = 17 - 8.5\nprint(f'{hours} hours of opening time')",
                                            language=types.Language.PYTHON),
            types.Part.from_code_execution_result(outcome=types.Outcome.OUTCOME_OK, output="8.5 hours of opening time\n"),
            types.Part.from_text(text="It is raining (11°C). Temples are open 8.5 hours; the museum lookup failed."),
        ]),
        types.UserContent(parts=[types.Part.from_text(text="Try the museums again, and find a tea house.")]),
        model_turn([call("find_museums", {"city": "Kyoto"}, None)]),  # Vertex AI sends no ids
        types.UserContent(parts=[response("find_museums", {"output": "Kyoto National Museum, open 9:30-17:00"}, None)]),
        model_turn([
            types.Part(text="Now the tea house.", thought=True, thought_signature=signature(3)),
            types.Part.from_text(text="The Kyoto National Museum is open. Looking for a tea house..."),
            call("find_places", {"city": "Kyoto", "kind": "tea house", "max_results": 3}, "call_places_03"),
        ]),  # still pending: a stored conversation can stop here
    ]
    return {
        "system_instruction": system.model_dump(mode="json", exclude_none=True),
        "contents": [c.model_dump(mode="json", exclude_none=True) for c in contents],
    }


def main() -> None:
    data = conversation()
    for item in data["contents"]:  # what was written reads back as the same SDK objects
        assert types.Content.model_validate(item).model_dump(mode="json", exclude_none=True) == item
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
