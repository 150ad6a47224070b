"""The index writer lets a run of hovers go first, for a bounded time, after buffers were opened."""

from __future__ import annotations

import threading
import time

from kin_memory.lsp import recall_sync
from kin_memory.lsp.recall_sync import RecallSync


def writer(touched_ago: float, last_query_ago: float, running: int = 0) -> RecallSync:
    sync = RecallSync.__new__(RecallSync)  # only the writer's pacing state: no session, no index
    now = time.monotonic()
    sync.lock = threading.Lock()
    sync._buffer_touched = now - touched_ago
    sync._last_query = now - last_query_ago
    sync._queries = running
    return sync


def timed(sync: RecallSync) -> float:
    started = time.monotonic()
    sync._settle()
    return time.monotonic() - started


def test_after_an_open_the_writer_waits_for_a_pause_in_the_queries() -> None:
    assert timed(writer(touched_ago=1.0, last_query_ago=0.0)) < 0.05  # nobody opened anything lately
    waited = timed(writer(touched_ago=0.2, last_query_ago=0.0))
    assert recall_sync.QUERY_QUIET * 0.9 <= waited < recall_sync.QUIET_MAX


def test_a_stream_of_queries_delays_the_writer_only_for_a_bounded_time() -> None:
    sync = writer(touched_ago=0.2, last_query_ago=0.0, running=1)  # a query is always running
    waited = timed(sync)
    assert recall_sync.QUIET_MAX * 0.9 <= waited < recall_sync.QUIET_MAX + 0.2


def yielded(sync: RecallSync) -> float:
    started = time.monotonic()
    sync.yield_to_queries()
    return time.monotonic() - started


def test_background_work_waits_for_a_gap_between_queries_not_only_for_a_running_one() -> None:
    assert yielded(writer(touched_ago=1.0, last_query_ago=1.0)) < 0.01  # nobody is querying
    waited = yielded(writer(touched_ago=1.0, last_query_ago=0.0))  # a hover just answered
    assert recall_sync.QUERY_GAP * 0.9 <= waited < recall_sync.QUERY_YIELD


def test_background_work_waits_for_a_gap_between_keystrokes() -> None:
    waited = yielded(writer(touched_ago=0.0, last_query_ago=1.0))  # a buffer just changed
    assert recall_sync.QUERY_GAP * 0.9 <= waited < recall_sync.QUERY_YIELD


def test_background_work_waits_for_queries_only_for_a_bounded_time() -> None:
    waited = yielded(writer(touched_ago=1.0, last_query_ago=0.0, running=1))  # never ends
    assert recall_sync.QUERY_YIELD * 0.9 <= waited < recall_sync.QUERY_YIELD + 0.2
