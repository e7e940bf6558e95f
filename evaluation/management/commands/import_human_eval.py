from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.imports import BASELINE_TEAMS, GROUND_TRUTH_TEAMS, import_human_eval
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign

from ._common import add_test_set_arguments, get_test_set


class Command(BaseCommand):
    help = (
        "Import existing human evaluations in the DSTC9 layout: DIR/<team>/<entry>.json with "
        "DIR/<team>/<entry>.human_eval.json (null or {question: [ratings]} per instance, aligned with labels). "
        "All or nothing; the campaign is created when it does not exist."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="Folder of team folders: DIR/<team>/<entry>.json and <entry>.human_eval.json.")
        parser.add_argument("--campaign", required=True, help="Campaign name; created when it does not exist.")
        add_test_set_arguments(parser)
        parser.add_argument("--questions", default="appropriateness,accuracy", help="Comma-separated questions, used when the campaign is created.")
        parser.add_argument(
            "--baseline-team", action="append", dest="baseline_teams",
            help="Team folder holding the baseline (repeatable; default: baseline). DSTC10 Track 2: teamB00; DSTC11 Track 5: team00.",
        )
        parser.add_argument(
            "--ground-truth-dir", action="append", dest="ground_truth_dirs",
            help="Team folder holding the ground truth's ratings (repeatable; default: ground-truth, ground_truth). DSTC10 Track 2: ref.",
        )
        parser.add_argument("--replace", action="store_true", help="Replace ratings already imported for the same entries.")

    def handle(self, *args, **opts):
        test_set = get_test_set(opts["challenge"], opts["test_set"])
        try:
            campaign = Campaign.objects.filter(name=opts["campaign"]).first()
            if campaign is None:
                campaign = create_campaign(opts["campaign"], test_set, [], questions=opts["questions"].split(","))
            elif campaign.test_set_id != test_set.pk:
                raise CommandError(f"campaign {campaign.name!r} rates test set {campaign.test_set}, not {test_set}")
            summary = import_human_eval(
                campaign, opts["directory"], replace=opts["replace"],
                baseline_teams=tuple(opts["baseline_teams"] or BASELINE_TEAMS),
                ground_truth_teams=tuple(opts["ground_truth_dirs"] or GROUND_TRUTH_TEAMS),
            )
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"imported {summary['ratings']} ratings of {summary['entries']} entries into {campaign.name!r}")
