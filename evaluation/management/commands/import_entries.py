from django.core.management.base import BaseCommand, CommandError

from evaluation.services import EvaluationInputError, add_ground_truth_entry, import_entries, import_objective_scores

from ._common import add_test_set_arguments, get_test_set


class Command(BaseCommand):
    help = "Import DSTC9 entries (<team>/<entry>.json under DIR) and optionally their objective scores (score.csv)."

    def add_arguments(self, parser):
        parser.add_argument("directory")
        add_test_set_arguments(parser)
        parser.add_argument("--scores", help="score.csv: team_id,entry_id,<metric>,...")
        parser.add_argument("--baseline-team", action="append", dest="baseline_teams", help="Team directory holding the baseline (default: baseline).")
        parser.add_argument("--ground-truth", action="store_true", help="Also add the labels as a ground-truth reference entry.")

    def handle(self, *args, **opts):
        test_set = get_test_set(opts["challenge"], opts["test_set"])
        try:
            entries = import_entries(test_set, opts["directory"], baseline_teams=tuple(opts["baseline_teams"] or ("baseline",)))
            scored = import_objective_scores(test_set, opts["scores"]) if opts["scores"] else 0
            if opts["ground_truth"]:
                add_ground_truth_entry(test_set)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"imported {len(entries)} entries; objective scores for {scored}")
