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
