import time

from django.core.management.base import BaseCommand, CommandParser

from demo.seed import refresh_planner_statistics, seed_demo
from startups.models import Startup

# From this many startups on, each step of the load is reported as it starts.
PROGRESS_FROM = 5_000


class Command(BaseCommand):
    help = "Load the deterministic demo dataset (idempotent: the same count gives the same data)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, default=200, help="startups to create (200)")
        parser.add_argument(
            "--if-empty", action="store_true", help="do nothing when startups already exist"
        )

    def handle(self, *args, count: int, if_empty: bool, **options) -> None:
        if if_empty and Startup.objects.exists():
            self.stdout.write("Startups already present; demo data not loaded.")
            return
        if count < 1:
            self.stderr.write("--count must be at least 1")
            raise SystemExit(2)
        started = time.monotonic()

        def progress(step: str) -> None:
            self.stdout.write(f"[{time.monotonic() - started:5.1f}s] {step}…")

        # Small counts finish in a blink; large ones say what they are doing.
        created = seed_demo(count, progress=progress if count >= PROGRESS_FROM else None)
        if count >= PROGRESS_FROM:
            progress("refreshing planner statistics")
        refresh_planner_statistics()
        self.stdout.write(f"Loaded {created} demo startups in {time.monotonic() - started:.1f}s.")
