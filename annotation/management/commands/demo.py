"""`manage.py demo`: run the main job end to end on the embedded default, then serve the UI."""
import json
import signal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.demo.runner import DEMO_PASSWORD, DemoOptions, run_demo
from annotation.demo.server import DemoServer
from quorum import local_worker


class Command(BaseCommand):
    help = (
        "Simulate a corpus, import it, run a rewrite job with simulated annotators over HTTP, export, leave an "
        "open rewrite job and an open rating job for the demo logins, and serve the UI. Deterministic per --seed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-serve", action="store_true", help="Exit after the job instead of serving the UI.")
        parser.add_argument("--out", type=Path, help="Directory for the exports (default: var/demo-exports).")
        parser.add_argument("--dialogs", type=int, default=20, help="Dialogs to simulate (3 user turns each).")
        parser.add_argument("--annotators", type=int, default=6, help="Simulated annotators.")
        parser.add_argument("--careless", type=int, default=2, help="How many of them are careless.")
        parser.add_argument("--redundancy", type=int, default=2, help="Rewrites wanted per user turn.")
        parser.add_argument("--port", type=int, default=8000, help="Port to serve on (127.0.0.1).")
        parser.add_argument(
            "--seed", type=int, default=7,
            help="Seed of the simulated corpus and annotators: the same seed gives the same counts on every run.",
        )
        parser.add_argument(
            "--open-dialogs", type=int, default=2,
            help="Dialogs whose user turns the open rewrite and rating jobs left for the logins cover.",
        )
        parser.add_argument("--json", action="store_true", help="Also print the summary as one JSON line.")

    def handle(self, *args, **opts):
        for name in ("dialogs", "annotators", "redundancy", "open_dialogs"):
            if opts[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1, not {opts[name]}")
        if opts["careless"] < 0:
            raise CommandError(f"--careless cannot be negative, not {opts['careless']}")
        if opts["open_dialogs"] > opts["dialogs"]:
            raise CommandError("--open-dialogs cannot exceed --dialogs")
        if opts["careless"] > opts["annotators"]:
            raise CommandError("--careless cannot exceed --annotators")
        if opts["annotators"] < opts["redundancy"]:
            raise CommandError("--annotators must be at least --redundancy, or items could never be completed")
        options = DemoOptions(
            dialogs=opts["dialogs"], annotators=opts["annotators"], careless=opts["careless"],
            redundancy=opts["redundancy"], seed=opts["seed"], open_dialogs=opts["open_dialogs"], out=opts["out"],
            port=0 if opts["no_serve"] else opts["port"],
        )
        try:
            server = DemoServer(port=options.port, keep_connections=True).start()
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        try:
            # The scripted part reads each step's outcome before the next: its tasks run here.
            with local_worker.inline():
                summary = run_demo(options, server, say=self.stdout.write)
        except RuntimeError as exc:
            server.stop()
            raise CommandError(str(exc)) from exc
        if opts["json"]:
            self.stdout.write(json.dumps(summary))
        if opts["no_serve"]:
            server.stop()
            return
        self._serve(server, options)

    def _serve(self, server, options):
        """Serve until Ctrl+C; with QUORUM_LOCAL_WORKER (`make demo`) a worker process beside it runs
        the background work pages start (exports, imports, planner runs)."""
        worker = local_worker.start(Path(settings.VAR_DIR)) if settings.QUORUM_LOCAL_WORKER else None
        signal.signal(signal.SIGTERM, _interrupted)  # a terminated demo stops its worker too, as Ctrl+C does
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Quorum is serving on {server.url}/  (Ctrl+C to stop)"))
        if worker is not None:
            self.stdout.write(f"  background: a worker process (pid {worker.pid}) runs exports, imports and planner runs; "
                              f"its log: {Path(settings.VAR_DIR) / 'worker.log'}")
        self.stdout.write(f"  organizer:  organizer / {DEMO_PASSWORD}   -> {server.url}/organize/  and  {server.url}/admin/")
        self.stdout.write(f"  annotators: annotator1 ... annotator{options.annotators} / {DEMO_PASSWORD}   -> {server.url}/"
                          "  (each finds the open jobs listed under 7.)")
        self.stdout.write(f"  API docs:   {server.url}/api/docs/")
        try:
            server.thread.join()
        except KeyboardInterrupt:
            server.stop()
        finally:
            if worker is not None:
                local_worker.stop(worker)


def _interrupted(signum, frame):
    raise KeyboardInterrupt
