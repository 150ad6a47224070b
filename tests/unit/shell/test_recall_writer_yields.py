"""The index writer lets a run of hovers go first, for a bounded time, after buffers were opened.

The pacing is checked on a virtual clock (the module's `time` replaced by one whose `sleep` moves it on),
so the waits below are what the writer decided, not what a loaded machine's scheduler made of them."""

from __future__ import annotations

import threading

import pytest

from kin_memory.lsp import recall_sync
from kin_memory.lsp.recall_sync import RecallSync


class VirtualClock:
    """`time.monotonic` and `time.sleep` for the writer: sleeping moves the clock, nothing else does."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps = 0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps += 1
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    virtual = VirtualClock()
    monkeypatch.setattr(recall_sync, "time", virtual)
    return virtual


def writer(clock: VirtualClock, touched_ago: float, last_query_ago: float, running: int = 0) -> RecallSync:
    sync = RecallSync.__new__(RecallSync)  # only the writer's pacing state: no session, no index
    sync.lock = threading.Lock()
    sync._buffer_touched = clock.now - touched_ago
    sync._last_query = clock.now - last_query_ago
    sync._queries = running
    return sync


def settled(clock: VirtualClock, sync: RecallSync) -> float:
    started = clock.now
    sync._settle()
    return clock.now - started


def yielded(clock: VirtualClock, sync: RecallSync) -> float:
    started = clock.now
    sync.yield_to_queries()
    return clock.now - started


def test_after_an_open_the_writer_waits_for_a_pause_in_the_queries(clock: VirtualClock) -> None:
    assert settled(clock, writer(clock, touched_ago=1.0, last_query_ago=0.0)) == 0  # nobody opened anything
    waited = settled(clock, writer(clock, touched_ago=0.2, last_query_ago=0.0))
    assert recall_sync.QUERY_QUIET <= waited < recall_sync.QUIET_MAX


def test_a_stream_of_queries_delays_the_writer_only_for_a_bounded_time(clock: VirtualClock) -> None:
    waited = settled(clock, writer(clock, touched_ago=0.2, last_query_ago=0.0, running=1))  # never ends
    assert recall_sync.QUIET_MAX <= waited < recall_sync.QUIET_MAX + 0.01


def test_background_work_waits_for_a_gap_between_queries_not_only_for_a_running_one(
    clock: VirtualClock,
) -> None:
    assert yielded(clock, writer(clock, touched_ago=1.0, last_query_ago=1.0)) == 0  # nobody is querying
    waited = yielded(clock, writer(clock, touched_ago=1.0, last_query_ago=0.0))  # a hover just answered
    assert recall_sync.QUERY_GAP <= waited < recall_sync.QUERY_GAP + 0.01


def test_background_work_waits_for_a_gap_between_keystrokes(clock: VirtualClock) -> None:
    waited = yielded(clock, writer(clock, touched_ago=0.0, last_query_ago=1.0))  # a buffer just changed
    assert recall_sync.QUERY_GAP <= waited < recall_sync.QUERY_GAP + 0.01


def test_background_work_waits_for_queries_only_for_a_bounded_time(clock: VirtualClock) -> None:
    waited = yielded(clock, writer(clock, touched_ago=1.0, last_query_ago=0.0, running=1))  # never ends
    assert recall_sync.QUERY_YIELD <= waited < recall_sync.QUERY_YIELD + 0.01
