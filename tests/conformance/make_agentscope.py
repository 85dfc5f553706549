"""Build ``tests/fixtures/agentscope.json`` with AgentScope 1.x's own classes.

Runs under the isolated venv int-agentscope1 (agentscope 1.0.21):

    .conformance/int-agentscope1/bin/python tests/conformance/make_agentscope.py

Every message is an ``agentscope.message.Msg`` whose content is a string or a list of
the package's block TypedDicts (``TextBlock``, ``ThinkingBlock``, ``ImageBlock`` /
``AudioBlock`` / ``VideoBlock`` with ``URLSource`` and ``Base64Source``, ``ToolUseBlock``
with and without ``raw_input``, ``ToolResultBlock`` with string and block output),
serialized with ``Msg.to_dict()``. Tool results sit in ``{"name": "system", "role":
"system"}`` messages of their own, one per result, as ``ReActAgent._acting`` writes
them (an error is only text, as in 1.x). It also has several agents' names, metadata
(structured output) and a string system prompt. Ids and timestamps are fixed, so the
output is deterministic.

``tests/fixtures/agentscope-java.json`` is not made here: there is no JVM in the
isolated venv. It is written by hand after the seed's serialization example and the
agentscope-java sources (``io.agentscope.core.message``: upper-case roles, a ``TOOL``
role, ``usage``, tool blocks with ``metadata``/``state``, ``suspended``, the seed's
``toolUseId``, ISO and ``yyyy-MM-dd HH:mm:ss.SSS`` timestamps).
"""

from __future__ import annotations

import json
from pathlib import Path

from agentscope.message import (
    AudioBlock,
    Base64Source,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    URLSource,
    VideoBlock,
)

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "agentscope.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRg=="
MP4 = "AAAAGGZ0eXBtcDQy"


def _msg(
    msg_id: str, second: int, name: str, content: object, role: str, metadata: dict | None = None
) -> Msg:
    msg = Msg(
        name, content, role, metadata=metadata, timestamp=f"2025-03-14 09:26:{second:02d}.{second * 7:03d}"
    )
    msg.id = msg_id
    return msg


def _result(call_id: str, name: str, output: object) -> list[ToolResultBlock]:
    return [ToolResultBlock(type="tool_result", id=call_id, name=name, output=output)]


def _user_turn() -> list[Msg]:
    return [
        _msg("sys0", 0, "system", "You are Friday, a travel assistant. Be brief.", "system"),
        _msg(
            "u1",
            1,
            "alice",
            [
                TextBlock(
                    type="text", text="Weather in Kyoto and Paris? Here is a map, a voice note and a clip."
                ),
                ImageBlock(type="image", source=URLSource(type="url", url="https://example.com/map.png")),
                ImageBlock(
                    type="image", source=Base64Source(type="base64", media_type="image/png", data=PNG)
                ),
                AudioBlock(
                    type="audio", source=Base64Source(type="base64", media_type="audio/wav", data=WAV)
                ),
                AudioBlock(type="audio", source=URLSource(type="url", url="https://example.com/note.mp3")),
                VideoBlock(type="video", source=URLSource(type="url", url="https://example.com/tour.mp4")),
                VideoBlock(
                    type="video", source=Base64Source(type="base64", media_type="video/mp4", data=MP4)
                ),
            ],
            "user",
            metadata={"channel": "web"},
        ),
    ]


def _tool_turn() -> list[Msg]:
    return [
        _msg(
            "a2",
            2,
            "Friday",
            [
                ThinkingBlock(type="thinking", thinking="Two cities: call the weather tool twice."),
                TextBlock(type="text", text="Let me check both cities."),
                ToolUseBlock(
                    type="tool_use",
                    id="call_kyoto",
                    name="get_weather",
                    input={"city": "Kyoto"},
                    raw_input='{"city": "Kyoto"}',
                ),
                ToolUseBlock(
                    type="tool_use", id="call_paris", name="get_weather", input={"city": "Paris", "unit": "C"}
                ),
            ],
            "assistant",
        ),
        _msg(
            "r3",
            3,
            "system",
            _result("call_kyoto", "get_weather", [TextBlock(type="text", text="Sunny, 21C")]),
            "system",
        ),
        _msg(
            "r4",
            4,
            "system",
            _result(
                "call_paris",
                "get_weather",
                [
                    TextBlock(type="text", text="Rain, 12C. Radar:"),
                    ImageBlock(
                        type="image", source=Base64Source(type="base64", media_type="image/png", data=PNG)
                    ),
                ],
            ),
            "system",
        ),
        _msg(
            "a5",
            5,
            "Friday",
            [TextBlock(type="text", text="Kyoto is sunny (21C); Paris has rain (12C).")],
            "assistant",
            metadata={"structured_output": {"kyoto": "sunny", "paris": "rain"}},
        ),
    ]


def _multi_agent_turn() -> list[Msg]:
    return [
        _msg("u6", 6, "alice", "Should we go to Kyoto? Book it if so.", "user"),
        _msg("a7", 7, "AgentA", "I think we should go to Kyoto.", "assistant"),
        _msg(
            "a8",
            8,
            "AgentB",
            [
                TextBlock(
                    type="text", text="I disagree because of the rain season; trying the booking anyway."
                ),
                ToolUseBlock(
                    type="tool_use",
                    id="call_book",
                    name="book_flight",
                    input={"to": "KIX", "seats": 2},
                    raw_input='{"to": "KIX", "seats": 2}',
                ),
            ],
            "assistant",
        ),
        _msg(
            "r9",
            9,
            "system",
            _result("call_book", "book_flight", "Error: the booking service is unavailable."),
            "system",
        ),
        _msg("a10", 10, "AgentB", "The booking failed; please try again later.", "assistant"),
    ]


def main() -> None:
    messages = [*_user_turn(), *_tool_turn(), *_multi_agent_turn()]
    data = [m.to_dict() for m in messages]
    assert [Msg.from_dict(d).to_dict() for d in data] == data  # the package reads back what it wrote
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(data)} messages)")


if __name__ == "__main__":
    main()
