"""Compute the DSTC9 Track 1 objective scores of a test set's entries; optionally compare them with a
score.csv, or check and score a DSTC6 Track 1 result file."""
from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.objective import (
    DEFAULT_TOLERANCE,
    compare_score_csv,
    load_json_text,
    read_text,
    score_dstc6_results,
    score_entries,
)
from evaluation.errors import EvaluationInputError
from quorum import numbers

from ._common import get_test_set


def _signed(value, places):
    """A difference with its sign, by the pages' rounding (quorum.numbers)."""
    text = numbers.decimals(value, places)
    return text if text.startswith("-") or float(text) == 0 else f"+{text}"


#: Said after scoring: what the recomputation changes, and what it leaves as published.
KEPT_APART = (
    "stored as computed by Quorum, beside the uploaded score file's values, which are left as published: finalist "
    "selection (Eq. 2) reads a published value where there is one, and a campaign's correlations show both, "
    "named, once its results are computed again"
)


class Command(BaseCommand):
    help = (
        "Compute each metric the DSTC9 Track 1 scorer reports (detection, selection, BLEU-1..4, METEOR, ROUGE-1/2/L) "
        "for every entry with outputs, store them for Eq. 2, and with --compare list the differences from a score.csv. "
        "With --dstc6-test-set and --dstc6-results, check and score a DSTC6 Track 1 result file (precision@1/2/5) instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--challenge", help="Challenge name, e.g. 'DSTC9 Track 1'.")
        parser.add_argument("--test-set", dest="test_set", help="Test set name, e.g. 'test'.")
        parser.add_argument("--compare", help="A score.csv (team_id,entry_id,<metric>,...) to compare with the computed scores.")
        parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, help="Largest difference counted as a match.")
        parser.add_argument("--no-score", action="store_true", help="Only compare, with the scores computed before.")
        parser.add_argument("--dstc6-test-set", dest="dstc6_test_set", help="DSTC6 Track 1 test set JSON (dialogs with candidates and answers).")
        parser.add_argument("--dstc6-results", dest="dstc6_results", help="DSTC6 Track 1 result file to check and score.")

    def handle(self, *args, **opts):
        try:
            if opts["dstc6_results"] or opts["dstc6_test_set"]:
                return self._dstc6(opts)
            if not (opts["challenge"] and opts["test_set"]):
                raise CommandError("give --challenge and --test-set (or --dstc6-test-set and --dstc6-results)")
            test_set = get_test_set(opts["challenge"], opts["test_set"])
            if not opts["no_score"]:
                summary = score_entries(test_set, progress=lambda done, total: self.stderr.write(f"scored {done} of {total} entries"))
                self.stdout.write(f"scored {summary['entries']} entries: {', '.join(summary['metrics'])}")
                self.stdout.write(KEPT_APART)
                for metric, reason in summary["not_computed"].items():
                    self.stdout.write(f"not computed: {metric}: {reason}")
            if opts["compare"]:
                self._compare(test_set, opts)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc

    def _compare(self, test_set, opts):
        report = compare_score_csv(test_set, read_text(opts["compare"]), name=opts["compare"], tolerance=opts["tolerance"])
        self.stdout.write(f"compared {report['entries']} entries; {len(report['outside'])} values differ by more than {report['tolerance']}")
        for row in report["compared"]:
            mark = "" if row["within"] else "  <- outside"
            self.stdout.write(
                f"{row['team_id']}/{row['entry_id']} {row['metric']}: computed {numbers.decimals(row['computed'], 6)} "
                f"published {numbers.decimals(row['published'], 6)} difference {_signed(row['difference'], 6)}{mark}"
            )
        for row in report["unscored"]:
            self.stdout.write(f"line {row['line']}: {row['entry']}: {row['reason']}")

    def _dstc6(self, opts):
        if not (opts["dstc6_test_set"] and opts["dstc6_results"]):
            raise CommandError("give both --dstc6-test-set and --dstc6-results")
        dialogs = load_json_text(read_text(opts["dstc6_test_set"]), opts["dstc6_test_set"])
        scores = score_dstc6_results(dialogs, read_text(opts["dstc6_results"]), name=opts["dstc6_results"])
        self.stdout.write(" ".join(f"{k}={numbers.decimals(v, 4)}" for k, v in scores.items()))
