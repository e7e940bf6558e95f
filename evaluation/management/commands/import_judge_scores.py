from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.judges.services import import_judge_scores

from ._common import get_campaign


class Command(BaseCommand):
    help = (
        "Import an automatic judge's per-instance scores (CSV: system,instance,question,score) into a campaign, "
        "replacing a judge of the same name, and compute its report against the human ratings."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name or id.")
        parser.add_argument("file", type=Path, help="CSV with the header system,instance,question,score (system as team/entry).")
        parser.add_argument("--judge", required=True, help="The judge's name, e.g. 'gpt-4o-rubric'.")

    def handle(self, *args, **opts):
        campaign = get_campaign(opts["campaign"])
        path = opts["file"]
        if not path.is_file():
            raise CommandError(f"{path.name}: no such file")
        try:
            with path.open("rb") as source:
                run = import_judge_scores(campaign, source, opts["judge"], name=path.name)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"imported {run.scores.count()} scores of judge {run.name!r} into {campaign.name!r}")
        if run.report:
            self.stdout.write("report computed; see: manage.py judge_report " + str(campaign.pk) + f" --judge {run.name}")
