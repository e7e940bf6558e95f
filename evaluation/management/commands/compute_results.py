from django.core.management.base import BaseCommand

from quorum import numbers

from ._common import current_results, get_campaign


class Command(BaseCommand):
    help = (
        "Compute (or find) the stored results of a campaign for its current inputs, in this process. "
        "The campaign page shows the computation as it shows one started there (when, or why it failed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name or id.")

    def handle(self, *args, **opts):
        campaign = get_campaign(opts["campaign"])
        result = current_results(campaign)
        self.stdout.write(f"results for {campaign.name!r} at inputs {result.inputs_version[:12]} (computed {result.computed_at:%Y-%m-%d %H:%M:%S}, {numbers.decimals(result.seconds, 1)} s)")
