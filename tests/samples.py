"""Sample conversations shared by the tests."""

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

OPENAI_CHAT = [
    {"role": "developer", "content": "You are a weather agent.", "name": "ops"},
    {"role": "system", "content": [{"type": "text", "text": "Answer briefly."}]},
    {"role": "user", "name": "alice", "content": [
        {"type": "text", "text": "Weather in Kyoto and Paris? Here is a map."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/map.png"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-123"}},
    ]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_kyoto", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Kyoto\"}"}},
        {"id": "call_paris", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"C\"}"}},
    ]},
    {"role": "tool", "tool_call_id": "call_kyoto", "content": "Sunny, 21C"},
    {"role": "tool", "tool_call_id": "call_paris", "content": [{"type": "text", "text": "Rain, 12C"}]},
    {"role": "assistant", "content": "Kyoto is sunny (21C); Paris has rain (12C).", "refusal": None},
    {"role": "user", "content": "Thanks! Now book me a flight."},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot book flights."}]},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_bad", "type": "function", "function": {"name": "search", "arguments": "{not json"}},
    ]},
]


def tool_turn(i: int, *, answered: bool = True, error: bool = False) -> list[dict]:
    """An assistant tool call and (optionally) its result."""
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": "lookup", "arguments": f'{{"i": {i}}}'}}
    ]}
    out = [call]
    if answered:
        out.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"{'ERROR ' if error else ''}result {i}"})
    return out


def chat(n: int) -> list[dict]:
    """n messages: user turns, assistant tool calls with results, assistant answers."""
    msgs: list[dict] = []
    i = 0
    while len(msgs) < n:
        msgs.append({"role": "user", "content": f"question {i}"})
        msgs.extend(tool_turn(i))
        msgs.append({"role": "assistant", "content": f"answer {i}"})
        i += 1
    return msgs[:n]
