"""Builds ``tests/fixtures/qwen.json`` with qwen-agent's own classes; runs under the isolated venv conf-qwen.

    .conformance/conf-qwen/bin/python tests/conformance/make_qwen.py

Covers every kind the issue lists for Qwen-Agent: roles system/user/assistant/function;
content as a string and as ``ContentItem``s of each of text/image (URL and data URI)/file/
audio (string and dict)/video (URL and frame list); ``reasoning_content`` as a string
and as items; ``name`` (multi-agent, Router style); one ``function_call`` per message,
parallel calls as consecutive assistant messages, with ``extra.function_id`` (as
qwen-agent's OpenAI client writes it) and without (linked by name and order only);
a result as items; arguments that are not JSON; other ``extra`` data. Each message is
serialized with qwen-agent's own ``Message.model_dump(mode="json")``.
"""

from __future__ import annotations

import json
from pathlib import Path

from qwen_agent.llm.schema import ASSISTANT, FUNCTION, SYSTEM, USER, ContentItem, FunctionCall, Message

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "qwen.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="


def call(name: str, arguments: dict | str, function_id: str | None = None, agent: str | None = None) -> Message:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Message(role=ASSISTANT, content="", name=agent, function_call=FunctionCall(name=name, arguments=args),
                   extra={"function_id": function_id} if function_id else None)


def result(name: str, content: str | list[ContentItem], function_id: str | None = None) -> Message:
    return Message(role=FUNCTION, name=name, content=content,
                   extra={"function_id": function_id} if function_id else None)


def conversation() -> list[Message]:
    return [
        Message(role=SYSTEM, content="You are a travel assistant. Use the tools."),
        Message(role=USER, name="alice", content=[
            ContentItem(text="Weather in Kyoto and Paris? Here is what I have."),
            ContentItem(image="https://example.com/kyoto.jpg"),
            ContentItem(image=f"data:image/png;base64,{PNG}"),
            ContentItem(file="https://example.com/itinerary.pdf"),
            ContentItem(audio={"data": f"data:audio/wav;base64,{WAV}", "format": "wav"}),
            ContentItem(audio="https://example.com/voice-note.mp3"),
            ContentItem(video=["https://example.com/frame1.jpg", "https://example.com/frame2.jpg"]),
            ContentItem(video="https://example.com/street.mp4"),
        ], extra={"session": "s-42", "client": {"app": "web", "version": 3}}),
        # One model turn the way qwen-agent's OpenAI client returns it: reasoning, text, parallel calls.
        Message(role=ASSISTANT, content="", reasoning_content="Two cities, so two weather lookups in parallel."),
        Message(role=ASSISTANT, content="Let me check both cities."),
        call("get_weather", {"city": "Kyoto"}, "call_kyoto"),
        call("get_weather", {"city": "Paris", "unit": "C"}, "call_paris"),
        result("get_weather", '{"city": "Kyoto", "sky": "sunny", "temp_c": 21}', "call_kyoto"),
        result("get_weather", [ContentItem(text="Rain, 12C"), ContentItem(image="https://example.com/radar.png")],
               "call_paris"),
        Message(role=ASSISTANT, content="Kyoto is sunny (21C); Paris has rain (12C).",
                extra={"model_service_info": {"usage": {"input_tokens": 412, "output_tokens": 23}}}),
        Message(role=USER, name="alice", content="Convert both to Fahrenheit, then plan a day in Kyoto."),
        # Calls without ids (a prompt-based function calling template): results pair by name and order.
        call("convert", {"celsius": 21}),
        call("convert", {"celsius": 12}),
        result("convert", "69.8F"),
        result("convert", "53.6F"),
        # Router style multi-agent hand-off: the router names the agent, which then answers
        # (qwen-agent's Agent.run puts the agent's name on its messages, calls included).
        Message(role=ASSISTANT, name="router", content="Call: planner\nReply:"),
        Message(role=ASSISTANT, name="planner", reasoning_content=[ContentItem(text="Morning temples, then lunch.")],
                content=[ContentItem(text="Here is a plan for Kyoto."), ContentItem(image="https://example.com/map.png")]),
        call("search_flights", "{from: 'KIX'", "call_bad", agent="planner"),
        result("search_flights", "error: arguments are not valid JSON", "call_bad"),
        Message(role=ASSISTANT, name="planner", content="I could not search flights; the plan above stands."),
    ]


def main() -> None:
    data = [m.model_dump(mode="json") for m in conversation()]
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} messages to {OUT}")


if __name__ == "__main__":
    main()
