from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.fed.services import create_fed_set_from_chats, import_fed_static, launch_fed_job
from evaluation.interactive import selectors


class Command(BaseCommand):
    help = (
        "Make a FED questionnaire set (DSTC9 Track 3) from the frozen transcripts of an interactive job (--chat-job) or "
        "a static context/response JSONL (--static; docs/formats.md), run the offensive-word filter over it, and with "
        "--launch start the FED job when nothing flagged waits for review (flagged items are kept or dropped on the page)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Name of the set (must be new).")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--chat-job", type=int, help="Id of the interactive (chat) job whose dialogs are rated.")
        source.add_argument("--static", type=Path, help="The static set: JSONL of {context_id, context, responses}.")
        parser.add_argument("--level", choices=["dialog", "turn"], default="dialog", help="FED dialog-level (default) or turn-level questions.")
        parser.add_argument("--launch", action="store_true", help="Launch the FED job at once (refused while flagged items wait).")
        parser.add_argument("--raters", type=int, default=3, help="Raters per item (DSTC9 Track 3: 3).")
        parser.add_argument("--reward", default="0.20", help="Pay per rating, in USD.")

    def handle(self, *args, **opts):
        try:
            if opts["static"] is not None:
                try:
                    raw = opts["static"].read_bytes()
                except OSError as exc:
                    raise CommandError(f"--static: cannot read {opts['static'].name!r} ({exc.strerror or type(exc).__name__})") from None
                fed_set = import_fed_static(name=opts["name"], jsonl=raw, level=opts["level"])
            else:
                job = selectors.interactive_jobs().filter(pk=opts["chat_job"]).first()
                if job is None:
                    raise CommandError(f"--chat-job: no interactive job with id {opts['chat_job']}")
                fed_set = create_fed_set_from_chats(name=opts["name"], chat_job=job, level=opts["level"])
            flagged = fed_set.candidates.exclude(review="clean").count()
            self.stdout.write(f"FED set {fed_set.pk} {fed_set.name!r}: {fed_set.candidates.count()} to rate, {flagged} flagged for review")
            if opts["launch"]:
                job = launch_fed_job(fed_set, raters=opts["raters"], reward=opts["reward"])
                self.stdout.write(f"launched FED job {job.pk}: {job.items.count()} items x {opts['raters']} rater{'' if opts['raters'] == 1 else 's'}")
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None
