"""Build ``tests/fixtures/docent.json`` with the real ``docent`` package (run under conf-docent).

One conversation covering every message and content kind the ``docent`` adapter
reads: ``SystemMessage``, ``UserMessage`` (``tool_call_id``), ``AssistantMessage``
(``model``, ``tool_calls`` with ``type``, ``view``, ``parse_error`` and
``google_thought_signature``), ``ToolMessage`` (``function``, ``error``),
``ContentText`` (plain and ``refusal``), ``ContentReasoning`` (``signature``,
``summary``, ``redacted``), message ``id`` and ``metadata``. Serialized with the
package's own ``model_dump(mode="json")``; it passes Docent's ``check_messages()``.

    .conformance/conf-docent/bin/python tests/conformance/make_docent.py
"""

from __future__ import annotations

import json
from pathlib import Path

from docent.data_models.chat import (
    AssistantMessage,
    ContentReasoning,
    ContentText,
    SystemMessage,
    ToolCall,
    ToolCallContent,
    ToolMessage,
    UserMessage,
    check_messages,
)

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "docent.json"
MODEL = "claude-sonnet-4-5-20250929"


def conversation() -> list:
    return [
        SystemMessage(
            id="msg-sys",
            content="You are a weather agent. Answer briefly.",
            metadata={"source": "fixture", "prompt_version": 3},
        ),
        UserMessage(
            id="msg-u1",
            content=[ContentText(text="Weather in Kyoto and Paris?")],
            metadata={"channel": "web"},
        ),
        AssistantMessage(
            id="msg-a1",
            model=MODEL,
            content=[
                ContentReasoning(reasoning="Two cities: two lookups.", signature="sig-EqQBCkYIBxgCKkD"),
                ContentText(text="Checking both cities."),
            ],
            tool_calls=[
                ToolCall(
                    id="toolu_01",
                    function="get_weather",
                    arguments={"city": "Kyoto"},
                    type="function",
                    view=ToolCallContent(title="get_weather", format="markdown", content="**Kyoto**"),
                ),
                ToolCall(
                    id="toolu_02",
                    function="get_weather",
                    arguments={"city": "Paris", "unit": "C"},
                    google_thought_signature="Z3RzLTAx",
                ),
            ],
            metadata={"usage": {"input_tokens": 120, "output_tokens": 42}},
        ),
        ToolMessage(id="msg-t1", content="Sunny, 21C", tool_call_id="toolu_01", function="get_weather"),
        ToolMessage(
            id="msg-t2",
            content=[ContentText(text="Service unavailable")],
            tool_call_id="toolu_02",
            function="get_weather",
            error={"type": "timeout", "message": "weather service timed out"},
        ),
        AssistantMessage(
            id="msg-a2",
            model=MODEL,
            content=[
                ContentReasoning(
                    reasoning="",
                    summary="Compared the two results.",
                    signature="ENCRYPTED-BLOB",
                    redacted=True,
                ),
                ContentText(text="Kyoto is sunny (21C); Paris could not be checked."),
            ],
        ),
        UserMessage(
            id="msg-u2",
            content="Retry Paris later. Now book me a flight to Paris.",
            tool_call_id=["toolu_02"],
        ),
        AssistantMessage(
            id="msg-a3", model=MODEL, content=[ContentText(text="I cannot book flights.", refusal=True)]
        ),
        UserMessage(content="Then search for flights."),
        AssistantMessage(
            model=MODEL,
            content="",
            tool_calls=[
                ToolCall(
                    id="call_bad",
                    function="search",
                    arguments={},
                    parse_error="arguments are not valid JSON: Expecting property name",
                )
            ],
        ),
        ToolMessage(
            content="",
            tool_call_id="call_bad",
            function="search",
            error={"type": "parsing", "message": "could not parse the arguments"},
        ),
        AssistantMessage(content="Sorry, the search failed.", metadata={"final": True}),
    ]


def main() -> None:
    messages = conversation()
    report = check_messages(messages)
    if report.has_warnings:
        raise SystemExit(f"the fixture itself trips Docent's checks: {report.warnings}")
    data = [m.model_dump(mode="json") for m in messages]
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(data)} messages)")


if __name__ == "__main__":
    main()
