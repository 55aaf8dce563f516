"""Reading ahead and writing behind in background threads, so that parsing, the
chain's work and formatting share the machine's two cores (their compiled parts
and numpy work release the GIL)."""

from __future__ import annotations

import contextlib
import queue
import threading
from typing import Iterable, Iterator

from filterkit.schema import Chunk


def read_ahead(make_chunks) -> Iterator[Chunk]:
    """The chunks of ``make_chunks()``, read by a background thread one chunk ahead of the caller (so
    two chunks are held at most), in order; a reader's error is raised here when its chunk is due.
    When the caller stops early, the thread stops after the chunk in hand and closes the reader.
    """
    ready: queue.SimpleQueue = queue.SimpleQueue()
    taken = threading.Semaphore(0)  # released once a chunk is taken, and once more on stopping
    stop = threading.Event()

    def hand_over(item) -> bool:
        """Put ``item`` in ``ready`` and wait until the caller takes it; False once stopped."""
        ready.put(item)
        taken.acquire()
        return not stop.is_set()

    def produce() -> None:
        chunks = None
        try:
            chunks = make_chunks()
            for chunk in chunks:
                if not hand_over((chunk, None)):
                    return
                del chunk  # taken: the caller holds it while the next is read
            hand_over((_END_OF_CHUNKS, None))
        except BaseException as error:  # re-raised in the caller's thread
            hand_over((None, error))
        finally:
            getattr(chunks, "close", lambda: None)()

    reader = threading.Thread(target=produce, name="filterkit-read-ahead", daemon=True)
    reader.start()
    finished = False
    try:
        while True:
            chunk, error = ready.get()
            taken.release()
            if error is not None:
                finished = True
                raise error
            if chunk is _END_OF_CHUNKS:
                finished = True
                return
            yield chunk
    finally:
        stop.set()
        taken.release()  # wakes the thread if it waits for a chunk to be taken
        # stopped early (Ctrl-C, an abandoned generator): the thread ends after the chunk in
        # hand, but a read stalled on a pipe must not hold the caller up for long
        reader.join(None if finished else _STOP_WAIT)


_END_OF_CHUNKS = object()
_STOP_WAIT = 1.0  # seconds a stopped background thread is waited for


def write_behind(chunks: Iterable[Chunk], write) -> None:
    """``write(chunk)`` for every chunk, in order, in a background thread while this one produces the next.

    An error of ``write`` is raised here once noticed, and nothing later is written.  When producing
    fails, the chunks produced before are still written first; Ctrl-C stops the writing at once.
    At most two chunks are held.
    """
    pending: queue.Queue = queue.Queue(maxsize=1)
    failures: list[BaseException] = []

    def consume() -> None:
        while True:
            chunk = pending.get()
            if chunk is _END_OF_CHUNKS:
                return
            if not failures:
                try:
                    write(chunk)
                except BaseException as error:  # re-raised in the producing thread
                    failures.append(error)
            del chunk  # written: not held while the next one is awaited

    writer = threading.Thread(target=consume, name="filterkit-write-behind", daemon=True)
    writer.start()
    try:
        for chunk in chunks:
            if failures:
                break
            pending.put(chunk)
    except KeyboardInterrupt:
        # not waited for: a write stalled on a full pipe must not hold up Ctrl-C, and the
        # caller discards the output; the thread writes nothing more and ends
        failures.append(KeyboardInterrupt())
        with contextlib.suppress(queue.Empty):
            while True:
                pending.get_nowait()
        pending.put_nowait(_END_OF_CHUNKS)
        raise
    except BaseException:
        pending.put(_END_OF_CHUNKS)
        writer.join()
        raise
    pending.put(_END_OF_CHUNKS)
    writer.join()
    if failures:
        raise failures[0]
