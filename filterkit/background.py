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
    """The chunks of the iterator ``make_chunks()``, produced by a background thread
    that reads the next chunk while the caller works on this one, so reading (whose
    compiled parts and numpy work release the GIL) overlaps with the caller's work on
    the other core.

    The thread reads no further ahead than that: a chunk it has read waits until the
    caller takes it before the next is read, so the chunk in the caller's hands and one
    chunk read (or being read) are all that is held, besides what ``make_chunks()`` holds
    itself.
    Chunks arrive in order; an error of the reader is raised here, in the caller's thread,
    when its chunk is due.  When the caller stops early (an error, Ctrl-C, an abandoned
    generator), the thread stops after the chunk in hand and closes the reader.
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


def write_behind(chunks: Iterable[Chunk], write, depth: int = 1) -> None:
    """``write(chunk)`` for every chunk, in order, in a background thread, while this
    thread produces the next chunk (the compiled formatter releases the GIL).

    An error of ``write`` (a full disk, a closed pipe) is raised here once noticed,
    and no later chunk is written.  When producing fails, the chunks produced before
    are still written, as they would be without the thread, and the thread is waited
    for before the error goes on.  Ctrl-C (and SIGTERM) stops the writing at once,
    without waiting.  At most ``depth`` + 1 chunks are held.
    """
    pending: queue.Queue = queue.Queue(maxsize=depth)
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
