import logging
import time

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from webhooks.delivery import webhooks_run_once

logger = logging.getLogger("webhooks")


class Command(BaseCommand):
    help = "Deliver webhook events: turn new changes into events and send what is due."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--loop", action="store_true", help="run forever (the Procfile's)")
        parser.add_argument("--interval", type=float, default=2.0, help="seconds between rounds")

    def handle(self, *args, loop: bool, interval: float, **options) -> None:
        while True:
            try:
                sent = webhooks_run_once()
            except Exception:
                if not loop:
                    raise
                logger.exception("webhook delivery round failed")
                sent = 0
            if not loop:
                return
            close_old_connections()  # a long-lived process: drop a connection the server closed
            if not sent:
                time.sleep(interval)
