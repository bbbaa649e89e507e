"""Per-startup copies invalidated row by row from the change sequence (no app imported here).

The data token (core/readcache.py) has two forms:

- `<epoch>.<sequence>`: written by the change service (startups/changes.py) in the transaction
  of every itemised write: the epoch of the token it replaces, and the highest `Change` id it
  inserted. Each such write is one or more `Change` rows naming the startups it touched.
- `<epoch>` alone (a random hex string): written by every other data write (an ORM save a
  receiver caught, an owner's account, a write by a process of an older release). Nothing says
  which startups it touched, so it starts a new epoch: every per-startup copy is dropped.

A process remembers the token it last applied (its checkpoint). When a request brings a token
of the same epoch with a higher sequence, the process reads the `Change` rows between the two
(one small query by primary key range, once per process per new sequence, whoever asks first)
and drops only the copies of the startups they name. A copy is kept with the epoch and the
sequence the request that built it had read before reading its rows, and refused when its
startup changed above that sequence: a copy is never older than a change this process has
applied.

`RowCopies` holds the copies (key -> value, each tagged with its startup's id); `Checkpoint`
applies the sequence to every `RowCopies`. The reader of `Change` rows is passed in.
"""

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any

# Past this many `Change` rows between two tokens, drop everything instead of reading them.
MAX_APPLIED_ROWS = 5_000
# How many startups' last change sequence a process remembers before it forgets them all
# (copies built under an older sequence than the forgetting point are then refused).
MAX_REMEMBERED = 200_000


def parse(token: str | None) -> tuple[str | None, int | None]:
    """(epoch, sequence) of a data token; the sequence is None for a token that starts a new
    epoch (no `.`), and both are None without a token."""
    if not token:
        return None, None
    epoch, dot, sequence = token.partition(".")
    if dot and sequence.isdigit():
        return epoch, int(sequence)
    return token, None


def token_of(epoch: str | None, sequence: int, *, new_epoch: Callable[[], str]) -> str:
    """The data token a change service write leaves: the epoch of the token it replaces (a new
    one if there is none) and the highest sequence it wrote."""
    return f"{(epoch or new_epoch())[:16]}.{sequence}"


# The sequence of a token that starts an epoch: below every sequence of that epoch.
UNKNOWN = -1

Stamp = tuple[str, int]  # (epoch, sequence) read before the rows a copy was built from


