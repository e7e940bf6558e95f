from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.campaigns.services.exports import export_campaign
from evaluation.errors import EvaluationInputError

from ._common import get_campaign


class Command(BaseCommand):
    help = "Write a campaign's leaderboard (json, csv, md), per-instance scores, agreement report and plots."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name or id.")
        parser.add_argument("--out", help="Directory (default: QUORUM_EXPORT_DIR/evaluation/campaign-<id>/<version>).")

    def handle(self, *args, **opts):
        campaign = get_campaign(opts["campaign"])
        try:
            compute_campaign_results(campaign.pk)
            campaign.refresh_from_db()
            written = export_campaign(campaign, opts["out"])
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        for name, path in written.items():
            self.stdout.write(f"{name}\t{path}")
