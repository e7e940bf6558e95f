from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.uploads import entries_imported_text, import_entries_summary
from evaluation.errors import EvaluationInputError

from ._common import add_test_set_arguments, get_test_set


class Command(BaseCommand):
    help = (
        "Import DSTC9 entries (<team>/<entry>.json under DIR) and optionally their objective scores (score.csv) and the "
        "ground truth, all or nothing: a bad score file leaves no entry behind."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="Folder of team folders: DIR/<team>/<entry>.json.")
        add_test_set_arguments(parser)
        parser.add_argument("--scores", help="score.csv: team_id,entry_id,<metric>,...; ids as folder names (team3, entry0) or as published (3, 0; team 0 is the baseline).")
        parser.add_argument("--baseline-team", action="append", dest="baseline_teams", help="Team folder holding the baseline; repeatable (default: baseline). Team 0 of a numeric score.csv is this folder.")
        parser.add_argument("--ground-truth", action="store_true", help="Also add the labels as a ground-truth reference entry.")

    def handle(self, *args, **opts):
        test_set = get_test_set(opts["challenge"], opts["test_set"])
        try:
            summary = import_entries_summary(
                test_set, opts["directory"], baseline_teams=tuple(opts["baseline_teams"] or ("baseline",)),
                scores_path=opts["scores"], ground_truth=opts["ground_truth"],
            )
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        # The page's words: "imported 11 entries" alone hid the 95 a DSTC9 score.csv adds without outputs.
        self.stdout.write(entries_imported_text(summary))