class RowCopies:
    """A bounded per-process map of per-startup copies, valid while their epoch is current and
    their startup has no applied change above the sequence they were built at."""

    def __init__(self, checkpoint: "Checkpoint", *, max_entries: int, seconds: Callable[[], float]):
        self.max_entries = max_entries
        self._seconds = seconds
        # key -> (epoch, expires, value, startup id, sequence): the value stays third (tests
        # read it there).
        self._entries: OrderedDict[Hashable, tuple[str, float, Any, int, int]] = OrderedDict()
        self._by_startup: dict[int, set[Hashable]] = {}
        self._lock = threading.Lock()
        self._checkpoint = checkpoint
        checkpoint.copies.append(self)

    def lookup(self, keys: Iterable[Hashable], stamp: Stamp | None) -> dict:
        """The current copies among `keys` for a request holding `stamp` (from
        `Checkpoint.stamp`; None: nothing may be used or kept now)."""
        if stamp is None:
            return {}
        epoch, now, found = stamp[0], time.monotonic(), {}
        # A request holding an older sequence than applied (a token read a moment earlier)
        # gets only the copies of startups that did not change since its sequence.
        older = stamp[1] < (self._checkpoint.sequence or 0)
        last_change = self._checkpoint.last_change
        for key in keys:
            entry = self._entries.get(key)
            if entry is None or entry[0] != epoch or entry[1] <= now:
                continue
            if older and last_change.get(entry[3], -1) > stamp[1]:
                continue
            found[key] = entry[2]
        return found

    def put(self, key: Hashable, value: Any, startup_id: int, stamp: Stamp | None) -> None:
        """Keep `value`, a copy of startup `startup_id` built from rows read after `stamp`."""
        if stamp is None or not self._checkpoint.keeps(startup_id, stamp):
            return
        expires = time.monotonic() + self._seconds()
        with self._lock:
            if not self._checkpoint.keeps(startup_id, stamp):  # a change applied meanwhile
                return
            self._forget(key)
            self._entries[key] = (stamp[0], expires, value, startup_id, stamp[1])
            self._by_startup.setdefault(startup_id, set()).add(key)
            while len(self._entries) > self.max_entries:
                self._forget(next(iter(self._entries)))

    def drop(self, startup_ids: Iterable[int]) -> None:
        with self._lock:
            for startup_id in startup_ids:
                for key in list(self._by_startup.get(startup_id, ())):
                    self._forget(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._by_startup.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _forget(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            keys = self._by_startup.get(entry[3])
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_startup[entry[3]]


class Checkpoint:
    """This process's last applied data token, and the last change applied per startup."""

    def __init__(self, changed: Callable[[int, int], list[tuple[int, int]]]):
        # changed(after, upto): (startup id, sequence) of the Change rows in (after, upto].
        self._changed = changed
        self.copies: list[RowCopies] = []
        self.epoch: str | None = None
        self.sequence: int | None = None
        self.floor = 0  # copies built below this sequence are refused (see MAX_REMEMBERED)
        self.last_change: dict[int, int] = {}
        self._lock = threading.Lock()
        self.applied_rows = 0  # Change rows read (tests and the bench notes)

    def stamp(self, token: str | None) -> Stamp | None:
        """The stamp for a request holding the data `token`, after applying the changes up to
        it; None when copies may not be used for it (no token, or one older than this process
        still remembers changes for). A token that starts an epoch, and the
        first sequence of an epoch, drop every copy (nothing says what changed before)."""
        epoch, sequence = parse(token)
        if epoch is None:
            return None
        sequence = UNKNOWN if sequence is None else sequence
        if epoch == self.epoch and sequence == self.sequence:
            return (epoch, sequence)  # the common case: nothing new, no lock
        with self._lock:
            if epoch != self.epoch or self.sequence is None:
                self._restart(epoch, sequence)
            elif sequence < self.floor:
                return None  # older than what this process still remembers
            elif sequence < self.sequence:
                pass  # an older token than applied: copies of startups unchanged since serve it
            elif self.sequence == UNKNOWN:  # which changes came since the epoch began: unknown
                self._restart(epoch, sequence)
            elif sequence > self.sequence:
                self._apply(sequence)
        return (epoch, sequence)

    def keeps(self, startup_id: int, stamp: Stamp) -> bool:
        """Whether a copy of `startup_id` built after reading `stamp` may be kept."""
        epoch, sequence = stamp
        if epoch != self.epoch or sequence < self.floor:
            return False
        return self.last_change.get(startup_id, -1) <= sequence

    def reset(self) -> None:
        with self._lock:
            self.epoch = self.sequence = None
            self.last_change.clear()
            self.floor = 0
            for copies in self.copies:
                copies.clear()

    def _restart(self, epoch: str, sequence: int) -> None:
        for copies in self.copies:
            copies.clear()
        self.last_change.clear()
        self.epoch, self.sequence, self.floor = epoch, sequence, sequence

    def _apply(self, upto: int) -> None:
        after = self.sequence
        if upto - after > MAX_APPLIED_ROWS:  # sequences have gaps: a bound, not a count
            self._restart(self.epoch, upto)
            return
        rows = self._changed(after, upto)
        self.applied_rows += len(rows)
        if len(self.last_change) + len(rows) > MAX_REMEMBERED:
            self.last_change.clear()
            self.floor = upto
        touched = set()
        for startup_id, sequence in rows:
            touched.add(startup_id)
            if sequence > self.last_change.get(startup_id, -1):
                self.last_change[startup_id] = sequence
        for copies in self.copies:
            copies.drop(touched)
        self.sequence = upto


class AnswerCopies:
    """A bounded per-process map of answers made of several startups (a search's matches, a
    profile): each one lives until a change applied to a startup it shows, or to one that
    may now join it, and for its epoch only.

    An answer is kept with its scope: `ids`, the startups it shows (None: it follows every
    change), and `joins(row)`, which says whether a startup read anew after a change may now
    be in it (None: only its own startups matter). `read(ids)` reads the startups that
    changed, once per applied sequence while an answer kept has a `joins`, from the primary:
    {id: row} of those that may be in any answer at all. The last applied changes are
    remembered (`RECENT_APPLIES`), so an answer built while one was applied is still kept
    when that change does not touch it.

    Bounded twice: at most `max_entries` answers and, with `max_bytes`, at most that many
    bytes of answers as `size(value)` counts them (the least recently kept go first); an
    answer bigger than the whole budget is not kept."""

    RECENT_APPLIES = 256

    def __init__(
        self,
        checkpoint: "Checkpoint",
        *,
        max_entries: int,
        seconds: Callable[[], float],
        read: Callable[[set[int]], dict[int, Any]],
        max_bytes: int | None = None,
        size: Callable[[Any], int] = lambda value: 0,
    ):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self.bytes = 0  # what `size` counts of the answers kept
        self._seconds = seconds
        self._read = read
        # key -> (epoch, expires, value, sequence, ids, joins, size)
        self._entries: OrderedDict[Hashable, tuple] = OrderedDict()
        self._lock = threading.Lock()
        self._checkpoint = checkpoint
        # The applied changes, newest last: [sequence, touched ids, rows read (None: not)].
        self._recent: deque[list] = deque()
        self._seen = UNKNOWN  # the highest sequence applied here
        self._forgotten = UNKNOWN  # the highest sequence no longer in `_recent`
        self.reads = 0  # `read` calls (tests)
        checkpoint.copies.append(self)

    def lookup(self, key: Hashable, stamp: Stamp | None) -> Any:
        """The current answer for `key` for a request holding `stamp`, or None. An answer
        kept is current for the newest applied sequence, so also for a request holding an
        older one of its epoch (its rows are read after its token, never before)."""
        entry = None if stamp is None else self._entries.get(key)
        if entry is None or entry[0] != stamp[0] or entry[1] <= time.monotonic():
            return None
        return entry[2]

    def put(
        self,
        key: Hashable,
        value: Any,
        stamp: Stamp | None,
        *,
        ids: Iterable[int] | None,
        joins: Callable[[Any], bool] | None = None,
    ) -> None:
        """Keep `value`, an answer built from rows read after `stamp`, showing the startups
        `ids` (None: any change drops it), unless a change applied since may be missing."""
        if stamp is None:
            return
        shown = None if ids is None else frozenset(ids)
        expires = time.monotonic() + self._seconds()
        size = self._size(value)
        if self.max_bytes is not None and size > self.max_bytes:
            return
        with self._lock:
            if not self._remembers(stamp):
                return
            for sequence, touched, rows in self._recent:
                if sequence > stamp[1] and _touches(touched, rows, shown, joins):
                    return  # applied since the rows were read: it may be missing
            self._pop(key)
            self._entries[key] = (stamp[0], expires, value, stamp[1], shown, joins, size)
            self.bytes += size
            while len(self._entries) > self.max_entries or (
                self.max_bytes is not None and self.bytes > self.max_bytes
            ):
                self._pop(next(iter(self._entries)))

    def current(
        self, stamp: Stamp, *, ids: Iterable[int] | None, joins: Callable[[Any], bool] | None
    ) -> bool:
        """Whether an answer built from rows read after `stamp`, here or by another process
        (a shared entry), still holds for this process: of its epoch, at or above what it
        remembers changes from, and no change applied since may have changed it. The
        changed startups of an applied change no kept answer needed read (`read`) are read
        here, once, when the answer may be joined."""
        shown = None if ids is None else frozenset(ids)
        with self._lock:
            if not self._remembers(stamp):
                return False
            since = [applied for applied in self._recent if applied[0] > stamp[1]]
        for applied in since:
            _, touched, rows = applied
            may_join = shown is not None and joins is not None and touched.isdisjoint(shown)
            if rows is None and may_join:
                self.reads += 1
                rows = tuple(self._read(set(touched)).values())
                with self._lock:
                    applied[2] = rows
            if _touches(touched, rows, shown, joins):
                return False
        return True

    def _remembers(self, stamp: Stamp) -> bool:
        """Whether every change applied here after `stamp` is still remembered (the lock
        held): the stamp's epoch, not below what was forgotten or where the process began."""
        checkpoint = self._checkpoint
        return stamp[0] == checkpoint.epoch and stamp[1] >= max(self._forgotten, checkpoint.floor)

    def _pop(self, key: Hashable) -> None:
        """Forget `key`'s answer (the lock held)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[6]

    def drop(self, startup_ids: Iterable[int]) -> None:
        touched = frozenset(startup_ids)
        if not touched:
            return
        with self._lock:
            last = self._checkpoint.last_change
            self._seen = max(self._seen, *(last.get(i, UNKNOWN) for i in touched))
            applied = [self._seen, touched, None]
            self._recent.append(applied)
            while len(self._recent) > self.RECENT_APPLIES:
                self._forgotten = self._recent.popleft()[0]
            entries = list(self._entries.items())
        rows = None  # not read: no answer kept here may be joined (one built meanwhile waits)
        if any(entry[5] is not None for _, entry in entries):
            self.reads += 1
            rows = tuple(self._read(set(touched)).values())
        doomed = [key for key, entry in entries if _touches(touched, rows, entry[4], entry[5])]
        with self._lock:
            if rows is not None:  # `current` may have read them meanwhile
                applied[2] = rows
            for key in doomed:
                self._pop(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0
            self._recent.clear()
            self._seen = self._forgotten = UNKNOWN

    def __len__(self) -> int:
        return len(self._entries)


def _touches(
    touched: frozenset[int],
    rows: tuple | None,
    shown: frozenset[int] | None,
    joins: Callable[[Any], bool] | None,
) -> bool:
    """Whether a change to `touched` (read anew as `rows`; None: not read yet) may change an
    answer showing `shown` that a row joins when `joins` says so."""
    if shown is None or not touched.isdisjoint(shown):
        return True
    if joins is None:
        return False
    return rows is None or any(map(joins, rows))
