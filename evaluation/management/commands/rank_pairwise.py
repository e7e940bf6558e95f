from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns import selectors
from evaluation.campaigns.services.pairwise import build_report
from evaluation.stats import pairwise_report


class Command(BaseCommand):
    help = (
        "Print the Bradley-Terry ranking of a pairwise comparison job (strength, 95% bootstrap interval, "
        "rank range, wins/losses/ties) from its responses that count; the Markdown adds the style-controlled ranking, "
        "position bias and the votes that hold each order. Computed here with the given resamples and seed "
        "(the page shows the report stored in the background, with the defaults)."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int, help="Id of the pairwise job.")
        parser.add_argument("--format", choices=["md", "csv"], default="md", help="Markdown (default) or CSV.")
        parser.add_argument("--bootstrap", type=int, default=1000, help="Bootstrap resamples (at least 1).")
        parser.add_argument("--seed", type=int, default=20210101, help="Seed of the bootstrap: the same seed gives the same numbers.")

    def handle(self, *args, job_id, **opts):
        job = selectors.pairwise_jobs().filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No pairwise comparison job with id {job_id}.")
        try:
            report = build_report(job, n_resamples=opts["bootstrap"], seed=opts["seed"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if not report["rows"]:
            raise CommandError(f"Job {job_id} has no comparisons that count yet.")
        if opts["format"] == "csv":
            self.stdout.write(pairwise_report.to_csv(report["rows"]), ending="")
        else:
            self.stdout.write(pairwise_report.to_markdown(report["rows"], job_name=job.name, controls=report["controls"]), ending="")
