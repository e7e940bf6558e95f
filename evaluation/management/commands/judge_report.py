import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.judges.services import compute_judge_report
from evaluation.models import JudgeRun
from evaluation.stats import judge_agreement
from quorum import numbers

from ._common import get_campaign


def _r(value, places=3):
    """A figure as the campaign page writes it (quorum.numbers, the same places), "n/a" when missing."""
    return "n/a" if value is None else numbers.decimals(value, places)


def _estimate(part):
    return f"{_r(part['estimate'])} {numbers.interval(part['low'], part['high'])}"


class Command(BaseCommand):
    help = (
        "How an imported automatic judge agrees with a campaign's human raters (correlations, the alternative-annotator "
        "test) and the prediction-powered intervals of each system and adjacent pair, recomputed against the current ratings."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name or id.")
        parser.add_argument("--judge", help="The judge's name (default: the only one imported).")
        parser.add_argument("--epsilon", type=float, default=judge_agreement.DEFAULT_EPSILON, help="Cost-benefit margin of the alternative-annotator test (0.1 crowd, 0.15 trained, 0.2 experts).")
        parser.add_argument(
            "--scoring", choices=judge_agreement.SCORING_FUNCTIONS, default=judge_agreement.DEFAULT_SCORING,
            help="Scoring function of the alternative-annotator test: neg_rmse for numeric ratings (default), accuracy for categorical ones.",
        )
        parser.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of the intervals (default 0.05).")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args, **opts):
        campaign = get_campaign(opts["campaign"])
        if not 0 <= opts["epsilon"] < 1 or not 0 < opts["alpha"] < 1:
            raise CommandError("--epsilon must be within [0, 1) and --alpha within (0, 1)")
        runs = JudgeRun.objects.filter(campaign=campaign)
        names = list(runs.values_list("name", flat=True))
        if opts["judge"]:
            run = runs.filter(name=opts["judge"]).first()
            if run is None:
                raise CommandError(f"campaign {campaign.name!r} has no judge {opts['judge']!r}; imported: {', '.join(names) or 'none'}")
        elif len(names) == 1:
            run = runs.get()
        else:
            raise CommandError(f"give --judge: campaign {campaign.name!r} has {', '.join(names) if names else 'no judges; import one with import_judge_scores'}")
        try:
            report = compute_judge_report(run, epsilon=opts["epsilon"], alpha=opts["alpha"], scoring=opts["scoring"])
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        agreement = report["agreement"]
        self.stdout.write(f"judge {run.name!r} on {campaign.name!r}: {report['items_scored_by_judge']} items scored, {report['items_rated_by_humans']} rated by humans")
        for level in ("items", "systems"):
            c = agreement[level]
            self.stdout.write(f"  {level} (n={c['n']}): Pearson {_r(c['pearson']['r'])}, Spearman {_r(c['spearman']['r'])}, Kendall {_r(c['kendall']['r'])}")
        alt = report["alt_test"]
        if "skipped" in alt:
            self.stdout.write(f"  alternative-annotator test: not run ({alt['skipped']})")
        else:
            self.stdout.write(
                f"  alternative-annotator test (epsilon {alt['epsilon']}, {alt.get('scoring', 'neg_rmse')}): winning rate {_r(alt['winning_rate'], 2)} over "
                f"{alt['raters_tested']} raters with enough items ({alt.get('raters_left_out', 0)} left out with fewer), advantage probability {_r(alt['advantage_probability'])}: "
                f"{'PASSES' if alt['passes'] else 'does not pass'}" + (" (raters are list positions, not people)" if report["raters_are_positions"] else "")
            )
        self.stdout.write(f"  intervals and rank sets are on {report.get('intervals_on', 'plain means')}")
        for row in report["systems"]:
            if "skipped" in row:
                self.stdout.write(f"  {row['system']}: {row['skipped']}")
                continue
            h, p = row["human_only"], row["ppi"]
            self.stdout.write(
                f"  {row['system']}: human-only {_estimate(h)} (n={h['labelled']}); "
                f"PPI++ {_estimate(p)} (+{p['unlabelled']} judge-only, lambda {_r(p['lam'], 2)}); width ratio {_r(row['width_ratio'], 2)}"
            )
        for pair in report["pairs"]:
            h, p = pair["human_only"], pair["ppi"]
            self.stdout.write(
                f"  {pair['a']} - {pair['b']}: human-only {_estimate(h)} (n={h['labelled']}); PPI++ {_estimate(p)} "
                f"{'resolved' if pair['resolved'] else 'not resolved'}; width ratio {_r(pair['width_ratio'], 2)}"
            )
