import logging
import sys
import time
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tqdm import tqdm

from startups.feed import changes_prune
from verification.models import ProviderConnection
from verification.providers import PROVIDERS
from verification.scheduling import connection_take, connections_due
from verification.selectors import connections_to_sync
from verification.services import SyncInProgress, revenue_sync

logger = logging.getLogger("verification.sync")

DEFAULT_LOOP_SECONDS = 3600
# The worker looks for due connections this often (at most), so a new connection or one
# whose hour is up waits minutes, not another hour.
WAKE_SECONDS = 300


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

    def handle(self, *args, slug: str | None, all: bool, loop: int | None, **options) -> None:
        if bool(slug) == bool(all):
            raise CommandError("give exactly one of --slug S or --all")
        if loop is not None and loop < 1:
            raise CommandError("--loop needs a positive number of seconds")
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

    def sync_due(self, *, slug: str | None, every: timedelta) -> None:
        """One round of the worker: sync each connection not tried for `every`, taking it
        first so that no other worker (or a founder's "Sync now") syncs it at the same time."""
        connections = connections_due(now=timezone.now(), every=every)
        if slug:
            connections = connections.filter(startup__slug=slug)
        for connection in connections:
            now = timezone.now()
            if not connection_take(connection=connection, now=now, every=every):
                continue
            try:
                connection = revenue_sync(connection=connection, now=now)
            except SyncInProgress as exc:
                self.stdout.write(str(exc))  # a manual run holds its lease: it syncs it
                continue
            except Exception:
                logger.exception("sync of %s crashed", connection.startup.slug)
                continue
            line = f"{connection.startup.slug}: {connection.status}"
            if connection.last_error:
                line += f" ({connection.last_error})"
            self.stdout.write(line)

    def sync_once(self, *, slug: str | None) -> int:
        connections = list(connections_to_sync(slug=slug))
        if slug and not connections:
            raise CommandError(f"{slug!r} has no provider connection; run connect_provider first")
        if not connections:
            self.stdout.write(
                "No startup has a payment provider connected, so there is nothing to sync.\n"
                "Connect one with its read-only key (read from stdin, never an argument):\n"
                '  echo "$READ_ONLY_KEY" | python manage.py connect_provider <slug> '
                f"<{'|'.join(sorted(PROVIDERS))}>\n"
                "then run sync_revenue again."
            )
            return 0
        show_bar = slug is None and sys.stderr.isatty()
        failed = skipped = 0
        for connection in tqdm(connections, desc="sync", unit="startup", disable=not show_bar):
            try:
                connection = revenue_sync(connection=connection, now=timezone.now())
            except SyncInProgress as exc:
                # Another process (the hourly loop, another instance) is syncing it right now.
                self.stdout.write(str(exc))
                skipped += 1
                continue
            except Exception:
                # A database hiccup on one startup must not stop the others.
                logger.exception("sync of %s crashed", connection.startup.slug)
                failed += 1
                continue
            if connection.status != ProviderConnection.Status.OK:
                failed += 1
            line = f"{connection.startup.slug}: {connection.status}"
            if connection.last_error:
                line += f" ({connection.last_error})"
            if show_bar:
                tqdm.write(line, file=sys.stdout)
            else:
                self.stdout.write(line)
        self.stdout.write(
            f"Synced {len(connections) - failed - skipped} of {len(connections)} startup(s)"
            + (f", {skipped} skipped (already being synced)." if skipped else ".")
        )
        return failed
