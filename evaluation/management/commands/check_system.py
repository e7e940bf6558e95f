from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evaluation.interactive.services.screening import reply_screen
from evaluation.interactive.services.systems import client_for
from evaluation.interactive.systems.check import passed, run_check


class Command(BaseCommand):
    help = (
        "Run the system contract (docs/system-contract.md) against a dialog system: health, opening, "
        "several turns, a retried turn, end, reply shapes and latency, and screens its replies for the "
        "offensive-word list (QUORUM_OFFENSIVE_WORDS_FILE). Prints one PASS/FAIL line per rule with the "
        "reason, WARN for listed words in a reply (which words, which reply); exits non-zero if any rule "
        "fails (a warning does not). The server's address policy applies "
        "(QUORUM_SYSTEM_ALLOWED_HOSTS): a loopback or private address must be listed there."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", help="The system's base URL, e.g. http://127.0.0.1:8765.")
        parser.add_argument("--secret", default="", help="The secret Quorum signs requests with (as registered).")
        parser.add_argument(
            "--timeout", type=float, default=None,
            help="Seconds one request may take (default: QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS).",
        )

    def handle(self, *args, url, secret, timeout, **opts):
        if not url.startswith(("http://", "https://")):
            raise CommandError(f"{url!r} is not an http(s) URL.")
        timeout = settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS if timeout is None else timeout
        if timeout <= 0:
            raise CommandError("--timeout must be more than 0 seconds.")
        results = run_check(url, secret, timeout=timeout, client=client_for(url, secret, timeout), screen=reply_screen())
        for result in results:
            self.stdout.write(result.line())
        if not passed(results):
            failed = sum(1 for r in results if not r.passed)
            raise CommandError(f"{failed} of {len(results)} rules failed.")
