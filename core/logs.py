"""Logging helpers used by the LOGGING setting."""

import logging
import threading
import time


class OncePerInterval(logging.Filter):
    """Lets one record per `seconds` through (per process) and counts the ones it held back.

    Put on the cache logger: with Redis down every cache call fails the same way, and one
    line a minute says so as well as a thousand would.
    """

    def __init__(self, seconds: float = 60.0, name: str = ""):
        super().__init__(name)
        self.seconds = seconds
        self._lock = threading.Lock()
        self._next = 0.0
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        with self._lock:
            if now < self._next:
                self._held += 1
                return False
            held, self._held, self._next = self._held, 0, now + self.seconds
        if held:
            record.msg = f"{record.msg} ({held} more like it in the last {self.seconds:.0f} s)"
        return True
