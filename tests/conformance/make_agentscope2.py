"""Build ``tests/fixtures/agentscope2.json`` with AgentScope 2.x's own classes.

Run under the isolated venv that holds agentscope 2.x::

    .conformance/int-agentscope/bin/python tests/conformance/make_agentscope2.py

The conversation is a ReAct run as AgentScope 2.x stores it: tool results sit in
the assistant ``Msg`` that holds their calls, several reasoning-acting iterations
share one reply ``Msg``, hints (plain and multimodal) are injected between them, and
a ``TeamAssign`` call is answered in a later ``Msg``, and the run ends with calls
still waiting (asking, allowed, pending, running). It covers every block type
(text, thinking incl. a signature and a redacted payload, hint, data with URL and
base64 sources of image/audio/video/file, tool_call in every state, tool_result in
every state with string and block outputs), usage, metadata, structured output,
finished reasons and a reply error. Ids and timestamps are fixed, so the output is
deterministic; it is serialized with ``Msg.model_dump(mode="json")``, the pair the
library's own SQL and Redis storage use.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import agentscope
from agentscope.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    URLSource,
    Usage,
    UserMsg,
)
from agentscope.permission import PermissionRule
from agentscope.types import ErrorInfo

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "agentscope2.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
PDF = "JVBERi0xLjQK"

_ids = itertools.count(1)
_ticks = itertools.count(0)


def _id() -> str:
    return f"blk{next(_ids):04d}"


def _timestamp() -> str:
    # naive local time with microseconds, as datetime.now().isoformat() writes it;
    # every 7th tick has zero microseconds (isoformat() would drop them)
    tick = next(_ticks)
    micro = 0 if tick % 7 == 3 else 1000 * tick + 417
    return f"2025-03-14T09:{26 + tick // 60:02d}:{tick % 60:02d}.{micro:06d}"


def conversation() -> list[Msg]:
    return [
        SystemMsg("system", "You are Friday, a weather and travel agent. Answer briefly.", id="msg-system",
                  created_at="2025-03-14T09:25:00.000000"),
        UserMsg("alice", [
            TextBlock(text="Weather in Kyoto and Paris? Map, voice note, clip and brief attached."),
            DataBlock(source=Base64Source(data=PNG, media_type="image/png")),
            DataBlock(source=URLSource(url="https://example.com/map.png", media_type="image/png"),
                      name="map.png"),
            DataBlock(source=Base64Source(data=WAV, media_type="audio/wav"), name="question.wav"),
            DataBlock(source=URLSource(url="https://example.com/clip.mp4", media_type="video/mp4")),
            DataBlock(source=Base64Source(data=PDF, media_type="application/pdf"), name="brief.pdf"),
            DataBlock(source=Base64Source(data="aGk=\n", media_type="text/plain"), name="not-canonical.txt"),
        ], id="msg-user-1", metadata={"channel": "web"}),
        _react_reply(),
        UserMsg("alice", "Thanks! Book me a flight to Paris, and ask the planner for a hotel.",
                id="msg-user-2"),
        _team_reply(),
        _after_team(),
        Msg(name="Friday", role="assistant", content=[], id="msg-error", finished_reason="error",
            finished_at=_timestamp(),
            error=ErrorInfo(type="rate_limit", message="Too many requests; retry in 20s.")),
        AssistantMsg("Friday", [TextBlock(text="Summary ready.")], id="msg-structured",
                     structured_output={"city": "Kyoto", "temp_c": 21, "sunny": True},
                     finished_reason="completed", finished_at=_timestamp(),
                     usage=Usage(input_tokens=40, output_tokens=12)),
        UserMsg("alice", "Yes, book Kyoto too.", id="msg-user-3"),
        _waiting_reply(),
    ]


def _react_reply() -> Msg:
    """One reply holding two reasoning-acting iterations, their results and hints."""
    return AssistantMsg("Friday", [
        ThinkingBlock(thinking="Two cities: call the weather tool twice.", signature="sig-abc",
                      finished_at=_timestamp()),
        TextBlock(text="Let me check both cities.", finished_at=_timestamp()),
        ToolCallBlock(id="call_kyoto", name="get_weather", input='{"city": "Kyoto"}', state="finished"),
        ToolCallBlock(id="call_paris", name="get_weather", input='{"city": "Paris", "unit": "C"}',
                      state="finished"),
        ToolResultBlock(id="call_kyoto", name="get_weather", output="Sunny, 21C", state="success",
                        finished_at=_timestamp()),
        ToolResultBlock(id="call_paris", name="get_weather", state="success", metadata={"provider": "meteo"},
                        output=[TextBlock(text="Rain, 12C"),
                                DataBlock(source=URLSource(url="https://example.com/radar.png",
                                                           media_type="image/png"))]),
        HintBlock(hint="The Paris radar image is five minutes old.", source="system"),
        ThinkingBlock(thinking="", redacted_thinking_data="ENCRYPTED-PAYLOAD"),
        TextBlock(text="Kyoto is sunny (21C); Paris has rain (12C). Checking alerts."),
        ToolCallBlock(id="call_alerts", name="run_shell", input='{"cmd": "curl alerts"}', state="finished"),
        ToolCallBlock(id="call_search", name="search", input="{not json", state="finished"),
        ToolResultBlock(id="call_alerts", name="run_shell", output="curl: (6) Could not resolve host",
                        state="error"),
        ToolResultBlock(id="call_search", name="search", output="Interrupted by the user.",
                        state="interrupted"),
        HintBlock(hint=[TextBlock(text="Bob shared a photo of Kyoto:"),
                        DataBlock(source=Base64Source(data=PNG, media_type="image/png"), name="kyoto.png")],
                  source="bob"),
        TextBlock(text="No alerts found; the search was interrupted."),
    ], id="msg-react", metadata={"trace_id": "t-42", "tags": ["weather"]},
        usage=Usage(input_tokens=820, output_tokens=96, cache_input_tokens=512,
                    cache_creation_input_tokens=12),
        finished_at=_timestamp(), finished_reason="completed")


def _team_reply() -> Msg:
    """A denied call, then a TeamAssign handoff to an external member (answered in a later Msg)."""
    return AssistantMsg("Friday", [
        ToolCallBlock(id="call_book", name="book_flight", input='{"to": "Paris"}', state="finished"),
        ToolResultBlock(id="call_book", name="book_flight", output="The user denied this tool call.",
                        state="denied"),
        ToolCallBlock(id="call_team", name="TeamAssign",
                      input='{"member": "planner", "prompt": "Find a hotel in Paris for two nights."}',
                      state="submitted"),
    ], id="msg-team", finished_reason="interrupted", usage=Usage(input_tokens=300, output_tokens=41))


def _waiting_reply() -> Msg:
    """The run stops here: calls waiting for permission, allowed, pending, and one still running."""
    rule = PermissionRule(tool_name="book_flight", rule_content=None, behavior="ask", source="userSettings")
    return AssistantMsg("Friday", [
        TextBlock(text="I need your confirmation before booking."),
        ToolCallBlock(id="call_ask", name="book_flight", input='{"to": "Kyoto"}', state="asking",
                      suggested_rules=[rule]),
        ToolCallBlock(id="call_allowed", name="get_weather", input='{"city": "Rome"}', state="allowed"),
        ToolCallBlock(id="call_pending", name="get_weather", input='{"city": "Oslo"}'),
        ToolCallBlock(id="call_slow", name="search", input='{"q": "museums"}', state="finished"),
        ToolResultBlock(id="call_slow", name="search", output=""),
    ], id="msg-waiting")


def _after_team() -> Msg:
    """The planner's reply answers the TeamAssign call in a later Msg."""
    return AssistantMsg("Friday", [
        ToolResultBlock(id="call_team", name="TeamAssign", output=[TextBlock(text="Booked Hotel Lumière.")],
                        state="success", metadata={"member": "planner"}),
        TextBlock(text="The planner booked Hotel Lumière."),
    ], id="msg-after-team", finished_reason="completed", finished_at=_timestamp())


def main() -> None:
    agentscope.set_id_factory(_id)
    agentscope.set_timestamp_factory(_timestamp)
    data = [msg.model_dump(mode="json") for msg in conversation()]
    for payload in data:  # the library's own storage reads them back this way
        assert Msg.model_validate(payload).model_dump(mode="json") == payload
    OUT.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} messages to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
