from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.finalist_scores import sources_read
from evaluation.campaigns.services.campaigns import create_finalist_campaign, select_finalists
from evaluation.errors import EvaluationInputError
from quorum import numbers

from ._common import add_test_set_arguments, get_test_set


class Command(BaseCommand):
    help = (
        "Rank entries by the mean reciprocal rank over the chosen objective metrics (competition ranks, "
        "higher is better unless --lower-is-better) and pick the best entry of each of the top-N teams. "
        "With --campaign, create a campaign with the finalists plus the baseline and ground-truth entries."
    )

    def add_arguments(self, parser):
        add_test_set_arguments(parser)
        parser.add_argument("--metrics", required=True, help="Comma-separated metric names as in score.csv.")
        parser.add_argument("--top", type=int, default=12, help="Number of finalist teams (DSTC9: 12).")
        parser.add_argument("--lower-is-better", default="", help="Comma-separated metrics where lower is better.")
        parser.add_argument("--campaign", help="Create a campaign of this name with the finalists and the reference rows.")
        parser.add_argument("--questions", default="appropriateness,accuracy")

    def handle(self, *args, **opts):
        test_set = get_test_set(opts["challenge"], opts["test_set"])
        metrics = [m.strip() for m in opts["metrics"].split(",") if m.strip()]
        lower = [m.strip() for m in opts["lower_is_better"].split(",") if m.strip()]
        try:
            finalists = select_finalists(test_set, metrics, opts["top"], lower_is_better=lower)
            self.stdout.write("rank\tteam\tentry\toverall")
            for row in finalists.itertuples():
                self.stdout.write(f"{row.rank}\t{row.team_id}\t{row.entry_id}\t{numbers.decimals(row.overall, 4)}")
            # Published values are read first, Quorum's where there is none: say which, per metric (on
            # stderr with the warnings, so stdout stays the table).
            self.stderr.write(f"note: Eq. 2 read, per metric, entries' values {sources_read(test_set, metrics)}")
            left_out = finalists.attrs.get("left_out", [])
            if left_out:
                self.stderr.write(f"warning: left out of the ranking for lack of a value for every chosen metric: {', '.join(left_out)}")
            skipped = finalists.attrs.get("without_outputs", [])
            if skipped:
                # The page says so too: without it a team with no outputs to rate vanished from the list unnamed.
                self.stderr.write(
                    f"warning: passed over for lack of outputs to rate (known from their scores only): {', '.join(skipped)}; "
                    "import their outputs with import_entries to include them"
                )
            if finalists["tied_at_cutoff"].any():
                self.stderr.write("warning: a team left out ties with the last finalist; decide by hand")
            if opts["campaign"]:
                campaign = create_finalist_campaign(opts["campaign"], test_set, finalists, questions=opts["questions"].split(","))
                references = campaign.entries.count() - len(finalists)
                self.stdout.write(f"created campaign {campaign.name!r} with {len(finalists)} finalists and {references} reference rows")
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
