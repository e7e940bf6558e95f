from django.core.management.base import BaseCommand

from evaluation.campaigns import leaderboard

from ._common import current_results, get_campaign


class Command(BaseCommand):
    help = (
        "Print a campaign's leaderboard (system, score per question and final, CI, rank, rank range, n). "
        "Reads the stored results; computes them first if the inputs changed since."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name or id.")
        parser.add_argument("--format", choices=sorted(leaderboard.FORMATS), default="md")

    def handle(self, *args, **opts):
        campaign = get_campaign(opts["campaign"])
        result = current_results(campaign)
        self.stdout.write(leaderboard.render(result.report, opts["format"]), ending="")
