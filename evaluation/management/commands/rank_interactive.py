from django.core.management.base import BaseCommand, CommandError

from evaluation.interactive import selectors
from evaluation.stats import interactive, scoring


class Command(BaseCommand):
    help = (
        "Print the interactive leaderboard of a chat job (DSTC9 Track 2): success by worker, success with grounding, "
        "their average (which ranks), the two ratings, each with a bootstrap interval over goals; tie groups and rank ranges."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int, help="Id of the chat job.")
        parser.add_argument("--format", choices=["md", "csv"], default="md", help="Markdown (default) or CSV.")
        parser.add_argument("--bootstrap", type=int, default=scoring.DEFAULT_BOOTSTRAP, help="Bootstrap resamples (at least 1).")
        parser.add_argument("--seed", type=int, default=scoring.DEFAULT_SEED, help="Seed: the same seed gives the same numbers.")

    def handle(self, *args, job_id, **opts):
        job = selectors.interactive_jobs().filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No chat job with id {job_id}.")
        if opts["bootstrap"] < 1:
            raise CommandError("--bootstrap must be at least 1.")
        # A job with nothing ranked is still answered, as the page and the downloads answer it: its
        # state and why nothing is ranked (`interactive.nothing_to_rank`, in both formats).
        result, _dialogs = selectors.interactive_board(job, bootstrap=opts["bootstrap"], seed=opts["seed"])
        if opts["format"] == "csv":
            self.stdout.write(interactive.to_csv(result), ending="")
        else:
            self.stdout.write(interactive.to_markdown(result, job_name=job.name), ending="")
