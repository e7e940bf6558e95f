import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.imports import BASELINE_TEAMS, GROUND_TRUTH_TEAMS
from evaluation.stats import allocation
from quorum import numbers


class Command(BaseCommand):
    help = (
        "Replay a published human evaluation in the DSTC layout: adaptive allocation (successive elimination on the "
        "paired comparisons of the final score) against uniform allocation of the same ratings, with the ratings "
        "spent and the pairs resolved, compared with the leaderboard's verdicts on every published rating (the report's "
        "statistic and bootstrap, detection redrawn). The campaign's intervals target the full data's differences (the finite "
        "set of instances); the leaderboard's, the population."
    )

    def add_arguments(self, parser):
        parser.add_argument("results_dir", type=Path, help="Folder of <team>/<entry>.json and <team>/<entry>.human_eval.json.")
        parser.add_argument("--labels", type=Path, required=True, help="The test set's labels.json (ground truth detection).")
        parser.add_argument("--baseline-team", action="append", dest="baseline_teams", help="Team folder of the baseline (repeatable; default baseline).")
        parser.add_argument("--ground-truth-dir", action="append", dest="ground_truth_teams", help="Team folder of the rated ground truth (repeatable).")
        parser.add_argument("--seed", type=int, default=allocation.DEFAULT_SEED, help="Seed of the instance order (the first of --seeds).")
        parser.add_argument("--seeds", type=int, default=1, help="Replays with seeds S, S+1, ...; more than one prints their summary.")
        parser.add_argument("--top-k", type=int, dest="top_k", help="Stop when the order of the top K entries is resolved (default: all entries).")
        parser.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of each pair's interval over all its looks (default 0.05).")
        parser.add_argument("--indifference", type=float, default=0.0, help="Settle a pair as tied when its interval lies within +-this (default off).")
        parser.add_argument("--budget", type=float, default=1.0, help="Share of the published ratings the campaign may spend (default 1).")
        parser.add_argument(
            "--looks", choices=allocation.LOOK_RULES, default="boundary",
            help="Critical value of the interim looks: the group-sequential boundary (default) or Bonferroni over the looks (to compare).",
        )
        parser.add_argument("--no-futility", action="store_false", dest="futility", help="Keep spending on pairs the whole budget could not resolve.")
        parser.add_argument(
            "--futility-beta", type=float, default=allocation.DEFAULT_FUTILITY_BETA,
            help="Largest chance that a pair the leaderboard of every rating resolves is settled as a tie by the futility check "
            f"(its own boundary; default {allocation.DEFAULT_FUTILITY_BETA}).",
        )
        parser.add_argument(
            "--unit", choices=allocation.UNITS, default="rating",
            help="What the campaign draws from the pool: one published rating of an instance at a time (default; one rater's "
            "answers to every question) or an instance with all its ratings (to compare).",
        )
        parser.add_argument("--json", action="store_true", help="Print the replay(s) as JSON.")

    def handle(self, *args, results_dir, **opts):
        if opts["seeds"] < 1 or not 0 < opts["alpha"] < 1 or not 0 < opts["budget"] <= 1 or not 0 < opts["futility_beta"] < 0.5:
            raise CommandError("--seeds must be at least 1, --alpha within (0, 1), --budget within (0, 1] and --futility-beta within (0, 0.5)")
        try:
            pool = allocation.read_dstc(
                results_dir, opts["labels"], baseline_teams=tuple(opts["baseline_teams"] or BASELINE_TEAMS),
                ground_truth_teams=tuple(opts["ground_truth_teams"] or GROUND_TRUTH_TEAMS), unit=opts["unit"],
            )
            runs = [
                allocation.replay(
                    pool, seed=opts["seed"] + k, top_k=opts["top_k"], alpha=opts["alpha"], indifference=opts["indifference"], budget=opts["budget"],
                    looks=opts["looks"], futility=opts["futility"], futility_beta=opts["futility_beta"],
                )
                for k in range(opts["seeds"])
            ]
        except ValueError as exc:  # dstc9.FormatProblem is a ValueError and names the file and instance
            raise CommandError(str(exc)) from None
        body = runs[0] if len(runs) == 1 else {"summary": allocation.summarize(runs), "runs": runs}
        if opts["json"]:
            self.stdout.write(json.dumps(body, indent=2))
            return
        for run in runs:
            uniform = run["uniform"]
            self.stdout.write(
                f"seed {run['seed']}: adaptive used {run['ratings_used']} of {run['ratings_total']} ratings "
                f"({numbers.percent(run['ratings_used_fraction'], 1)}); resolved {run['resolved_pairs']} of {run['pairs']} pairs "
                f"({run['settled_as_ties']} more settled as ties), "
                f"{run['full_resolved_pairs_resolved']} of the {run['full_resolved_pairs']} the leaderboard of every rating resolves; "
                f"{run['wrongly_ordered_pairs']} ordered wrongly"
                + (f" (the last of the leaderboard's pairs resolved with {numbers.percent(run['full_resolved_by_fraction'], 1)} of the ratings)" if run["full_resolved_by_fraction"] is not None else "")
                + f"; top {run['top_k']} order "
                f"{'matches' if run['top_k_order_matches'] else 'differs from'} the full data. Uniform, same ratings: "
                f"{uniform['resolved_pairs']} resolved ({uniform['full_resolved_pairs_resolved']} of the leaderboard's), "
                f"{uniform['wrongly_ordered_pairs']} wrong, top {run['top_k']} order {'matches' if uniform['top_k_order_matches'] else 'differs'}"
            )
            for pair in run["unresolved_full_resolved"]:
                self.stdout.write(f"  not resolved (the leaderboard of every rating resolves it): {pair[0]} vs {pair[1]}")
            self.stdout.write("  where the ratings went (each pair when it settled; ratings used by the campaign by then, and on the pair):")
            # Settled pairs in the order they settled, then the ones still open at the stop.
            pairs = sorted(run["intervals"].items(), key=lambda item: (item[1]["settled_at"] is None, (item[1]["settled_at"] or {}).get("look", 0), item[0]))
            for name, pair in pairs:
                where = pair["settled_at"]
                if where is None:
                    self.stdout.write(f"    {name}: still open at the stop")
                else:
                    self.stdout.write(
                        f"    {name}: {'resolved' if pair['state'] == allocation.RESOLVED else 'settled as a tie'} at look {where['look']} "
                        f"({where['units']} {run['unit']} units; {where['ratings_used']} ratings used, {where['pair_ratings']} on this pair)"
                    )
