"""The refresh worker's way of overlapping syncs (`sync_revenue --concurrency N`): up to N at
once in threads, each on a database connection of its own. `bench/writes.py` runs its syncs
through the same function, so the bench overlaps them as a deployed worker does."""

import threading
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.db import close_old_connections, connections
from django.db import connection as db_connection

Item = TypeVar("Item")

_NONE_LEFT = object()


def in_threads(items: Iterable[Item], work: Callable[[Item], None], *, concurrency: int) -> None:
    """`work(item)` for every item, up to `concurrency` at once: each thread takes the next
    item until none is left, on a database connection of its own that it closes at its
    end. An exception `work` lets out stops every thread from taking more (the round
    fails, as a database outage should end it) and is raised once all have stopped.

    `items` may be a generator: it is advanced by one thread at a time, so one that waits
    until its next item is due (bench/writes.py's schedule) hands each item out once, to the
    first thread free to take it.

    Inside a transaction (a caller's `atomic` block) the items run here, one at a time:
    another thread's connection could not see the transaction's rows."""
    few = isinstance(items, Sized) and len(items) < 2
    if concurrency == 1 or few or db_connection.in_atomic_block:
        for item in items:
            work(item)
        return
    queue: Iterator[Item] = iter(items)
    taking = threading.Lock()
    stop = threading.Event()

    def drain() -> None:
        try:
            while not stop.is_set():
                with taking:
                    item = next(queue, _NONE_LEFT)
                if item is _NONE_LEFT:
                    return
                close_old_connections()  # one broken by a database restart is replaced
                work(item)
        except BaseException:
            stop.set()
            raise
        finally:
            connections.close_all()  # this thread's connections, not the caller's

    threads = min(concurrency, len(items)) if isinstance(items, Sized) else concurrency
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sync") as pool:
        running = [pool.submit(drain) for _ in range(threads)]
    for future in running:
        if future.exception() is not None:
            raise future.exception()
