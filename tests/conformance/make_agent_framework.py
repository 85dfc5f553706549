"""Build ``tests/fixtures/agent-framework.json`` with agent-framework-core's own classes.

Runs under the isolated venv int-agent-framework (agent-framework-core 1.23.0):

    .conformance/int-agent-framework/bin/python tests/conformance/make_agent_framework.py

Every message is an ``agent_framework.Message`` built from ``Content.from_*``
constructors and serialized with ``Message.to_dict()``, so the fixture is what the
package itself writes. It covers every content kind the issue lists for the format:
text (with annotations, and a refusal), text_reasoning (with protected data, and
redacted), data (image, audio), uri, hosted_file, function_call (string and object
arguments), function_result (text, multi-item, error), error, usage and the
approval request/response pair, plus author names, message ids and
``additional_properties`` on messages and contents. Ids are fixed, so the output is
deterministic.
"""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path

from agent_framework import Content, Message

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "agent-framework.json"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRg==")


def _user_turn() -> list[Message]:
    return [
        Message("system", [Content.from_text("You are a travel agent.")], message_id="m0"),
        Message(
            "user",
            [
                Content.from_text("Weather in Kyoto and Paris? Here is a map.",
                                  additional_properties={"lang": "en"}),
                Content.from_data(PNG, "image/png", name="map.png"),
                Content.from_uri("https://example.com/map.png", media_type="image/png"),
                Content.from_data(WAV, "audio/wav"),
                Content.from_uri("https://example.com/tour.mp4", media_type="video/mp4", name="tour.mp4"),
                Content.from_hosted_file("file-9XyZ", media_type="application/pdf", name="uploaded.pdf"),
            ],
            author_name="alice",
            message_id="m1",
            additional_properties={"channel": "web"},
        ),
    ]


def _tool_turn() -> list[Message]:
    weather = Message(
        "assistant",
        [
            Content.from_text_reasoning(text="Two cities: call the tool twice.", protected_data="sig-1",
                                        id="rs_1"),
            Content.from_function_call("call_kyoto", "get_weather", arguments='{"city": "Kyoto"}'),
            Content.from_function_call("call_paris", "get_weather", arguments={"city": "Paris", "unit": "C"},
                                       id="fc_occ_1"),
            Content.from_usage({"input_token_count": 20, "output_token_count": 300, "total_token_count": 320,
                                "reasoning_output_token_count": 256, "cache_read_input_token_count": 8}),
        ],
        author_name="planner",
        message_id="chatcmpl-abc123",
        additional_properties={"model_id": "gpt-4o-mini"},
    )
    results = Message(
        "tool",
        [
            Content.from_function_result("call_kyoto", result="Sunny, 21C"),
            Content.from_function_result(
                "call_paris",
                result=[Content.from_text("Rain, 12C"), Content.from_data(PNG, "image/png")],
                additional_properties={"duration_ms": 41},
            ),
        ],
    )
    answer = Message(
        "assistant",
        [Content.from_text("Kyoto is sunny (21C); Paris has rain (12C).", annotations=[
            {"type": "citation", "title": "Weather service", "url": "https://weather.example.com"}])],
        author_name="planner",
        message_id="m4",
    )
    return [weather, results, answer]


def _error_turn() -> list[Message]:
    return [
        Message("user", ["Thanks! Now book me a flight."], author_name="alice", message_id="m5"),
        Message("assistant",
                [Content.from_function_call("call_book", "book_flight", arguments={"to": "Paris"})],
                author_name="planner", message_id="m6"),
        Message("tool", [Content.from_function_result("call_book", result="Booking service unavailable",
                                                      exception="ConnectionError: timeout")]),
        Message(
            "assistant",
            [
                Content.from_error(message="Rate limit exceeded", error_code="429",
                                   error_details="retry after 20s"),
                Content.from_text("I cannot book flights.",  # how the package marks a refusal
                                  additional_properties={"core": {"model_output_kind": "refusal"}}),
            ],
            author_name="planner",
            message_id="m8",
        ),
    ]


def _approval_turn() -> list[Message]:
    def call() -> Content:
        return Content.from_function_call("call_del", "delete_file", arguments={"path": "/tmp/old"},
                                          id="fc_occ_2")

    return [
        Message("user", ["Delete /tmp/old."], author_name="alice", message_id="m9"),
        Message("assistant", [Content.from_function_approval_request("fc_occ_2", call())],
                author_name="planner", message_id="m10"),
        Message("user", [Content.from_function_approval_response(True, "fc_occ_2", call())],
                author_name="alice", message_id="m11"),
        Message("assistant", [call()], author_name="planner", message_id="m12"),
        Message("tool", [Content.from_function_result("call_del", result="deleted")]),
        Message(
            "assistant",
            [
                Content.from_text_reasoning(protected_data='{"private": "opaque"}',
                                            additional_properties={"anthropic_redacted_thinking": True}),
                Content.from_text("Done."),
            ],
            author_name="planner",
            message_id="m14",
        ),
    ]


def build() -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated construction would make the fixture stale
        messages = _user_turn() + _tool_turn() + _error_turn() + _approval_turn()
        dumped = [m.to_dict() for m in messages]
    for d in dumped:  # the package must read back what it wrote
        assert Message.from_dict(d).to_dict() == d, d
    return dumped


def main() -> None:
    OUT.write_text(json.dumps(build(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
