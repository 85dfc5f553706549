"""The window starts computed at write time against the plain definition, on random conversations."""

from hypothesis import given, settings
from hypothesis import strategies as st

from store import links
from store.model import Message, ToolCallBlock, ToolResultBlock


@st.composite
def conversations(draw):
    """Messages whose blocks call tools and answer earlier (or unknown) calls, cut into batches."""
    msgs, open_calls, n = [], [], 0
    for _ in range(draw(st.integers(1, 25))):
        blocks = []
        for _ in range(draw(st.integers(0, 2))):
            open_calls.append(f"c{n}")
            blocks.append(ToolCallBlock(call_id=f"c{n}", name="f"))
            n += 1
        for _ in range(draw(st.integers(0, 2))):
            pool = open_calls + ["ghost"]
            call_id = draw(st.sampled_from(pool))
            blocks.append(ToolResultBlock(call_id=call_id))
        msgs.append(Message(role="assistant", content=blocks))
    cuts = sorted(draw(st.sets(st.integers(1, max(len(msgs) - 1, 1)), max_size=4)))
    return msgs, [0, *[c for c in cuts if c < len(msgs)], len(msgs)]


def _call_seq_of_results(msgs):
    """For each message, the seqs of the calls its results are linked to (first result wins)."""
    where, answered, out = {}, set(), []
    for seq, msg in enumerate(msgs):
        linked = []
        for b in msg.content:
            if b.kind == "tool_call":
                where[b.call_id] = seq
            elif b.call_id in where and b.call_id not in answered:
                answered.add(b.call_id)
                linked.append(where[b.call_id])
        out.append(linked)
    return out


def _expected_start(msgs, last):
    linked = _call_seq_of_results(msgs)
    start = max(len(msgs) - last, 0)
    while True:
        earlier = min((c for seq in range(start, len(msgs)) for c in linked[seq]), default=start)
        if earlier >= start:
            return start
        start = earlier


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(1, 30))
def test_window_start_matches_definition(conversation, last):
    msgs, cuts = conversation
    known: dict[str, links.KnownCall] = {}
    starts: dict[int, int] = {}
    for lo, hi in zip(cuts, cuts[1:]):
        batch = msgs[lo:hi]
        refs = links.referenced_call_ids(batch)
        batch_known = {k: v for k, v in known.items() if k in refs}
        plan = links.plan(batch, conversation_id="x", first_seq=lo, known=batch_known, prior_starts=starts)
        for row in plan.inserts:
            known[row["call_id"]] = links.KnownCall(row["call_seq"], row["result_seq"] is not None)
        starts.update({lo + i: s for i, s in enumerate(plan.window_starts)})
    got = min((starts[s] for s in range(max(len(msgs) - last, 0), len(msgs))), default=len(msgs))
    assert got == _expected_start(msgs, last)
