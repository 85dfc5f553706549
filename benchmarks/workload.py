"""A deterministic workload: agent conversations in OpenAI Chat Completions format.

The mix (the issue's "realistic mix"):

- one system prompt per conversation, then turns of a user message and the assistant's answer;
- ~660 characters of text per message on average (text, tool arguments and reasoning counted);
- 40% of turns: the assistant first calls 1-3 tools (``tool_calls``), each answered by a ``tool``
  message, then answers in text;
- 30% of assistant messages carry ``reasoning_content`` (the DeepSeek/vLLM/Qwen field: the ``openai``
  adapter has no reasoning block, so convstore keeps it in the message's ``extras``, byte-exact);
- 5% of user messages attach a small inline image (a ``data:`` URI, 200-1,200 bytes, each unique).

Everything comes from ``random.Random(seed)``: the same seed gives the same messages, byte for byte.
Call ids are unique across conversations of one seed (``call_<seed>_<conversation>_<n>``).

``python -m benchmarks.workload FILE --messages 1000000`` streams a JSON Lines file to disk.
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

TOOL_SHARE = 0.40
REASONING_SHARE = 0.30
IMAGE_SHARE = 0.05
TOOLS = ("get_weather", "search_docs", "run_sql", "read_file", "http_get", "calendar_lookup")
_WORDS = (
    "the agent checks forecast order invoice customer latency deploy region database index query "
    "result cache token budget retry timeout schema migration payload request response summary table "
    "row column cluster node memory window context tool call argument error status report metric "
    "Kyoto Paris Lisbon Nairobi Montreal stable pending answered failed quickly carefully because "
    "however therefore and or but with from into over under about after before while during"
).split()
_CORPUS_SEED = 20240611


def _corpus(size: int = 1 << 20) -> str:
    """A fixed 1 MiB of word salad that message texts are cut from (fast, deterministic)."""
    rng = random.Random(_CORPUS_SEED)
    words, total = [], 0
    while total < size:
        word = rng.choice(_WORDS)
        if rng.random() < 0.08:
            word += rng.choice(".,;:?!")
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


CORPUS = _corpus()


@dataclass
class _Gen:
    rng: random.Random
    prefix: str
    calls: int = 0

    def text(self, lo: int, hi: int) -> str:
        n = int(self.rng.triangular(lo, hi))
        start = self.rng.randrange(0, len(CORPUS) - n - 1)
        return CORPUS[start:start + n].strip() or "ok"

    def image(self) -> str:
        size = self.rng.randint(200, 1200)
        data = b"\x89PNG\r\n\x1a\n" + self.rng.randbytes(size)
        return "data:image/png;base64," + base64.b64encode(data).decode()

    def call_id(self) -> str:
        self.calls += 1
        return f"{self.prefix}_{self.calls:07d}"

    def user(self) -> dict[str, Any]:
        text = self.text(200, 1050)
        if self.rng.random() < IMAGE_SHARE:
            return {"role": "user", "content": [{"type": "text", "text": text},
                                                {"type": "image_url", "image_url": {"url": self.image()}}]}
        return {"role": "user", "content": text}

    def assistant(self, with_calls: bool) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant"}
        if with_calls:
            msg["content"] = self.text(40, 200) if self.rng.random() < 0.5 else None
            msg["tool_calls"] = [self.tool_call() for _ in range(self.rng.randint(1, 3))]
        else:
            msg["content"] = self.text(250, 1180)
        if self.rng.random() < REASONING_SHARE:
            msg["reasoning_content"] = self.text(120, 600)
        return msg

    def tool_call(self) -> dict[str, Any]:
        args = {"query": self.text(20, 160), "limit": self.rng.randint(1, 50),
                "verbose": self.rng.random() < 0.5}
        return {"id": self.call_id(), "type": "function",
                "function": {"name": self.rng.choice(TOOLS), "arguments": orjson.dumps(args).decode()}}

    def results(self, assistant: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": call["id"], "content": self.text(200, 1080)}
                for call in assistant["tool_calls"]]


def iter_messages(n: int, seed: int = 0, conversation: int = 0) -> Iterator[dict[str, Any]]:
    """The first ``n`` messages of conversation number ``conversation`` of ``seed``, one at a time.

    A cut at ``n`` may leave the last tool calls without results (as a live agent's are)."""
    gen = _Gen(random.Random(seed * 1_000_003 + conversation), f"call_{seed}_{conversation}")
    produced = 0

    def emit(msgs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal produced
        for m in msgs:
            if produced < n:
                produced += 1
                yield m

    yield from emit([{"role": "system", "content": gen.text(300, 1100)}])
    while produced < n:
        yield from emit([gen.user()])
        if gen.rng.random() < TOOL_SHARE:
            calling = gen.assistant(with_calls=True)
            yield from emit([calling, *gen.results(calling)])
        yield from emit([gen.assistant(with_calls=False)])


def conversation(n: int, seed: int = 0, number: int = 0) -> list[dict[str, Any]]:
    """``n`` messages as a list (see :func:`iter_messages`)."""
    return list(iter_messages(n, seed, number))


def call_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or ()]


def answered_call_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [m["tool_call_id"] for m in messages if m["role"] == "tool"]


def sample_ids(ids: list[str], k: int, seed: int = 1) -> list[str]:
    """``k`` ids spread over the list, in a shuffled (deterministic) order."""
    if not ids:
        return []
    rng = random.Random(seed)
    return [rng.choice(ids) for _ in range(k)]


def chars(message: dict[str, Any]) -> int:
    """The message's characters of text: content, refusal, tool arguments and reasoning."""
    content = message.get("content")
    total = len(content) if isinstance(content, str) else sum(
        len(p.get("text", "")) for p in content or ())
    total += len(message.get("reasoning_content") or "")
    total += sum(len(c["function"]["arguments"]) for c in message.get("tool_calls") or ())
    return total


def describe(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What a workload holds: the figures that make it "the realistic mix"."""
    assistants = [m for m in messages if m["role"] == "assistant"]
    turns = sum(1 for m in messages if m["role"] == "user")
    return {
        "messages": len(messages),
        "chars_per_message": round(sum(map(chars, messages)) / max(len(messages), 1)),
        "turns": turns,
        "turns_with_tool_calls": round(sum(1 for m in assistants if m.get("tool_calls")) / max(turns, 1), 3),
        "tool_calls": sum(len(m.get("tool_calls") or ()) for m in assistants),
        "with_reasoning": round(sum("reasoning_content" in m for m in assistants)
                                / max(len(assistants), 1), 3),
        "images": sum(1 for m in messages if isinstance(m.get("content"), list)
                      and any(p["type"] == "image_url" for p in m["content"])),
    }


def write_jsonl(path: str | Path, n: int, seed: int = 0, every: int = 100_000) -> int:
    """Stream ``n`` messages of one conversation to ``path`` as JSON Lines; bytes written.

    Memory stays flat (one message at a time); progress goes to standard error."""
    written = 0
    with open(path, "wb") as out:
        for i, message in enumerate(iter_messages(n, seed), start=1):
            line = orjson.dumps(message) + b"\n"
            out.write(line)
            written += len(line)
            if every and i % every == 0:
                print(f"  workload: {i:,}/{n:,} messages written ({written / 2**20:,.0f} MiB)",
                      file=sys.stderr, flush=True)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the benchmark workload as JSON Lines.")
    parser.add_argument("file")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    size = write_jsonl(args.file, args.messages, args.seed)
    print(f"{args.file}: {args.messages:,} messages, {size / 2**20:,.1f} MiB")


if __name__ == "__main__":
    main()
