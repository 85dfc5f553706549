"""The collector pause around bulk CPU work: nested, and it puts back what it found."""

import gc

from store.gcpause import paused_gc


def test_pauses_nest_and_restore():
    assert gc.isenabled()
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_still_restores():
    try:
        with paused_gc():
            raise ValueError
    except ValueError:
        pass
    assert gc.isenabled()


def test_overlapping_pauses_still_collect_the_young_generation(monkeypatch):
    import threading

    import store.gcpause as gcpause

    collected = []
    monkeypatch.setattr(gcpause.gc, "collect", lambda generation=2: collected.append(generation))
    entered, release = threading.Event(), threading.Event()

    def other_operation():
        with paused_gc():
            entered.set()
            release.wait(5)

    other = threading.Thread(target=other_operation)
    other.start()
    entered.wait(5)
    try:
        with paused_gc():
            pass
        assert collected == []  # a short overlap: nothing
        monkeypatch.setattr(gcpause, "_since", gcpause._since - 2 * gcpause.OVERLAP_COLLECT_S)
        with paused_gc():
            with paused_gc():
                pass
            assert collected == []  # nested in one thread: one operation, nothing collected yet
        assert collected == [0] and not gc.isenabled()  # this thread's pause ended, the other's runs
    finally:
        release.set()
        other.join()
    assert gc.isenabled()


def test_the_canonical_messages_are_freed_before_the_pause_ends(monkeypatch, tmp_path):
    """A save's or a load's canonical messages are gone when the collector comes back on: the first
    pass after a pause walks every object still alive that was built in it (20 ms a 10k load)."""
    import store.gcpause as gcpause
    from store import ConversationStore
    from store.model import Message

    store = ConversationStore(f"sqlite:///{tmp_path / 'gc.db'}")
    alive: list[int] = []
    gc.collect()
    before = sum(type(o) is Message for o in gc.get_objects())  # other tests' messages

    class Spy:  # gc, with a count of the messages alive whenever a pause ends
        def __getattr__(self, name):
            return getattr(gc, name)

        @staticmethod
        def enable():
            alive.append(sum(type(o) is Message for o in gc.get_objects()))
            gc.enable()

    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    monkeypatch.setattr(gcpause, "gc", Spy())
    cid = store.save(messages, format="openai")
    store.append(cid, messages, format="openai")
    store.replace(cid, messages, format="openai")
    assert store.load(cid, format="anthropic")["messages"]
    store.close()
    assert alive and set(alive) == {before}


def test_conversions_leave_no_reference_cycles():
    """Every pair of formats on the bundled samples (bad tool-call arguments among them): nothing
    for the collector to find once a conversion returns. A cycle ties up what it reaches until a
    collection, and under a pause that is every object built meanwhile (an exception kept in a
    local tied the reader's frames, and with them a 20k-message conversion, to itself: 350 ms)."""
    import copy

    import store
    from store.demo import samples
    from store.formats._common import parse_json

    data = samples()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert parse_json('{"a": ')[0] is None
        for source in store.FORMATS:
            for target in store.FORMATS:
                store.convert(copy.deepcopy(data[source]), from_=source, to=target, on_loss=lambda loss: None)
        gc.collect()
        assert [type(o).__name__ for o in gc.garbage] == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
