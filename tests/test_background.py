"""The read-ahead thread waits for the caller without polling (issue 38): it wakes once per
chunk taken, and once when the caller stops, however long the caller holds a chunk."""

from __future__ import annotations

import threading
import time

import numpy as np

from filterkit import background
from filterkit.schema import Chunk


class CountedSemaphore(threading.Semaphore):
    """A semaphore that counts the calls to :meth:`acquire`."""

    calls = 0

    def acquire(self, *arguments, **options):
        CountedSemaphore.calls += 1
        return super().acquire(*arguments, **options)


def chunks(count: int):
    for number in range(count):
        yield Chunk(np.full((1, 1), float(number)), {})


def test_the_reader_thread_waits_once_per_chunk_while_the_caller_is_slow(monkeypatch):
    monkeypatch.setattr(background.threading, "Semaphore", CountedSemaphore)
    CountedSemaphore.calls = 0
    taken = []
    for chunk in background.read_ahead(lambda: chunks(3)):
        taken.append(int(chunk.values[0, 0]))
        time.sleep(0.12)  # more than two of the 50 ms polls the thread made before
    assert taken == [0, 1, 2]
    assert CountedSemaphore.calls == 4  # three chunks and the end, each handed over once


def test_a_caller_that_stops_early_wakes_the_waiting_thread():
    closed = threading.Event()

    def make_chunks():
        try:
            yield from chunks(5)
        finally:
            closed.set()

    produced = background.read_ahead(make_chunks)
    assert int(next(produced).values[0, 0]) == 0
    produced.close()
    assert closed.wait(10)  # the thread woke, saw the stop and closed the reader
