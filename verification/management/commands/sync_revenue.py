import logging
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tqdm import tqdm

from startups.feed import changes_prune
from verification.models import ProviderConnection
from verification.providers import PROVIDERS
from verification.scheduling import connection_take, connections_due
from verification.selectors import connections_to_sync
from verification.services import SyncInProgress, revenue_sync
from verification.threads import in_threads

logger = logging.getLogger("verification.sync")

Item = TypeVar("Item")

DEFAULT_LOOP_SECONDS = 3600
# The worker looks for due connections this often (at most), so a new connection or one
# whose hour is up waits minutes, not another hour.
WAKE_SECONDS = 300
# Syncs in flight at once per process. A sync mostly waits for its provider (100 ms to seconds
# per call), so threads overlap the waits: 16 syncs of ~200 ms make ~50-80 syncs a second where
# one at a time made ~5 (docs/deployment.md, "With a refresh worker").
DEFAULT_CONCURRENCY = 16


class Command(BaseCommand):
    help = "Refresh verified revenue from the connected payment providers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--slug", help="refresh this startup only")
        parser.add_argument("--all", action="store_true", help="refresh every connected startup")
        parser.add_argument(
            "--loop",
            type=int,
            nargs="?",
            const=DEFAULT_LOOP_SECONDS,
            default=None,
            metavar="SECONDS",
            help=(
                f"run forever as the refresh worker: sync each connection every SECONDS "
                f"(default {DEFAULT_LOOP_SECONDS}), looking for due ones every "
                f"{WAKE_SECONDS // 60} minutes at most"
            ),
        )
        parser.add_argument(
            "--concurrency",
            type=int,
            default=DEFAULT_CONCURRENCY,
            metavar="N",
            help=(
                f"sync up to N connections at once, each in its own thread (default "
                f"{DEFAULT_CONCURRENCY}): their provider waits overlap. Each thread holds one "
                "database connection while a round runs, so the process opens up to N + 1 "
                "(its own as well); 1 syncs one at a time in the command's own thread and "
                "connection"
            ),
        )

    def handle(
        self,
        *args,
        slug: str | None,
        all: bool,
        loop: int | None,
        concurrency: int,
        **options,
    ) -> None:
        if bool(slug) == bool(all):
            raise CommandError("give exactly one of --slug S or --all")
        if loop is not None and loop < 1:
            raise CommandError("--loop needs a positive number of seconds")
        if concurrency < 1:
            raise CommandError("--concurrency needs a positive number of syncs")
        self.concurrency = concurrency
        self.output = threading.Lock()  # one line at a time, whichever thread writes it
        if loop is None:
            if self.sync_once(slug=slug) and slug:
                raise CommandError(f"sync of {slug} did not succeed")
            return
        every, wake = timedelta(seconds=loop), min(loop, WAKE_SECONDS)
        while True:
            try:
                self.sync_due(slug=slug, every=every)
                changes_prune()  # the change feed keeps CHANGE_RETENTION_DAYS
            except Exception:
                # The loop outlives a bad round (the database restarting, say); the next retries.
                logger.exception("sync round failed")
            time.sleep(wake)

    def say(self, line: str) -> None:
        with self.output:
            self.stdout.write(line)

    def in_threads(self, items: list[Item], work: Callable[[Item], None]) -> None:
        """`work(item)` for every item, up to --concurrency at once (verification/threads.py)."""
        in_threads(items, work, concurrency=self.concurrency)

    def sync_due(self, *, slug: str | None, every: timedelta) -> None:
        """One round of the worker: sync each connection not tried for `every`, taking it
        first so that no other thread or worker (or a founder's "Sync now") syncs it at the
        same time. The round's list is the due connections' ids when it starts; each is read
        again when its turn comes (it may have been disconnected or synced meanwhile)."""
        due = connections_due(now=timezone.now(), every=every)
        if slug:
            due = due.filter(startup__slug=slug)
        self.in_threads(list(due.values_list("pk", flat=True)), lambda pk: self.sync_one(pk, every))

    def sync_one(self, pk: int, every: timedelta) -> None:
        connection = ProviderConnection.objects.select_related("startup").filter(pk=pk).first()
        if connection is None:
            return  # disconnected since the round began
        now = timezone.now()
        if not connection_take(connection=connection, now=now, every=every):
            return  # another worker took it, or it was synced since the round began
        try:
            connection = revenue_sync(connection=connection, now=now)
        except SyncInProgress as exc:
            self.say(str(exc))  # a manual run holds its lease: it syncs it
            return
        except Exception:
            logger.exception("sync of %s crashed", connection.startup.slug)
            return
        self.say(result_line(connection))

    def sync_once(self, *, slug: str | None) -> int:
        to_sync = list(connections_to_sync(slug=slug))
        if slug and not to_sync:
            raise CommandError(f"{slug!r} has no provider connection; run connect_provider first")
        if not to_sync:
            self.stdout.write(
                "No startup has a payment provider connected, so there is nothing to sync.\n"
                "Connect one with its read-only key (read from stdin, never an argument):\n"
                '  echo "$READ_ONLY_KEY" | python manage.py connect_provider <slug> '
                f"<{'|'.join(sorted(PROVIDERS))}>\n"
                "then run sync_revenue again."
            )
            return 0
        show_bar = slug is None and sys.stderr.isatty()
        counts = {"failed": 0, "skipped": 0}
        bar = tqdm(total=len(to_sync), desc="sync", unit="startup", disable=not show_bar)

        def sync(connection: ProviderConnection) -> None:
            outcome, line = "ok", None
            try:
                connection = revenue_sync(connection=connection, now=timezone.now())
            except SyncInProgress as exc:
                # Another process (the hourly loop, another instance) is syncing it right now.
                outcome, line = "skipped", str(exc)
            except Exception:
                # A database hiccup on one startup must not stop the others.
                logger.exception("sync of %s crashed", connection.startup.slug)
                outcome = "failed"
            else:
                if connection.status != ProviderConnection.Status.OK:
                    outcome = "failed"
                line = result_line(connection)
            with self.output:
                if outcome != "ok":
                    counts[outcome] += 1
                bar.update(1)
                if line is None:
                    pass
                elif show_bar:
                    tqdm.write(line, file=sys.stdout)
                else:
                    self.stdout.write(line)

        with bar:
            self.in_threads(to_sync, sync)
        failed, skipped = counts["failed"], counts["skipped"]
        self.stdout.write(
            f"Synced {len(to_sync) - failed - skipped} of {len(to_sync)} startup(s)"
            + (f", {skipped} skipped (already being synced)." if skipped else ".")
        )
        return failed


def result_line(connection: ProviderConnection) -> str:
    line = f"{connection.startup.slug}: {connection.status}"
    if connection.last_error:
        line += f" ({connection.last_error})"
    return line
