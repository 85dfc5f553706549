"""Builds ``tests/fixtures/langchain.json`` with langchain-core's own classes; runs under the isolated venv conf-langchain.

    .conformance/conf-langchain/bin/python tests/conformance/make_langchain.py

Covers what issue 13 lists for LangChain: every message kind (system, human, ai, tool,
chat, function); human content as a string and as v1 blocks (text, image by URL and
inline base64, inline audio, an inline file with a filename, a plain string item);
``AIMessage.tool_calls`` with parallel calls and their ``ToolMessage`` results, one of
them ``status="error"``, one with an ``artifact``, one result as blocks; an invalid tool
call; a pending call (no result); v1 ``content_blocks`` on an AI message (reasoning with
a signature, text, a tool_call block that ``tool_calls`` lists too, a server tool call and
its result); a legacy ``function_call`` (in ``additional_kwargs``) answered by a
``FunctionMessage``; usage_metadata, response_metadata and ids. Serialized with LangChain's own
``messages_to_dict``.
"""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "langchain.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
PDF = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoKdHJhaWxlcjw8L1Jvb3QgMSAwIFI+PgolJUVPRgo="
USAGE = {"input_tokens": 412, "output_tokens": 31, "total_tokens": 443,
         "input_token_details": {"cache_read": 128}, "output_token_details": {"reasoning": 12}}


def conversation() -> list:
    return [
        SystemMessage("You are a travel assistant. Use the tools."),
        HumanMessage(name="alice", id="msg-u1", content_blocks=[
            {"type": "text", "text": "Weather in Kyoto and Paris? Here is what I have."},
            {"type": "image", "url": "https://example.com/kyoto.jpg"},
            {"type": "image", "base64": PNG, "mime_type": "image/png"},
            {"type": "audio", "base64": WAV, "mime_type": "audio/wav"},
            {"type": "file", "base64": PDF, "mime_type": "application/pdf", "extras": {"filename": "plan.pdf"}},
        ]),
        # A v1 model turn: reasoning with a signature, text, parallel calls (content_blocks puts
        # the tool_call blocks in tool_calls too).
        AIMessage(id="run-a1", content_blocks=[
            {"type": "reasoning", "reasoning": "Two cities, so two weather lookups in parallel.",
             "extras": {"signature": "sig-abc"}},
            {"type": "text", "text": "Let me check both cities."},
            {"type": "tool_call", "id": "call_kyoto", "name": "get_weather", "args": {"city": "Kyoto"}},
            {"type": "tool_call", "id": "call_paris", "name": "get_weather", "args": {"city": "Paris", "unit": "C"}},
        ], usage_metadata=USAGE, response_metadata={"model_name": "gpt-5", "output_version": "v1",
                                                     "finish_reason": "tool_calls"}),
        ToolMessage('{"city": "Kyoto", "sky": "sunny", "temp_c": 21}', tool_call_id="call_kyoto",
                    name="get_weather", artifact={"source": "jma", "station": 47759}),
        ToolMessage(content=[{"type": "text", "text": "Rain, 12C"},
                             {"type": "image", "url": "https://example.com/radar.png"}],
                    tool_call_id="call_paris", name="get_weather"),
        AIMessage("Kyoto is sunny (21C); Paris has rain (12C).", id="run-a2",
                  response_metadata={"model_name": "gpt-5", "finish_reason": "stop"},
                  usage_metadata={"input_tokens": 520, "output_tokens": 14, "total_tokens": 534}),
        ChatMessage("Keep answers under 40 words.", role="critic"),
        HumanMessage("Book a flight from KIX, tell me the time, convert 21C, and search the web for festivals."),
        # Classic (v0) tool calls: one that fails (status="error"), one with arguments that are not
        # JSON (an invalid tool call, answered with an error); a server-side web search in the content.
        AIMessage(content=[
            {"type": "text", "text": "Working on it."},
            {"type": "server_tool_call", "id": "srv_1", "name": "web_search", "args": {"query": "Kyoto festivals"}},
            {"type": "server_tool_result", "tool_call_id": "srv_1", "status": "success",
             "output": "Gion Matsuri runs through July."},
        ], tool_calls=[
            {"id": "call_flight", "name": "search_flights", "args": {"from": "KIX"}},
        ], invalid_tool_calls=[
            {"id": "call_bad", "name": "book_hotel", "args": "{city: 'Kyoto'", "error": "not valid JSON"},
        ]),
        ToolMessage("error: no flights from KIX today", tool_call_id="call_flight", name="search_flights",
                    status="error"),
        ToolMessage("error: arguments are not valid JSON", tool_call_id="call_bad", name="book_hotel",
                    status="error"),
        # A legacy function call (the OpenAI functions API, kept in additional_kwargs) and its
        # FunctionMessage, which names only the function.
        AIMessage("", additional_kwargs={"function_call": {"name": "convert", "arguments": '{"celsius": 21}'}}),
        FunctionMessage("69.8F", name="convert"),
        AIMessage("No flights today; 21C is 69.8F; the Gion Matsuri runs through July.", name="planner"),
        # The conversation ends with a call still pending (no result yet).
        AIMessage("Now the time.", tool_calls=[{"id": "call_time", "name": "get_time", "args": {"city": "Kyoto"}}]),
    ]


def main() -> None:
    data = messages_to_dict(conversation())
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} messages to {OUT}")


if __name__ == "__main__":
    main()
