"""Writers of different conversations never fail each other (issue 17: MariaDB deadlocks),
on every backend; and an export stays linear in the conversation's length."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from store import ConversationStore
from store.streaming import cuts_between

from .samples import tool_turn

ROOT = Path(__file__).resolve().parents[1]

# One conversation per process: appends of a call and its result, pops and truncates.
WRITER = """
import random, sys
from hypothesis import given
from hypothesis import strategies as st

from store import ConversationStore
from store.streaming import cuts_between
url, namespace, cid, seed, rounds = sys.argv[1:6]
rng = random.Random(int(seed))
failures = []
with ConversationStore(url, namespace=namespace) as s:
    for i in range(int(rounds)):
        try:
            s.append(cid, [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{seed}-{i}", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": f"c{seed}-{i}", "content": "r"}])
            op = rng.random()
            if op < 0.3:
                s.pop(cid, rng.randint(1, 3))
            elif op < 0.5:
                s.truncate(cid, max(0, s.info(cid).message_count - rng.randint(1, 6)))
        except Exception as exc:
            failures.append(f"round {i}: {exc}")
if failures:
    sys.exit(f"{len(failures)} failed writes; first: {failures[0]}")
"""


def test_writers_of_different_conversations_never_fail(database_url, namespace):
    with ConversationStore(database_url, namespace=namespace) as s:
        cids = [s.save(tool_turn(1000 + i)) for i in range(8)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, database_url, namespace, cid, str(i), "60"],
                              cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
             for i, cid in enumerate(cids)]
    failures = []
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode:
            failures.append(err.strip().splitlines()[-1])
    assert not failures, failures
    with ConversationStore(database_url, namespace=namespace) as s:
        for cid in cids:  # every conversation whole and linked: each result after its call
            assert len(s.load(cid)) == s.info(cid).message_count
            for r in s.find_tool_calls(conversation_id=cid):
                assert r.result_position == r.call_position + 1 if r.status == "answered" else r.result_position is None


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 60)), max_size=20), st.integers(1, 61),
       st.integers(1, 12))
def test_safe_cuts_match_their_definition(pairs, count, size):
    starts = {b: min(a, b - 1) for a, b in pairs if b < count}  # a result's window starts before it
    reaching = [(start, seq) for seq, start in starts.items()]
    window = [starts.get(seq, seq) for seq in range(count)]
    # The plain definition: a cut at s is safe when no message from s on starts its window below s.
    safe = [s for s in range(1, count) if min(window[s:]) >= s]
    expected, last = [], 0
    for s in safe:
        if s - last >= size:
            expected.append(s)
            last = s
    expected += [count] if count > last else []
    assert cuts_between(reaching, count, size) == expected


def test_export_of_a_long_conversation_reads_only_its_results(store):
    turns = [m for i in range(3000) for m in tool_turn(i)]
    cid = store.save(turns)
    assert list(store.export(cid, chunk=1000)) == turns
